"""τ²-bench's official notes (official_notes.py): read from the pinned evaluator files with `ast`, each under the
`if` that names its case; written here as small files of our own in the official layout."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluators.benchmarks.tau2 import official_notes, source
from evaluators.benchmarks.tau2.official_notes import fill, read_notes
from evaluators.core.errors import DataError

FILES = {
    official_notes.EVALUATOR_FILE: '''
def evaluate_simulation(simulation, task):
    if simulation.termination_reason not in {"user_stop", "agent_stop"}:
        return RewardInfo(reward=0.0, info={"note": f"Stopped early: {simulation.termination_reason.value}!"})
    if task.evaluation_criteria is None:
        return RewardInfo(reward=1.0, info={"note": "Nothing to check."})
''',
    official_notes.ENV_FILE: '''
def calculate_reward(task):
    if expected_actions is None and env_assertions is None:
        return RewardInfo(info={"note": "No env work."})
''',
    official_notes.ACTION_FILE: '''
def calculate_reward(task):
    if not golden_actions:
        return RewardInfo(info={"note": "No gold."})
''',
    official_notes.COMMUNICATE_FILE: '''
def calculate_reward(task):
    if not communicate_info:
        return RewardInfo(info={"note": "Nothing to say."})

def evaluate_communicate_info(full_trajectory, communicate_info):
    for info_str in communicate_info:
        if found:
            justification = f"<{info_str}> in <{message.content}>"
        else:
            justification = f"<{info_str}> missing"
''',
    "src/tau2/evaluator/evaluator_nl_assertions.py": '''
def calculate_reward(task):
    if not nl_assertions:
        return RewardInfo(info={"note": "No judge needed."})
''',
}


def folder_of(tmp_path: Path, files: dict[str, str]) -> source.Source:
    for relative, text in files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text, encoding="utf-8")
    return source.Source(tmp_path, {relative: source.blob_id(text.encode()) for relative, text in files.items()})


def test_each_note_is_read_from_under_its_case(tmp_path: Path):
    notes = read_notes(folder_of(tmp_path, FILES))
    assert (notes.no_criteria, notes.no_env_criteria, notes.no_actions, notes.no_communicate, notes.no_nl) == (
        "Nothing to check.", "No env work.", "No gold.", "Nothing to say.", "No judge needed.")
    assert notes.premature_for("max_steps") == "Stopped early: max_steps!"
    assert notes.communicated_for("$1,000", "Refund: {info}") == "<$1,000> in <Refund: {info}>"
    assert notes.not_communicated_for("ABC") == "<ABC> missing"


def test_a_value_holding_a_placeholder_is_not_filled_again():
    assert fill("{info} / {content}", info="{content}", content="x") == "{content} / x"


@pytest.mark.parametrize(("relative", "text", "message"), [
    (official_notes.ACTION_FILE, "def calculate_reward(task):\n    return None\n", "no note under `if not golden_actions`"),
    (official_notes.EVALUATOR_FILE, FILES[official_notes.EVALUATOR_FILE].replace(
        "simulation.termination_reason.value", "simulation.id"), "interpolates an unknown value"),
    (official_notes.ENV_FILE, "def calculate_reward(:\n", "not parseable Python"),
])
def test_a_source_without_a_note_is_refused_naming_the_file(tmp_path: Path, relative: str, text: str, message: str):
    with pytest.raises(DataError, match=message) as caught:
        read_notes(folder_of(tmp_path, {**FILES, relative: text}))
    assert relative in str(caught.value)


def test_a_changed_file_is_refused_by_its_blob_id(tmp_path: Path):
    folder = folder_of(tmp_path, FILES)
    (tmp_path / official_notes.ACTION_FILE).write_text(FILES[official_notes.ACTION_FILE].replace("No gold", "Gold"))
    with pytest.raises(DataError, match="blob"):
        read_notes(folder)
