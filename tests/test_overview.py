"""The overview across benchmarks: one row per model with each benchmark's declared headline figures,
ranked head to head: by mean win rate over the benchmarks each model has (no figure averaged across
benchmarks), never above a model that beats it on every figure they share; partial runs and uploads never feed it. From the real published tables (a fresh store: no
model is in every table, and the page still ranks them), from synthetic boards, from a real store, and through
the /overview API of a launched page."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import gradio as gr
import numpy as np
import pandas as pd
import pytest
from gradio_client import Client

from evaluators.core.declarations import Overview
from evaluators.core.errors import ToolboardError
from evaluators.core.leaderboard import LEADERBOARD_DIR
from evaluators.core.registry import all_benchmarks, benchmark_names, get_benchmark
from evaluators.engine.store import Store
from evaluators.service.board import APART_COLUMN, board_rows, model_key
from evaluators.service.overview import (
    AGGREGATE_COLUMN,
    COVERAGE_COLUMN,
    LACKS_COLUMN,
    aggregate_rule,
    at_least,
    dominance_violations,
    headlines,
    overview_rows,
)
from tests.app_fixtures import finished_acebench_run, running_app, table_rows, upload
from tests.browser_fixtures import browser_page, keep_screenshot, open_tab, wait_for_board
from tests.new_benchmark.tinybench_benchmark import BENCHMARK as TINYBENCH
from ui import overview_tab
from ui.app import launch_patiently
from ui.context import AppContext

ACE, TOOLBENCH, STEPEVAL = "ACEBench · Overall", "ToolBench-Static · Act.EM", "StepEval-Audio-Toolcall · Precision"
BFCL = "BFCL v4 · Overall"
TAU2 = "τ²-bench · Pass^1"


def test_each_benchmark_declares_its_headline_figures():
    declared = {b.name: b.overview for b in all_benchmarks()}
    assert declared["acebench"] == Overview("en", ("overall",), "overall", declared["acebench"].why)
    assert declared["toolbench_static"].columns == ("act_em", "f1") and declared["toolbench_static"].view == "in_domain"
    assert declared["stepeval_audio"].columns == ("precision", "recall") and declared["stepeval_audio"].view == "macro"
    assert declared["bfcl"] == Overview("all", ("overall", "non_live_ast", "live_ast"), "overall", declared["bfcl"].why)
    assert declared["tau2"] == Overview("overall", ("pass_1", "pass_4"), "pass_1", declared["tau2"].why)
    assert [h.aggregate_column for h in headlines()] == [ACE, BFCL, STEPEVAL, TAU2, TOOLBENCH]
    for part in (ACE, BFCL, STEPEVAL, TAU2, TOOLBENCH):
        assert part in aggregate_rule()
    # each view by its title, not its key
    assert "(language: English)" in aggregate_rule() and "(subset: In-domain)" in aggregate_rule()
    assert "in_domain" not in aggregate_rule()


def test_a_wrong_declaration_fails_when_the_package_loads():
    with pytest.raises(ValueError, match="aggregate column 'f1' must be one of its columns"):
        Overview("all", ("act_em",), "f1")
    acebench = get_benchmark("acebench")
    with pytest.raises(ToolboardError, match="overview view 'fr' is not one of en, zh, combined"):
        dataclasses.replace(acebench, overview=Overview("fr", ("overall",), "overall"))
    with pytest.raises(ToolboardError, match="must be a share, higher is better"):
        dataclasses.replace(get_benchmark("toolbench_static"), overview=Overview("all", ("hallu_rate",), "hallu_rate"))


def _published_models(name: str) -> set[str]:
    """The models of a benchmark's ranked published rows in the view its overview reads (rows kept apart, e.g.
    τ²-bench's under another user simulator, do not enter the overview)."""
    frame = board_rows(name, None)
    ranked = frame[APART_COLUMN].fillna("") == "" if APART_COLUMN in frame else True
    return set(frame.loc[(frame["view"] == get_benchmark(name).overview.view) & ranked, "model"])


