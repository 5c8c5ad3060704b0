"""The environment host: a small pool of worker processes (worker.py) in which the official environment classes
run, each with bounded memory (RLIMIT_AS) and a time limit per call. Thread- and task-safe; sync and async.

API (stable; rollouts and the checker use it):
```
host = EnvironmentHost(workers=2, memory_mb=1024, call_seconds=10.0, wheel=None)   # or shared_host()
host = shared_vector_host()                      # kind "vector": the vector memory class only, no RLIMIT_AS
session = host.open(sample, namespace)           # the sample's involved classes, loaded from initial_config
results = host.execute(session, call_texts)      # list[str]: the official result text of each call
state = host.state(session)                      # {class_name: {attr: JSON-safe}} (evidence only)
text = host.memory_context(session)              # a memory session: the memory shown in its system prompt
host.flush_memory(session)                       # a memory session: write its snapshot (a prerequisite's end)
session = host.open(sample, namespace, track_state=True)   # session.state: the state after the latest open or
                                                 # execute, carried by their replies (no state round trip)
host.close(session)
await host.open_async(...) / execute_async(...) / state_async(...) / close_async(...)
await host.memory_context_async(...) / flush_memory_async(...)
host.check(request) / await host.check_async(request)   # checker.py's worker side (see checker.py)
host.shutdown()
```
`namespace` is the official instance-name prefix: for a rollout the model name with / - . as _
(`rollout_namespace`); the checker uses model_name + "_eval" and model_name + "_ground_truth_eval" itself.
A session lives in one worker. When a worker is killed (a call past the time limit, memory exhausted, the
process gone) every session it held ends: the call in progress and every later call on those sessions raise
EnvironmentLimit (`session.ended == "environment_limit"`), and the host starts a fresh worker for new sessions.
A request the worker refuses (an unknown class or session) raises EnvironmentRequestError.
"""

from __future__ import annotations

import asyncio
import atexit
import itertools
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from evaluators.benchmarks.bfcl.multi_turn.evidence import ENVIRONMENT_LIMIT
from evaluators.benchmarks.bfcl.wheel import pinned_wheel
from evaluators.core.types import Sample
from evaluators.core.worker_process import WorkerProcess

DEFAULT_WORKERS = 2
DEFAULT_MEMORY_MB = 1024
DEFAULT_CALL_SECONDS = 10.0
# Starting a worker: a Python process, the wheel's hash, the modules compiled (slow on a shared CPU).
START_SECONDS = 120.0
# The host's own deadline beyond the worker's per-call limits (the worker ends itself first).
SLACK_SECONDS = 10.0
WORKER_MODULE = "evaluators.benchmarks.bfcl.multi_turn.worker"
_PROJECT_ROOT = Path(__file__).resolve().parents[4]
_T = TypeVar("_T")


class EnvironmentLimit(Exception):
    """The session's worker exceeded its memory or time limit (or died) and was ended; the session is over."""


class EnvironmentRequestError(Exception):
    """The worker refused a request (an unknown class, a closed session, a malformed request)."""


def rollout_namespace(model_name: str) -> str:
    """The official `model_name_underline_replaced`: the model name with / - . as _."""
    return model_name.replace("/", "_").replace("-", "_").replace(".", "_")


@dataclass(eq=False)
class Session:
    id: str
    item_id: str
    slot: int
    worker: WorkerProcess
    ended: str | None = None
    # Opened with track_state: the environments' state after the latest open or execute (what `state` answers).
    track_state: bool = False
    state: dict[str, dict[str, Any]] | None = None


