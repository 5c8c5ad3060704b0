"""Queue mode end to end: Redis from Debian's redis-server, `python -m evaluators worker` processes and the
real app (its form and jobs panel through gradio_client) in queue mode, against the loopback scripted
endpoint. Skipped, with the reason, where redis-server is not installed."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from gradio_client import Client

from evaluators.core.errors import ToolboardError
from evaluators.engine.jobs import JobManager
from evaluators.engine.queue_app import QueueSettings
from evaluators.engine.queue_jobs import QueueJobs
from evaluators.engine.settings import ModelSettings, RunConfig, RunRequest
from evaluators.engine.store import Store
from evaluators.service.board import board_rows
from tests.app_fixtures import form, table_rows
from tests.engine_fixtures import write_dataset
from tests.queue_fixtures import TEST_VISIBILITY_S, free_port, needs_redis, redis_server, workers
from tests.scripted_server import ScriptedServer
from ui.app import build_app, launch_options, launch_patiently
from ui.context import AppContext

ITEMS = 24


def mixed_reply(body: dict[str, Any]) -> dict[str, Any]:
    """Right on two items in three, a wrong time on the third: scores that are not trivially all or nothing."""
    text = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
    if " at " not in text:
        return {"content": "[]"}
    number = int(text.split("number ", 1)[1].split(" ", 1)[0])
    time_asked = text.rsplit(" at ", 1)[1].split(".")[0]
    return {"content": f"[Clock.setAlarm(time='{'99:99' if number % 3 == 0 else time_asked}')]"}


@dataclass
class QueueApp:
    url: str
    context: AppContext
    client: Client
    data: Path
    server: ScriptedServer
    models_asked: list[str]


@contextmanager
def queue_app(root: Path, broker_url: str, latency: float = 0.0, server: ScriptedServer | None = None) \
        -> Iterator[QueueApp]:
    """The real app in queue mode with its own store, and a scripted endpoint (`server`, else one of its own)."""
    if server is None:
        models_asked: list[str] = []
        with ScriptedServer(reply=mixed_reply, latency=latency,
                            on_request=lambda body: models_asked.append(body["model"])) as own:
            with queue_app(root, broker_url, server=own) as app:
                app.models_asked = models_asked  # what this endpoint was asked, as it is asked
                yield app
        return
    data = write_dataset(root / "data", ITEMS)
    settings = QueueSettings(broker_url, visibility_s=TEST_VISIBILITY_S)
    context = AppContext(store=Store(root / "app" / "toolboard.db"), queue=settings)
    demo = build_app(context)
    launch_patiently(demo, **{**launch_options(context), "max_file_size": None}, server_name="127.0.0.1",
                prevent_thread_lock=True, quiet=True)
    try:
        yield QueueApp(demo.local_url, context, Client(demo.local_url, verbose=False), data, server, [])
    finally:
        demo.close()
        context.close()


def start(app: QueueApp, model: str, **overrides: Any) -> str:
    started = app.client.predict(**form(app.server.base_url, model, app.data, limit=ITEMS, **overrides),
                                 api_name="/start_run")
    assert started["run_id"], started["message"]
    return started["run_id"]


def wait_until(check: Any, timeout: float = 120, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def status(app: QueueApp, run_id: str) -> str:
    return app.context.jobs.status_of(run_id, app.context.store.get_run(run_id).status)


def embedded_reports(root: Path, data: Path, base_url: str) -> dict[str, Any]:
    """The same run executed in the embedded mode (in-process jobs): its reports in both scoring modes."""
    store = Store(root / "embedded.db")
    jobs = JobManager(store)
    try:
        config = RunConfig(benchmark="acebench", language="en", subsets=("normal_atom_bool",), data_dir=str(data),
                           limit=ITEMS, concurrency=4, model=ModelSettings(base_url=base_url, model="embedded"))
        run_id = jobs.start(RunRequest(config))
        jobs.wait(run_id, 120)
        return {mode: store.load_report(run_id, mode) for mode in ("official", "strict")}
    finally:
        jobs.shutdown()
        store.close()


def assert_whole(store: Store, run_id: str) -> None:
    """Every sample once: no sample lost, no duplicate row."""
    ids = list(store.load_predictions(run_id))
    assert len(ids) == len(set(ids)) == store.run_totals(run_id)["done"] == ITEMS
    for mode in ("official", "strict"):
        scores = store.load_scores(run_id, mode)
        assert sorted(s.sample_id for s in scores) == sorted(ids)


def test_six_runs_on_two_workers_score_as_embedded_and_a_killed_worker_loses_nothing(tmp_path: Path):
    with redis_server(tmp_path / "redis") as redis, queue_app(tmp_path, redis.url, latency=0.25) as app, \
            workers(redis.url, tmp_path, ("w1", "w2")) as pool:
        expected = embedded_reports(tmp_path, app.data, app.server.base_url)
        run_ids: list[str] = []
        threads = [threading.Thread(target=lambda i=i: run_ids.append(start(app, f"queued-model-{i}", concurrency=1)))
                   for i in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert len(run_ids) == 6
        jobs = {row["run_id"]: row for row in table_rows(app.client.predict(api_name="/jobs"))}
        assert all(jobs[run_id]["status"] in ("queued", "running", "finished") for run_id in run_ids)

        # Kill the worker executing a run that has answered part of its items: that run must finish elsewhere.
        def a_run_half_way() -> tuple[str, dict[str, Any]] | None:
            for run_id in run_ids:
                job = app.context.jobs.job(run_id)
                if job is not None and job.progress.get("worker") and 3 <= job.progress.get("done", 0) <= ITEMS - 8:
                    return run_id, job.progress
            return None

        victim_run, progress = wait_until(a_run_half_way, what="a run half way")
        victim = pool[progress["worker"].split("@")[0]]
        victim.kill()
        app.server.latency = 0.0  # the slow answers were there to catch a run half way; the rest need not wait

        for run_id in run_ids:
            wait_until(lambda run_id=run_id: status(app, run_id) in ("finished", "failed", "cancelled"), timeout=180,
                       what=f"run {run_id} to end")
            assert status(app, run_id) == "finished", app.context.store.get_run(run_id).message
            assert_whole(app.context.store, run_id)
            for mode in ("official", "strict"):
                assert app.context.store.load_report(run_id, mode) == expected[mode]
        survivor = next(worker for worker in pool.values() if worker is not victim)
        assert victim_run.encode() in survivor.log.read_bytes()  # redelivered to the other worker

        board = board_rows("acebench", app.context.store)
        for run_id in run_ids:
            assert (board["run_id"] == run_id).sum() == 1  # each finished run once on the board
        jobs = {row["run_id"]: row for row in table_rows(app.client.predict(api_name="/jobs"))}
        assert all(jobs[run_id]["status"] == "finished" and jobs[run_id]["done"] == ITEMS for run_id in run_ids)


def test_a_queued_and_a_running_run_are_cancelled(tmp_path: Path):
    with redis_server(tmp_path / "redis") as redis, queue_app(tmp_path, redis.url, latency=0.3) as app, \
            workers(redis.url, tmp_path, ("w1",), concurrency=1):
        running = start(app, "slow-running", concurrency=1)
        queued = start(app, "slow-queued", concurrency=1)
        wait_until(lambda: status(app, running) == "running" and app.context.jobs.job(running).progress.get("done"),
                   what="the first run to start")
        assert status(app, queued) == "queued"
        assert "in line" in app.context.jobs.job(queued).message  # its place in the queue
        message, _ = app.client.predict(queued, api_name="/cancel_run")
        assert status(app, queued) == "cancelled"
        message, _ = app.client.predict(running, api_name="/cancel_run")
        wait_until(lambda: status(app, running) == "cancelled", what="the running run to stop")
        assert app.context.store.get_run(running).status == "cancelled"
        assert app.models_asked.count("slow-running") < ITEMS  # stopped early
        time.sleep(2)  # the worker, free again, must not start the cancelled queued run
        assert "slow-queued" not in app.models_asked and "slow-running" in app.models_asked
        assert app.context.store.get_run(queued).status == "cancelled"
        app.server.latency = 0.0  # slow answers kept the first run going while it was cancelled; no longer needed
        # Resumed after the cancel (the revoked task id must not stop the new sending): it finishes.
        message, _ = app.client.predict(queued, "", api_name="/resume_run")
        assert "Resumed" in message
        wait_until(lambda: status(app, queued) == "finished", what="the resumed run to finish")
        assert_whole(app.context.store, queued)


def test_queued_runs_survive_a_redis_restart_and_the_app_reconnects(tmp_path: Path):
    with redis_server(tmp_path / "redis") as redis, queue_app(tmp_path, redis.url) as app:
        first, second = start(app, "before-restart-1"), start(app, "before-restart-2")
        redis.stop()
        time.sleep(1.5)  # the app's watcher meets the closed port meanwhile
        redis.start()
        with workers(redis.url, tmp_path, ("w1",)):
            for run_id in (first, second):
                wait_until(lambda run_id=run_id: status(app, run_id) == "finished", what=f"run {run_id} to finish")
                assert_whole(app.context.store, run_id)


def test_an_unreachable_broker_creates_nothing(tmp_path: Path):
    data = write_dataset(tmp_path / "data", 4)
    store = Store(tmp_path / "toolboard.db")
    with ScriptedServer(reply=mixed_reply) as server:
        jobs = QueueJobs(store, QueueSettings(f"redis://127.0.0.1:{free_port()}/0"))
        try:
            config = RunConfig(benchmark="acebench", language="en", subsets=("normal_atom_bool",), data_dir=str(data),
                               model=ModelSettings(base_url=server.base_url, model="m"))
            with pytest.raises(ToolboardError, match="cannot be reached.*nothing was created"):
                jobs.start(RunRequest(config))
        finally:
            jobs.shutdown()
    assert store.list_runs() == [] and server.requests == 0


def test_a_key_typed_into_the_form_never_travels_in_the_task(tmp_path: Path):
    needs_redis()
    secret = "sk-typed-in-the-form-0123456789"
    with redis_server(tmp_path / "redis") as redis, queue_app(tmp_path, redis.url) as app:
        run_id = start(app, "with-a-key", api_key=secret)
        import redis as redis_py

        client = redis_py.Redis.from_url(redis.url)
        messages = client.lrange("toolboard", 0, -1)
        assert messages and all(secret.encode() not in message for message in messages)
        with workers(redis.url, tmp_path, ("w1",)):
            wait_until(lambda: status(app, run_id) == "finished", what="the run to finish")
        assert any(h.get("authorization") == f"Bearer {secret}" for h in app.server.headers_seen)
        assert not [key for key in client.keys("toolboard:secret:*")]  # deleted once the run ended
        assert secret.encode() not in (tmp_path / "app" / "toolboard.db").read_bytes()


def test_cli_run_queue_prints_the_report_and_detach_returns_at_once(tmp_path: Path):
    import subprocess
    import sys

    from tests.queue_fixtures import PROJECT, queue_env

    with redis_server(tmp_path / "redis") as redis, ScriptedServer(reply=mixed_reply) as server, \
            workers(redis.url, tmp_path, ("w1",)):
        data = write_dataset(tmp_path / "data", 6)
        args = [sys.executable, "-m", "evaluators", "run", "acebench", "--base-url", server.base_url, "--model", "cli-m",
                "--language", "en", "--subset", "normal_atom_bool", "--data-dir", str(data), "--queue", "--json"]
        env = queue_env(redis.url, tmp_path / "cli", OPENAI_API_KEY="x")
        done = subprocess.run(args, cwd=PROJECT, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["subsets"]["normal_atom_bool"]["n"] == 6 and report["run_id"]
        detached = subprocess.run([*args, "--detach"], cwd=PROJECT, env=env, capture_output=True, text=True,
                                  timeout=60)
        assert detached.returncode == 0, detached.stderr
        run_id = detached.stdout.strip()
        wait_until(lambda: json.loads(subprocess.run(
            [sys.executable, "-m", "evaluators", "runs", "--json"], cwd=PROJECT, env=env, capture_output=True, text=True,
            timeout=60).stdout)[0]["status"] == "finished", what="the detached run to be stored")
        assert run_id


def test_a_worker_needs_a_broker(tmp_path: Path):
    import subprocess
    import sys

    from tests.conftest import bytecode_env
    from tests.queue_fixtures import PROJECT

    env = {"PATH": "/usr/bin:/bin", "TOOLBOARD_HOME": str(tmp_path), "HOME": str(tmp_path), **bytecode_env()}
    done = subprocess.run([sys.executable, "-m", "evaluators", "worker"], cwd=PROJECT, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and "TOOLBOARD_BROKER_URL" in done.stderr


def test_a_queued_run_picked_up_after_restart_is_followed(tmp_path: Path):
    """The app restarted while runs were queued: it follows them again and stores them when they end."""
    with redis_server(tmp_path / "redis") as redis, ScriptedServer(reply=mixed_reply) as server:
        with queue_app(tmp_path, redis.url, server=server) as app:
            run_id = start(app, "across-restart")
        with queue_app(tmp_path, redis.url, server=server) as again, workers(redis.url, tmp_path, ("w1",)):
            wait_until(lambda: status(again, run_id) == "finished", what="the run to finish")
            assert_whole(again.context.store, run_id)


# ---- a run whose task the broker lost (Redis restarted without persistence, the app killed before sending) ----

LOST_NOTE = "its task was lost from the queue (the broker restarted?)"


class ManualClock:
    """The watcher's clock in these tests: moved on by the test, one second per poll it drives."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def driven_jobs(store: Store, broker_url: str, clock: ManualClock) -> QueueJobs:
    """The app's queue side with its watcher idle (the test drives the polls) and the test's clock."""
    return QueueJobs(store, QueueSettings(broker_url, visibility_s=TEST_VISIBILITY_S), poll_seconds=3600, clock=clock)


