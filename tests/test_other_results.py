"""Others' results (evaluators/publish/other_results.py): the `contents` of other toolboard results datasets join the board,
labelled with their repo, read from a fake Hub (tests/fake_hub_repo.py) holding Parquet files written by
dataset_rows.contents_table from real stores; the board (board_rows), the app's context and its /leaderboard
API with them; the About field on private deployments only."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from evaluators.engine.run_document import export_run, import_run
from evaluators.engine.store import Store
from evaluators.publish import dataset_rows, dataset_schema
from evaluators.publish.other_results import OtherResults, local_folder, parse_repos
from evaluators.service.app_services import OTHER_RESULTS_MAX_AGE
from evaluators.service.board import ORIGIN_COLUMN, BoardQuery, board_rows, layout_for, query_board
from evaluators.service.overview import overview_rows
from tests.aged_sources import reread_once_aged
from tests.app_fixtures import table_rows, upload
from tests.browser_fixtures import CHROMIUM, browser_page, open_tab
from tests.fake_hub_repo import FakeHubRepo, FakeRepo, _commit_id, pointed_hub
from ui.about_tab import OTHER_RESULTS_LABEL
from ui.app import build_app, launch_options, launch_patiently
from ui.context import AppContext, context_from_env

pa = pytest.importorskip("pyarrow", reason="pyarrow (installed with `datasets`) is not installed")
pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow (installed with `datasets`) is not installed")

TOKEN = "hf_fakeOtherResults0123456789abcdef"
CONTENTS = f"contents/{dataset_schema.DATA_FILE}"
MODES = ("official", "strict")


# ---- the fake Hub and the datasets on it --------------------------------------------------------


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHubRepo]:
    """A fake Hub that only accepts TOKEN (HF_TOKEN), with HF_ENDPOINT pointing at it (fake_hub_repo.pointed_hub)."""
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    with pointed_hub(tmp_path, monkeypatch, TOKEN) as server:
        yield server


def parquet_bytes(table: Any) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def edited(table: Any, change: Callable[[dict[str, Any]], dict[str, Any] | None]) -> Any:
    """The table with each row changed (or left out where `change` returns None), its schema kept."""
    rows = [change(dict(row)) for row in table.to_pylist()]
    return pa.Table.from_pylist([row for row in rows if row is not None], schema=table.schema)


def publish(hub: FakeHubRepo, repo_id: str, files: dict[str, bytes]) -> None:
    """A new head commit of the dataset repo holding `files` (the repo is made when new)."""
    repo = hub.repos.setdefault(f"datasets/{repo_id}", FakeRepo(private=True))
    repo.head = _commit_id(repo.head, files)
    repo.commits[repo.head] = {"README.md": b"---\nconfigs: []\n---\n", **files}


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """Three stores made through the real APIs: two others' (a, b) and the local one. Runs (uploads of the built-in
    ACEBench example): a has `a_only`, `shared` (also copied into b) and `clash` (also copied into the local store);
    b has `b_only` and `shared`; the local store has `clash` and its own `ours`."""
    a, b, local = (Store(tmp_path / name / "toolboard.db") for name in ("a", "b", "local"))
    runs = {"a_only": upload(a, "model-from-a"), "shared": upload(a, "model-in-both"), "clash": upload(a, "model-clash"),
            "b_only": upload(b, "model-from-b"), "ours": upload(local, "model-of-ours")}
    assert import_run(b, export_run(a, runs["shared"])) and import_run(local, export_run(a, runs["clash"]))
    yield {"a": a, "b": b, "local": local, "runs": runs}
    for store in (a, b, local):
        store.close()


def local_ids(store: Store) -> list[str]:
    return [run.id for run in store.list_runs()]


def rows_of(loaded: Any, benchmark: str = "acebench", mode: str = "official") -> list[dict[str, Any]]:
    return loaded.rows_for(benchmark, mode)


# ---- loading and merging ------------------------------------------------------------------------


@pytest.mark.slow
def test_two_datasets_join_labelled_local_runs_win_and_the_first_repo_wins(hub: FakeHubRepo, stores: dict[str, Any],
                                                                          tmp_path: Path):
    runs = stores["runs"]
    # A metric column this board does not know, and a benchmark not registered here: ignored, skipped and counted.
    table_a = dataset_rows.contents_table(stores["a"]).append_column("zz_unknown_metric", pa.array(
        [0.5] * dataset_rows.contents_table(stores["a"]).num_rows, pa.float64()))
    foreign = edited(dataset_rows.contents_table(stores["b"]), lambda row: {**row, "benchmark": "not_here"}
                     if row["source"] == "uploaded" else None)
    publish(hub, "org/a", {CONTENTS: parquet_bytes(table_a)})
    publish(hub, "org/b", {CONTENTS: parquet_bytes(dataset_rows.contents_table(stores["b"])),
                           "contents/foreign.parquet": parquet_bytes(foreign)})

    loaded = OtherResults(tmp_path / "home").load("org/a, org/b", local_ids(stores["local"]))

    assert loaded.repos == ("org/a", "org/b") and loaded.problems == [] and loaded.version == 1
    official = rows_of(loaded)
    by_run = {(row["run_id"], row[ORIGIN_COLUMN]) for row in official}
    assert by_run == {(runs["a_only"], "org/a"), (runs["shared"], "org/a"), (runs["b_only"], "org/b")}
    assert all(row["details"].startswith(f"from {row[ORIGIN_COLUMN]}") for row in official)
    assert all(row["newest"] is False and row["source"] == "uploaded" for row in official)
    assert all("zz_unknown_metric" not in row and "benchmark" not in row for row in official)
    assert {row["run_id"] for row in rows_of(loaded, mode="strict")} == {runs["a_only"], runs["shared"], runs["b_only"]}
    # their published rows never join: this board's own tables hold them
    assert rows_of(loaded, "toolbench_static") == [] and rows_of(loaded, "stepeval_audio") == []

    dropped = {(item.repo_id, item.run_id): item for item in loaded.dropped}
    assert set(dropped) == {("org/a", runs["clash"]), ("org/b", runs["shared"])}
    assert "a run of this board has that id" in dropped[("org/a", runs["clash"])].why
    assert "org/a, listed first" in dropped[("org/b", runs["shared"])].why
    assert dropped[("org/b", runs["shared"])].rows == 2  # its official and strict rows

    report_a, report_b = loaded.reports
    assert (report_a.repo_id, report_a.joined, report_a.runs) == ("org/a", 4, 2)
    assert (report_b.repo_id, report_b.joined, report_b.runs) == ("org/b", 2, 1)
    published = sum(1 for row in table_a.to_pylist() if row["source"] == "published")
    assert any(line.startswith(f"{published} rows of published") for line in report_a.skipped)
    assert any(line == "4 rows of benchmark 'not_here' (not registered here)" for line in report_b.skipped)
    summary = loaded.summary()
    assert "org/a: 4 rows of 2 runs joined" in summary and f"run {runs['clash']} dropped" in summary
    assert f"org/b: run {runs['shared']} dropped (2 rows): it joined from org/a, listed first" in summary
    assert TOKEN not in summary


@pytest.mark.slow
def test_the_board_shows_their_rows_beside_ours_and_never_over_ours(hub: FakeHubRepo, stores: dict[str, Any],
                                                                    tmp_path: Path):
    runs, local = stores["runs"], stores["local"]
    # Their toolboard said b's run is comparable (apart_reason written empty): it ranks beside ours.
    comparable = edited(dataset_rows.contents_table(stores["b"]), lambda row: {**row, "apart_reason": ""}
                        if row["run_id"] == runs["b_only"] else row)
    publish(hub, "org/a", {CONTENTS: parquet_bytes(dataset_rows.contents_table(stores["a"]))})
    publish(hub, "org/b", {CONTENTS: parquet_bytes(comparable)})
    loaded = OtherResults(tmp_path / "home").load(["org/a", "org/b"], local_ids(local))

    plain = board_rows("acebench", local, "official")
    board = board_rows("acebench", local, "official", others=rows_of(loaded))
    assert ORIGIN_COLUMN not in plain.columns  # without others (e.g. the results dataset export): no origin column
    columns = list(board.columns)  # the board's column order, with `origin` right after `details`
    assert [c for c in columns if c != ORIGIN_COLUMN] == list(plain.columns)
    assert columns.index(ORIGIN_COLUMN) == columns.index("details") + 1
    ours = board[board[ORIGIN_COLUMN].isna()].drop(columns=ORIGIN_COLUMN).reset_index(drop=True)
    assert ours.equals(plain)  # our rows (published, our runs) are exactly as without theirs
    clash = board[board["run_id"] == runs["clash"]]
    assert len(clash) == 1 and clash[ORIGIN_COLUMN].isna().all()  # ours, not org/a's
    theirs = board[board[ORIGIN_COLUMN].notna()]
    assert set(theirs["run_id"]) == {runs["a_only"], runs["shared"], runs["b_only"]}
    assert not theirs["newest"].any() and board.loc[board["run_id"] == runs["ours"], "newest"].all()
    row = theirs[theirs["run_id"] == runs["a_only"]].iloc[0]
    assert row["overall_n"] == 20 and 0 < row["overall_low"] < row["overall"] < row["overall_high"] < 1

    layout = layout_for("acebench")
    ranked = query_board(board, layout, BoardQuery(view="en", part="ranked"))
    b_row = ranked[ranked["run_id"] == runs["b_only"]]
    assert len(b_row) == 1 and b_row["rank"].notna().all() and b_row[ORIGIN_COLUMN].tolist() == ["org/b"]
    found = query_board(board, layout, BoardQuery(view="en", search="from org/a"))
    assert set(found["run_id"]) == {runs["a_only"], runs["shared"]}
    overview = overview_rows({"acebench": board})
    assert overview.loc[overview["model"] == "model-from-b", "ACEBench · source"].tolist() == [
        f"uploaded run {runs['b_only']} from org/b"]

    # A run added to the local store after the load wins at once: board_rows drops their rows naming it,
    # a combined row `x + id` included.
    assert import_run(local, export_run(stores["a"], runs["a_only"]))
    combined = {**rows_of(loaded)[0], "run_id": f"somewhere-else + {runs['a_only']}", "view": "en"}
    again = board_rows("acebench", local, "official", others=[*rows_of(loaded), combined])
    assert again.loc[again["run_id"].astype(str).str.contains(runs["a_only"]), ORIGIN_COLUMN].isna().all()


@pytest.mark.slow
def test_a_truncated_file_and_a_missing_repo_are_reported_and_the_rest_loads(hub: FakeHubRepo, stores: dict[str, Any],
                                                                             tmp_path: Path):
    runs = stores["runs"]
    good = parquet_bytes(dataset_rows.contents_table(stores["a"]))
    publish(hub, "org/broken", {"contents/half.parquet": good[:len(good) // 2],
                                CONTENTS: parquet_bytes(dataset_rows.contents_table(stores["b"]))})
    publish(hub, "org/a", {CONTENTS: good})
    home = tmp_path / "home"
    # A file left in the download folder by an earlier load, gone from the repo: never read.
    stale = local_folder("org/a", home) / "contents" / "stale.parquet"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(parquet_bytes(edited(dataset_rows.contents_table(stores["b"]),
                                           lambda row: {**row, "run_id": "stale-run"})))

    loaded = OtherResults(home).load("org/broken, org/missing, org/a, not a repo", local_ids(stores["local"]))

    problems = loaded.problems
    assert len(problems) == 3, problems
    assert problems[0].startswith("org/broken: contents/half.parquet: not a readable Parquet file")
    assert str(home) not in problems[0]  # named by the repo and its file, not the server's folder
    assert problems[1].startswith("org/missing: no such dataset repo on the Hub")
    assert problems[2].startswith("'not a repo': not a dataset repo id")
    assert all(TOKEN not in problem for problem in problems)
    # The broken repo's good file and the other repo still join.
    joined = {(row["run_id"], row[ORIGIN_COLUMN]) for row in rows_of(loaded)}
    assert joined == {(runs["b_only"], "org/broken"), (runs["shared"], "org/broken"), (runs["a_only"], "org/a")}
    assert "stale-run" not in {row["run_id"] for row in rows_of(loaded)}
    board = board_rows("acebench", stores["local"], "official", others=rows_of(loaded))
    assert set(board.loc[board[ORIGIN_COLUMN].notna(), "run_id"]) == {runs["b_only"], runs["shared"], runs["a_only"]}
    assert "org/broken: 4 rows of 2 runs joined" in loaded.summary()


@pytest.mark.slow
def test_a_refused_token_is_reported_without_the_token(hub: FakeHubRepo, stores: dict[str, Any], tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch):
    publish(hub, "org/a", {CONTENTS: parquet_bytes(dataset_rows.contents_table(stores["a"]))})
    wrong = "hf_wrongToken_must_not_be_shown_0123456789"
    monkeypatch.setenv("HF_TOKEN", wrong)
    loaded = OtherResults(tmp_path / "home").load("org/a")
    assert len(loaded.problems) == 1 and loaded.problems[0].startswith("org/a: ")
    assert wrong not in loaded.summary() and rows_of(loaded) == []
    assert [r.authorization for r in hub.requests if r.path.startswith("/api/datasets/org/a")][0] == f"Bearer {wrong}"


def test_repo_lists_are_read_in_order_each_once():
    assert parse_repos(" org/a, org/b ,,org/a ") == ["org/a", "org/b"]
    assert parse_repos("") == [] and parse_repos(None) == []


# ---- the app ------------------------------------------------------------------------------------


def component_props(demo: Any) -> list[dict[str, Any]]:
    return [component.get("props", {}) for component in demo.config["components"]]


@contextmanager
def launched(context: AppContext) -> Iterator[str]:
    demo = build_app(context)
    launch_patiently(demo, **{**launch_options(context), "max_file_size": None}, server_name="127.0.0.1", prevent_thread_lock=True,
                quiet=True)
    try:
        yield demo.local_url
    finally:
        demo.close()
        context.close()


@pytest.mark.slow
def test_the_app_loads_them_at_start_and_the_about_field_reloads_them(hub: FakeHubRepo, stores: dict[str, Any],
                                                                      tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from gradio_client import Client

    runs = stores["runs"]
    good = parquet_bytes(dataset_rows.contents_table(stores["a"]))
    publish(hub, "org/a", {CONTENTS: good})
    publish(hub, "org/broken", {CONTENTS: good[:len(good) // 2]})
    monkeypatch.setenv("TOOLBOARD_RESULTS", "org/broken,org/a")
    monkeypatch.setenv("TOOLBOARD_PUBLIC", "0")
    monkeypatch.delenv("TOOLBOARD_HUB_REPO", raising=False)
    local = Store(tmp_path / "app" / "toolboard.db")
    context = context_from_env(local)
    assert context.other_results.current.repos == ("org/broken", "org/a")
    assert context.other_results.current.problems[0].startswith("org/broken: contents/")

    with launched(context) as url:
        client = Client(url, verbose=False)
        fields = [p for p in (c.get("props", {}) for c in client.config["components"])
                  if p.get("label") == OTHER_RESULTS_LABEL]
        assert [f["value"] for f in fields] == ["org/broken, org/a"]

        def leaderboard(search: str = "") -> list[dict[str, Any]]:
            return table_rows(client.predict("acebench", "en", search, ["published", "evaluated", "uploaded"], None,
                                             False, "official", "overall", api_name="/leaderboard"))

        rows = leaderboard()
        theirs = [row for row in rows if row.get(ORIGIN_COLUMN)]
        assert {(row["run_id"], row[ORIGIN_COLUMN]) for row in theirs} == {
            (runs["a_only"], "org/a"), (runs["shared"], "org/a"), (runs["clash"], "org/a")}
        assert any(row["source"] == "published" and row[ORIGIN_COLUMN] is None for row in rows)
        assert all(row["overall"] > 1 for row in theirs)  # in %, like every row of the API
        assert {row["run_id"] for row in leaderboard("from org/a")} == {runs["a_only"], runs["shared"], runs["clash"]}

        # The repo gains a run; Load (its API) reloads, and the cached board redraws with it.
        publish(hub, "org/a", {CONTENTS: parquet_bytes(dataset_rows.contents_table(stores["b"]))})
        report = client.predict("org/a", api_name="/load_results")
        assert report.startswith("- org/a: 4 rows of 2 runs joined") and TOKEN not in report
        assert {row["run_id"] for row in leaderboard() if row.get(ORIGIN_COLUMN)} == {runs["b_only"], runs["shared"]}
        overview = client.predict(api_name="/overview")
        assert overview["headers"]  # the overview still builds from boards holding their rows


@pytest.mark.slow
def test_the_about_field_is_only_on_a_private_deployment(tmp_path: Path):
    for public in (False, True):
        context = AppContext(store=Store(tmp_path / str(public) / "toolboard.db"), public=public)
        try:
            demo = build_app(context)
            labels = [p.get("label") for p in component_props(demo)]
            api_names = [d.get("api_name") for d in demo.config["dependencies"]]
        finally:
            context.close()
        assert (OTHER_RESULTS_LABEL in labels) is not public
        assert ("load_results" in api_names) is not public


@pytest.mark.slow
def test_a_page_load_reloads_them_in_the_background_once_they_are_old(hub: FakeHubRepo, stores: dict[str, Any],
                                                                      tmp_path: Path):
    runs = stores["runs"]
    now = [1000.0]  # the context's clock, moved by hand
    context = AppContext(store=Store(tmp_path / "app" / "toolboard.db"), clock=lambda: now[0])
    try:
        assert context.refresh_other_results() is None  # nothing listed: nothing to reload
        publish(hub, "org/a", {CONTENTS: parquet_bytes(dataset_rows.contents_table(stores["a"]))})
        context.load_other_results("org/a")
        before = context.board_frame("acebench", "official")
        assert set(before["run_id"][before[ORIGIN_COLUMN].notna()]) == {runs["a_only"], runs["shared"], runs["clash"]}
        publish(hub, "org/a", {CONTENTS: parquet_bytes(dataset_rows.contents_table(stores["b"]))})

        def unchanged_while_fresh() -> None:
            assert context.board_frame("acebench", "official") is before

        reread_once_aged(context.refresh_other_results, now, OTHER_RESULTS_MAX_AGE, unchanged_while_fresh)
        assert context.other_results.version == 2
        after = context.board_frame("acebench", "official")
        assert set(after["run_id"][after[ORIGIN_COLUMN].notna()]) == {runs["b_only"], runs["shared"]}
    finally:
        context.close()


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="headless browser test needs Debian's chromium at /usr/bin/chromium")
def test_load_in_the_about_tab_reports_and_redraws_the_board(hub: FakeHubRepo, stores: dict[str, Any], tmp_path: Path):
    publish(hub, "org/a", {CONTENTS: parquet_bytes(dataset_rows.contents_table(stores["a"]))})
    context = AppContext(store=Store(tmp_path / "app" / "toolboard.db"))
    with launched(context) as url, browser_page() as (page, problems):
        page.goto(url, wait_until="load")
        open_tab(page, "About")
        page.get_by_label(OTHER_RESULTS_LABEL).fill("org/a, org/missing")
        page.get_by_role("button", name="Load", exact=True).click()
        page.get_by_text("org/a: 6 rows of 3 runs joined").wait_for()
        page.get_by_text("org/missing: 0 rows of 0 runs joined; problems: no such dataset repo").wait_for()
        open_tab(page, "Leaderboard")
        apart = page.locator(".board-apart")
        apart.get_by_text("uploaded · from org/a").filter(visible=True).first.wait_for()
        assert apart.inner_text().count("uploaded · from org/a") == 3  # beside the model, not only in its details
    assert not [p for p in problems if "Connection errored out" not in p and "AbortError" not in p], problems
