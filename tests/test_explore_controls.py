"""The Explore tab's controls: subset and error type filters offer what the chosen run holds, the run
pickers offer runs finished since the page loaded, and a flipped sample opens its evidence in both runs.
Logic on a store in tmp_path, the real app through gradio_client, and one real headless Chromium."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from gradio_client import Client

from evaluators.core.display_names import error_type_title, subset_title
from evaluators.core.errors import ToolboardError
from evaluators.engine.store import Store
from evaluators.service import explore_queries
from evaluators.service.explore import ALL, COMPARE_COLUMNS, compare_runs, filter_choices, kept_choice, run_label, sample_table
from tests.acebench_fixtures import EXAMPLE_DIR
from tests.app_fixtures import RunningApp, running_app, table_rows, upload, write_predictions
from tests.browser_fixtures import CHROMIUM, browser_page, open_tab, wait_until
from ui.context import AppContext
from ui.explore_tab import (
    SAMPLE_HEADER,
    compare_view,
    compared_pair,
    detail_html,
    filters_view,
    flipped_detail_html,
    run_choices,
    shown_table,
    titled_choices,
)

HOSTILE = "<b>bold</b><script>alert(1)</script>[]"


def example_lines() -> list[str]:
    return (EXAMPLE_DIR / "predictions.jsonl").read_text(encoding="utf-8").splitlines()


def hostile_predictions(folder: Path) -> Path:
    """The example's predictions with one right answer (normal_atom_bool_0) replaced by hostile text."""
    lines = [line if '"normal_atom_bool_0"' not in line else f'{{"id": "normal_atom_bool_0", "output": "{HOSTILE}"}}'
             for line in example_lines()]
    return write_predictions(folder / "hostile.jsonl", lines)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store(tmp_path / "t.db")
    yield opened
    opened.close()


# ---- the choices functions, on a store -------------------------------------------------------------


def test_filter_choices_are_the_runs_subsets_and_error_types_led_by_all(store: Store):
    run_id = upload(store, "Example model")
    scores = store.load_scores(run_id)
    choices = filter_choices(store, run_id)
    assert choices["subset"] == [ALL, *sorted({score.subset for score in scores})]
    assert choices["error_type"] == [ALL, *sorted({score.error_type for score in scores if score.error_type})]
    assert {"normal_atom_bool", "agent_multi_step"} <= set(choices["subset"])
    assert {"wrong_value", "format_error"} <= set(choices["error_type"]) and "" not in choices["error_type"]
    # Each mode has its own verdicts, hence its own error types.
    strict = store.load_scores(run_id, "strict")
    assert filter_choices(store, run_id, "strict")["error_type"] == [
        ALL, *sorted({score.error_type for score in strict if score.error_type})]


def test_filter_choices_cost_one_query_and_an_unknown_run_offers_only_all(store: Store,
                                                                         monkeypatch: pytest.MonkeyPatch):
    run_id = upload(store, "Example model")
    queries: list[str] = []
    original = store._query
    monkeypatch.setattr(store, "_query", lambda sql, params=(): queries.append(sql) or original(sql, params))
    filter_choices(store, run_id)
    assert len(queries) == 1
    assert filter_choices(store, "no-such-run") == {"subset": [ALL], "error_type": [ALL]}


def test_a_choice_is_kept_while_the_new_run_has_it_else_all():
    assert kept_choice("normal_atom_bool", [ALL, "normal_atom_bool"]) == "normal_atom_bool"
    assert kept_choice("special_incomplete", [ALL, "normal_atom_bool"]) == ALL
    assert kept_choice(None, [ALL]) == ALL and kept_choice("", [ALL, "x"]) == ALL


def test_all_filters_nothing_and_a_chosen_subset_or_error_type_filters(store: Store):
    run_id = upload(store, "Example model")
    everything = sample_table(store, run_id)
    assert sample_table(store, run_id, subset=ALL, verdict=ALL, error_type=ALL).equals(everything)
    only = sample_table(store, run_id, subset="normal_atom_bool")
    assert list(only["subset"].unique()) == ["normal_atom_bool"] and 0 < len(only) < len(everything)
    wrong_value = sample_table(store, run_id, error_type="wrong_value")
    assert len(wrong_value) and set(wrong_value["error_type"]) == {"wrong_value"}


