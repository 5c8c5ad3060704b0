"""The store under values it cannot take as they are, a damaged file, and two processes on one run."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from evaluators.core.errors import ToolboardError
from evaluators.core.types import Prediction, Report, SampleScore, ToolCall
from evaluators.engine.client import RetryPolicy
from evaluators.engine.runner import RunIsLiveError, execute, start_run
from evaluators.engine.settings import ModelSettings, RunConfig, RunRequest
from evaluators.engine.store import Store, StoreDamagedError, open_app_store
from tests.conftest import PROJECT, bytecode_env
from tests.engine_fixtures import correct_reply, write_dataset
from tests.scripted_server import ScriptedServer, last_user_text

FAST_RETRY = RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.02)


def _config(server: ScriptedServer, data: Path, **kwargs) -> RunConfig:
    model = ModelSettings(base_url=server.base_url, model="scripted", timeout=5.0, api_key_env="TOOLBOARD_TEST_KEY")
    return RunConfig("acebench", model, language="en", subsets=("normal_atom_bool",), data_dir=str(data),
                     concurrency=kwargs.pop("concurrency", 4), **kwargs)


def _number(body: dict) -> int:
    return int(last_user_text(body).split("number ")[1].split(" ")[0])


def _new_run(store: Store) -> str:
    return store.create_run("acebench", "en", "m", "http://x/v1", {}, "fp", 3)


# ---- values SQLite cannot take as they are -----------------------------------------------------


def test_lone_surrogates_are_stored_escaped_and_huge_numbers_do_not_take_neighbours_down(tmp_path: Path):
    store = Store(tmp_path / "db.sqlite")
    run_id = _new_run(store)
    predictions = [
        ("s", Prediction("a", output="ok \ud800 end", tool_calls=[ToolCall("f", {"x": "\udfff"})],
                         usage={"prompt_tokens": 10, "completion_tokens": 2}), 1),
        ("s", Prediction("b", output="[]", usage={"prompt_tokens": 10**29, "completion_tokens": 1e29}), 1),
        ("s", Prediction("c", output="[]", extra={"result": {"n": 10**40}, "big": 1}), 1),
        ("s", Prediction("d", output="[]", extra={"result": {"n": 10**40}}, usage={"prompt_tokens": float("nan")}), 1),
    ]
    stored = store.save_batch(run_id, [("k1", {"text": "\ud800"})], predictions)
    loaded = store.load_predictions(run_id)
    assert set(loaded) == {"a", "b", "c", "d"}
    assert loaded["a"].output == "ok \\ud800 end" == stored[0].output  # escaped, not dropped: what is scored is what is read back
    assert loaded["a"].tool_calls[0].arguments == {"x": "\udfff"}  # inside JSON the escape round-trips exactly
    assert loaded["b"].usage == {"prompt_tokens": 0, "completion_tokens": 0} and loaded["b"].error is None
    assert loaded["c"].extra == {"result": {"n": 10**40}, "big": 1}
    assert store.cache_get("k1") == {"text": "\ud800"}
    assert store.run_totals(run_id)["done"] == 4


def test_a_prediction_the_store_cannot_take_is_recorded_as_its_own_failure(tmp_path: Path):
    store = Store(tmp_path / "db.sqlite")
    run_id = _new_run(store)
    too_long = 10 ** 5000  # json refuses to write an int over 4,300 digits
    stored = store.save_batch(run_id, [], [
        ("s", Prediction("good1", output="[]"), 1),
        ("s", Prediction("bad", output="[]", extra={"result": {"n": too_long}}), 1),
        ("s", Prediction("good2", output="[]"), 1),
    ])
    loaded = store.load_predictions(run_id)
    assert set(loaded) == {"good1", "bad", "good2"}
    assert loaded["good1"].error is None and loaded["good2"].error is None
    assert loaded["bad"].error.startswith("could not store this prediction: ValueError") and stored[1].error == loaded["bad"].error


def test_scores_with_surrogates_and_undumpable_values_are_stored(tmp_path: Path):
    store = Store(tmp_path / "db.sqlite")
    run_id = _new_run(store)
    scores = [SampleScore("a", "s", False, "wrong \ud800", "rule", "detail \udc00", decoded=[{"f": {"x": "\ud800"}}])]
    store.save_scores(run_id, "official", scores, Report("acebench", "official", {}, {"accuracy": 0.0}, {"wrong \ud800": 1}))
    [score] = store.load_scores(run_id)
    assert score.detail == "detail \\udc00" and score.decoded == [{"f": {"x": "\ud800"}}]


def test_a_run_whose_replies_hold_lone_surrogates_stores_every_sample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TOOLBOARD_TEST_KEY", "sk-test")
    data = write_dataset(tmp_path / "data", 30)

    def reply(body: dict) -> dict:
        answer = correct_reply(body)
        if _number(body) % 4 == 0:
            answer["content"] += " \ud800"  # sent as the JSON escape "\ud800"
        return answer

    with ScriptedServer(reply=reply) as server:
        store = Store(tmp_path / "db.sqlite")
        run_id, samples = start_run(RunRequest(_config(server, data)), store)
        outcome = asyncio.run(execute(store, run_id, samples, retry=FAST_RETRY))
    assert outcome.status == "finished"
    loaded = store.load_predictions(run_id)
    assert len(loaded) == 30 and all(p.error is None for p in loaded.values())
    assert loaded["normal_atom_bool_0"].output.endswith(" \\ud800")
    assert store.load_report(run_id)["subsets"]["normal_atom_bool"]["metrics"]["accuracy"] == 1.0


@pytest.mark.slow
def test_a_run_never_says_finished_while_a_sample_is_not_stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The store refuses writes mid-run (a real SQLite refusal: the connection turned read-only): the run
    stops sending, says how many samples are not stored and why, and a resume finishes it."""
    monkeypatch.setenv("TOOLBOARD_TEST_KEY", "sk-test")
    data = write_dataset(tmp_path / "data", 40)
    with ScriptedServer(reply=correct_reply, latency=0.02) as server:
        store = Store(tmp_path / "db.sqlite")
        run_id, samples = start_run(RunRequest(_config(server, data, concurrency=2)), store)

        def read_only_after_ten(progress) -> None:
            if progress.done_count == 10:
                store._db.execute("PRAGMA query_only=1")

        with pytest.raises(ToolboardError, match=r"samples could not be stored; the store said: .* can only be read \(attempt to write a readonly"):
            asyncio.run(execute(store, run_id, samples, retry=FAST_RETRY, on_progress=read_only_after_ten))
        store._db.execute("PRAGMA query_only=0")
        # The progress callback runs on the scoring thread, after the sample's write: a write or two more may have
        # landed before it turned the store read-only, never a sample it did not accept.
        assert store.get_run(run_id).status != "finished" and 10 <= len(store.load_predictions(run_id)) < 40
        store.release_lease(run_id, store.live_holder(run_id))  # it could not be released read-only (it would expire)
        assert server.requests < 40  # it stopped sending once the store refused
        outcome = asyncio.run(execute(store, run_id, samples, retry=FAST_RETRY))
    assert outcome.status == "finished" and len(store.load_predictions(run_id)) == 40


