"""Issue 41's public limits: one rule for visitors' text at every door, an upload added in one transaction (a
kill -9 leaves all or nothing, and what an older version left half-made is settled at start), room on disk (the
store's cap, a visitor's bytes per day, a free-disk floor), and an upload stored at about its size."""

from __future__ import annotations

import csv
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gradio_client import Client, handle_file

from evaluators.core.errors import ToolboardError
from evaluators.core.limits import UnprintableTextError, shown_text, visitor_text
from evaluators.core.types import Prediction
from evaluators.engine.store import HALF_MADE_GRACE_SECONDS, NEVER_STARTED_MESSAGE, Store
from evaluators.service.app_services import AppServices, admission_for
from evaluators.service.quota import MB, Admission, NoRoomError
from evaluators.service.submissions import check_submission, store_submission
from tests.acebench_fixtures import EXAMPLE_DIR
from tests.app_fixtures import form, items_copy, running_app, wait_for_status, write_predictions
from tests.browser_fixtures import browser_page, check_example_predictions, open_tab

ROOT = Path(__file__).resolve().parents[1]
# The probe's name: red ANSI colour around "ANSI", then a right-to-left override that turns "RTL" around.
HOSTILE_NAME = "\x1b[31mANSI\x1b[0m\u202eRTL"
ALL_SOURCES = ["published", "evaluated", "uploaded"]


def example_submission(store: Store, predictions: Path = EXAMPLE_DIR / "predictions.jsonl"):
    return check_submission(predictions, "acebench", language="en", data_dir=items_copy(store))


def table_count(store: Store, table: str) -> int:
    with sqlite3.connect(store.path) as db:
        return int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


# ---- one rule for visitors' text ------------------------------------------------------------------------------


@pytest.mark.parametrize("text, named", [
    (HOSTILE_NAME, "U+001B"), ("Llama\u202e", "U+202E RIGHT-TO-LEFT OVERRIDE"), ("a\u200bb", "U+200B ZERO WIDTH SPACE"),
    ("tab\there", "U+0009"), ("line\nbreak", "U+000A"), ("bell\x07", "U+0007"), ("nb\u00a0sp", "U+00A0 NO-BREAK SPACE"),
])
def test_the_text_rule_names_the_character_and_where_it_is(text: str, named: str):
    with pytest.raises(UnprintableTextError) as refused:
        visitor_text(text, "the model name", 200)
    assert named in str(refused.value) and "character " in str(refused.value)
    assert text not in str(refused.value)  # the hidden character is named, never echoed


def test_the_text_rule_keeps_every_printable_script_and_line_breaks_where_asked():
    for text in ("Qwen3-32B", "通义千问 2.5", "Mistral (FC) · v0.3", "Ünïcödé naïve"):
        assert visitor_text(f"  {text} ", "the model name", 200) == text
    assert visitor_text("first line\r\nsecond\tcolumn", "the notes field", 100, lines=True) == "first line\nsecond\tcolumn"
    with pytest.raises(UnprintableTextError, match=r"U\+202E"):
        visitor_text("ok\n\u202eevil", "the notes field", 100, lines=True)


def test_a_stored_name_is_shown_with_its_hidden_characters_written_out():
    assert shown_text(HOSTILE_NAME, 200) == "\\x1b[31mANSI\\x1b[0m\\u202eRTL"
    assert shown_text("notes\nline", 200, lines=True) == "notes\nline"
    assert shown_text("notes\nline", 200) == "notes\\nline"
    assert shown_text("plain 中文", 200) == "plain 中文" and shown_text(None, 10) is None


def test_store_submission_refuses_hidden_characters_in_name_notes_and_file_name(tmp_path: Path):
    store = Store(tmp_path / "t.db")
    submission = example_submission(store)
    for model, notes, field in ((HOSTILE_NAME, "", "the model name"), ("fine", "see\u202e", "the notes field")):
        with pytest.raises(UnprintableTextError, match=f"{field} holds a control or invisible character"
                                                       r".*\(nothing was stored\)"):
            store_submission(store, submission, model, notes)
    assert store.list_runs() == []
    # A file whose name turns around (the classic "…\u202egpj.exe") is refused when it is checked.
    renamed = write_predictions(tmp_path / "pred\u202elsonj.jsonl",
                                (EXAMPLE_DIR / "predictions.jsonl").read_text(encoding="utf-8").splitlines())
    with pytest.raises(UnprintableTextError, match="the file name holds a control or invisible character"):
        check_submission(renamed, "acebench", language="en", data_dir=EXAMPLE_DIR)
    run_id = store_submission(store, submission, "fine", "multi-line\nnotes")
    assert store.get_run(run_id).notes == "multi-line\nnotes"