def test_a_visitor_gets_no_choices_from_a_run_not_theirs(store: Store):
    run_id = upload(store, "Someone's model")
    with sqlite3.connect(store.path) as db:  # as if another visitor of a public deployment had added it
        db.execute("UPDATE runs SET owner = 'someone-else' WHERE id = ?", (run_id,))
    context = AppContext(store=store, public=True)
    try:
        assert filters_view(context, run_id, "official", owner="me") == {"subset": [ALL], "error_type": [ALL]}
        assert len(filters_view(context, run_id, "official", owner="someone-else")["subset"]) > 2
        refused = flipped_detail_html(context, run_id, run_id, "normal_atom_bool_0", "official", owner="me")
        assert "Raw output" not in refused and "here that you can see" in refused
    finally:
        context.close()


def test_a_flipped_sample_shows_its_escaped_evidence_in_both_runs(store: Store, tmp_path: Path):
    first = upload(store, "First model")
    second = upload(store, "Second model", hostile_predictions(tmp_path))
    table = compare_runs(store, first, second)
    assert "normal_atom_bool_0" in set(table["sample_id"])
    context = AppContext(store=store)
    try:
        shown = flipped_detail_html(context, first, second, "normal_atom_bool_0", "official")
    finally:
        context.close()
    assert f"First run <code>{first}</code>" in shown and f"Second run <code>{second}</code>" in shown
    assert shown.count("Gold answer") == 2 and shown.count("Raw output") == 2
    assert "<script>" not in shown and "&lt;script&gt;alert(1)&lt;/script&gt;" in shown
    assert "Click a flipped sample" in flipped_detail_html(context, first, second, "", "official")


def test_a_run_compared_with_itself_is_refused_and_the_runs_columns_are_named_by_model_id_and_day(store: Store,
                                                                                                   tmp_path: Path):
    first = upload(store, "First <model>")
    second = upload(store, "Second model", hostile_predictions(tmp_path))
    with pytest.raises(ToolboardError, match="choose two different runs"):
        compare_runs(store, first, first)
    context = AppContext(store=store)
    try:
        table, note = compare_view(context, first, second, "official")
        labels = [run_label(store.get_run(run_id)) for run_id in (first, second)]
        assert list(table.columns) == ["sample_id", "subset", "change", *labels] and "samples flipped" in note
        assert labels[0].startswith("First <model> · " + first.rsplit("-", 1)[-1] + " · 20")
        assert compared_pair(first, second, note) == [first, second]
        refused, why = compare_view(context, first, first, "official")
        assert list(refused.columns) == list(COMPARE_COLUMNS) and refused.empty
        assert "choose two different runs" in why and compared_pair(first, first, why) == []
        refused, why = compare_view(context, first, "no-such-run", "official")
        assert refused.empty and "no run" in why
    finally:
        context.close()


def test_runs_of_other_items_are_refused_naming_the_benchmark_by_its_title(store: Store):
    english = upload(store, "English model")
    chinese = upload(store, "Chinese model")
    with sqlite3.connect(store.path) as db:  # as if scored on the Chinese items
        db.execute("UPDATE runs SET language = 'zh' WHERE id = ?", (chinese,))
    with pytest.raises(ToolboardError, match="not on the same benchmark and language") as refused:
        compare_runs(store, english, chinese)
    assert "ACEBench English" in str(refused.value) and "ACEBench Chinese" in str(refused.value)


# ---- what a person reads: display names, the ids kept as the values ------------------------------------


def test_filter_choices_read_as_display_names_and_keep_the_ids_as_values():
    titled = titled_choices("acebench", {"subset": [ALL, "normal_atom_bool", "special_incomplete"],
                                         "error_type": [ALL, "wrong_value"]})
    assert titled == {"subset": [(ALL, ALL), ("Atom: Bool", "normal_atom_bool"),
                                 ("Special: incomplete", "special_incomplete")],
                      "error_type": [(ALL, ALL), ("Wrong value", "wrong_value")]}
    # A run of a benchmark no longer registered: keys made readable; two keys of one title told apart.
    odd = titled_choices("gone_benchmark", {"subset": [ALL, "a_b", "a b"], "error_type": [ALL]})
    assert odd["subset"] == [(ALL, ALL), ("A b (a_b)", "a_b"), ("A b (a b)", "a b")]
    assert titled_choices("acebench", {"subset": [ALL], "error_type": [ALL]}) == {"subset": [(ALL, ALL)],
                                                                                 "error_type": [(ALL, ALL)]}


