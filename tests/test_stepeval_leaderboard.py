"""The published StepEval rows: fractions with their modality and sources, equal to the published table."""

from __future__ import annotations

import json

from evaluators.core.leaderboard import load_published
from tests.conftest import real_data

TOOLS = {"timbre_rag", "get_date_time", "get_weather", "web_search"}


def test_rows_are_fractions_with_modality_and_sources():
    table = load_published("stepeval_audio")
    assert table["source"]["url"] == "https://arxiv.org/abs/2507.16632"
    assert table["source"]["dataset"].startswith("https://huggingface.co/datasets/stepfun-ai/") and table["caveats"]
    assert {(row["model"], row["modality"]) for row in table["rows"]} == {("Qwen3-32B", "text"), ("Step-Audio 2", "audio")}
    assert {row["subset"] for row in table["rows"]} == TOOLS
    for row in table["rows"]:
        assert set(row["metrics"]) == {"precision", "recall", "type_accuracy", "param_accuracy"}
        assert all(v is None or 0.0 <= v <= 1.0 for v in row["metrics"].values())
        assert (row["metrics"]["param_accuracy"] is None) == (row["subset"] == "get_date_time")
    weather = next(r for r in table["rows"] if r["model"] == "Step-Audio 2" and r["subset"] == "get_weather")
    assert weather["metrics"]["type_accuracy"] == 0.905 and weather["metrics"]["precision"] == 0.922


def test_rows_equal_the_published_figures():
    published = real_data("../published/stepeval_audio_toolcall_published.json", "published StepEval figures")
    source = json.loads(published.read_text())
    ours = load_published("stepeval_audio")["rows"]
    assert len(ours) == len(source["rows"])
    for row in source["rows"]:
        tool = source["tools"][row["tool"]]
        mine = next(r for r in ours if r["model"] == row["model"] and r["subset"] == tool)
        assert mine["modality"] == row["modality"]
        for name in ("precision", "recall", "type_accuracy", "param_accuracy"):
            if row[name] is None:
                assert mine["metrics"][name] is None
            else:
                assert abs(mine["metrics"][name] * 100 - row[name]) < 1e-9, (row["model"], tool, name)