# ---- a damaged store file ------------------------------------------------------------------------


def _stored_run(path: Path) -> None:
    store = Store(path)
    run_id = _new_run(store)
    store.save_batch(run_id, [], [("s", Prediction(f"x{i}", output="y" * 2000), 1) for i in range(200)])
    store.close()


@pytest.mark.parametrize("damage", ["garbage", "truncated", "emptied"])
def test_a_damaged_store_is_named_and_never_overwritten(tmp_path: Path, damage: str):
    path = tmp_path / "toolboard.db"
    _stored_run(path)
    raw = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"this is not a database" * 100)
    elif damage == "truncated":
        path.write_bytes(raw[: len(raw) // 3])
    else:
        path.write_bytes(b"")
    before = path.read_bytes()
    with pytest.raises(StoreDamagedError, match="damaged") as caught:
        store = Store(path)
        store.check_integrity()  # a truncated file may open; reading it whole finds the damage
    assert "mv " in str(caught.value)
    assert path.read_bytes() == before


def test_the_app_sets_a_damaged_store_aside_and_starts(tmp_path: Path):
    path = tmp_path / "toolboard.db"
    _stored_run(path)
    path.write_bytes(path.read_bytes()[:5000])
    store, note = open_app_store(path)
    assert note is not None and "kept aside" in note and str(tmp_path) not in note  # no server path in the note
    assert store.list_runs() == []
    kept = [p for p in tmp_path.iterdir() if ".damaged-" in p.name]
    assert kept and kept[0].stat().st_size == 5000
    store.close()
    healthy, note = open_app_store(path)
    assert note is None


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_the_cli_says_the_store_is_damaged_instead_of_a_traceback(tmp_path: Path, damage: str):
    home = tmp_path / "home"
    home.mkdir()
    path = home / "toolboard.db"
    if damage == "garbage":
        path.write_bytes(b"garbage" * 500)
    else:
        _stored_run(path)  # the runs table still reads; its predictions do not
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 3])
    before = path.read_bytes()
    for args in (["runs"], ["export", "some-run"]):
        done = subprocess.run([sys.executable, "-m", "evaluators", *args], cwd=PROJECT, capture_output=True, text=True,
                              env={**os.environ, "TOOLBOARD_HOME": str(home)}, timeout=120)
        assert done.returncode == 2, done.stderr
        assert "is damaged" in done.stderr and "Traceback" not in done.stderr
    assert path.read_bytes() == before