def test_the_sample_tables_show_titles_and_worded_headers_and_the_api_keeps_the_keys(store: Store, tmp_path: Path):
    run_id = upload(store, "Example model")
    table = sample_table(store, run_id)
    shown = shown_table(table, "acebench")
    assert list(shown.columns) == [SAMPLE_HEADER, "Subset", "Verdict", "Error type", "Rule", "Latency (s)",
                                   "Request error"]
    assert list(shown[SAMPLE_HEADER]) == list(table["sample_id"])  # ids stay: what a click on a row opens
    assert list(shown["Subset"]) == [subset_title("acebench", key) for key in table["subset"]]
    assert "Atom: Bool" in set(shown["Subset"]) and not any("_" in title for title in shown["Subset"])
    assert "Wrong value" in set(shown["Error type"]) and "" in set(shown["Error type"])  # right answers: none
    # The flipped-samples table: each run's verdict column, an error type by its display name.
    second = upload(store, "Second model", hostile_predictions(tmp_path))
    flipped = compare_runs(store, run_id, second)
    runs = tuple(flipped.columns[3:])
    shown = shown_table(flipped, "acebench", runs)
    assert list(shown.columns) == [SAMPLE_HEADER, "Subset", "Change", *runs]
    row = shown.set_index(SAMPLE_HEADER).loc["normal_atom_bool_0"]
    assert row["Subset"] == "Atom: Bool" and row[runs[0]] == "right"
    assert row[runs[1]] == error_type_title(str(flipped.set_index("sample_id").loc["normal_atom_bool_0", runs[1]]))
    assert list(shown_table(pd.DataFrame(columns=list(COMPARE_COLUMNS)), "").columns) == [
        SAMPLE_HEADER, "Subset", "Change", "First run", "Second run"]
    context = AppContext(store=store)
    try:
        # The API's views keep the keys.
        assert list(compare_view(context, run_id, second, "official")[0].columns[:3]) == ["sample_id", "subset", "change"]
        assert explore_queries.run_benchmark(context, run_id) == "acebench"
        assert explore_queries.run_benchmark(context, "no-such-run") == "" == explore_queries.run_benchmark(context, None)
    finally:
        context.close()


def test_a_sample_and_a_run_are_named_by_display_names(store: Store):
    run_id = upload(store, "Example model")
    context = AppContext(store=store)
    try:
        right = detail_html(context, run_id, "normal_atom_bool_0", "official")
        wrong_id = next(score.sample_id for score in store.load_scores(run_id) if score.error_type == "wrong_value")
        wrong = detail_html(context, run_id, wrong_id, "official")
        label = dict((value, label) for label, value in run_choices(context))[run_id]
    finally:
        context.close()
    assert "Subset: <span title='normal_atom_bool'>Atom: Bool</span>; error type: —" in right
    assert "error type: <span title='wrong_value'>Wrong value</span>" in wrong
    assert f"{run_id} · ACEBench English · Example model" in label


# ---- the real app through gradio_client ---------------------------------------------------------


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    with running_app(tmp_path_factory.mktemp("explore_app")) as running:
        yield running


@pytest.mark.slow
def test_the_api_gives_a_runs_filter_choices_and_filters_with_all(app: RunningApp):
    client = Client(app.url, verbose=False)
    run_id = upload(app.context.store, "API model")  # added after the client connected
    assert run_id in {pair[1] for pair in client.predict(api_name="/explore_runs")}
    choices = client.predict(run_id, api_name="/sample_filters")
    assert choices == filter_choices(app.context.store, run_id)
    everything = client.predict(run_id=run_id, api_name="/samples")
    assert client.predict(run_id=run_id, subset=ALL, verdict=ALL, error_type=ALL, api_name="/samples") == everything
    wrong_value = table_rows(client.predict(run_id=run_id, error_type="wrong_value", api_name="/samples"))
    assert wrong_value and {row["error_type"] for row in wrong_value} == {"wrong_value"}
    assert client.predict("no-such-run", api_name="/sample_filters") == {"subset": [ALL], "error_type": [ALL]}