@pytest.mark.slow
def test_the_app_refuses_the_probes_name_for_an_upload_and_a_run_alike(tmp_path: Path):
    with running_app(tmp_path / "app", public=True) as app:
        client = Client(app.url, verbose=False)
        token = "t" * 32
        validation, _, message = client.predict(handle_file(str(EXAMPLE_DIR / "predictions.jsonl")), "acebench", "en",
                                                "built-in example", "", api_name="/check_upload")
        assert validation["ok"], message
        added = str(client.predict(HOSTILE_NAME, "", token, api_name="/add_upload"))
        assert "the model name holds a control or invisible character (U+001B" in added
        assert "nothing was stored" in added and "\x1b" not in added and "\u202e" not in added
        started = client.predict(**form(app.server.base_url, HOSTILE_NAME, app.data, owner_token=token,
                                      data_source="built-in example"),
                                 api_name="/start_run")
        said = json.dumps(started, ensure_ascii=False)
        assert "the model name holds a control or invisible character (U+001B" in said and "\u202e" not in said
        assert app.context.store.list_runs() == []


@pytest.mark.slow
def test_a_row_stored_before_the_rule_shows_escaped_on_board_download_and_model_page(tmp_path: Path):
    with running_app(tmp_path / "app") as app:
        store = app.context.store
        run_id = store_submission(store, example_submission(store), "placeholder", "notes")
        with sqlite3.connect(app.db_path) as db:  # as an older version stored it
            db.execute("UPDATE runs SET model=?, notes=? WHERE id=?", (HOSTILE_NAME, "n\u202eote", run_id))
        store.create_run("acebench", "en", "bump", "upload", {}, "f", 1, source="upload")  # the board changed
        client = Client(app.url, verbose=False)
        args = ("acebench", "en", "", ALL_SOURCES, ["normal", "overall"], False, "official", "overall")
        board = client.predict(*args, api_name="/leaderboard")
        with open(client.predict(*args, api_name="/download_csv"), encoding="utf-8", newline="") as handle:
            downloaded = [row for row in csv.DictReader(handle) if row["run_id"] == run_id]
        escaped = "\\x1b[31mANSI\\x1b[0m\\u202eRTL"
        page = client.predict(escaped, api_name="/model")  # the name as the board shows it
        by_raw_name = client.predict(HOSTILE_NAME, api_name="/model")
        for shown in (json.dumps(board, ensure_ascii=False), json.dumps(downloaded, ensure_ascii=False),
                      json.dumps(page, ensure_ascii=False), json.dumps(by_raw_name["runs"], ensure_ascii=False),
                      by_raw_name["model"]):
            assert "\x1b" not in shown and "\u202e" not in shown
        assert [row["model"] for row in downloaded] == [escaped] and downloaded[0]["details"] == "n\\u202eote"
        assert page["found"] and page["model"] == escaped and page["benchmarks"]
        assert [row["model"] for row in page["benchmarks"][0]["rows"]] == [escaped]


def test_the_browser_shows_the_refusal_of_a_hidden_character_and_adds_nothing(tmp_path: Path):
    with running_app(tmp_path / "app") as app, browser_page() as (page, problems):
        page.goto(app.url)
        open_tab(page, "Submit")
        check_example_predictions(page)
        page.get_by_label("Model name").fill("Alice\u202eecilA")
        page.get_by_role("button", name="Add to leaderboard").click()
        refusal = page.get_by_text("holds a control or invisible character (U+202E RIGHT-TO-LEFT OVERRIDE")
        refusal.first.wait_for()
        assert "nothing was stored" in refusal.first.inner_text()
        assert app.context.store.list_runs() == []
    assert not problems, "\n".join(problems)


# ---- an upload is one transaction ------------------------------------------------------------------------------

KILLED_CHILD = """
import sys, time
from pathlib import Path
from evaluators.engine.store import Store
from evaluators.service.submissions import check_submission, store_submission

store_path, data = sys.argv[1:3]
store = Store(store_path)
submission = check_submission(Path(data) / "predictions.jsonl", "acebench", language="en", data_dir=data)
real = Store.save_scores

def save_scores_then_wait(self, *args, **kwargs):
    real(self, *args, **kwargs)  # the predictions and the first verdicts are written: then the process is killed
    print("inside", flush=True)  # the parent reads this line, then kills
    time.sleep(120)

Store.save_scores = save_scores_then_wait
store_submission(store, submission, "killed mid-add", owner="visitor-hash")
"""