@pytest.mark.slow
def test_with_the_published_tables_alone_every_model_is_ranked_over_what_it_has():
    frame = overview_rows({name: board_rows(name, None) for name in benchmark_names()})
    keys = {name: {model_key(m) for m in _published_models(name)} for name in benchmark_names()}
    # What is true of the shipped tables: no model is in every table (the alias table decides who is the same).
    assert not set.intersection(*keys.values())
    # ... and still the overview has a rank and a win rate for every model, with its coverage
    assert len(frame) == len(set.union(*keys.values())) > 50
    assert frame["rank"].notna().all() and frame[AGGREGATE_COLUMN].notna().all()
    assert set(frame[COVERAGE_COLUMN]) == {"1 of 5", "2 of 5"}
    assert list(frame["rank"]) == sorted(frame["rank"]) and frame["rank"].iloc[0] == 1
    # no model stands above one that is at least as good on every figure they share (183 pairs did, ranked by
    # coverage then by a mean across benchmarks)
    assert dominance_violations(frame) == []
    # the minimum-coverage control keeps the models with more benchmarks, each with its rank among all
    two = at_least(frame, 2)
    assert len(two) == 8 and set(two["rank"]) <= set(frame["rank"]) and at_least(frame, 3).empty
    # a model is not pushed down for what it lacks: the best model of each table (BFCL's best, Claude Opus 4.5, is
    # also beaten on τ²-bench) wins every head-to-head it has and shares the first rank, with one benchmark of five
    first = frame[frame["rank"] == 1]
    assert set(first["model"]) == {"Qwen3.5-397B-A17B", "GPT-4o", "13B alpha-UMi w/ reuse", "Step-Audio 2"}
    assert set(first[COVERAGE_COLUMN]) == {"1 of 5"} and set(first[AGGREGATE_COLUMN]) == {1.0}
    # a model in several tables (per the alias table) is one row with each figure, lacking only the others
    tables_of = {k: sum(k in found for found in keys.values()) for k in set.union(*keys.values())}
    lacking = {model_key(m): lacks.count(", ") + 1 for m, lacks in zip(frame["model"], frame[LACKS_COLUMN])}
    assert lacking == {k: len(keys) - n for k, n in tables_of.items()}
    # today, through the alias table, BFCL's "(FC)" / "(Prompt)" rows join five models of the other tables
    assert {k for k, n in tables_of.items() if n > 1} == {
        "Hammer2.1-3B", "Hammer2.1-7B", "Kimi-K2-Instruct", "Llama-3.2-3B-Instruct", "Qwen3-32B",
        "Claude-Opus-4-5-20251101", "Claude-Sonnet-4-5-20250929", "GPT-5.2-2025-12-11"}
    assert max(tables_of.values()) == 2
    rows = frame.set_index(frame["model"].map(model_key))  # by key: a known model shows its facts-table name
    # figures of the declared views: ACEBench's English table, ToolBench's in-domain split, StepEval's tool mean
    gpt4o = rows.loc[model_key("GPT-4o")]
    assert gpt4o[ACE] == pytest.approx(0.811) and gpt4o["ACEBench · source"] == "published"
    assert gpt4o[AGGREGATE_COLUMN] == pytest.approx(_win_rate(frame, ACE, gpt4o[ACE])) and gpt4o[COVERAGE_COLUMN] == "1 of 5"
    assert gpt4o[LACKS_COLUMN] == "BFCL v4, StepEval-Audio-Toolcall, τ²-bench, ToolBench-Static"
    published = json.loads((LEADERBOARD_DIR / "toolbench_static.json").read_text(encoding="utf-8"))["rows"]
    gpt4 = next(r for r in published if r["model"] == "GPT-4 (0-shot)" and r["subset"] == "in_domain")
    assert rows.loc[model_key("GPT-4 (0-shot)"), TOOLBENCH] == pytest.approx(gpt4["metrics"]["act_em"])
    audio = rows.loc[model_key("Step-Audio 2")]
    assert audio["StepEval-Audio-Toolcall · source"].startswith("published (modality audio")
    assert 0 < audio[STEPEVAL] < 1