# ---- one run, one executing process --------------------------------------------------------------


def test_a_lease_is_exclusive_until_it_expires(tmp_path: Path):
    store = Store(tmp_path / "db.sqlite")
    run_id = _new_run(store)
    assert store.claim_lease(run_id, "A", 30, now=1000.0)
    assert not store.claim_lease(run_id, "B", 30, now=1010.0)
    assert store.live_holder(run_id, now=1010.0) == "A" and store.run_is_live(run_id, now=1010.0)
    assert store.claim_lease(run_id, "A", 30, now=1020.0)  # renewed
    assert not store.run_is_live(run_id, now=1051.0)
    assert store.claim_lease(run_id, "B", 30, now=1051.0)  # expired: taken over
    store.release_lease(run_id, "A")  # not A's any more: nothing happens
    assert store.live_holder(run_id, now=1052.0) == "B"
    store.release_lease(run_id, "B")
    assert not store.run_is_live(run_id, now=1052.0)


def test_a_run_another_live_process_executes_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TOOLBOARD_TEST_KEY", "sk-test")
    data = write_dataset(tmp_path / "data", 5)
    with ScriptedServer(reply=correct_reply) as server:
        store = Store(tmp_path / "db.sqlite")
        run_id, samples = start_run(RunRequest(_config(server, data)), store)
        # A live process elsewhere (this test's own parent process stands for it) holds the lease.
        store.claim_lease(run_id, f"{os.uname().nodename} pid {os.getppid()} (abc123)", 30)
        with pytest.raises(RunIsLiveError, match="being executed right now"):
            asyncio.run(execute(store, run_id, samples, retry=FAST_RETRY))
        assert server.requests == 0
        # A holder that died without releasing (kill -9) on this machine does not block a resume.
        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        store.release_lease(run_id, store.live_holder(run_id))
        store.claim_lease(run_id, f"{os.uname().nodename} pid {dead.pid} (abc123)", 30)
        outcome = asyncio.run(execute(store, run_id, samples, retry=FAST_RETRY))
    assert outcome.status == "finished" and not store.run_is_live(run_id)