def kill_during_add(store: Store) -> bool:
    """Add the example's predictions to `store` in a child process and kill -9 it inside the add (its predictions
    and first verdicts written); whether the child got inside before it was killed."""
    data = items_copy(store)
    (data / "predictions.jsonl").write_text((EXAMPLE_DIR / "predictions.jsonl").read_text(encoding="utf-8"),
                                            encoding="utf-8")
    child = subprocess.Popen([sys.executable, "-c", KILLED_CHILD, str(store.path), str(data)], cwd=ROOT,
                             env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, text=True)
    try:
        # Blocks until the child is inside the add; an empty line: it ended before getting there.
        inside = child.stdout is not None and child.stdout.readline().strip() == "inside"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    return inside


@pytest.mark.slow
def test_kill_9_during_add_leaves_nothing_and_counts_nothing(tmp_path: Path):
    store = Store(tmp_path / "home" / "toolboard.db")
    assert kill_during_add(store), "the child never got inside"
    again = Store(store.path)
    assert again.list_runs() == []
    assert [table_count(again, table) for table in ("predictions", "sample_scores", "reports")] == [0, 0, 0]
    assert again.created_since("upload", "visitor-hash", 0) == []  # the daily quota counts nothing
    assert again.stored_bytes_since("visitor-hash", 0) == 0


def test_what_an_older_version_left_half_made_is_settled_when_the_app_starts(tmp_path: Path):
    store = Store(tmp_path / "toolboard.db")
    old = time.time() - HALF_MADE_GRACE_SECONDS - 60
    # An upload an older version was killed while adding: its run `created`, its predictions stored.
    orphan = store.create_run("acebench", "en", "orphan", "upload", {}, "f", 2, source="upload", owner="visitor-hash")
    store.save_batch(orphan, [], [("normal_atom_bool", Prediction("normal_atom_bool_0", output="x" * 50_000), 0)])
    never_started = store.create_run("acebench", "en", "m", "http://127.0.0.1:9/v1", {}, "f", 5)
    fresh = store.create_run("acebench", "en", "just now", "upload", {}, "f", 1, source="upload")
    with sqlite3.connect(store.path) as db:
        db.execute("UPDATE runs SET created_at=? WHERE id IN (?, ?)", (old, orphan, never_started))
    services = AppServices(store=store)
    try:
        assert len(services.settled_at_start) == 2
        assert not store.has_run(orphan) and table_count(store, "predictions") == 0
        assert store.created_since("upload", "visitor-hash", 0) == []
        settled = store.get_run(never_started)
        assert (settled.status, settled.message) == ("interrupted", NEVER_STARTED_MESSAGE)
        assert store.get_run(fresh).status == "created"  # may still be on its way in another process
    finally:
        services.close()


# ---- room on disk ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_tiny_store_cap_refuses_uploads_and_runs_and_says_what_to_do(tmp_path: Path):
    with running_app(tmp_path / "app", public=True, admission=Admission(max_store_bytes=1)) as app:
        client = Client(app.url, verbose=False)
        token = "t" * 32
        validation, _, message = client.predict(handle_file(str(EXAMPLE_DIR / "predictions.jsonl")), "acebench", "en",
                                                "built-in example", "", api_name="/check_upload")
        assert validation["ok"], message
        added = str(client.predict("capped", "", token, api_name="/add_upload"))
        assert "past its cap of 0.0 MB (TOOLBOARD_MAX_STORE_MB)" in added and "nothing was stored" in added
        started = json.dumps(client.predict(**form(app.server.base_url, "capped-run", app.data, owner_token=token,
                                                 data_source="built-in example"),
                                            api_name="/start_run"))
        assert "TOOLBOARD_MAX_STORE_MB" in started and "raises the cap or removes runs" in started
        assert app.context.store.list_runs() == []


def test_an_upload_that_would_pass_the_cap_is_rolled_back_whole(tmp_path: Path):
    store = Store(tmp_path / "t.db")
    submission = example_submission(store)
    before = store.used_bytes()
    with pytest.raises(NoRoomError, match="past its cap"):
        store_submission(store, submission, "too big", admission=Admission(max_store_bytes=before + 1_000))
    assert store.list_runs() == [] and table_count(store, "predictions") == 0
    assert store_submission(store, submission, "fits", admission=Admission(max_store_bytes=before + 10 * MB))


def test_a_visitors_daily_bytes_are_counted_apart_from_others(tmp_path: Path):
    store = Store(tmp_path / "t.db")
    submission = example_submission(store)
    first = store_submission(store, submission, "first", owner="alice")
    size = store.get_run(first).stored_bytes
    assert size > 0
    budget = Admission(max_stored_bytes_per_day=int(size * 1.5))
    with pytest.raises(NoRoomError, match=r"your runs and uploads have stored .* MB in the last 24 hours.*"
                                          r"TOOLBOARD_MAX_STORED_MB_PER_DAY"):
        store_submission(store, submission, "second", owner="alice", admission=budget)
    assert store_submission(store, submission, "bob's", owner="bob", admission=budget)
    assert [run.model for run in store.list_runs()] == ["bob's", "first"]