def _win_rate(frame: pd.DataFrame, column: str, value: float) -> float:
    """The share of the other models with a figure in `column` that `value` beats, a tie counting half."""
    others = [round(v * 100, 1) for v in pd.to_numeric(frame[column], errors="coerce").dropna()]
    value = round(value * 100, 1)  # compared as shown
    others.remove(value)
    return (sum(value > other for other in others) + 0.5 * sum(value == other for other in others)) / len(others)


def test_the_models_of_one_published_table_stay_apart():
    """Two rows of one published table are two models, unless the table itself asked one model several ways: BFCL's
    "(FC)", "(Prompt)" and unsuffixed rows differ in their request mode; τ²-bench's in their labels (GPT-5.2 at two
    reasoning efforts) or in being ranked (a model submitted again under another user simulator, kept apart)."""
    for name in benchmark_names():
        benchmark = get_benchmark(name)
        frame = board_rows(name, None)
        frame = frame[frame["view"] == benchmark.overview.view]
        telling = ["request_mode", *benchmark.board_layout().text_columns, APART_COLUMN]
        merged: dict[str, list[tuple[str, tuple[Any, ...]]]] = {}
        for _, row in frame.iterrows():
            merged.setdefault(model_key(row["model"]), []).append(
                (row["model"], tuple(None if pd.isna(row.get(c)) else row.get(c) for c in telling if c in frame)))
        for key, spellings in merged.items():
            ways = [way for _, way in spellings]
            if len(spellings) > 1:
                assert name in ("bfcl", "tau2") and len(set(ways)) == len(ways), (name, key, spellings)
    bfcl = board_rows("bfcl", None)
    qwen = bfcl[bfcl["model"].map(model_key) == "Qwen3-32B"]
    assert sorted(zip(qwen["model"], qwen["request_mode"])) == [("Qwen3-32B (FC)", "native tools"),
                                                                ("Qwen3-32B (Prompt)", "prompt")]


def test_a_model_with_bfcl_and_another_published_table_is_ranked():
    """BFCL's site names ("Hammer2.1-7b (FC)") join the other tables through the alias table: over ACEBench and BFCL
    alone, the models in both have the mean of their two win rates (ACEBench's overall, BFCL's Overall)."""
    benchmarks = [get_benchmark("acebench"), get_benchmark("bfcl")]
    frame = overview_rows({b.name: board_rows(b.name, None) for b in benchmarks}, benchmarks)
    both = frame[frame[COVERAGE_COLUMN] == "2 of 2"]
    assert set(both["model"].map(model_key)) == {"Hammer2.1-3B", "Hammer2.1-7B", "Kimi-K2-Instruct",
                                                 "Llama-3.2-3B-Instruct"}
    hammer = both.set_index(both["model"].map(model_key)).loc["Hammer2.1-7B"]
    published = json.loads((LEADERBOARD_DIR / "bfcl.json").read_text(encoding="utf-8"))["rows"]
    overall = next(r for r in published if r["model"] == "Hammer2.1-7b (FC)")["summary"]["overall"]
    assert hammer[BFCL] == pytest.approx(overall) and hammer["BFCL v4 · source"] == "published (as Hammer2.1-7b (FC))"
    assert hammer[AGGREGATE_COLUMN] == pytest.approx((_win_rate(frame, ACE, hammer[ACE])
                                                      + _win_rate(frame, BFCL, overall)) / 2)
    assert hammer[LACKS_COLUMN] == "" and dominance_violations(frame, headlines(benchmarks)) == []


def _board(name: str, rows: list[dict[str, Any]]) -> pd.DataFrame:
    """A board frame as board_rows shapes it: the given rows, each defaulting to a published row of the
    benchmark's overview view."""
    view = get_benchmark(name).overview.view if get_benchmark(name).overview else "all"
    base = {"source": "published", APART_COLUMN: None, "view": view, "mode": "official", "run_id": ""}
    return pd.DataFrame([{**base, **row} for row in rows])


