"""The published ACEBench rows: well-formed, consistent with the official formulas and the source."""

from __future__ import annotations

import json

from evaluators.benchmarks.acebench.categories import OVERALL_WEIGHTS
from evaluators.core.leaderboard import load_published
from tests.conftest import real_data


def test_rows_are_fractions_with_a_source():
    table = load_published("acebench")
    assert table["source"]["commit"].startswith("56dd66c") and table["source"]["url"].startswith("https://")
    assert {row["language"] for row in table["rows"]} == {"en", "zh", "combined"}
    for row in table["rows"]:
        assert all(0.0 <= value <= 1.0 for value in row["summary"].values()), row["model"]


def test_overall_follows_the_official_weights():
    for row in load_published("acebench")["rows"]:
        s = row["summary"]
        expected = sum(OVERALL_WEIGHTS[g] * s[g] for g in OVERALL_WEIGHTS)
        assert abs(expected - s["overall"]) <= 0.0016, row["model"]


def test_gpt4o_zh_row_matches_the_readme_table():
    row = next(r for r in load_published("acebench")["rows"] if r["model"] == "GPT-4o" and r["language"] == "zh")
    assert (row["summary"]["normal"], row["summary"]["special"], row["summary"]["agent"], row["summary"]["overall"]) == (0.927, 0.933, 0.715, 0.896)


def test_rows_equal_the_published_figures():
    published = real_data("../published/acebench_leaderboard.json", "published ACEBench figures")
    source = json.loads(published.read_text())
    ours = load_published("acebench")["rows"]
    count = sum(len(rows) for rows in source["tables"].values())
    assert len(ours) == count
    for language, rows in source["tables"].items():
        for row in rows:
            mine = next(r for r in ours if r["model"] == row["model"] and r["language"] == language)
            assert abs(mine["summary"]["overall"] * 100 - row["overall"]) < 1e-9
            assert abs(mine["summary"]["normal"] * 100 - row["summary"]) < 1e-9


def test_toolbench_static_rows_are_fractions_with_their_caveats():
    table = load_published("toolbench_static")
    assert table["source"]["url"].startswith("https://arxiv.org/") and table["caveats"]
    assert {row["subset"] for row in table["rows"]} == {"in_domain", "out_of_domain"}
    gpt4 = next(r for r in table["rows"] if r["model"] == "GPT-4 (0-shot)" and r["subset"] == "in_domain")
    assert gpt4["metrics"]["plan_em"] == 0.8028 and gpt4["metrics"]["hallu_rate"] == 0.0598
    for row in table["rows"]:
        assert all(0.0 <= v <= 1.0 for v in row["metrics"].values())
