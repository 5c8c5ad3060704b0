"""The engine's HTTP worker processes: they carry every request once ready, lose nothing when one
dies, pass bodies of any size intact, end with their event loop, and bad settings are refused; forked
ones (the CLI's) are ready at once, ignore Ctrl-C, keep the CLI's stdout clean."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from evaluators.core.errors import ToolboardError
from evaluators.core.types import ChatRequest, Prediction
from evaluators.engine.client import ChatClient, RetryPolicy
from evaluators.engine.http_pool import (
    AUTO_MIN_CONCURRENCY,
    WORKERS_ENV,
    HttpWorkerPool,
    can_fork_workers,
    fork_workers,
    workers_for,
)
from evaluators.engine.http_worker_plan import requests_expected
from evaluators.engine.runner import execute, start_run
from evaluators.engine.settings import ModelSettings, RunConfig
from evaluators.engine.store import Store
from tests.conftest import PROJECT
from tests.engine_fixtures import correct_reply, write_dataset
from tests.scripted_server import ScriptedServer

FAST_RETRY = RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05)


def _config(server: ScriptedServer, data: Path, concurrency: int) -> RunConfig:
    model = ModelSettings(base_url=server.base_url, model="scripted", timeout=5.0)
    return RunConfig("acebench", model, language="en", subsets=("normal_atom_bool",), data_dir=str(data),
                     concurrency=concurrency)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_workers_carry_every_request_and_end_with_their_loop(tmp_path: Path):
    data = write_dataset(tmp_path / "data", 40)
    with ScriptedServer(reply=correct_reply, latency=0.02) as server:
        store = Store(tmp_path / "db.sqlite")
        run_id, samples = start_run(_config(server, data, concurrency=8), store)

        async def run():
            pool = HttpWorkerPool.for_running_loop(2)
            assert await pool.wait_ready()
            outcome = await execute(store, run_id, samples, retry=FAST_RETRY, http_workers=2)
            return outcome, pool.requests_sent, pool.process_ids(), [w.requests_sent for w in pool.workers]

        outcome, through_workers, pids, per_worker = asyncio.run(run())
    assert outcome.report.to_json()["subsets"]["normal_atom_bool"]["metrics"]["accuracy"] == 1.0
    assert through_workers == server.requests == 40
    assert len(pids) == 2 and all(per_worker)  # both took a share
    assert all(_gone(pid) for pid in pids)  # stopped when asyncio.run ended its loop


def test_a_worker_killed_mid_run_loses_no_sample(tmp_path: Path):
    data = write_dataset(tmp_path / "data", 40)
    victim: dict[str, int] = {}

    def kill_one_worker(body: dict) -> None:
        # runs on the server's thread, as the 10th request arrives
        if server.requests == 10 and "pid" in victim:
            os.kill(victim["pid"], signal.SIGKILL)

    with ScriptedServer(reply=correct_reply, latency=0.05, on_request=kill_one_worker) as server:
        store = Store(tmp_path / "db.sqlite")
        run_id, samples = start_run(_config(server, data, concurrency=8), store)

        async def run():
            pool = HttpWorkerPool.for_running_loop(2)
            assert await pool.wait_ready()
            victim["pid"] = pool.process_ids()[0]
            outcome = await execute(store, run_id, samples, retry=FAST_RETRY, http_workers=2)
            return outcome, [w.alive for w in pool.workers]

        outcome, alive = asyncio.run(run())
    assert alive.count(False) == 1
    report = outcome.report.to_json()
    assert report["errors"] == {} and report["subsets"]["normal_atom_bool"]["n"] == 40
    assert report["subsets"]["normal_atom_bool"]["metrics"]["accuracy"] == 1.0
    assert len(store.prediction_states(run_id)) == 40


def test_large_bodies_and_answers_pass_through_a_worker_intact(tmp_path: Path):
    long_text = "é" * 1_500_000 + " end"  # an audio turn's base64 is of this size

    def echo(body: dict) -> dict:
        return {"content": body["messages"][0]["content"][::-1]}

    with ScriptedServer(reply=echo) as server:
        async def run():
            pool = HttpWorkerPool.for_running_loop(1)
            assert await pool.wait_ready()
            client = ChatClient(ModelSettings(base_url=server.base_url, model="scripted"), http_workers=1)
            result = await client.complete(ChatRequest(messages=[{"role": "user", "content": long_text}]))
            await client.close()
            return result, pool.requests_sent

        result, through_workers = asyncio.run(run())
    assert through_workers == 1
    assert server.bodies[0]["messages"][0]["content"] == long_text
    assert result.text == long_text[::-1]


def test_worker_count_follows_the_concurrency_unless_set(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(WORKERS_ENV, raising=False)
    assert workers_for(AUTO_MIN_CONCURRENCY - 1, cores=16) == 0
    assert workers_for(AUTO_MIN_CONCURRENCY, cores=2) == 0  # the workers' start would cost more than they save
    assert workers_for(AUTO_MIN_CONCURRENCY, cores=2, cheap_start=True) == 1  # forked, or kept from run to run
    assert workers_for(AUTO_MIN_CONCURRENCY, cores=1, cheap_start=True) == 0
    assert workers_for(AUTO_MIN_CONCURRENCY, cores=4) == 2 and workers_for(64, cores=64) == 4
    assert workers_for(64, requested=0) == 0 and workers_for(1, requested=3) == 3
    monkeypatch.setenv(WORKERS_ENV, "1")
    assert workers_for(64) == 1 and workers_for(64, requested=2) == 2


def test_bad_worker_settings_are_refused_clearly(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv(WORKERS_ENV, "two")
    with pytest.raises(ToolboardError, match=f"{WORKERS_ENV} must be a whole number of processes .* not 'two'"):
        workers_for(64)
    env = {**os.environ, "TOOLBOARD_HOME": str(tmp_path)}
    env.pop(WORKERS_ENV)
    done = subprocess.run([sys.executable, "-m", "evaluators", "run", "acebench", "--base-url", "http://127.0.0.1:9/v1",
                           "--model", "m", "--http-workers", "-1"], cwd=PROJECT, env=env, capture_output=True, text=True)
    assert done.returncode == 2 and "--http-workers must be 0" in done.stderr


# Forking needs a process with no other thread, unlike pytest's with its scripted servers: a fresh one.
FORK_PROBE = """
import asyncio, json, os, signal, sys, time
from evaluators.core.types import ChatRequest
from evaluators.engine.client import ChatClient
from evaluators.engine.http_pool import HttpWorkerPool, can_fork_workers, fork_workers
from evaluators.engine.settings import ModelSettings