def test_each_model_is_ranked_by_its_win_rate_over_what_it_has_and_never_above_its_better():
    frames = {
        "acebench": _board("acebench", [
            {"model": "Full-A", "overall": 0.8}, {"model": "full-b", "overall": 0.5}, {"model": "Lacks-Tool", "overall": 0.9},
            # a second ranked row of Full-A: the better one is taken
            {"model": "Full-A", "source": "evaluated", "run_id": "r1", APART_COLUMN: "", "overall": 0.6},
            # another view of the table is not read
            {"model": "full-b", "view": "zh", "overall": 1.0},
        ]),
        "toolbench_static": _board("toolbench_static", [
            {"model": "Full-A", "act_em": 0.6, "f1": 0.1}, {"model": "Full_B", "act_em": 0.7, "f1": 0.2},
            # a partial run and an upload never feed the overview, however good
            {"model": "Lacks-Tool", "source": "evaluated", "run_id": "p1", APART_COLUMN: "partial: 20 per subset",
             "act_em": 1.0, "f1": 1.0},
            {"model": "Lacks-Tool", "source": "uploaded", "run_id": "u1", APART_COLUMN: "uploaded: not known",
             "act_em": 1.0, "f1": 1.0},
        ]),
        "stepeval_audio": _board("stepeval_audio", [
            {"model": "openai/full-a", "source": "evaluated", "run_id": "r2", APART_COLUMN: "", "precision": 0.4,
             "recall": 0.9, "modality": "text"},
            {"model": "FULL B", "precision": 0.3, "recall": 0.6, "modality": "audio"},
            {"model": "Lacks-Tool", "precision": 0.99, "recall": 0.99},
        ]),
    }
    frame = overview_rows(frames)
    rows = frame.set_index("model")
    # one row per model: case, spaces, underscores and a provider prefix are the same model
    assert list(frame["model"]) == ["Lacks-Tool", "Full-A", "full-b"]
    # ACEBench: Lacks-Tool 0.9 beats both; Full-A 0.8 one. ToolBench (act_em): Full_B beats Full-A. StepEval
    # (precision): Lacks-Tool, then Full-A, then FULL B.
    assert rows.loc["Full-A", AGGREGATE_COLUMN] == pytest.approx((0.5 + 0 + 0.5) / 3)
    assert rows.loc["full-b", AGGREGATE_COLUMN] == pytest.approx((0 + 1 + 0) / 3)
    # Lacks-Tool beats both on every benchmark it has: first, though it lacks one; full-b has the same win rate as
    # Full-A and neither beats the other on every figure they share: they share a rank
    assert list(frame["rank"]) == [1, 2, 2] and list(frame[COVERAGE_COLUMN]) == ["2 of 3", "3 of 3", "3 of 3"]
    # ToolBench's two figures are shown, but only act_em weighs
    assert rows.loc["full-b", "ToolBench-Static · F1"] == pytest.approx(0.2)
    assert rows.loc["Full-A", "ACEBench · source"] == "published"
    assert rows.loc["Full-A", "StepEval-Audio-Toolcall · source"] == "evaluated run r2 (modality text, as openai/full-a)"
    assert rows.loc["full-b", "StepEval-Audio-Toolcall · source"] == "published (modality audio, as FULL B)"
    lacks = rows.loc["Lacks-Tool"]
    assert lacks[AGGREGATE_COLUMN] == 1.0 and lacks[LACKS_COLUMN] == "ToolBench-Static"
    assert pd.isna(lacks[TOOLBENCH]) and lacks["ToolBench-Static · source"] == ""
    assert rows.loc["Full-A", LACKS_COLUMN] == ""


