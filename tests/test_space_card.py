"""README's front matter, checked as the Hub checks a Space's card before it accepts a push."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import yaml

PROJECT = Path(__file__).resolve().parents[1]
# The Hub's allowed card colours (huggingface.co/docs/hub/spaces-config-reference).
HUB_COLOURS = {"red", "yellow", "green", "blue", "indigo", "purple", "pink", "gray"}
MAX_SHORT_DESCRIPTION = 60


def front_matter() -> dict:
    text = (PROJECT / "README.md").read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?)\n---\n", text, re.DOTALL)
    assert match, "README.md must start with a YAML front matter block between --- lines"
    return yaml.safe_load(match.group(1))


def pinned(package: str) -> str:
    for line in (PROJECT / "requirements.txt").read_text().splitlines():
        if line.startswith(f"{package}=="):
            return line.split("==", 1)[1].strip()
    raise AssertionError(f"{package} is not pinned in requirements.txt")


def is_one_emoji(text: str) -> bool:
    # One pictograph, optionally with the emoji variation selector (as 🛠️ is written).
    core = text.replace("\ufe0f", "")
    return len(core) == 1 and unicodedata.category(core) == "So"


def test_space_card_is_what_the_hub_accepts():
    card = front_matter()
    assert card["sdk"] == "gradio"
    assert str(card["sdk_version"]) == pinned("gradio")
    assert (PROJECT / card["app_file"]).is_file()
    assert re.fullmatch(r"3\.\d{1,2}", str(card["python_version"])), card["python_version"]
    assert isinstance(card["short_description"], str)
    assert 0 < len(card["short_description"]) <= MAX_SHORT_DESCRIPTION, len(card["short_description"])
    assert card["colorFrom"] in HUB_COLOURS and card["colorTo"] in HUB_COLOURS
    assert is_one_emoji(card["emoji"]), card["emoji"]


def test_the_checks_refuse_what_the_hub_refuses():
    assert not is_one_emoji("🛠️🛠️") and not is_one_emoji("x") and is_one_emoji("🛠️")
    assert len("Tool-calling leaderboard (ACEBench, ToolBench-Static, StepEval)") > MAX_SHORT_DESCRIPTION