assert can_fork_workers()
forked = fork_workers(2)
started = time.perf_counter()

async def main():
    pool = HttpWorkerPool.for_running_loop(2)
    ready = await pool.wait_ready(5)
    ready_after = time.perf_counter() - started
    pids = pool.process_ids()
    parents = [int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1]) for pid in pids]
    for pid in pids:
        os.kill(pid, signal.SIGINT)  # Ctrl-C reaches the whole process group
    client = ChatClient(ModelSettings(base_url=sys.argv[1], model="scripted"), http_workers=2, concurrency=8)
    answers = await asyncio.gather(*[client.complete(ChatRequest(messages=[{"role": "user", "content": f"q{i}"}]))
                                     for i in range(20)])
    await client.close()
    return {"forked": forked, "ready": ready, "ready_after": ready_after, "pids": pids, "parents": parents,
            "through_workers": pool.requests_sent, "per_worker": [w.requests_sent for w in pool.workers],
            "alive_after_sigint": len(pool.process_ids()), "answers": [a.text for a in answers]}

result = asyncio.run(main())
result["gone_after_loop"] = [not os.path.exists(f"/proc/{pid}") for pid in result["pids"]]
print(json.dumps(result))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux only")
def test_forked_workers_are_ready_at_once_ignore_ctrl_c_and_end_with_their_loop():
    with ScriptedServer(reply=lambda body: {"content": body["messages"][0]["content"].upper()}) as server:
        done = subprocess.run([sys.executable, "-c", FORK_PROBE, server.base_url], cwd=PROJECT, capture_output=True,
                              text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)  # nothing but the probe's line on stdout
    assert result["forked"] == 2 and result["ready"]
    assert result["ready_after"] < 1.0  # no SDK import to wait for (a fresh worker takes ~1 s of CPU)
    probe_pid = result["parents"][0]
    assert result["parents"] == [probe_pid, probe_pid] and probe_pid not in result["pids"]
    assert result["alive_after_sigint"] == 2
    assert result["answers"] == [f"Q{i}" for i in range(20)]
    assert result["through_workers"] == server.requests == 20 and all(result["per_worker"])
    assert all(result["gone_after_loop"])