def poll_until(jobs: QueueJobs, clock: ManualClock, check: Any, polls: int, what: str) -> int:
    """Poll (a second of the test's clock each) until `check` holds; how many polls it took. The short real pause
    only lets Redis and the workers move: the bound is the number of polls."""
    for count in range(1, polls + 1):
        jobs.poll()
        clock.now += 1.0
        if check():
            return count
        time.sleep(0.2)
    raise AssertionError(f"{what}: not within {polls} polls")


def acebench_config(data: Path, base_url: str, model: str, items: int = ITEMS, concurrency: int = 4) -> RunConfig:
    return RunConfig(benchmark="acebench", language="en", subsets=("normal_atom_bool",), data_dir=str(data),
                     limit=items, concurrency=concurrency, model=ModelSettings(base_url=base_url, model=model))


def executions(worker_log: Path, run_id: str) -> int:
    """How many of the run's deliveries this worker executed to the end (an ignored second delivery is not one)."""
    return sum(1 for line in worker_log.read_text(errors="replace").splitlines()
               if f"[{run_id}." in line and "succeeded" in line)


def test_a_queued_run_lost_in_a_redis_restart_is_sent_again_and_runs_once(tmp_path: Path):
    """Redis without persistence restarts while a run waits for a worker: the run's task is gone. The watcher
    sends it again (a new task id) once it has been missing for the visibility timeout; it runs once."""
    import redis as redis_py

    models_asked: list[str] = []
    with redis_server(tmp_path / "redis", persistent=False) as redis, \
            ScriptedServer(reply=mixed_reply, on_request=lambda body: models_asked.append(body["model"])) as server:
        store = Store(tmp_path / "app" / "toolboard.db")
        clock = ManualClock()
        jobs = driven_jobs(store, redis.url, clock)
        try:
            run_id = jobs.start(RunRequest(acebench_config(write_dataset(tmp_path / "data", ITEMS), server.base_url, "lost")))
            client = redis_py.Redis.from_url(redis.url)
            assert client.llen("toolboard") == 1
            redis.stop()
            redis.start()
            assert client.dbsize() == 0  # restarted empty: the queued task is gone
            with workers(redis.url, tmp_path, ("w1",)) as pool:
                polls = poll_until(jobs, clock, lambda: jobs.job(run_id).status in ("finished", "failed", "cancelled"),
                                   300, "the lost run to end")
                job = jobs.job(run_id)
                assert job.status == "finished", job.message
                assert polls >= TEST_VISIBILITY_S  # not sent again before the visibility timeout
                assert len(job.earlier_task_ids) == 1  # sent again once, under a new task id
                for _ in range(3 * TEST_VISIBILITY_S):  # and nothing more afterwards
                    jobs.poll()
                    clock.now += 1.0
                assert client.llen("toolboard") == 0
                assert executions(pool["w1"].log, run_id) == 1
            assert_whole(store, run_id)
            assert models_asked.count("lost") == ITEMS  # every sample asked once
        finally:
            jobs.shutdown()
            store.close()