def test_equal_aggregates_share_a_rank_and_a_later_benchmark_joins_by_its_declaration():
    benchmarks = [get_benchmark("acebench"), TINYBENCH]
    frames = {"acebench": _board("acebench", [{"model": m, "overall": v} for m, v in [("a", 0.5), ("b", 0.7), ("c", 0.2)]]),
              "tinybench": pd.DataFrame([{"model": m, "source": "published", APART_COLUMN: None, "view": "all",
                                          "mode": "official", "run_id": "", "accuracy": v}
                                         for m, v in [("a", 0.5), ("b", 0.3), ("c", 0.1)]])}
    frame = overview_rows(frames, benchmarks)
    assert "TinyBench · Accuracy" in frame.columns and "TinyBench · Accuracy" in aggregate_rule(benchmarks)
    assert list(frame["model"]) == ["a", "b", "c"] and list(frame["rank"]) == [1, 1, 3]
    # a benchmark that declares no overview is left out
    plain = dataclasses.replace(TINYBENCH, overview=None)
    assert "TinyBench · Accuracy" not in overview_rows(frames, [get_benchmark("acebench"), plain]).columns


def _endpoint_run(store: Store, name: str, overall: float, **config: Any) -> str:
    return finished_acebench_run(store, name, overall, fingerprint=f"fp-{name}-{overall}", **config)


def test_from_a_real_store_comparable_runs_count_and_partial_runs_and_uploads_do_not(tmp_path: Path):
    store = Store(tmp_path / "board.sqlite")
    comparable = _endpoint_run(store, "Step-Audio 2", 0.4)
    _endpoint_run(store, "Step-Audio 2", 0.95, limit=20)
    _endpoint_run(store, "only-partial", 0.99, limit=5)
    upload(store, "only-uploaded")
    frames = {name: board_rows(name, store if name == "acebench" else None) for name in benchmark_names()}
    frame = overview_rows(frames)
    rows = frame.set_index(frame["model"].map(model_key))
    # the evaluated run joins the published StepEval row of the same model
    audio = rows.loc[model_key("Step-Audio 2")]
    assert audio[ACE] == pytest.approx(0.4) and audio["ACEBench · source"].startswith(f"evaluated run {comparable}")
    assert audio[LACKS_COLUMN] == "BFCL v4, τ²-bench, ToolBench-Static" and audio[STEPEVAL] > 0
    assert model_key("only-partial") not in rows.index and model_key("only-uploaded") not in rows.index


@pytest.mark.slow
def test_the_overview_page_and_its_api(tmp_path: Path):
    store = Store(tmp_path / "app.sqlite")
    _endpoint_run(store, "GPT-4o", 0.5)
    _endpoint_run(store, 'x<b>"bold"</b> & y', 0.7)  # a name typed by a visitor
    context = AppContext(store=store)
    with gr.Blocks() as demo:
        parts = overview_tab.build(context)
    assert [name for _, name in parts.open_buttons] == benchmark_names()
    assert [button.value for button, _ in parts.open_buttons] == [f"Open {b.title} table" for b in all_benchmarks()]
    assert [choice[1] for choice in parts.inputs[0].choices] == [1, 2, 3, 4, 5] and parts.inputs[0].value == 1
    page, note = parts.refresh(1)
    assert "No model has a figure on every benchmark yet" in note and "the most any has is 2 of 5" in note
    # each model's name links to its page; figures in %, one decimal; what it lacks under its name
    row = next(r for r in page.split("<tr>") if 'href="?model=GPT-4o"' in r)
    assert ">GPT-4o</a>" in row and ">81.1<" in row and ">1 of 5<" in row and "lacks BFCL v4" in row
    assert 'href="?model=x%3Cb%3E%22bold%22%3C/b%3E%20%26%20y"' in page
    assert ">x&lt;b&gt;&quot;bold&quot;&lt;/b&gt; &amp; y</a>" in page and "<b>" not in page
    models = page.count("<tr>") - 2  # the header's two rows
    assert f'data-rows="{models}"' in page and models > 50
    fewer, _ = parts.refresh(2)
    assert 'data-rows="8"' in fewer and "GPT-4o" not in fewer
    assert "mean win rate" in overview_tab.overview_note()
    launch_patiently(demo, server_name="127.0.0.1", prevent_thread_lock=True, quiet=True)
    try:
        result = Client(demo.local_url, verbose=False).predict(api_name="/overview")
    finally:
        demo.close()
        context.close()
    assert result["aggregate"] == aggregate_rule()
    rows = {model_key(row["model"]): row for row in table_rows(result)}
    assert result["headers"][:4] == ["rank", "model", "coverage", "win_rate"]
    gpt4o = rows[model_key("GPT-4o")]
    assert gpt4o[ACE] == 81.1 and gpt4o[TOOLBENCH] is None and 0 < gpt4o["win_rate"] <= 100
    assert gpt4o["coverage"] == "1 of 5" and gpt4o["benchmarks"] == 1 and gpt4o["rank"] == 1
    # the dominance count over /overview is 0
    frame = pd.DataFrame(result["data"], columns=result["headers"])
    assert dominance_violations(frame) == []
    assert rows[model_key("Step-Audio 2")]["StepEval-Audio-Toolcall · source"].startswith("published (modality audio")


