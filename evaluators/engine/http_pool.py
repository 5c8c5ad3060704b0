"""HTTP worker processes for the engine (see `http_worker`): started per event loop when a client asks
for them, used once ready (until then, and whenever none is alive, requests go through the SDK in the
engine's own process), stopped when the loop's tasks are cancelled at its end or their pipe closes.

A worker is either forked from the engine's process before its event loop starts (`fork_workers`, the
CLI on Linux: the SDK is imported once and shared, so the workers are ready at once) or started as a
fresh interpreter by the pool (each imports the SDK, ~1 s of CPU)."""

from __future__ import annotations

import asyncio
import gc
import itertools
import json
import logging
import os
import signal
import sys
import threading
import weakref
from pathlib import Path
from typing import Any, NoReturn, Protocol

from evaluators.core.errors import ToolboardError
from evaluators.engine.sdk_transport import AttemptFailed, EndpointSpec

WORKERS_ENV = "TOOLBOARD_HTTP_WORKERS"
# Below this many requests in flight the SDK's CPU per request is no bottleneck: no worker is started.
AUTO_MIN_CONCURRENCY = 32
AUTO_MIN_CORES = 4
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
_READ_LIMIT = 1 << 30  # one answer line; answers carry whole responses

log = logging.getLogger(__name__)


def workers_for(concurrency: int, requested: int | None = None, cores: int | None = None, cheap_start: bool = False) -> int:
    """How many worker processes a client uses: the number asked for (argument, else
    TOOLBOARD_HTTP_WORKERS), else, at concurrency 32 or more, half the cores (at most 4). On 2-3 cores
    only when their start is cheap (`cheap_start`: forked from a process that has the SDK already, or
    kept by a long-lived process like the web app): a fresh worker imports the SDK (~1 s of CPU), which
    there costs a one-off run more than the worker saves (measured in benchmarks/throughput.py)."""
    value = os.environ.get(WORKERS_ENV, "").strip()
    if requested is None and value:
        if not value.isdigit():
            raise ToolboardError(f"{WORKERS_ENV} must be a whole number of processes (0 for none), not {value!r}")
        requested = int(value)
    if requested is not None:
        return max(0, requested)
    cores = cores or os.cpu_count() or 1
    if concurrency < AUTO_MIN_CONCURRENCY or cores < (2 if cheap_start else AUTO_MIN_CORES):
        return 0
    return min(4, cores // 2)


def can_fork_workers() -> bool:
    """Whether `fork_workers` can start workers from this process now: Linux (fork is unsafe on macOS
    and absent on Windows), and no other thread running (a fork copies only the calling thread, and a
    lock another thread holds would stay locked in the child forever), and no event loop running."""
    return sys.platform.startswith("linux") and threading.active_count() == 1 and not _loop_running()


def _loop_running() -> bool:
    # Workers forked while a loop runs would keep copies of the pipes of the workers it has adopted.
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


# Forked workers not yet adopted by a pool: (process id, read end of its answers, write end of its input).
_forked: list[tuple[int, int, int]] = []


def fork_workers(count: int) -> int:
    """Fork `count` worker processes now, before this process starts an event loop or a thread; the
    first pool created afterwards adopts them. Returns how many were forked (fewer, or 0, when this
    process cannot fork them; the pool then starts fresh ones itself). A worker keeps copies of this
    process's other open files until it ends, which it does when its input pipe closes: when the loop
    that adopted it ends, or this process does."""
    if count <= 0 or not can_fork_workers():
        return 0
    try:
        # Loaded here once, so every worker has them already.
        import openai  # noqa: F401

        from evaluators.engine.http_worker import serve_forked
        from evaluators.engine.sdk_transport import tls_context

        tls_context()
    except Exception as exc:  # noqa: BLE001 - e.g. a bad SSL_CERT_FILE: reported by the first request instead
        log.warning("HTTP workers not forked: %s: %s", type(exc).__name__, exc)
        return 0
    sys.stdout.flush()
    sys.stderr.flush()
    forked = 0
    # Frozen objects are never scanned by a collection, so the workers do not copy this process's memory
    # page by page just by collecting garbage (the pattern the `gc` docs give for fork without exec).
    gc.freeze()
    # Ctrl-C is held back until each child has set itself to ignore it: one arriving in between would
    # make the child carry on as a second copy of this program.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        for _ in range(count):
            pipes: list[int] = []
            try:
                pipes.extend(os.pipe())
                pipes.extend(os.pipe())
                pid = os.fork()
            except OSError as exc:  # too many processes or open files: go on with those forked
                log.warning("HTTP worker not forked: %s", exc)
                for fd in pipes:
                    os.close(fd)
                break
            to_worker_read, to_worker_write, from_worker_read, from_worker_write = pipes
            if pid == 0:
                _become_worker(to_worker_read, from_worker_write, (to_worker_write, from_worker_read), serve_forked)
            os.close(to_worker_read)
            os.close(from_worker_write)
            _forked.append((pid, from_worker_read, to_worker_write))
            forked += 1
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        gc.unfreeze()
    return forked


def _become_worker(read_fd: int, write_fd: int, others: tuple[int, ...], serve: Any) -> NoReturn:
    """In a forked child: keep only this worker's own pipe ends (so every pipe sees its end when its
    owner closes it), then serve; never return into the parent's program."""
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        for fd in (*others, *(fd for _, read, write in _forked for fd in (read, write))):
            os.close(fd)
        serve(read_fd, write_fd)
    finally:
        os._exit(1)


class _WorkerProcess(Protocol):
    pid: int | None

    async def start(self) -> asyncio.StreamReader: ...
    def write(self, data: bytes) -> None: ...
    async def wait(self) -> int: ...
    async def stop(self) -> None: ...


class _SpawnedProcess:
    """A worker started as a fresh interpreter: `python -m evaluators.engine.http_worker`."""

    def __init__(self) -> None:
        self._process: asyncio.subprocess.Process | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None and self._process.returncode is None else None

    async def start(self) -> asyncio.StreamReader:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH")) if p)
        self._process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "evaluators.engine.http_worker",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env, limit=_READ_LIMIT,
        )
        assert self._process.stdout is not None
        return self._process.stdout

    def write(self, data: bytes) -> None:
        assert self._process is not None and self._process.stdin is not None
        self._process.stdin.write(data)

    async def wait(self) -> int:
        assert self._process is not None
        return await self._process.wait()

    async def stop(self) -> None:
        process = self._process
        if process is None or process.returncode is not None:
            return
        if process.stdin is not None:
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 5)
        except (TimeoutError, asyncio.CancelledError):
            process.kill()