def test_a_disk_nearly_full_is_told_before_anything_is_written(tmp_path: Path):
    store = Store(tmp_path / "t.db")
    with pytest.raises(NoRoomError, match=r"the disk holding this deployment's results has .* free.*"
                                          r"TOOLBOARD_MIN_FREE_DISK_MB"):
        store_submission(store, example_submission(store), "m", admission=Admission(min_free_disk_bytes=1 << 62))
    assert store.list_runs() == []


def test_room_settings_public_defaults_private_none_and_env_values():
    public, private = admission_for(True, {}), admission_for(False, {})
    assert (public.max_store_bytes, public.max_stored_bytes_per_day) == (5_000 * MB, 250 * MB)
    assert (private.max_store_bytes, private.max_stored_bytes_per_day) == (None, None)
    assert public.min_free_disk_bytes == private.min_free_disk_bytes == 200 * MB
    chosen = admission_for(True, {"TOOLBOARD_MAX_STORE_MB": "1.5", "TOOLBOARD_MAX_STORED_MB_PER_DAY": "off",
                                  "TOOLBOARD_MIN_FREE_DISK_MB": "0"})
    assert (chosen.max_store_bytes, chosen.max_stored_bytes_per_day, chosen.min_free_disk_bytes) == (1_500_000, None, 0)
    for bad in ("ten", "-1", "nan"):
        with pytest.raises(ToolboardError, match="TOOLBOARD_MAX_STORE_MB must be a size in MB"):
            admission_for(True, {"TOOLBOARD_MAX_STORE_MB": bad})


def test_an_upload_is_stored_at_about_its_size_and_leaves_no_write_ahead_log(tmp_path: Path):
    """Bulky answers (20 kB each): the store grows by less than 1.5 times the file (it grew ~3 times, plus a write-
    ahead log as large, when every upload kept a copy of every prompt it would send)."""
    store = Store(tmp_path / "t.db")
    rows = [json.loads(line) for line in (EXAMPLE_DIR / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    bulky = write_predictions(tmp_path / "bulky.jsonl",
                              [{**row, "output": row["output"] + " " * 20_000} if "output" in row else row for row in rows])
    before = store.used_bytes()
    store_submission(store, example_submission(store, bulky), "bulky")
    grown = store.used_bytes() - before
    assert grown < 1.5 * bulky.stat().st_size, (grown, bulky.stat().st_size)
    wal = store.path.with_name(store.path.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0


@pytest.mark.slow
def test_a_run_past_the_stores_cap_while_it_writes_is_stopped_and_keeps_what_it_finished(tmp_path: Path):
    """A run's size is not known when it starts: the app checks the room every few seconds while runs go (the
    test calls that check itself), and stops a run once its store has passed a limit, resumable later."""
    with running_app(tmp_path / "app", latency=0.2, samples=30) as app:
        store = app.context.store
        started = Client(app.url, verbose=False).predict(**form(app.server.base_url, "growing", app.data, limit=None,
                                                                concurrency=1), api_name="/start_run")
        run_id = started["run_id"]
        assert run_id, started["message"]
        wait_for_status(app.context, run_id, ("running",))
        assert app.context.jobs.check_room_limits() == []  # no limit set: nothing to stop
        # The store passes the cap while the run writes (a cap below what it holds stands in for its writes).
        app.context.jobs.admission = Admission(max_store_bytes=store.used_bytes() - 1)
        assert app.context.jobs.check_room_limits() == [run_id]
        assert app.context.jobs.wait(run_id) == "cancelled"
        run = store.get_run(run_id)
        assert "past its cap" in run.message and "TOOLBOARD_MAX_STORE_MB" in run.message
        assert "what it finished is kept" in run.message and len(store.load_predictions(run_id)) < 30


@pytest.mark.slow
def test_a_runs_cached_answers_count_in_its_bytes(tmp_path: Path):
    with running_app(tmp_path / "app") as app:
        run_id = Client(app.url, verbose=False).predict(**form(app.server.base_url, "counted", app.data),
                                                        api_name="/start_run")["run_id"]
        assert app.context.jobs.wait(run_id, timeout=60) == "finished"
        with sqlite3.connect(app.db_path) as db:
            cached = db.execute("SELECT sum(length(CAST(response AS BLOB))) FROM cache").fetchone()[0]
            kept = db.execute("SELECT sum(length(CAST(request AS BLOB)) + ifnull(length(CAST(events AS BLOB)), 0))"
                              " FROM predictions WHERE run_id = ?", (run_id,)).fetchone()[0]
        assert cached > 0 and app.context.store.get_run(run_id).stored_bytes >= cached + kept