@pytest.mark.parametrize("size", [(1440, 900), (390, 844)])
def test_the_overview_in_a_browser_ranks_the_published_models_and_links_each_to_its_page(tmp_path: Path,
                                                                                        size: tuple[int, int]):
    """A fresh store: the page lists every published model, ranked, each name a link to its page; the
    minimum-coverage control cuts the list to the models with more benchmarks; a phone reads one card per model
    without scrolling sideways."""
    with running_app(tmp_path) as app, browser_page() as (page, problems):
        page.set_viewport_size({"width": size[0], "height": size[1]})
        page.goto(app.url)
        open_tab(page, "Overview")
        table = page.locator(".overview-html")
        table.locator("tbody tr").nth(3).wait_for()
        assert int(table.get_attribute("data-rows")) > 50
        first = table.locator("tbody tr").first
        link = first.locator("a")
        assert link.get_attribute("href") == f"?model={quote(link.inner_text().strip())}"
        assert first.locator("td").first.inner_text().strip() == "1"
        if size[0] >= 640:  # every header on one line (each benchmark's title over its figures' names)
            heights = page.evaluate("[...document.querySelectorAll('.overview-html thead tr:last-child th')].map("
                                    "t => t.getBoundingClientRect().height / parseFloat(getComputedStyle(t).lineHeight))")
            assert heights and max(heights) < 2, heights
        else:  # the rule is folded: a phone reaches the first card on its first screen (it used to take ~1,350 px)
            top = page.evaluate("document.querySelector('.overview-html tbody tr').getBoundingClientRect().top + scrollY")
            assert top < size[1], top
        assert "hover" not in page.locator("body").inner_text().lower()
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"the page scrolls sideways by {overflow}px at {size[0]}px"
        if size[0] < 640:  # a card per model: the rank, the name and the figures it has, one under the other
            box = first.bounding_box()
            assert box["width"] <= size[0] and box["height"] > 3 * first.locator("td").first.bounding_box()["height"]
        page.get_by_label("2 of 5+").check()
        page.wait_for_function("document.querySelector('.overview-html').dataset.rows === '8'")
        keep_screenshot(page, f"overview-{size[0]}")
        # A benchmark's own table, one click away: the Leaderboard tab selected (by the page's script) with that board
        other = all_benchmarks()[1]
        page.get_by_role("button", name=f"Open {other.title} table", exact=True).click()
        wait_for_board(page, f"benchmark={other.name}")
        assert page.get_by_role("tab", name="Leaderboard", exact=True).get_attribute("aria-selected") == "true"
        assert page.locator(".board-html").is_visible()
    assert not [p for p in problems if "favicon" not in p], problems


def test_models_that_beat_each_other_in_a_circle_share_one_and_only_they():
    from evaluators.service.overview import circles

    beats = np.zeros((5, 5), dtype=bool)
    beats[0, 1] = beats[1, 2] = beats[2, 0] = True  # 0 > 1 > 2 > 0: each on a benchmark the next lacks
    beats[0, 3] = beats[3, 4] = True  # outside the circle: 0 > 3 > 4
    labels = list(circles(beats))
    assert labels[0] == labels[1] == labels[2] and len({labels[0], labels[3], labels[4]}) == 3
    assert list(circles(np.zeros((0, 0), dtype=bool))) == []