class _ForkedProcess:
    """A worker forked by `fork_workers`, talking over the two pipes made for it."""

    def __init__(self, pid: int, from_worker: int, to_worker: int):
        self._pid = pid
        # As file objects: closing one twice (by its transport, then here) is harmless.
        self._from_worker = os.fdopen(from_worker, "rb", 0)
        self._to_worker = os.fdopen(to_worker, "wb", 0)
        self._input: asyncio.WriteTransport | None = None
        self._output: asyncio.ReadTransport | None = None
        self.returncode: int | None = None

    @property
    def pid(self) -> int | None:
        return self._pid if self.returncode is None else None

    async def start(self) -> asyncio.StreamReader:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=_READ_LIMIT)
        self._output, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), self._from_worker)
        self._input, _ = await loop.connect_write_pipe(asyncio.Protocol, self._to_worker)
        return reader

    def write(self, data: bytes) -> None:
        assert self._input is not None
        self._input.write(data)

    def _reap(self, flags: int) -> bool:
        try:
            pid, status = os.waitpid(self._pid, flags)
        except ChildProcessError:  # reaped elsewhere (e.g. SIGCHLD ignored): its status is lost
            self.returncode = 255
            return True
        if pid:
            self.returncode = os.waitstatus_to_exitcode(status)
        return bool(pid)

    async def wait(self) -> int:
        # Polled, not waited for in a thread: a worker ends right after its input pipe closes.
        while self.returncode is None and not self._reap(os.WNOHANG):
            await asyncio.sleep(0.02)
        assert self.returncode is not None
        return self.returncode

    async def stop(self) -> None:
        # A transport closes its pipe itself (after writing what it holds); a pipe not yet handed to one
        # is closed here.
        if self._input is not None:
            self._input.close()
        else:
            self._to_worker.close()
        if self.returncode is None:
            try:
                await asyncio.wait_for(self.wait(), 5)
            except (TimeoutError, asyncio.CancelledError):
                if self.returncode is None:
                    os.kill(self._pid, signal.SIGKILL)
                    self._reap(0)  # promptly gone after SIGKILL; no zombie left behind
        if self._output is not None:
            self._output.close()
        else:
            self._from_worker.close()