@pytest.mark.slow
def test_the_api_shows_a_flipped_samples_evidence_in_both_runs(app: RunningApp, tmp_path: Path):
    client = Client(app.url, verbose=False)
    first = upload(app.context.store, "First model")
    second = upload(app.context.store, "Second model", hostile_predictions(tmp_path))
    flipped = table_rows(client.predict(run_a=first, run_b=second, api_name="/compare"))
    assert {"sample_id": "normal_atom_bool_0", "change": "broken"}.items() <= next(
        row for row in flipped if row["sample_id"] == "normal_atom_bool_0").items()
    shown = client.predict(first, second, "normal_atom_bool_0", api_name="/compare_sample")
    assert first in shown and second in shown and shown.count("Gold answer") == 2
    assert "<script>" not in shown and "&lt;script&gt;" in shown


# ---- a real browser -------------------------------------------------------------------------------


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_a_run_added_after_the_page_loaded_is_offered_filtered_and_compared_in_a_browser(tmp_path: Path):
    with running_app(tmp_path) as app, browser_page() as (page, problems):
        first = upload(app.context.store, "First model")
        page.goto(app.url, wait_until="load")
        open_tab(page, "Explore")
        page.get_by_text("20 samples", exact=True).wait_for()  # the newest run, chosen when the page loaded
        # A subset of the first run, to be kept when a run that has it is chosen.
        page.get_by_label("Subset", exact=True).click()
        page.get_by_role("option", name="Atom: Bool", exact=True).click()
        page.get_by_text("1 samples", exact=True).wait_for()

        # Added after the page loaded, on other data (one subset only): offered once the picker has focus.
        second = upload(app.context.store, "Second model", write_predictions(tmp_path / "second.jsonl", [
            {"id": "normal_atom_bool_0", "output": HOSTILE}]), data=app.data)
        page.get_by_label("Run", exact=True).click()
        page.get_by_role("option", name=re.compile("Second model")).click()
        page.get_by_text("30 samples", exact=True).wait_for()  # all of its one subset, the one still chosen
        assert second in page.get_by_label("Run", exact=True).input_value()
        assert page.get_by_label("Subset", exact=True).input_value() == "Atom: Bool"
        page.get_by_label("Subset", exact=True).click()
        page.get_by_role("option", name="Atom: Bool", exact=True).wait_for()
        assert offered(page) == [ALL, "Atom: Bool"]
        page.keyboard.press("Escape")

        # Compare the two runs (the second picker learns of the new run on focus), then open a flipped sample.
        page.get_by_label("First run").click()
        page.get_by_role("option", name=re.compile("Second model")).wait_for()
        page.get_by_role("option", name=re.compile("First model")).click()
        page.get_by_label("Second run").click()
        # the first picker's list may still be in the page: the second's comes after it
        page.get_by_role("option", name=re.compile("Second model")).last.click()
        page.get_by_role("button", name="Compare").click()
        page.get_by_text(re.compile("samples flipped")).wait_for()
        page.get_by_role("grid", name="Flipped samples").get_by_text("normal_atom_bool_0").filter(visible=True).first.click()
        page.get_by_text(re.compile(f"^Second run {second}")).wait_for()
        page.get_by_text(re.compile(f"^First run {first}")).wait_for()
        html = page.content()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert(1)" not in html
    assert not problems, "\n".join(problems)