def test_no_fork_while_another_thread_runs():
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not can_fork_workers()
        assert fork_workers(2) == 0  # the pool then starts fresh workers itself
    finally:
        stop.set()
        thread.join()


def test_cli_at_high_concurrency_runs_with_its_default_workers_and_its_json_stays_clean(tmp_path: Path):
    # On Linux with 2 cores or more the CLI forks its HTTP workers here (workers_for, cheap_start).
    data = write_dataset(tmp_path / "data", 40)
    env = {**os.environ, "TOOLBOARD_HOME": str(tmp_path / "home")}
    env.pop(WORKERS_ENV, None)
    with ScriptedServer(reply=correct_reply, latency=0.05) as server:
        done = subprocess.run([sys.executable, "-m", "evaluators", "run", "acebench", "--base-url", server.base_url,
                               "--model", "scripted", "--data-dir", str(data), "--subset", "normal_atom_bool",
                               "--concurrency", str(AUTO_MIN_CONCURRENCY), "--json"],
                              cwd=PROJECT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["subsets"]["normal_atom_bool"]["n"] == 40 and report["subsets"]["normal_atom_bool"]["metrics"]["accuracy"] == 1.0
    assert server.requests == 40


def test_the_cli_forks_no_worker_when_nothing_will_be_sent(tmp_path: Path):
    data = write_dataset(tmp_path / "data", 4)
    write_dataset(tmp_path / "data", 4, category="normal_atom_number")
    store = Store(tmp_path / "db.sqlite")
    model = ModelSettings(base_url="http://127.0.0.1:9/v1", model="scripted")
    config = RunConfig("acebench", model, language="en", subsets=("normal_atom_bool",), data_dir=str(data), concurrency=64)

    def finish(run_id: str, samples: list, failing: int = 0) -> None:
        store.save_batch(run_id, [], [("normal_atom_bool", Prediction(s.id, output="[]", error="HTTP 503" if i < failing else None), 1)
                                      for i, s in enumerate(samples)])
        store.set_status(run_id, "finished")

    first, samples = start_run(config, store)
    assert requests_expected(store, first, rerun_errors=False)  # nothing cached yet
    finish(first, samples, failing=1)
    assert not requests_expected(store, first, rerun_errors=False)  # resuming a finished run
    assert requests_expected(store, first, rerun_errors=True)  # one sample ended with a request error
    # The same requests again, at another concurrency: the failed one is not in the cache...
    repeat, _ = start_run(replace(config, concurrency=128), store)
    assert requests_expected(store, repeat, rerun_errors=False)
    # ... but after a run that finished without errors, the cache answers them all.
    clean, samples = start_run(config, store)
    finish(clean, samples)
    again, _ = start_run(replace(config, concurrency=128), store)
    assert not requests_expected(store, again, rerun_errors=False)
    other_subset, _ = start_run(replace(config, subsets=("normal_atom_number",)), store)
    assert requests_expected(store, other_subset, rerun_errors=False)
    no_cache, _ = start_run(replace(config, use_cache=False), store)
    assert requests_expected(store, no_cache, rerun_errors=False)
