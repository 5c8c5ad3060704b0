"""The shipped tables: the published ACEBench rows (well-formed, consistent with the official formulas and the
source), ToolBench-Static's, and the price table (every price a number >= 0 with its source and date)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from evaluators.benchmarks.acebench.categories import OVERALL_WEIGHTS
from evaluators.core.errors import DataError
from evaluators.core.leaderboard import LEADERBOARD_DIR, load_published
from evaluators.publish.run_costs import PRICES_FILE, load_prices, price_of
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


def test_every_price_names_its_source_and_date_and_is_a_number_at_least_zero():
    raw = json.loads((LEADERBOARD_DIR / PRICES_FILE).read_text(encoding="utf-8"))["models"]
    prices = load_prices()
    assert len(prices) == len(raw) >= 10
    for entry in raw:
        assert entry["source"].startswith("https://") and re.fullmatch(r"\d{4}-\d{2}-\d{2}", entry["date"]), entry
        for name in ("input_usd_per_1m", "output_usd_per_1m"):
            assert entry[name] is None or isinstance(entry[name], int | float) and entry[name] >= 0, entry
    # the vendors' own pricing pages
    hosts = {entry["source"].split("/")[2] for entry in raw}
    assert hosts == {"developers.openai.com", "docs.anthropic.com", "api-docs.deepseek.com", "ai.google.dev"}
    assert price_of("GPT-4o-mini").output_usd_per_1m == 0.60 and price_of("claude-3-5-haiku-20241022").model == (
        "claude-3-5-haiku-latest")
    assert price_of("gpt-4o-2024-05-13") is None  # a snapshot with another price is not priced as its family


@pytest.mark.parametrize(("entry", "problem"), [
    ({"input_usd_per_1m": -1}, "'input_usd_per_1m' must be a number >= 0 (USD per 1M tokens) or null, got -1"),
    ({"output_usd_per_1m": "2"}, "'output_usd_per_1m' must be a number >= 0 (USD per 1M tokens) or null, got \"2\""),
    ({"output_usd_per_1m": True}, "'output_usd_per_1m' must be a number >= 0"),
    ({"source": "http://example.com/pricing"}, "'source' must be an https:// address"),
    ({"source": None}, "'source' must be an https:// address, got null"),
    ({"date": "27 Nov 2026"}, "'date' (the day the price was read) must be YYYY-MM-DD, got \"27 Nov 2026\""),
    ({"date": None}, "'date' (the day the price was read) must be YYYY-MM-DD, got null"),
    ({"model": ""}, "'model' must be a non-empty name"),
    ({"price": 1}, "unknown field 'price'"),
])
def test_a_bad_price_entry_is_refused_with_what_is_wrong(tmp_path: Path, entry: dict[str, Any], problem: str):
    good = {"model": "m", "input_usd_per_1m": 1, "output_usd_per_1m": 2, "source": "https://example.com/p",
            "date": "2026-11-27"}
    (tmp_path / PRICES_FILE).write_text(json.dumps({"models": [{**good, **entry}]}), encoding="utf-8")
    with pytest.raises(DataError, match=re.escape(problem)):
        load_prices(tmp_path)


def test_two_entries_may_not_share_a_spelling(tmp_path: Path):
    entry = {"input_usd_per_1m": 1, "output_usd_per_1m": 2, "source": "https://example.com/p", "date": "2026-11-27"}
    models = [{"model": "a", "aliases": ["openai/Shared"], **entry}, {"model": "b", "aliases": ["shared"], **entry}]
    (tmp_path / PRICES_FILE).write_text(json.dumps({"models": models}), encoding="utf-8")
    with pytest.raises(DataError, match="entry 'b': spelling 'shared' is also used by entry 'a'"):
        load_prices(tmp_path)