def _start_worker(wheel: Path, memory_mb: int, call_seconds: float, kind: str | None = None) -> WorkerProcess:
    """One worker process (started, not yet ready)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_PROJECT_ROOT), env.get("PYTHONPATH")]))
    return WorkerProcess([sys.executable, "-m", WORKER_MODULE, str(wheel), str(memory_mb), str(call_seconds),
                          *([kind] if kind else [])], env, gone=EnvironmentLimit, refused=EnvironmentRequestError)


@dataclass
class _Slot:
    executor: ThreadPoolExecutor
    worker: WorkerProcess | None = None
    ended_sessions: set[str] = field(default_factory=set)


class EnvironmentHost:
    def __init__(self, workers: int = DEFAULT_WORKERS, memory_mb: int = DEFAULT_MEMORY_MB,
                 call_seconds: float = DEFAULT_CALL_SECONDS, wheel: Path | None = None, kind: str | None = None):
        if workers < 1:
            raise ValueError("an environment host needs at least one worker")
        self.kind = kind  # None: the ordinary workers; "vector": the vector memory's (worker.py)
        self.wheel = wheel or pinned_wheel()
        self.memory_mb = memory_mb
        self.call_seconds = call_seconds
        self._slots = [_Slot(ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"bfcl-env-{index}"))
                       for index in range(workers)]
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._turns = itertools.count()
        self._closed = False

    # ---- workers ----

    def _live_worker(self, slot: _Slot) -> WorkerProcess:
        """The slot's worker, started (again) when it has none or it was ended (caller holds the host lock)."""
        if self._closed:
            raise EnvironmentRequestError("the environment host was shut down")
        if slot.worker is not None and not slot.worker.dead and slot.worker.process.poll() is not None:
            slot.worker.kill()  # it ended between requests (e.g. killed from outside): its sessions are over
        if slot.worker is None or slot.worker.dead:
            worker = _start_worker(self.wheel, self.memory_mb, self.call_seconds, self.kind)
            worker.wait_ready(START_SECONDS)
            slot.worker = worker
        return slot.worker

    def _pick_slot(self) -> int:
        """The slot whose worker holds the fewest open sessions and requests in flight (ties taken in turn)."""
        with self._lock:
            start = next(self._turns) % len(self._slots)
            order = [(start + offset) % len(self._slots) for offset in range(len(self._slots))]
            return min(order, key=lambda index: self._load(self._slots[index]))

    @staticmethod
    def _load(slot: _Slot) -> int:
        worker = slot.worker
        return 0 if worker is None or worker.dead else len(worker.sessions) + worker.in_flight

    def _call(self, session: Session, payload: dict[str, Any], timeout: float) -> dict[str, Any]:
        if session.ended:
            raise EnvironmentLimit(f"the session ended: {session.ended}")
        worker = session.worker
        with worker.lock:
            try:
                return worker.request(payload, timeout)
            except EnvironmentLimit:
                self._end_sessions(worker)
                session.ended = ENVIRONMENT_LIMIT
                raise

    def _end_sessions(self, worker: WorkerProcess) -> None:
        worker.sessions.clear()

    # ---- sync API ----

    def open(self, sample: Sample, namespace: str, slot: int | None = None, track_state: bool = False) -> Session:
        """A session with the sample's involved classes, loaded from its initial_config. With `track_state`, the
        replies to open and execute carry the state afterwards, kept in `session.state` (no `state` round trip)."""
        index = self._pick_slot() if slot is None else slot
        with self._lock:
            worker = self._live_worker(self._slots[index])
        session = Session(id=f"s{next(self._ids)}", item_id=sample.id, slot=index, worker=worker,
                          track_state=track_state)
        with worker.lock:
            reply = worker.request({"op": "open", "session": session.id, "classes": sample.input["involved_classes"],
                                    "initial_config": sample.input["initial_config"], "namespace": namespace,
                                    "item_id": sample.id, "long_context": bool(sample.meta.get("long_context")),
                                    "with_state": track_state},
                                   self.call_seconds * len(sample.input["involved_classes"]) + SLACK_SECONDS)
            worker.sessions.add(session.id)
        session.state = reply.get("state")
        return session

    def execute(self, session: Session, call_texts: list[str]) -> list[str]:
        reply = self._call(session, {"op": "execute", "session": session.id, "calls": list(call_texts),
                                     "with_state": session.track_state},
                           self.call_seconds * (len(call_texts) + 1) + SLACK_SECONDS)
        session.state = reply.get("state")
        return list(reply["results"])

    def state(self, session: Session) -> dict[str, dict[str, Any]]:
        return dict(self._call(session, {"op": "state", "session": session.id},
                               self.call_seconds + SLACK_SECONDS)["state"])

    def memory_context(self, session: Session) -> str:
        return str(self._call(session, {"op": "memory_context", "session": session.id},
                              self.call_seconds + SLACK_SECONDS)["memory_context"])

    def flush_memory(self, session: Session) -> None:
        self._call(session, {"op": "flush_memory", "session": session.id}, self.call_seconds + SLACK_SECONDS)

    def close(self, session: Session) -> None:
        if session.ended or session.worker.dead:
            session.ended = session.ended or ENVIRONMENT_LIMIT
            return
        self._call(session, {"op": "close", "session": session.id}, SLACK_SECONDS)
        session.worker.sessions.discard(session.id)
        session.ended = "closed"

    def check(self, request: dict[str, Any], calls: int = 0) -> dict[str, Any]:
        """checker.py's worker-side checker on a request; `calls` (how many calls it runs) sets the deadline."""
        index = self._pick_slot()
        with self._lock:
            worker = self._live_worker(self._slots[index])
        worker.in_flight += 1
        try:
            with worker.lock:
                try:
                    reply = worker.request({"op": "check", **request},
                                           self.call_seconds * (calls + 4) + SLACK_SECONDS)
                except EnvironmentLimit:
                    self._end_sessions(worker)
                    raise
        finally:
            worker.in_flight -= 1
        return dict(reply["result"])

    # ---- async API: each worker's requests run on its own thread ----

    async def _in_slot(self, index: int, function: Callable[..., _T], *args: Any) -> _T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._slots[index].executor, function, *args)

    async def open_async(self, sample: Sample, namespace: str, track_state: bool = False) -> Session:
        index = self._pick_slot()
        return await self._in_slot(index, self.open, sample, namespace, index, track_state)

    async def execute_async(self, session: Session, call_texts: list[str]) -> list[str]:
        return await self._in_slot(session.slot, self.execute, session, call_texts)

    async def state_async(self, session: Session) -> dict[str, dict[str, Any]]:
        return await self._in_slot(session.slot, self.state, session)

    async def close_async(self, session: Session) -> None:
        await self._in_slot(session.slot, self.close, session)

    async def memory_context_async(self, session: Session) -> str:
        return await self._in_slot(session.slot, self.memory_context, session)

    async def flush_memory_async(self, session: Session) -> None:
        await self._in_slot(session.slot, self.flush_memory, session)

    async def check_async(self, request: dict[str, Any], calls: int = 0) -> dict[str, Any]:
        return await asyncio.get_running_loop().run_in_executor(None, self.check, request, calls)

    def shutdown(self) -> None:
        with self._lock:
            self._closed = True
            for slot in self._slots:
                if slot.worker is not None:
                    slot.worker.kill()
                slot.executor.shutdown(wait=False)


_shared: EnvironmentHost | None = None
_shared_lock = threading.Lock()


def shared_host() -> EnvironmentHost:
    """The process's host (started on first use, shut down at exit)."""
    global _shared
    with _shared_lock:
        if _shared is None or _shared._closed:
            _shared = EnvironmentHost()
            atexit.register(_shared.shutdown)
        return _shared


# The vector memory's workers: no address-space limit (torch maps gigabytes it never touches), so at most this many,
# each holding the encoder (about 0.6 GB resident); a call may take longer (texts are embedded).
VECTOR_WORKERS = 1
VECTOR_CALL_SECONDS = 60.0
VECTOR_KIND = "vector"
_shared_vector: EnvironmentHost | None = None


def shared_vector_host() -> EnvironmentHost:
    """The process's host of vector workers (started on first use, shut down at exit)."""
    global _shared_vector
    with _shared_lock:
        if _shared_vector is None or _shared_vector._closed:
            _shared_vector = EnvironmentHost(workers=VECTOR_WORKERS, memory_mb=0, call_seconds=VECTOR_CALL_SECONDS,
                                             kind=VECTOR_KIND)
            atexit.register(_shared_vector.shutdown)
        return _shared_vector