@pytest.mark.slow
def test_a_live_cli_run_cannot_be_resumed_by_a_second_cli(tmp_path: Path):
    data = write_dataset(tmp_path / "data", 30)
    home = tmp_path / "home"
    env = {**os.environ, "TOOLBOARD_HOME": str(home), "TOOLBOARD_TEST_KEY": "sk-test"}
    with ScriptedServer(reply=correct_reply, latency=0.3) as server:
        first = subprocess.Popen(
            [sys.executable, "-m", "evaluators", "run", "acebench", "--base-url", server.base_url, "--model", "scripted",
             "--api-key-env", "TOOLBOARD_TEST_KEY", "--data-dir", str(data), "--subset", "normal_atom_bool",
             "--concurrency", "1", "--json"], cwd=PROJECT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        run_id = None
        for _ in range(600):
            if (home / "toolboard.db").exists():
                with sqlite3.connect(home / "toolboard.db") as db:
                    try:
                        row = db.execute("SELECT id FROM runs WHERE lease_holder IS NOT NULL").fetchone()
                    except sqlite3.OperationalError:
                        row = None
                if row:
                    run_id = row[0]
                    break
            time.sleep(0.05)
        assert run_id, "the first run never took its lease"
        second = subprocess.run([sys.executable, "-m", "evaluators", "run", "--resume", run_id], cwd=PROJECT, env=env,
                                capture_output=True, text=True, timeout=120)
        server.latency = 0.0  # the slow answers kept the first run live for the second; the rest can be quick
        out, err = first.communicate(timeout=120)
    assert second.returncode == 2 and "being executed right now" in second.stderr, second.stderr
    assert first.returncode == 0, err
    assert json.loads(out)["subsets"]["normal_atom_bool"]["n"] == 30
    assert server.requests == 30  # nothing was sent twice


def test_re_sending_errors_of_an_interrupted_run_also_sends_the_samples_never_sent(tmp_path: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch):
    """A run with 4 of 10 samples stored (one a request error) is never called finished after --rerun-errors
    with 6 samples missing: those go too."""
    monkeypatch.setenv("TOOLBOARD_TEST_KEY", "sk-test")
    data = write_dataset(tmp_path / "data", 10)
    with ScriptedServer(reply=correct_reply) as server:
        store = Store(tmp_path / "db.sqlite")
        run_id, samples = start_run(RunRequest(_config(server, data)), store)
        store.save_batch(run_id, [], [("normal_atom_bool", Prediction(s.id, output="[]"), 1) for s in samples[:3]]
                         + [("normal_atom_bool", Prediction(samples[3].id, error="HTTP 503"), 6)])
        store.set_status(run_id, "interrupted")
        outcome = asyncio.run(execute(store, run_id, samples, rerun_errors=True, retry=FAST_RETRY))
    assert outcome.status == "finished" and server.requests == 7
    stored = store.load_predictions(run_id)
    assert len(stored) == 10 and all(p.error is None for p in stored.values())


def test_a_run_whose_lease_another_process_took_stops_sending(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from evaluators.engine import runner

    monkeypatch.setenv("TOOLBOARD_TEST_KEY", "sk-test")
    monkeypatch.setattr(runner, "LEASE_SECONDS", 0.3)  # renewed every 0.1 s
    data = write_dataset(tmp_path / "data", 200)
    with ScriptedServer(reply=correct_reply, latency=0.05) as server:
        store = Store(tmp_path / "db.sqlite")
        run_id, samples = start_run(RunRequest(_config(server, data, concurrency=2)), store)
        other = f"{os.uname().nodename} pid {os.getppid()} (abc123)"  # a live process

        def taken_over_after_five(progress) -> None:
            if progress.done_count == 5:  # as if this process had stalled past its lease and another resumed it
                store._db.execute("UPDATE runs SET lease_holder=?, lease_expires=? WHERE id=?",
                                  (other, time.time() + 600, run_id))

        with pytest.raises(RunIsLiveError, match="taken over by"):
            asyncio.run(execute(store, run_id, samples, retry=FAST_RETRY, on_progress=taken_over_after_five))
    assert server.requests < 200
    run = store.get_run(run_id)
    assert run.status == "running" and run.finished_at is None  # the other process's run: nothing written to it
    assert store.live_holder(run_id) == other


def test_listing_runs_and_their_totals_costs_two_queries_however_many_runs(tmp_path: Path):
    store = Store(tmp_path / "db.sqlite")
    for index in range(30):
        run_id = _new_run(store)
        store.save_batch(run_id, [], [("s", Prediction(f"x{index}", output="[]", error="HTTP 503" if index % 2 else None), 1)])
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)
    runs = store.list_runs()
    totals = store.all_run_totals()
    store._db.set_trace_callback(None)
    assert len(runs) == 30 and len(statements) == 2
    assert sum(totals[run.id]["errors"] for run in runs) == 15 and all(totals[run.id]["done"] == 1 for run in runs)
    assert store.run_totals("no-such-run") == dict.fromkeys(("done", "errors", "latency", "prompt_tokens",
                                                             "completion_tokens"), 0)


def test_a_transaction_that_raises_leaves_nothing_behind(tmp_path: Path):
    store = Store(tmp_path / "db.sqlite")
    run_id = _new_run(store)
    with pytest.raises(RuntimeError):
        with store._transaction() as db:
            db.execute("DELETE FROM runs WHERE id=?", (run_id,))
            raise RuntimeError("half-way")
    assert store.has_run(run_id)


SYSTEM_PYTHON = "/usr/bin/python3"  # the store needs nothing but the standard library: any Python 3.11 reads it


def _can_run_as_nobody() -> str | None:
    if os.geteuid() != 0:
        return "needs root to run a child as nobody"
    if not Path(SYSTEM_PYTHON).exists():
        return f"needs {SYSTEM_PYTHON} (a Python that user nobody can run)"
    return None


@pytest.mark.skipif(_can_run_as_nobody() is not None, reason=str(_can_run_as_nobody()))
def test_a_store_whose_folder_its_user_cannot_write_opens_read_only():
    """A folder without write permission (not read-only media): the lock file opens, but SQLite cannot make its
    journal files. The store opens read-only, lists its runs, and a write is one clear refusal (issue 27)."""
    folder = Path(tempfile.mkdtemp(prefix="toolboard-perm-"))
    try:
        store = Store(folder / "toolboard.db")
        store.create_run("acebench", "en", "kept-model", "http://127.0.0.1:1/v1", {}, "fp", 1)
        store.close()
        shutil.chown(folder, "nobody")
        for path in folder.iterdir():
            shutil.chown(path, "nobody")
        folder.chmod(0o555)
        script = ("from evaluators.engine.store import Store\n"
                  "store = Store(__import__('sys').argv[1])\n"
                  "print(store.read_only, [run.model for run in store.list_runs()])\n"
                  "try:\n    store.create_run('acebench', 'en', 'm', 'http://x/v1', {}, 'fp', 1)\n"
                  "except Exception as error:\n    print(type(error).__name__, error)\n")
        done = subprocess.run([SYSTEM_PYTHON, "-c", script, str(folder / "toolboard.db")], user="nobody",
                              env={"PYTHONPATH": str(PROJECT), **bytecode_env()}, cwd="/",
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "the store or its folder cannot be written ['kept-model']" in done.stdout
        assert "StoreReadOnlyError" in done.stdout and "can only be read" in done.stdout
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder, ignore_errors=True)
