"""Issue 42, the board's answer: each board ranks by its benchmark's headline (BFCL by Overall, as the official
board does), the figures made of others (BFCL's Overall and group means) carry the interval of the item bootstrap,
and an interval is written one way on the board and on a model's page."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from evaluators.core.registry import all_benchmarks, get_benchmark
from evaluators.engine.store import Store
from evaluators.publish.board_table import N_SUFFIX, composite_columns, composite_interval
from evaluators.service.board import BoardQuery, board_rows, board_updated, layout_for, query_board
from tests.acebench_fixtures import EXAMPLE_DIR
from tests.app_fixtures import finished_acebench_run, items_copy, running_app, upload
from tests.browser_fixtures import CHROMIUM, browser_page
from ui import model_tab


def test_every_board_sorts_by_the_headline_its_benchmark_declares():
    for benchmark in all_benchmarks():
        assert benchmark.overview is not None, benchmark.name
        assert benchmark.board_layout().default_sort == benchmark.overview.aggregate, benchmark.name
    assert layout_for("bfcl").default_sort == "overall"


def test_the_bfcl_board_ranks_by_overall_as_the_official_board():
    frame = board_rows("bfcl", None)
    shown = query_board(frame, layout_for("bfcl"), BoardQuery(view="all", part="ranked"))
    # by rank, then by Overall (a row with a wide interval may share a better rank than rows of higher Overall)
    order = list(zip(shown["rank"], -shown["overall"].astype(float)))
    assert order == sorted(order)
    # the official board's first: the best Overall, not the best Live AST (BitAgent-Bounty-8B, Overall 46.2)
    assert shown["model"].iloc[0] == frame.loc[frame["overall"].astype(float).idxmax(), "model"]
    assert shown["model"].iloc[0] != frame.loc[frame["live_ast"].astype(float).idxmax(), "model"]
    ranks = shown["rank"].tolist()
    assert ranks[0] == 1 and ranks == sorted(ranks)
    # ranks come from the intervals: rows whose Overall intervals overlap the leader's share its rank
    assert len(set(ranks)) < len(ranks)


def test_every_published_bfcl_row_has_an_overall_interval_and_a_run_without_overall_has_none():
    frame = board_rows("bfcl", None)
    for column in ("overall", "non_live_ast", "irrelevance_detection", "non_live_simple_ast"):
        low, value, high = (frame[column + s].astype(float) for s in ("_low", "", "_high"))
        # (a share of 0 or 1 in every part has no spread: its interval is the point)
        assert (low <= value).all() and (value <= high).all() and ((high - low) > 0).mean() > 0.9, column
    # Overall's parts: about ±1.6 points for the leader (thousands of items behind it), not a Wilson interval of
    # some n the figure is not a share of
    first = frame.loc[frame["overall"].astype(float).idxmax()]
    assert 0.01 < (first["overall_high"] - first["overall_low"]) / 2 < 0.025
    assert first.get("overall" + N_SUFFIX) is None or np.isnan(first.get("overall" + N_SUFFIX))
    parts = composite_columns(get_benchmark("bfcl"), layout_for("bfcl"))
    assert composite_interval({"overall": None, "live_ast": 0.8, "live_ast_n": 1351}, "overall", parts) is None
    # a run's row lacks web search and memory: no interval, however many parts it has
    run_row = {name: 0.8 for name, _ in parts["overall"]} | {"overall": 0.8}
    run_row |= {f"{name}{N_SUFFIX}": 200 for name, _ in parts["overall"] if name not in ("web_search", "memory")}
    assert composite_interval(run_row, "overall", parts) is None


def test_a_weighted_sum_has_the_interval_of_the_item_bootstrap():
    """The interval of a weighted sum of item shares equals the item bootstrap's (resampling each part's items),
    here checked against 20,000 seeded resamples of a mean of a mean."""
    parts = {"total": (("simple", 0.5), ("parallel", 0.25), ("other", 0.25)), "simple": (("a", 0.5), ("b", 0.5))}
    items = {"a": (0.9, 400), "b": (0.6, 100), "parallel": (0.75, 200), "other": (0.3, 50)}
    row: dict[str, object] = {name: share for name, (share, _) in items.items()}
    row |= {f"{name}{N_SUFFIX}": n for name, (_, n) in items.items()}
    row["simple"] = (0.9 + 0.6) / 2
    row["total"] = 0.5 * row["simple"] + 0.25 * 0.75 + 0.25 * 0.3  # type: ignore[operator]
    low, high = composite_interval(row, "total", parts)
    rng = np.random.default_rng(42)
    resampled = {name: rng.binomial(n, share, size=20_000) / n for name, (share, n) in items.items()}
    totals = 0.5 * (resampled["a"] + resampled["b"]) / 2 + 0.25 * resampled["parallel"] + 0.25 * resampled["other"]
    assert (high - low) / 2 == pytest.approx(1.959964 * totals.std(), rel=0.03)
    assert (low + high) / 2 == pytest.approx(row["total"])


def test_the_model_page_writes_an_interval_as_the_board_does():
    assert model_tab._interval({"value": 0.5, "low": 0.45, "high": 0.55}) == "<span class='model-ci'>± 5.0</span>"
    assert "−" in model_tab._interval({"value": 0.99, "low": 0.9, "high": 1.0})
    assert model_tab._interval({"value": 0.5, "low": None, "high": None}) == ""


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM} (apt-get install chromium)")
def test_a_visitor_opening_the_bfcl_board_reads_it_in_the_official_order(tmp_path: Path):
    frame = board_rows("bfcl", None)
    leader = frame.loc[frame["overall"].astype(float).idxmax()]
    with running_app(tmp_path) as app, browser_page() as (page, problems):
        page.goto(f"{app.url}?benchmark=bfcl", wait_until="load")
        # the page opens on its default board, then switches to the one its address names
        rows = page.locator(".board-ranked tbody tr").filter(visible=True)
        rows.locator("td.model a", has_text=leader["model"]).first.wait_for()
        first = rows.first
        assert first.locator("td.model a").inner_text() == leader["model"]
        assert page.locator(".board-ranked th.sorted").filter(visible=True).first.inner_text().startswith("Overall")
        # the Overall cell carries its interval, written as everywhere else
        cells = first.inner_text()
        assert f"{leader['overall'] * 100:.1f}" in cells and re.search(r"± \d\.\d", cells)
    assert not [p for p in problems if "favicon" not in p], problems


def test_a_partial_upload_says_it_is_partial_and_how_much_it_covers(tmp_path: Path):
    """A file that answers a few items of one subset: its reason names the coverage first (it used to say only that
    how the predictions were made is not known), and its row keeps the figure of the subset it has."""
    store = Store(tmp_path / "board.sqlite")
    first = (EXAMPLE_DIR / "predictions.jsonl").read_text(encoding="utf-8").splitlines()[0]
    one_line = tmp_path / "one.jsonl"
    one_line.write_text(first + "\n", encoding="utf-8")
    from evaluators.service.submissions import check_submission

    # before Add, the check says how the row will read: not ranked, and the very reason the board then shows
    preview = check_submission(one_line, "acebench", language="en", data_dir=items_copy(store)).board_preview()
    upload(store, "one-line-upload", one_line)
    frame = board_rows("acebench", store)
    row = frame[frame["model"] == "one-line-upload"].iloc[0]
    assert preview == row["apart_reason"]
    subsets = len(get_benchmark("acebench").subsets)
    assert re.fullmatch(rf"partial: 1 of {subsets} subsets, 1 of \d+ items answered; uploaded: how the predictions "
                        r"were made is not known; its figures: [^,;]+ \d+\.\d%", row["apart_reason"]), row["apart_reason"]
    shown = [c for c in layout_for("acebench").detail_columns if not np.isnan(float(row[c] if row[c] is not None else "nan"))]
    assert len(shown) == 1
    # its model page shows that figure, not "no figure"
    from evaluators.service import model_page
    from ui.context import AppContext

    context = AppContext(store=store)
    try:
        page = model_page.model_page(context, "one-line-upload")
        figures = [figure["column"] for part in page["benchmarks"] for row in part["rows"] for figure in row["figures"]]
        assert figures == shown
    finally:
        context.close()
    # the whole example file answers every item of every subset of its data: nothing partial is said
    upload(store, "whole-example")
    frame = board_rows("acebench", store)
    whole = frame.loc[frame["model"] == "whole-example", "apart_reason"].iloc[0]
    assert whole == "uploaded: how the predictions were made is not known"


def test_a_row_kept_apart_does_not_move_the_boards_last_update(tmp_path: Path):
    store = Store(tmp_path / "board.sqlite")
    published = board_updated(board_rows("acebench", None))
    upload(store, "an-upload-today")  # kept apart: changes no ranking
    frame = board_rows("acebench", store)
    assert frame.loc[frame["model"] == "an-upload-today", "updated"].iloc[0] > published
    assert board_updated(frame) == published


def test_one_identity_per_model_the_pickers_know_every_spelling_and_a_family_page_holds_its_snapshots(tmp_path: Path):
    from evaluators.service import model_page
    from ui.context import AppContext

    store = Store(tmp_path / "board.sqlite")
    finished_acebench_run(store, "gpt-4o-2024-11-20", 0.7)
    context = AppContext(store=store)
    try:
        choices = dict((value, label) for label, value in model_page.board_model_choices(context))
        assert len(choices) == len(model_page.board_model_choices(context))  # one choice per model
        # the ACEBench board's spelling is in the label of the one model it is
        assert choices["Kimi-K2-Instruct"].startswith("Kimi-K2-Instruct (also Kimi-k2-0711")
        assert "Kimi-k2-0711" not in choices
        # GPT-4o's page holds its dated snapshot's run, named apart; the snapshot's own page is that model alone
        family = model_page.model_page(context, "GPT-4o")
        rows = [row for part in family["benchmarks"] for row in part["rows"]]
        snapshot = [row for row in rows if row["snapshot"]]
        assert [row["model"] for row in snapshot] == ["gpt-4o-2024-11-20"] and snapshot[0]["figures"]
        assert any(not row["snapshot"] and row["model"] == "GPT-4o" for row in rows)
        assert "gpt-4o-2024-11-20" in {run["model"] for run in family["runs"]}
        alone = model_page.model_page(context, "gpt-4o-2024-11-20")
        assert {row["model"] for part in alone["benchmarks"] for row in part["rows"]} == {"gpt-4o-2024-11-20"}
        html_page = model_tab.page_html(family)
        assert "snapshot <b>gpt-4o-2024-11-20</b>" in html_page
    finally:
        context.close()


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM} (apt-get install chromium)")
def test_typing_a_boards_spelling_into_compare_finds_the_model(tmp_path: Path):
    with running_app(tmp_path) as app, browser_page() as (page, problems):
        page.goto(f"{app.url}?model=GPT-4o", wait_until="load")
        page.locator(".model-page h2", has_text="GPT-4o").first.wait_for()
        chosen = page.get_by_label("Models (2 to 6)")
        chosen.click()
        chosen.fill("Kimi-k2-0711")
        option = page.get_by_role("option", name=re.compile(r"^Kimi-K2-Instruct \(also Kimi-k2-0711"))
        option.click()
        page.keyboard.press("Escape")
        page.locator(".block", has=chosen).last.locator(".token").nth(1).wait_for()  # GPT-4o and Kimi-K2-Instruct
        page.get_by_role("button", name="Compare", exact=True).click()
        compared = page.locator(".model-page", has_text="Each model by one row of the view").first
        refused = page.locator("#compare-note", has_text="⚠️")
        compared.or_(refused).first.wait_for()
        assert not refused.count(), refused.inner_text()
        # the comparison names the model by its one name, and the board's spelling beside it
        assert "Kimi-K2-Instruct as Kimi-k2-0711" in compared.inner_text()
    assert not [p for p in problems if "AbortError" not in p and "Connection errored out" not in p], problems


def _toolbench_scores(count: int, seed: int = 7) -> list:
    from random import Random

    from evaluators.core.types import SampleScore

    draw = Random(seed)
    return [SampleScore(f"s{i}", "in_domain" if i % 2 else "out_of_domain", True,
                        metrics={"act_em": float(draw.random() < 0.6), "f1": draw.random(), "rouge_l": draw.random()})
            for i in range(count)]


def test_a_mean_over_items_keeps_the_interval_of_the_item_bootstrap_in_its_report():
    """ToolBench's F1 is a mean over steps: its report keeps mean ± 1.96·sd/√n (the bootstrap's spread, exact),
    checked against 20,000 seeded resamples of the steps."""
    from evaluators.benchmarks.toolbench_static.report import summarize

    scores = _toolbench_scores(300)
    report = summarize([], scores)
    low, high = report.intervals["summary"]["f1"]
    values = np.array([score.metrics["f1"] for score in scores])
    means = np.random.default_rng(3).choice(values, size=(20_000, len(values))).mean(axis=1)
    assert (high - low) / 2 == pytest.approx(1.959964 * means.std(), rel=0.03)
    assert (low + high) / 2 == pytest.approx(report.summary["f1"])
    assert set(report.intervals["subsets"]) == {"in_domain", "out_of_domain"}
    # kept through the report's JSON, as the store keeps it
    from evaluators.core.types import Report

    assert Report.from_json(report.to_json()).intervals == report.intervals


def test_stepeval_shares_of_triggered_calls_and_their_macro_mean_have_intervals():
    from evaluators.benchmarks.stepeval_audio.report import tool_estimates, tool_intervals

    counts = {"positives": 40, "negatives": 60, "TP": 30, "FN": 10, "FP": 10, "FP_any": 12, "right_tool": 27,
              "param_ok": 20}
    estimates = {"tool_a": tool_estimates(counts), "tool_b": tool_estimates({**counts, "TP": 36, "param_ok": None})}
    found = tool_intervals(estimates)
    # precision of tool_a: 30 of the 40 calls it drew; its interval 0.75 ± 1.96·√(0.75·0.25/40)
    low, high = found["subsets"]["tool_a"]["precision"]
    assert (high - low) / 2 == pytest.approx(1.959964 * (0.75 * 0.25 / 40) ** 0.5)
    # the macro mean of two tools: half the root of the summed variances
    b = 36 / 46
    macro = found["summary"]["precision"]
    assert (macro[1] - macro[0]) / 2 == pytest.approx(1.959964 * ((0.75 * 0.25 / 40 + b * (1 - b) / 46) ** 0.5) / 2)
    assert "param_accuracy" not in found["subsets"]["tool_b"]  # a tool without arguments has none


def test_a_toolbench_runs_board_row_carries_its_reports_intervals_and_ranks_by_them(tmp_path: Path):
    from evaluators.benchmarks.toolbench_static.report import summarize

    store = Store(tmp_path / "board.sqlite")
    settings = {"base_url": "http://127.0.0.1:9/v1", "model": "tb-model", "request_mode": "prompt",
                "prompt_style": "official"}
    config = {"benchmark": "toolbench_static", "model": settings, "language": None, "subsets": [], "limit": None}
    run_id = store.create_run("toolbench_static", None, "tb-model", settings["base_url"], config, "fp-tb", 1)
    report = summarize([], _toolbench_scores(400))
    store.save_scores(run_id, "official", [], report)
    store.set_status(run_id, "finished")
    frame = board_rows("toolbench_static", store)
    row = frame[(frame["run_id"] == run_id) & (frame["view"] == "in_domain")].iloc[0]
    kept = report.intervals["subsets"]["in_domain"]
    assert (row["f1_low"], row["f1_high"]) == pytest.approx(tuple(kept["f1"]))
    assert (row["rouge_l_low"], row["rouge_l_high"]) == pytest.approx(tuple(kept["rouge_l"]))
    # Act.EM is a share of the view's items: its Wilson interval, as before
    assert row["act_em_n"] == 200 and row["act_em_low"] is not None
    # published rows print no item counts: no interval is made up for them
    published = frame[frame["source"] == "published"]
    assert published["f1_low"].map(lambda value: value is None).all()


def test_the_board_finds_a_row_by_its_models_one_name_and_says_it_on_hover():
    from ui.board_html import model_cell

    frame = board_rows("acebench", None)
    found = query_board(frame, layout_for("acebench"), BoardQuery(view="en", search="Kimi-K2-Instruct"))
    assert list(found["model"]) == ["Kimi-k2-0711"]
    cell = model_cell({"model": "Kimi-k2-0711"})
    assert 'title="Kimi-K2-Instruct, Kimi-k2-0711 in this table: every benchmark"' in cell and ">Kimi-k2-0711</a>" in cell