def test_a_run_whose_task_is_waiting_taken_or_held_is_not_sent_again(tmp_path: Path):
    """The rule for `lost`, step by step, with no worker: a task waiting in the queue, one a worker has taken
    (unacknowledged) and a run a worker holds the lock of are never sent again, however long; a task found
    nowhere for longer than the visibility timeout is sent again once, and a sending that fails is tried again."""
    import redis as redis_py

    from evaluators.engine.queue_app import lock_key

    with redis_server(tmp_path / "redis", persistent=False) as redis, ScriptedServer(reply=mixed_reply) as server:
        store = Store(tmp_path / "app" / "toolboard.db")
        clock = ManualClock()
        jobs = driven_jobs(store, redis.url, clock)
        client = redis_py.Redis.from_url(redis.url)

        def polls(count: int) -> None:
            for _ in range(count):
                jobs.poll()
                clock.now += 1.0

        try:
            run_id = jobs.start(RunRequest(acebench_config(write_dataset(tmp_path / "data", 4), server.base_url, "waiting", 4)))
            job = jobs.job(run_id)
            first = job.task_id
            polls(5 * TEST_VISIBILITY_S)  # waiting in the queue: left alone
            assert job.status == "queued" and job.task_id == first and client.llen("toolboard") == 1
            assert job.message == "queued: 1 in line"

            # Taken by a worker that has not started it yet: kombu keeps it in the `unacked` hash meanwhile.
            raw = client.rpop("toolboard")
            client.hset("unacked", "tag-1", json.dumps([json.loads(raw), "toolboard", "toolboard"]))
            client.zadd("unacked_index", {"tag-1": clock.now})
            polls(5 * TEST_VISIBILITY_S)
            assert job.task_id == first and client.llen("toolboard") == 0

            # Held by a worker (its lock) with no delivery to be seen: left alone too.
            client.delete("unacked", "unacked_index")
            client.set(lock_key(run_id), "a worker", ex=600)
            polls(5 * TEST_VISIBILITY_S)
            assert job.task_id == first and client.llen("toolboard") == 0

            # Nowhere, and the broker refuses the sending: still queued, saying so, tried again later.
            client.delete(lock_key(run_id))
            send_task = jobs.celery.send_task

            def refused(*args: Any, **kwargs: Any) -> None:
                raise ConnectionError("the broker is away")

            jobs.celery.send_task = refused
            polls(TEST_VISIBILITY_S + 3)
            assert job.status == "queued" and "sending it again failed" in job.message, job.message
            assert client.llen("toolboard") == 0
            jobs.celery.send_task = send_task
            polls(TEST_VISIBILITY_S + 3)
            assert client.llen("toolboard") == 1 and job.task_id != first
            assert job.task_id.encode() in client.lindex("toolboard", 0)
            assert LOST_NOTE in job.message and "sent again" in job.message, job.message
            sent = job.task_id
            polls(5 * TEST_VISIBILITY_S)  # the new sending waits in the queue: no second copy
            assert client.llen("toolboard") == 1 and job.task_id == sent
            assert store.get_run(run_id).status == "queued"
        finally:
            jobs.shutdown()
            store.close()