class _Worker:
    def __init__(self, index: int, process: _WorkerProcess):
        self.index = index
        self.ready = False
        self.alive = True
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.known_clients: set[int] = set()
        self.requests_sent = 0
        self._ids = itertools.count(1)
        self._process = process

    async def run(self) -> None:
        """Start the process and hand out its answers until it ends (or this task is cancelled)."""
        try:
            answers = await self._process.start()
            while line := await answers.readline():
                self._deliver(json.loads(line))
            log.warning("HTTP worker %d ended (exit code %s)", self.index, await self._process.wait())
        except Exception as exc:  # noqa: BLE001 - the engine goes on without this worker
            log.warning("HTTP worker %d failed: %s: %s", self.index, type(exc).__name__, exc)
        finally:
            self.alive = self.ready = False
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(AttemptFailed("HTTP worker process ended", retryable=True))
            self.pending.clear()
            await self._process.stop()

    @property
    def pid(self) -> int | None:
        return self._process.pid

    def _deliver(self, message: dict[str, Any]) -> None:
        if message.get("ready"):
            self.ready = True
            return
        future = self.pending.pop(int(message["id"]), None)
        if future is None or future.done():
            return
        if "response" in message:
            future.set_result(message["response"])
        else:
            future.set_exception(AttemptFailed.from_json(message["failed"]))

    def _send(self, header: dict[str, Any], body: bytes = b"") -> None:
        self._process.write(json.dumps(header).encode() + b"\n" + body)

    async def post(self, cid: int, spec: EndpointSpec, payload: bytes) -> dict[str, Any]:
        if not self.alive:
            raise AttemptFailed("HTTP worker process ended", retryable=True)
        if cid not in self.known_clients:
            self._send({"op": "client", "cid": cid, "spec": spec.to_json()})
            self.known_clients.add(cid)
        request_id = next(self._ids)
        self.requests_sent += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[request_id] = future
        self._send({"op": "post", "id": request_id, "cid": cid, "size": len(payload)}, payload)
        try:
            # The worker's SDK enforces the timeout; this one only guards against a worker that hangs.
            return await asyncio.wait_for(future, spec.timeout + 30)
        except TimeoutError:
            self._forget(request_id)
            raise AttemptFailed(f"no answer from HTTP worker {self.index} within {spec.timeout + 30:g} s", True) from None
        except asyncio.CancelledError:
            self._forget(request_id)
            raise

    def _forget(self, request_id: int) -> None:
        if self.pending.pop(request_id, None) is not None and self.alive:
            self._send({"op": "cancel", "id": request_id})

    def drop(self, cid: int) -> None:
        if cid in self.known_clients and self.alive:
            self._send({"op": "drop", "cid": cid})
        self.known_clients.discard(cid)


class HttpWorkerPool:
    """The worker processes of one event loop."""

    _pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, HttpWorkerPool] = weakref.WeakKeyDictionary()
    _client_ids = itertools.count(1)

    def __init__(self) -> None:
        self.workers: list[_Worker] = []
        self._retired_requests = 0
        self._tasks: set[asyncio.Task[None]] = set()

    @classmethod
    def for_running_loop(cls, size: int) -> HttpWorkerPool:
        """This loop's pool, grown to at least `size` workers (they start in the background)."""
        loop = asyncio.get_running_loop()
        pool = cls._pools.get(loop)
        if pool is None:
            pool = cls._pools[loop] = cls()
        pool._grow(size)
        return pool

    @classmethod
    def new_client_id(cls) -> int:
        return next(cls._client_ids)

    def _grow(self, size: int) -> None:
        # Workers that ended are replaced when the next client asks (a run in progress does without them).
        retired = [w for w in self.workers if not w.alive]
        self._retired_requests += sum(w.requests_sent for w in retired)
        self.workers = [w for w in self.workers if w.alive]
        while len(self.workers) < size:
            process: _WorkerProcess = _ForkedProcess(*_forked.pop(0)) if _forked else _SpawnedProcess()
            worker = _Worker(len(self.workers), process)
            task = asyncio.get_running_loop().create_task(worker.run(), name=f"http-worker-{worker.index}")
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            self.workers.append(worker)

    def pick(self) -> _Worker | None:
        """The ready worker with the fewest requests in flight, if any."""
        ready = [w for w in self.workers if w.ready]
        return min(ready, key=lambda w: len(w.pending)) if ready else None

    @property
    def requests_sent(self) -> int:
        return self._retired_requests + sum(w.requests_sent for w in self.workers)

    def process_ids(self) -> list[int]:
        return [w.pid for w in self.workers if w.pid is not None]

    def drop_client(self, cid: int) -> None:
        for worker in self.workers:
            worker.drop(cid)

    async def wait_ready(self, timeout: float = 30.0) -> bool:
        """Wait until every worker is ready (or has ended); True when all are ready."""
        deadline = asyncio.get_running_loop().time() + timeout
        while any(w.alive and not w.ready for w in self.workers):
            if asyncio.get_running_loop().time() > deadline:
                return False
            await asyncio.sleep(0.02)
        return all(w.ready for w in self.workers)
