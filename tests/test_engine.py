"""The engine against a real HTTP server on 127.0.0.1: faults, retries, cache, limits, resume."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evaluators.engine.runner import execute, score_run, start_run
from evaluators.engine.settings import ModelSettings, RunConfig, RunRequest
from evaluators.engine.store import SCHEMA_VERSION, Store
from tests.conftest import PROJECT
from tests.engine_fixtures import FAST_RETRY, correct_reply, run_to_end, scripted_run_config, write_dataset
from tests.scripted_server import Fault, ScriptedServer, last_user_text


def _number(body: dict) -> int:
    return int(last_user_text(body).split("number ")[1].split(" ")[0])


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_dataset(tmp_path / "data", 30)


@pytest.mark.slow
def test_every_sample_ends_scored_or_recorded_as_an_error(data: Path, tmp_path: Path):
    attempts_by_number: dict[int, int] = {}

    def fault(key: str, attempt: int) -> Fault | None:
        number = int(key_to_number[key])
        attempts_by_number[number] = attempt
        kind = number % 7
        if kind == 1 and attempt == 1:
            return Fault(status=429, headers={"Retry-After": "0.05"})
        if kind == 2 and attempt <= 2:
            return Fault(status=500)
        if kind == 3:
            return Fault(status=503)  # never recovers
        if kind == 4 and attempt == 1:
            return Fault(hang=1.0)  # the client times out first
        if kind == 5 and attempt == 1:
            return Fault(malformed=True)
        if kind == 6 and number == 6:
            return Fault(status=400)  # not retried
        return None

    key_to_number: dict[str, int] = {}

    def remember(body: dict) -> None:
        from tests.scripted_server import prompt_key

        key_to_number[prompt_key(body)] = _number(body)

    with ScriptedServer(reply=correct_reply, fault=fault, on_request=remember) as server:
        store = Store(tmp_path / "db.sqlite")
        outcome = run_to_end(store, scripted_run_config(server, data, timeout=0.4))
    predictions = store.load_predictions(outcome.run_id)
    assert len(predictions) == 30
    errors = {p.sample_id for p in predictions.values() if p.error}
    expected_errors = {f"normal_atom_bool_{n}" for n in range(30) if n % 7 == 3} | {"normal_atom_bool_6"}
    assert errors == expected_errors
    assert attempts_by_number[3] == FAST_RETRY.max_attempts and attempts_by_number[6] == 1
    assert "HTTP 503" in predictions["normal_atom_bool_3"].error and "HTTP 400" in predictions["normal_atom_bool_6"].error
    with sqlite3.connect(tmp_path / "db.sqlite") as db:
        attempts = dict(db.execute("SELECT sample_id, attempts FROM predictions"))
    assert attempts["normal_atom_bool_0"] == 1 and attempts["normal_atom_bool_1"] == 2 and attempts["normal_atom_bool_2"] == 3
    assert attempts["normal_atom_bool_3"] == FAST_RETRY.max_attempts and attempts["normal_atom_bool_6"] == 1
    report = outcome.report.to_json()
    assert report["subsets"]["normal_atom_bool"]["n"] == 30
    assert report["errors"] == {"request_error": len(expected_errors)}
    assert report["subsets"]["normal_atom_bool"]["metrics"]["accuracy"] == round((30 - len(expected_errors)) / 30, 3)


def test_rerun_hits_the_cache_and_no_cache_bypasses_it(data: Path, tmp_path: Path):
    with ScriptedServer(reply=correct_reply) as server:
        store = Store(tmp_path / "db.sqlite")
        first = run_to_end(store, scripted_run_config(server, data))
        assert server.requests == 30
        second = run_to_end(store, scripted_run_config(server, data))
        assert server.requests == 30  # zero new requests
        assert second.report.to_json() == first.report.to_json()
        run_to_end(store, scripted_run_config(server, data, use_cache=False))
        assert server.requests == 60


@pytest.mark.slow
def test_concurrency_limit_is_never_exceeded(data: Path, tmp_path: Path):
    with ScriptedServer(reply=correct_reply, latency=0.05) as server:
        run_to_end(Store(tmp_path / "db.sqlite"), scripted_run_config(server, data, concurrency=3))
    assert server.max_in_flight == 3


def test_native_tools_mode_maps_tool_names_back(data: Path, tmp_path: Path):
    with ScriptedServer(reply=correct_reply) as server:
        outcome = run_to_end(Store(tmp_path / "db.sqlite"), scripted_run_config(server, data, request_mode="tools"))
    assert server.bodies[0]["tools"][0]["function"]["name"] == "Clock_setAlarm"
    assert outcome.report.to_json()["subsets"]["normal_atom_bool"]["metrics"]["accuracy"] == 1.0


def test_rerun_errors_resends_only_failed_samples(data: Path, tmp_path: Path):
    healthy = {"on": False}
    with ScriptedServer(reply=correct_reply, fault=lambda k, a: None if healthy["on"] else Fault(status=503) if a <= 4 and k.endswith(("0", "1", "2")) else None) as server:
        store = Store(tmp_path / "db.sqlite")
        outcome = run_to_end(store, scripted_run_config(server, data))
        failed = {p.sample_id for p in store.load_predictions(outcome.run_id).values() if p.error}
        assert failed
        healthy["on"] = True
        before = server.requests
        again = asyncio.run(execute(store, outcome.run_id, rerun_errors=True, retry=FAST_RETRY))
        assert server.requests - before == len(failed)
    assert again.report.to_json()["errors"] == {}
    assert again.report.to_json()["subsets"]["normal_atom_bool"]["metrics"]["accuracy"] == 1.0


@pytest.mark.slow
def test_cancel_then_resume(data: Path, tmp_path: Path):
    with ScriptedServer(reply=correct_reply, latency=0.05) as server:
        store = Store(tmp_path / "db.sqlite")
        config = scripted_run_config(server, data, concurrency=2)
        cancel = asyncio.Event()

        def on_progress(progress):
            if progress.done_count >= 6:
                cancel.set()

        outcome = run_to_end(store, config, on_progress=on_progress, cancel=cancel)
        run_id = outcome.run_id
        assert outcome.status == "cancelled" and store.get_run(run_id).status == "cancelled"
        done_before = set(store.prediction_states(run_id))
        assert 6 <= len(done_before) < 30
        finished = asyncio.run(execute(store, run_id, retry=FAST_RETRY))
    assert finished.status == "finished" and len(store.prediction_states(run_id)) == 30
    assert server.requests <= 30 + 2  # only the 2 requests in flight at the cancel may be sent again


def test_scores_are_recomputable_from_stored_predictions(data: Path, tmp_path: Path):
    def verdict_rows(run_id: str) -> list[tuple]:
        rows = store._query("SELECT * FROM sample_scores WHERE run_id=? ORDER BY mode, rowid", (run_id,))
        return [tuple(row) for row in rows]

    with ScriptedServer(reply=lambda body: correct_reply(body) if _number(body) % 3 else {"content": "not a call"}) as server:
        store = Store(tmp_path / "db.sqlite")
        outcome = run_to_end(store, scripted_run_config(server, data))
    # the verdicts' rows the run made as it went are those made again from the stored predictions
    during_the_run = verdict_rows(outcome.run_id)
    assert len(during_the_run) == 60 and {row[4] for row in during_the_run} == {0, 1}
    assert score_run(store, outcome.run_id).to_json() == outcome.report.to_json()
    assert verdict_rows(outcome.run_id) == during_the_run
    assert store.load_report(outcome.run_id, "strict")["mode"] == "strict"


def test_store_schema_version_and_refusal_of_newer_files(tmp_path: Path):
    store = Store(tmp_path / "db.sqlite")
    assert store.schema_version() == SCHEMA_VERSION
    store.close()
    with sqlite3.connect(tmp_path / "db.sqlite") as db:
        db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    from evaluators.core.errors import ToolboardError

    with pytest.raises(ToolboardError, match="newer toolboard"):
        Store(tmp_path / "db.sqlite")


def _cli(*args: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "evaluators", *args], cwd=PROJECT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_killed_run_resumes_without_repeating_finished_requests_and_never_leaks_the_key(tmp_path: Path):
    data = write_dataset(tmp_path / "data", 40)
    home = tmp_path / "home"
    secret = "sk-test-SECRET-never-stored-1234"
    env = {**os.environ, "TOOLBOARD_HOME": str(home), "TOOLBOARD_TEST_KEY": secret}
    with ScriptedServer(reply=correct_reply, latency=0.1) as server:
        args = ["run", "acebench", "--base-url", server.base_url, "--model", "scripted", "--api-key-env", "TOOLBOARD_TEST_KEY",
                "--data-dir", str(data), "--subset", "normal_atom_bool", "--concurrency", "2", "--json"]
        process = _cli(*args, env=env)
        db_path = home / "toolboard.db"
        done_at_kill: set[str] = set()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if db_path.exists():
                with sqlite3.connect(db_path) as db:
                    try:
                        rows = db.execute("SELECT run_id, sample_id FROM predictions").fetchall()
                    except sqlite3.OperationalError:
                        rows = []
                if len(rows) >= 10:
                    process.send_signal(signal.SIGKILL)
                    process.wait()
                    with sqlite3.connect(db_path) as db:
                        rows = db.execute("SELECT run_id, sample_id FROM predictions").fetchall()
                    done_at_kill = {sample for _, sample in rows}
                    run_id = rows[0][0]
                    break
            time.sleep(0.02)
        assert done_at_kill and len(done_at_kill) < 40
        counts_at_kill = dict(server.per_key)
        server.latency = 0.0  # slow answers were for killing the run mid-way; the resume can be quick
        resumed = _cli("run", "--resume", run_id, "--json", env=env)
        out, err = resumed.communicate(timeout=120)
        assert resumed.returncode == 0, err
        report = json.loads(out)
        assert report["run_id"] == run_id and report["subsets"]["normal_atom_bool"]["n"] == 40
        assert report["subsets"]["normal_atom_bool"]["metrics"]["accuracy"] == 1.0
        answered_before = {key for key, count in counts_at_kill.items() if count}
        repeated = [key for key in answered_before if server.per_key[key] > counts_at_kill[key]]
        # only requests in flight at the kill (at most the concurrency), or answered in the store's last flush delay
        # before it (write_behind.FLUSH_DELAY: at most one more answer per slot), may be sent again
        assert len(repeated) <= 2 * 2
        # every request past the 40 is one of those repeats (the bound was 40 + 2: on a loaded machine a third one
        # came in the flush delay, as the bound above allows, and failed it)
        assert server.requests <= 40 + 2 * 2
    headers = [h.get("authorization") for h in server.headers_seen]
    assert all(value == f"Bearer {secret}" for value in headers)
    for path in home.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    assert secret not in out + err


@pytest.mark.slow
def test_global_limit_caps_concurrent_runs(data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TOOLBOARD_GLOBAL_CONCURRENCY", "3")
    with ScriptedServer(reply=correct_reply, latency=0.05) as server:
        store = Store(tmp_path / "db.sqlite")
        first = start_run(RunRequest(scripted_run_config(server, data, concurrency=4)), store)
        second = start_run(RunRequest(scripted_run_config(server, data, concurrency=4, use_cache=False)), store)

        async def both():
            return await asyncio.gather(
                execute(store, first[0], first[1], retry=FAST_RETRY), execute(store, second[0], second[1], retry=FAST_RETRY)
            )

        outcomes = asyncio.run(both())
    assert all(o.status == "finished" for o in outcomes)
    assert server.max_in_flight == 3


def test_progress_snapshots_report_per_subset_rate_and_eta(data: Path, tmp_path: Path):
    snapshots = []
    with ScriptedServer(reply=correct_reply, latency=0.01) as server:
        run_to_end(Store(tmp_path / "db.sqlite"), scripted_run_config(server, data), on_progress=lambda p: snapshots.append(p.snapshot()))
    assert len(snapshots) == 30
    last = snapshots[-1]
    assert last["done"] == last["total"] == 30 and last["per_subset"] == {"normal_atom_bool": {"done": 30, "total": 30}}
    assert last["requests_per_s"] > 0 and last["eta_s"] == 0 and snapshots[0]["eta_s"] > 0


@pytest.mark.slow
def test_exported_predictions_rescore_to_the_same_report(data: Path, tmp_path: Path):
    home = tmp_path / "home"
    env = {**os.environ, "TOOLBOARD_HOME": str(home)}
    with ScriptedServer(reply=correct_reply) as server:
        run = subprocess.run(
            [sys.executable, "-m", "evaluators", "run", "acebench", "--base-url", server.base_url, "--model", "scripted",
             "--data-dir", str(data), "--subset", "normal_atom_bool", "--limit", "12", "--json"],
            cwd=PROJECT, env=env, capture_output=True, text=True, timeout=120,
        )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    exported = tmp_path / "predictions.jsonl"
    subprocess.run([sys.executable, "-m", "evaluators", "export", report["run_id"], "--predictions", str(exported),
                    "--report", str(tmp_path / "report.json")], cwd=PROJECT, env=env, check=True, timeout=60)
    rescored = subprocess.run(
        [sys.executable, "-m", "evaluators", "score", "acebench", str(exported), "--data-dir", str(data),
         "--subset", "normal_atom_bool", "--json"],
        cwd=PROJECT, env=env, capture_output=True, text=True, timeout=60,
    )
    again = json.loads(rescored.stdout)
    assert report["subsets"]["normal_atom_bool"] == {"n": 12, "metrics": {"accuracy": 1.0}}
    # the file scores the whole subset: the 18 samples beyond --limit 12 count as missing
    assert again["subsets"]["normal_atom_bool"] == {"n": 30, "metrics": {"accuracy": 0.4}}
    assert again["missing"] == 18
    listed = subprocess.run([sys.executable, "-m", "evaluators", "runs", "--json"], cwd=PROJECT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert json.loads(listed.stdout)[0]["id"] == report["run_id"]
    assert json.loads((tmp_path / "report.json").read_text())["run_id"] == report["run_id"]


@pytest.mark.slow
def test_run_errors_are_clear(tmp_path: Path):
    env = {**os.environ, "TOOLBOARD_HOME": str(tmp_path)}
    missing = subprocess.run([sys.executable, "-m", "evaluators", "run", "acebench"], cwd=PROJECT, env=env,
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "give the endpoint's base URL and the model name" in missing.stderr
    unknown = subprocess.run([sys.executable, "-m", "evaluators", "run", "--resume", "nope"], cwd=PROJECT, env=env,
                             capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 2 and "no run 'nope'" in unknown.stderr


def test_real_acebench_normal_and_special_end_to_end_with_gold_answers(real_acebench_dir: Path, tmp_path: Path):
    from evaluators.benchmarks.acebench.data import load
    from evaluators.benchmarks.acebench.oracle import gold_prediction
    from evaluators.benchmarks.acebench.prompts import build_request
    from tests.scripted_server import prompt_key

    samples = [s for s in load(real_acebench_dir, language="en") if not s.subset.startswith("agent")]
    # the shared data holds the official prompt files, so the run sends the official requests
    answers = {prompt_key({"messages": build_request(s, prompt_style="official").messages}): gold_prediction(s)["output"]
               for s in samples}
    with ScriptedServer(reply=lambda body: {"content": answers[prompt_key(body)]}) as server:
        model = ModelSettings(base_url=server.base_url, model="gold", api_key_env="")
        config = RunConfig("acebench", model, language="en", subsets=("normal", "special"), data_dir=str(real_acebench_dir),
                           concurrency=32)
        outcome = run_to_end(Store(tmp_path / "db.sqlite"), config)
    report = outcome.report.to_json()
    # a few items share the very same request: the cache answers the repeats
    assert len(report["subsets"]) == 15 and len(samples) == 973 and server.requests == len(answers) < 973
    assert report["summary"]["normal"] == 0.956 and report["summary"]["special"] == 1.0
    assert report["subsets"]["normal_multi_turn_user_switch"]["metrics"]["accuracy"] == 0.74


def test_an_internal_error_on_one_sample_is_recorded_not_fatal(data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import importlib

    solve_module = importlib.import_module("evaluators.benchmarks.acebench.solve")  # the package re-exports a `solve` function

    real_build = solve_module.build_request

    def flaky_build(sample, mode="prompt", **options):
        if sample.id == "normal_atom_bool_5":
            raise ValueError("spec cannot be rendered")
        return real_build(sample, mode=mode, **options)

    monkeypatch.setattr(solve_module, "build_request", flaky_build)
    with ScriptedServer(reply=correct_reply) as server:
        store = Store(tmp_path / "db.sqlite")
        outcome = run_to_end(store, scripted_run_config(server, data))
    assert outcome.status == "finished"
    error = store.load_predictions(outcome.run_id)["normal_atom_bool_5"].error
    assert error == "internal error: ValueError: spec cannot be rendered"


@pytest.mark.parametrize("request_mode", ["prompt", "tools"])
def test_toolbench_static_runs_end_to_end(tmp_path: Path, request_mode: str):
    from tests.toolbench_fixtures import write_toolbench

    data = write_toolbench(tmp_path / "tb")

    def reply(body: dict) -> dict:
        # a model that always calls the weather tool for Oslo
        if body.get("tools"):
            call = {"name": "get_weather_for_weatherapi", "arguments": json.dumps({"city": "Oslo", "days": 3})}
            return {"tool_calls": [{"id": "c1", "type": "function", "function": call}]}
        return {"content": "Thought: x\nAction: get_weather_for_weatherapi\nAction Input: {\"city\": \"Oslo\", \"days\": 3}"}

    with ScriptedServer(reply=reply) as server:
        model = ModelSettings(base_url=server.base_url, model="scripted", api_key_env="", request_mode=request_mode)
        config = RunConfig("toolbench_static", model, data_dir=str(data))
        outcome = run_to_end(Store(tmp_path / "db.sqlite"), config)
    observation_turns = [m for b in server.bodies for m in b["messages"] if m["content"].startswith('{"role": "function"')]
    assert observation_turns and observation_turns[0]["role"] == "user"
    report = outcome.report.to_json()
    assert report["subsets"]["out_of_domain"]["n"] == 5 and report["unavailable"] == ["in_domain"]
    metrics = report["subsets"]["out_of_domain"]["metrics"]
    # right on the call step, wrong plan on the finish step, wrong action on the list step
    assert metrics["act_em"] == 0.5 and metrics["f1"] == 0.5 and metrics["plan_em"] == pytest.approx(2 / 3)


def test_clients_of_one_endpoint_share_one_limit_of_requests_in_flight():
    """A run's limit is per endpoint: the tested model's client and a role's on the same server (a simulated user,
    a judge) count against one limit (the runner gives them one RequestLimit); a role on another server has its own."""
    from evaluators.core.types import ChatRequest
    from evaluators.engine.client import ChatClient, RequestLimit

    def client(server: ScriptedServer, model: str, limit: RequestLimit | None = None) -> ChatClient:
        settings = ModelSettings(base_url=server.base_url, model=model, api_key_env="", timeout=10.0)
        return ChatClient(settings, use_cache=False, concurrency=2, request_limit=limit)

    async def go(server: ScriptedServer, other: ScriptedServer) -> None:
        shared = RequestLimit(2)
        clients = [client(server, name, shared) for name in ("agent", "user", "judge")] + [client(other, "x")]
        try:
            await asyncio.gather(*(each.complete(ChatRequest([{"role": "user", "content": f"q{index}"}]))
                                   for each in clients for index in range(4)))
        finally:
            for each in clients:
                await each.close()

    with ScriptedServer(reply=lambda body: {"content": "ok"}, latency=0.05) as server, \
            ScriptedServer(reply=lambda body: {"content": "ok"}, latency=0.05) as other:
        asyncio.run(go(server, other))
    assert server.requests == 12 and server.max_in_flight == 2
    assert other.requests == 4 and other.max_in_flight == 2


def test_a_request_equal_to_one_out_waits_for_its_answer_and_a_failed_one_leaves_each_its_own(tmp_path: Path):
    """Samples solved at once may ask the same thing (the cache answers only once the first is back): with the
    cache on, the equal request waits for the answer of the one out instead of being sent too; when that one fails,
    the waiters send their own. With the cache off every request is sent."""
    from evaluators.core.types import ChatRequest
    from evaluators.engine.client import ChatClient, RetryPolicy

    def client(server: ScriptedServer, store: Store, use_cache: bool = True) -> ChatClient:
        settings = ModelSettings(base_url=server.base_url, model="scripted", api_key_env="", timeout=10.0)
        return ChatClient(settings, store=store, use_cache=use_cache, concurrency=4,
                          retry=RetryPolicy(max_attempts=1))

    async def ask(each: ChatClient, times: int, text: str = "same") -> list:
        try:
            return list(await asyncio.gather(*(each.complete(ChatRequest([{"role": "user", "content": text}]))
                                               for _ in range(times)), return_exceptions=True))
        finally:
            await each.close()

    store = Store(tmp_path / "db.sqlite")
    with ScriptedServer(reply=lambda body: {"content": "ok"}, latency=0.1) as server:
        results = asyncio.run(ask(client(server, store), 3))
        assert server.requests == 1 and [result.text for result in results] == ["ok"] * 3
        assert sorted(result.cached for result in results) == [False, True, True]
        asyncio.run(ask(client(server, store, use_cache=False), 3, "other"))
        assert server.requests == 4
    answers = iter([Fault(status=400, message="refused"), {"content": "second"}, {"content": "third"}])
    with ScriptedServer(reply=lambda body: next(answers), latency=0.1) as failing:
        results = asyncio.run(ask(client(failing, store), 3, "fails first"))
        assert failing.requests == 3  # the first failed: each waiter sent its own
        assert sum(isinstance(result, Exception) for result in results) == 1