def offered(page) -> list[str]:
    """The texts of the open dropdown's options (the chosen one's check mark taken off)."""
    return [text.replace("✓", "").strip() for text in page.get_by_role("option").all_inner_texts()]


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_the_filters_read_display_names_and_still_filter_by_the_ids_in_a_browser(tmp_path: Path):
    with running_app(tmp_path) as app, browser_page() as (page, problems):
        run_id = upload(app.context.store, "Example model")
        keys = filter_choices(app.context.store, run_id)
        page.goto(app.url, wait_until="load")
        open_tab(page, "Explore")
        page.get_by_text("20 samples", exact=True).wait_for()
        assert "ACEBench English" in page.get_by_label("Run", exact=True).input_value()

        subset = page.get_by_label("Subset", exact=True)
        subset.click()
        page.get_by_role("option", name=ALL, exact=True).wait_for()
        shown = offered(page)
        assert shown == [ALL, *(subset_title("acebench", key) for key in keys["subset"][1:])], shown
        assert "Atom: Bool" in shown and not any("_" in text for text in shown), shown
        page.get_by_role("option", name="Atom: Bool", exact=True).click()
        atom_bool = sample_table(app.context.store, run_id, subset="normal_atom_bool")
        page.get_by_text(f"{len(atom_bool)} samples", exact=True).wait_for()  # filtered by the id behind the title
        assert subset.input_value() == "Atom: Bool"
        samples = page.get_by_role("grid", name="Samples", exact=True)
        samples.get_by_text(atom_bool["sample_id"][0], exact=True).filter(visible=True).first.wait_for()
        shown_rows = samples.inner_text()
        # the subset's key only inside sample ids, never as a cell of its own
        assert "Atom: Bool" in shown_rows and not re.search(r"(^|\s)normal_atom_bool(\s|$)", shown_rows), shown_rows

        # Back to all subsets, then one error type: offered by its display name, filtering by its id.
        subset.click()
        page.get_by_role("option", name=ALL, exact=True).click()
        page.get_by_text("20 samples", exact=True).wait_for()
        page.get_by_label("Error type", exact=True).click()
        page.get_by_role("option", name="Wrong value", exact=True).wait_for()
        assert offered(page) == [ALL, *(error_type_title(key) for key in keys["error_type"][1:])]
        page.get_by_role("option", name="Wrong value", exact=True).click()
        wrong_value = sample_table(app.context.store, run_id, error_type="wrong_value")
        page.get_by_text(f"{len(wrong_value)} samples", exact=True).wait_for()
        table_text = samples.inner_text()
        assert "Wrong value" in table_text and "wrong_value" not in table_text
        assert "Error type" in grid_headers(page, "Samples") and "error_type" not in grid_headers(page, "Samples")

        # A sample's evidence names its subset and error type the same way.
        page.get_by_label("Sample id").fill(wrong_value["sample_id"][0])
        page.get_by_label("Sample id").press("Enter")
        title = subset_title("acebench", wrong_value["subset"][0])
        page.get_by_text(f"Subset: {title}; error type: Wrong value", exact=False).wait_for()
    assert not problems, "\n".join(problems)


def grid_headers(page, name: str) -> list[str]:
    """The header texts of a visible Dataframe (its grid's column headers)."""
    grid = page.get_by_role("grid", name=name, exact=True)
    return [text.strip() for text in grid.get_by_role("columnheader").filter(visible=True).all_inner_texts()
            if text.strip()]


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_a_refused_compare_clears_the_previous_comparison_and_says_why_in_a_browser(tmp_path: Path):
    with running_app(tmp_path) as app, browser_page() as (page, problems):
        first = upload(app.context.store, "First model")
        second = upload(app.context.store, "Second model", hostile_predictions(tmp_path))
        page.goto(app.url, wait_until="load")
        open_tab(page, "Explore")
        page.get_by_text("20 samples", exact=True).wait_for()
        page.get_by_label("First run").click()
        page.get_by_role("option", name=re.compile("First model")).click()
        page.get_by_label("Second run").click()
        # the first picker's list may still be in the page: the second's comes after it
        page.get_by_role("option", name=re.compile("Second model")).last.click()
        page.get_by_role("button", name="Compare").click()
        page.get_by_text(re.compile("samples flipped")).wait_for()
        flipped = page.get_by_role("grid", name="Flipped samples")
        flipped.get_by_text("normal_atom_bool_0").filter(visible=True).first.wait_for()
        headers = grid_headers(page, "Flipped samples")
        # The runs' columns are named by their model, short id and day, not by an index or a bare id.
        assert any(header.startswith("First model · " + first.rsplit("-", 1)[-1]) for header in headers), headers
        assert any(header.startswith("Second model · " + second.rsplit("-", 1)[-1]) for header in headers), headers

        # The same run twice: refused, the reason said, the previous comparison gone.
        page.get_by_label("Second run").click()
        page.get_by_role("option", name=re.compile("First model")).last.click()
        page.get_by_role("button", name="Compare").click()
        page.get_by_text(re.compile("choose two different runs")).wait_for()
        wait_until(page, lambda: not flipped.get_by_text("normal_atom_bool_0").filter(visible=True).count(),
                   "the previous comparison's rows are still shown after a refused compare")
        headers = grid_headers(page, "Flipped samples")
        assert not {"1", "2", "3"} & set(headers), headers
        assert not page.get_by_text(re.compile("samples flipped")).count()
    assert not problems, "\n".join(problems)
