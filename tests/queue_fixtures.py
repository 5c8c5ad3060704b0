"""Queue mode for tests: a real Redis (Debian's redis-server) on a free loopback port, and real workers
(`python -m evaluators worker` processes, each with its own TOOLBOARD_HOME, in their own process group
so a test can kill one whole, as a machine dies)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parent.parent
REDIS_SERVER = shutil.which("redis-server")
# Seconds after which a dead worker's run is handed to another worker, in tests (the default is minutes).
TEST_VISIBILITY_S = 4


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def needs_redis() -> None:
    if REDIS_SERVER is None:
        pytest.skip("queue mode needs Redis: install Debian's redis-server (.ci/run does) to run this test")


@dataclass
class RedisServer:
    folder: Path
    # False: no persistence at all (no append-only file, no snapshots), so a restart starts empty, as a Redis
    # run without `--appendonly yes` that restarts.
    persistent: bool = True
    port: int = field(default_factory=free_port)
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start (or start again) on the same port and folder; append-only persistence, as the README advises,
        so queued runs survive a restart (unless `persistent` is False)."""
        assert REDIS_SERVER is not None
        self.folder.mkdir(parents=True, exist_ok=True)
        persistence = ["--appendonly", "yes", "--appendfsync", "always"] if self.persistent else ["--appendonly", "no"]
        self.process = subprocess.Popen(
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder), "--save", "",
             *persistence, "--protected-mode", "yes"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as connection:
                    connection.sendall(b"PING\r\n")
                    if connection.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise AssertionError(f"redis-server did not answer on port {self.port}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(20)


@contextmanager
def redis_server(folder: Path, persistent: bool = True) -> Iterator[RedisServer]:
    needs_redis()
    server = RedisServer(folder, persistent)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@dataclass
class Worker:
    name: str
    home: Path
    process: subprocess.Popen
    log: Path

    def kill(self) -> None:
        """SIGKILL to the worker and its pool processes at once: a machine that died."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(20)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)


def queue_env(broker_url: str, home: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "TOOLBOARD_BROKER_URL": broker_url, "TOOLBOARD_HOME": str(home),
            "TOOLBOARD_QUEUE_VISIBILITY_S": str(TEST_VISIBILITY_S), **extra}


def launch_worker(broker_url: str, root: Path, name: str, concurrency: int = 2, **env: str) -> Worker:
    """A worker process, its log in root/<name>.log; returned at once (see ready)."""
    home = root / name
    home.mkdir(parents=True, exist_ok=True)
    log = root / f"{name}.log"
    with log.open("wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "evaluators", "worker", "--concurrency", str(concurrency),
                                    "--hostname", f"{name}@test"], cwd=PROJECT, env=queue_env(broker_url, home, **env),
                                   stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    return Worker(name, home, process, log)


def ready(worker: Worker) -> Worker:
    """The worker, once Celery says it is ready (a worker takes about 2 s to start on 2 cores)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if f"{worker.name}@test ready".encode() in worker.log.read_bytes():
            return worker
        if worker.process.poll() is not None:
            raise AssertionError(f"worker {worker.name} exited: {worker.log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.1)
    raise AssertionError(f"worker {worker.name} was not ready in time: {worker.log.read_text(errors='replace')[-2000:]}")


def start_worker(broker_url: str, root: Path, name: str, concurrency: int = 2, **env: str) -> Worker:
    """A worker process, its log in root/<name>.log; returned once Celery says it is ready."""
    return ready(launch_worker(broker_url, root, name, concurrency, **env))


@contextmanager
def workers(broker_url: str, root: Path, names: tuple[str, ...], concurrency: int = 2) -> Iterator[dict[str, Worker]]:
    """Workers named `names`, started together rather than one after another, and stopped at the end."""
    started: dict[str, Worker] = {}
    try:
        for name in names:
            started[name] = launch_worker(broker_url, root, name, concurrency)
        for worker in started.values():
            ready(worker)
        yield started
    finally:
        for worker in started.values():
            worker.stop()