def test_a_lost_run_whose_typed_key_was_lost_too_fails_saying_why(tmp_path: Path):
    """A key typed into the form lives in Redis: lost with the task, the run cannot be sent again as it was; it
    ends failed, saying why and what to do."""
    import redis as redis_py

    with redis_server(tmp_path / "redis", persistent=False) as redis, ScriptedServer(reply=mixed_reply) as server:
        store = Store(tmp_path / "app" / "toolboard.db")
        clock = ManualClock()
        jobs = driven_jobs(store, redis.url, clock)
        try:
            config = acebench_config(write_dataset(tmp_path / "data", 4), server.base_url, "typed", 4)
            run_id = jobs.start(RunRequest(config, api_key="sk-typed-0123456789"))
            redis_py.Redis.from_url(redis.url).flushall()
            poll_until(jobs, clock, lambda: jobs.job(run_id).status != "queued", 3 * TEST_VISIBILITY_S,
                       "the run to end")
            assert jobs.job(run_id).status == "failed" and store.get_run(run_id).status == "failed"
            assert LOST_NOTE in store.get_run(run_id).message and "key" in store.get_run(run_id).message
        finally:
            jobs.shutdown()
            store.close()


def test_cli_run_queue_sends_a_run_lost_in_a_redis_restart_again(tmp_path: Path):
    """`run --queue` waiting on its run: Redis restarts empty before any worker took it; the command sends it
    again, says so, and prints the report of the one execution."""
    import subprocess
    import sys

    import redis as redis_py

    from tests.queue_fixtures import PROJECT, queue_env

    with redis_server(tmp_path / "redis", persistent=False) as redis, ScriptedServer(reply=mixed_reply) as server:
        data = write_dataset(tmp_path / "data", 6)
        args = [sys.executable, "-m", "evaluators", "run", "acebench", "--base-url", server.base_url, "--model", "cli-lost",
                "--language", "en", "--subset", "normal_atom_bool", "--data-dir", str(data), "--queue", "--json"]
        env = queue_env(redis.url, tmp_path / "cli", OPENAI_API_KEY="x")
        command = subprocess.Popen(args, cwd=PROJECT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            client = redis_py.Redis.from_url(redis.url)
            wait_until(lambda: client.llen("toolboard") == 1, timeout=60, what="the run to be queued")
            redis.stop()
            redis.start()
            assert client.dbsize() == 0
            with workers(redis.url, tmp_path, ("w1",)) as pool:
                out, err = command.communicate(timeout=180)
                assert command.returncode == 0, err
                run_id = json.loads(out)["run_id"]
                assert executions(pool["w1"].log, run_id) == 1
        finally:
            if command.poll() is None:
                command.kill()
                command.wait(10)
        assert json.loads(out)["subsets"]["normal_atom_bool"]["n"] == 6
        assert LOST_NOTE in err and "sent again" in err
        assert server.requests == 6  # every sample asked once


def test_a_run_left_queued_by_an_app_killed_before_sending_is_sent_once_by_its_followers(tmp_path: Path):
    """The app died between marking a run queued and sending its task: the app started again (and a second
    follower on the same store, as `run --queue` beside the app) find the run's sending recorded in Redis and
    send it again, once between them, under one new task id that both follow."""
    import redis as redis_py

    with redis_server(tmp_path / "redis", persistent=False) as redis, ScriptedServer(reply=mixed_reply) as server:
        store = Store(tmp_path / "app" / "toolboard.db")
        clock = ManualClock()
        client = redis_py.Redis.from_url(redis.url)
        killed = driven_jobs(store, redis.url, clock)
        run_id = killed.start(RunRequest(acebench_config(write_dataset(tmp_path / "data", 4), server.base_url, "unsent", 4)))
        killed.shutdown()  # as if it had died before sending: the message never reached the queue
        client.delete("toolboard")
        again, beside = driven_jobs(store, redis.url, clock), driven_jobs(store, redis.url, clock)
        try:
            for _ in range(5 * TEST_VISIBILITY_S):
                again.poll()
                beside.poll()
                clock.now += 1.0
            assert client.llen("toolboard") == 1  # sent again once
            sent = client.lindex("toolboard", 0)
            assert again.job(run_id).task_id == beside.job(run_id).task_id
            assert again.job(run_id).task_id.encode() in sent
            assert [again.job(run_id).status, beside.job(run_id).status] == ["queued", "queued"]
        finally:
            again.shutdown()
            beside.shutdown()
            store.close()


def test_a_running_run_whose_worker_died_while_redis_lost_everything_is_sent_again(tmp_path: Path):
    """A worker dies (as a machine) while its run goes, and Redis restarts empty meanwhile: no delivery is left
    to hand out again. The watcher sees the run's state gone with nothing holding it, sends it again, and the run
    ends finished with every sample once."""
    from tests.queue_fixtures import start_worker

    with redis_server(tmp_path / "redis", persistent=False) as redis, \
            ScriptedServer(reply=mixed_reply, latency=0.3) as server:
        store = Store(tmp_path / "app" / "toolboard.db")
        clock = ManualClock()
        jobs = driven_jobs(store, redis.url, clock)
        try:
            run_id = jobs.start(RunRequest(acebench_config(write_dataset(tmp_path / "data", ITEMS), server.base_url, "dies",
                                                           concurrency=1)))
            first = start_worker(redis.url, tmp_path, "w1", concurrency=1)
            try:
                poll_until(jobs, clock, lambda: 2 <= jobs.job(run_id).progress.get("done", 0), 300,
                           "the run to be going")
            finally:
                first.kill()
            server.latency = 0.0  # slow answers kept the run going until its worker died; the rest need not wait
            redis.stop()
            redis.start()
            with workers(redis.url, tmp_path, ("w2",)) as pool:
                poll_until(jobs, clock, lambda: jobs.job(run_id).status in ("finished", "failed", "cancelled"), 600,
                           "the run to end")
                assert jobs.job(run_id).status == "finished", jobs.job(run_id).message
                assert len(jobs.job(run_id).earlier_task_ids) == 1  # sent again once
                assert executions(pool["w2"].log, run_id) == 1
            assert_whole(store, run_id)
        finally:
            jobs.shutdown()
            store.close()


# ---- the queue's result: the run document, published (if at all) by the app ----


def test_a_finished_run_comes_back_as_its_run_document_and_the_app_publishes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The queue's result is the run document (queue_app.TaskResult), not the publishing format: a worker pushes
    nothing to a results dataset, even with TOOLBOARD_HUB_REPO set. The app imports the document in place of its
    placeholder (keeping its own endpoint and settings) and then calls on_finished, where the app pushes the run
    to its own results dataset (the post-run push, above the engine), board-wide `contents` included."""
    from evaluators.engine.run_document import DOCUMENT_FORMAT
    from evaluators.publish.hub_sync import HubSync
    from tests.fake_hub_repo import pointed_hub
    from tests.queue_fixtures import start_worker
    from tests.test_hub_sync import REPO, TOKEN

    worker_repo = "worker-org/never-written"
    with pointed_hub(tmp_path, monkeypatch, TOKEN) as hub, redis_server(tmp_path / "redis") as redis, \
            ScriptedServer(reply=mixed_reply) as server:
        store = Store(tmp_path / "app" / "toolboard.db")
        publisher = HubSync(REPO, TOKEN, store, endpoint=hub.endpoint)
        pushed: list[list[str]] = []
        jobs = QueueJobs(store, QueueSettings(redis.url, visibility_s=TEST_VISIBILITY_S), poll_seconds=3600,
                         on_finished=lambda run_id: pushed.append(publisher.push(run_id)))
        worker = start_worker(redis.url, tmp_path, "w1", TOOLBOARD_HUB_REPO=worker_repo, HF_TOKEN=TOKEN,
                              HF_ENDPOINT=hub.endpoint, HF_HOME=str(tmp_path / "hf"))
        try:
            run_id = jobs.start(RunRequest(acebench_config(write_dataset(tmp_path / "data", ITEMS), server.base_url, "documented")))
            placeholder = store.get_run(run_id)
            backend, task_id = jobs.celery.backend, jobs.job(run_id).task_id
            meta = wait_until(lambda: (m := backend.get_task_meta(task_id))["status"] == "SUCCESS" and m,
                              what="the task's result")
            result = meta["result"]
            assert set(result) == {"status", "worker", "document"} and result["status"] == "finished"
            assert result["document"]["format"] == DOCUMENT_FORMAT and result["document"]["run"]["id"] == run_id
            assert pushed == []
            jobs.poll()
            assert jobs.job(run_id).status == "finished"
        finally:
            worker.stop()
            jobs.shutdown()
        stored = store.get_run(run_id)
        assert (stored.base_url, stored.config, stored.model) == (placeholder.base_url, placeholder.config,
                                                                  placeholder.model)
        assert_whole(store, run_id)
        assert len(pushed) == 1 and f"runs/{run_id}.parquet" in hub.files(REPO)
        assert "contents/train-00000-of-00001.parquet" in hub.files(REPO)
        assert f"datasets/{worker_repo}" not in hub.repos
        assert not any(worker_repo in request.path for request in hub.requests)
        store.close()
