"""The environment host: a small pool of worker processes (env_worker.py) in which the official τ²-bench domain
environments run, each with bounded memory (RLIMIT_AS) and a time limit per request. Thread- and task-safe; sync
and async. The main process never imports the official code.

API (the plan's contract, tau2-plan.md "The environment host"):
```
host = EnvironmentHost(workers=2, memory_mb=2048, call_seconds=10.0)   # or shared_host()
session = host.open(domain, task_record, source_root)     # / await host.open_async(...)
    # session.agent_tools, session.user_tools: the official openai_schema dicts (user tools None but telecom's)
result = host.call(session, call_id, name, requestor, arguments)   # ToolResult(content, error)
host.step_end(session)                                    # environment.sync_tools() (skipped when a no-op)
state = host.state(session)                               # {"db": ..., "user_db": ...}
host.close(session)                                       # / await host.close_async(session)
    # open_async waits while workers x SESSIONS_PER_WORKER sessions it opened on this loop are open
check = host.evaluate_env(domain, task_record, messages, strict=False, source_root=...)   # EnvCheck
    # / await host.evaluate_env_async(...)
host.shutdown()
```
`source_root` is a folder laid out like the repository holding the pinned data and code files
(`source.environment_root(open_source(data_dir))`: the data folder when it holds the code too, else the cache); the
workers are kept per source root. A session lives in one worker. When a worker is
killed (a request past its time limit, memory exhausted, the process gone) every session it held ends: the
request in progress and every later one on those sessions raise EnvironmentLimit (`session.ended ==
"environment_limit"`), and the host starts a fresh worker for new sessions. A request the worker refuses (an
unknown session or domain, a malformed task or message) raises EnvironmentRequestError with the worker's reason;
so does any request on a session already closed.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import itertools
import json
import os
import sys
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from evaluators.benchmarks.tau2.env_worker import evaluate_units, open_units
from evaluators.core.loop_limit import LoopLimit
from evaluators.core.worker_process import WorkerProcess

ENVIRONMENT_LIMIT = "environment_limit"
CLOSED = "closed"
DEFAULT_WORKERS = 2
# Address space, not resident memory: a worker maps about 380 MB before its first request (about 130 MB resident);
# the three domains' DBs and one session of each bring it to about 460 MB; an airline session adds about 20 MB.
DEFAULT_MEMORY_MB = 2048
# Open sessions per worker a run's conversations may hold at once (the async API waits for a free one): 48 airline
# sessions are about 960 MB over the 460 MB above, within DEFAULT_MEMORY_MB. Without the bound, 4 trials at
# concurrency 64 open 256 sessions, and a worker over its memory ends every conversation it holds.
SESSIONS_PER_WORKER = 48
DEFAULT_CALL_SECONDS = 10.0
GOLD_ENDS_KEPT = 1024  # a gold end is two hashes and a few notes
# Starting a worker: a Python process, the official modules compiled from the checked files.
START_SECONDS = 120.0
# The host's own deadline beyond the worker's limit (the worker ends itself first).
SLACK_SECONDS = 10.0
WORKER_MODULE = "evaluators.benchmarks.tau2.env_worker"
_PROJECT_ROOT = Path(__file__).resolve().parents[3]
_T = TypeVar("_T")


def gold_key(domain: str, record: dict[str, Any], strict: bool) -> str:
    """What a task's gold end depends on, hashed."""
    return hashlib.sha256(json.dumps([domain, record, strict], sort_keys=True, default=str).encode()).hexdigest()


class EnvironmentLimit(Exception):
    """The session's worker exceeded its memory or time limit (or died) and was ended; the session is over."""


class EnvironmentRequestError(Exception):
    """The worker refused a request (an unknown session or domain, a malformed task, message or call)."""


@dataclass(frozen=True)
class ToolResult:
    content: str  # the official tool message content ("Error: ..." when error)
    error: bool


@dataclass(frozen=True)
class EnvCheck:
    """The environment parts of the official reward (evaluator_env.py), for the scorer."""

    db_match: bool | None  # None: the task has neither actions nor env_assertions (the official reward is 1.0)
    env_assertions: list[dict[str, Any]]  # [{"env_assertion": {...}, "met": bool, "reward": float}]
    tool_types: dict[str, str]  # tool name -> "read" | "write" | "think" | "generic" (agent and user tools)
    replay_problems: list[str]  # the replay's warnings (a differing result, non-strict) and failed gold actions
    replay_error: str | None  # the replay raised (a strict difference, calls and results out of order): no match
    db_diff: dict[str, list[dict[str, Any]]]  # "db"/"user_db" -> [{"path", "gold", "predicted"}] (evidence)


@dataclass(eq=False)
class Session:
    id: str
    domain: str
    task_id: str
    slot: _Slot
    worker: WorkerProcess
    agent_tools: list[dict[str, Any]]
    user_tools: list[dict[str, Any]] | None
    syncs: bool = True  # the domain's environment has a `sync_tools` of its own (else step_end has nothing to do)
    ended: str | None = None
    # The place it holds under the host's bound on open sessions (opened by open_async), given back on close_async.
    place: asyncio.Semaphore | None = None


def _start_worker(source_root: Path, memory_mb: int, call_seconds: float) -> WorkerProcess:
    """One worker process (started, not yet ready), in an empty temporary working folder: `-m` puts the working
    folder first on sys.path, so nothing in the operator's folder can shadow a module the worker imports."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_PROJECT_ROOT), env.get("PYTHONPATH")]))
    folder = Path(tempfile.mkdtemp(prefix="toolboard-tau2-worker-"))
    return WorkerProcess([sys.executable, "-m", WORKER_MODULE, str(source_root), str(memory_mb), str(call_seconds)],
                         env, gone=EnvironmentLimit, refused=EnvironmentRequestError, cwd=folder, remove_cwd=True)


@dataclass(eq=False)
class _Slot:
    source_root: Path
    executor: ThreadPoolExecutor
    worker: WorkerProcess | None = None


class EnvironmentHost:
    def __init__(self, workers: int = DEFAULT_WORKERS, memory_mb: int = DEFAULT_MEMORY_MB,
                 call_seconds: float = DEFAULT_CALL_SECONDS, sessions_per_worker: int = SESSIONS_PER_WORKER):
        if workers < 1 or sessions_per_worker < 1:
            raise ValueError("an environment host needs at least one worker and one session per worker")
        self.workers = workers
        # Sessions opened by open_async, at most this many at once per event loop (one run's loop).
        self.open_sessions = LoopLimit(workers * sessions_per_worker)
        self.memory_mb = memory_mb
        self.call_seconds = call_seconds
        self._pools: dict[Path, list[_Slot]] = {}  # source root -> its workers' slots
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._turns = itertools.count()
        # each task's gold end as a worker computed it, passed to the others (env_worker.Worker.gold_end)
        self._gold_ends: dict[str, dict[str, Any]] = {}
        self._closed = False

    # ---- workers ----

    def _pool(self, source_root: Path) -> list[_Slot]:
        root = Path(source_root).resolve()
        with self._lock:
            if self._closed:
                raise EnvironmentRequestError("the environment host was shut down")
            pool = self._pools.get(root)
            if pool is None:
                pool = self._pools[root] = [
                    _Slot(root, ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"tau2-env-{index}"))
                    for index in range(self.workers)]
            return pool

    def _live_worker(self, slot: _Slot) -> WorkerProcess:
        """The slot's worker, started (again) when it has none or it was ended."""
        with self._lock:
            if self._closed:
                raise EnvironmentRequestError("the environment host was shut down")
            if slot.worker is not None and not slot.worker.dead and slot.worker.process.poll() is not None:
                slot.worker.kill()  # it ended between requests (e.g. killed from outside): its sessions are over
            if slot.worker is None or slot.worker.dead:
                worker = _start_worker(slot.source_root, self.memory_mb, self.call_seconds)
                worker.wait_ready(START_SECONDS)
                slot.worker = worker
            return slot.worker

    def _pick_slot(self, source_root: Path) -> _Slot:
        """The slot whose worker holds the fewest open sessions and requests in flight (ties taken in turn)."""
        pool = self._pool(source_root)
        with self._lock:
            start = next(self._turns) % len(pool)
            order = [pool[(start + offset) % len(pool)] for offset in range(len(pool))]
            return min(order, key=self._load)

    @staticmethod
    def _load(slot: _Slot) -> int:
        worker = slot.worker
        return 0 if worker is None or worker.dead else len(worker.sessions) + worker.in_flight

    def _seconds(self, units: int) -> float:
        return self.call_seconds * units + SLACK_SECONDS

    def _call(self, session: Session, payload: dict[str, Any], units: int = 1) -> dict[str, Any]:
        if session.ended == CLOSED:
            raise EnvironmentRequestError(f"session {session.id} ({session.domain} task {session.task_id}) was closed")
        if session.ended:
            raise EnvironmentLimit(f"the session ended: {session.ended}")
        worker = session.worker
        with worker.lock:
            try:
                return worker.request({**payload, "session": session.id}, self._seconds(units))
            except EnvironmentLimit:
                worker.sessions.clear()
                session.ended = ENVIRONMENT_LIMIT
                raise

    # ---- sync API ----

    def open(self, domain: str, task_record: dict[str, Any], source_root: Path,
             slot: _Slot | None = None) -> Session:
        """A fresh environment of `domain` with the task's initial state applied, and its tool schemas."""
        chosen = slot or self._pick_slot(source_root)
        worker = self._live_worker(chosen)
        session_id = f"s{next(self._ids)}"
        with worker.lock:
            reply = worker.request({"op": "open", "session": session_id, "domain": domain, "task": task_record},
                                   self._seconds(open_units(task_record)))
            worker.sessions.add(session_id)
        return Session(id=session_id, domain=domain, task_id=str(task_record.get("id")), slot=chosen, worker=worker,
                       agent_tools=list(reply["agent_tools"]), user_tools=reply.get("user_tools"),
                       syncs=bool(reply.get("syncs", True)))

    def call(self, session: Session, call_id: str, name: str, requestor: str, arguments: dict[str, Any]) -> ToolResult:
        """The official `Environment.get_response` for one tool call (sync_tools included)."""
        reply = self._call(session, {"op": "call", "id": call_id, "name": name, "requestor": requestor,
                                     "arguments": arguments})
        return ToolResult(content=str(reply["content"]), error=bool(reply["error"]))

    def step_end(self, session: Session) -> None:
        """`environment.sync_tools()`; nothing to send when the domain's is the base class's no-op."""
        if session.syncs or session.ended:
            self._call(session, {"op": "step_end"})

    def state(self, session: Session) -> dict[str, Any]:
        return dict(self._call(session, {"op": "state"})["state"])

    def close(self, session: Session) -> None:
        if session.ended or session.worker.dead:
            session.ended = session.ended or ENVIRONMENT_LIMIT
            return
        self._call(session, {"op": "close"})
        session.worker.sessions.discard(session.id)
        session.ended = CLOSED

    def evaluate_env(self, domain: str, task_record: dict[str, Any], messages: list[dict[str, Any]],
                     strict: bool = False, *, source_root: Path) -> EnvCheck:
        """evaluator_env.py's parts for a whole trajectory (`messages`: the plan's Message dicts, the task's own
        message_history first when it has one, as the official full trajectory). Replay non-strict by default."""
        slot = self._pick_slot(source_root)
        worker = self._live_worker(slot)
        key = str(Path(source_root).resolve()) + gold_key(domain, task_record, strict)
        with self._lock:
            gold_end = self._gold_ends.get(key)
        worker.in_flight += 1
        try:
            with worker.lock:
                try:
                    reply = worker.request({"op": "evaluate_env", "domain": domain, "task": task_record,
                                            "messages": messages, "strict": strict, "gold_end": gold_end},
                                           self._seconds(evaluate_units(task_record, messages)))
                except EnvironmentLimit:
                    worker.sessions.clear()
                    raise
        finally:
            worker.in_flight -= 1
        check = reply["check"]
        if check.get("gold_end") is not None:
            with self._lock:
                self._gold_ends[key] = check["gold_end"]
                while len(self._gold_ends) > GOLD_ENDS_KEPT:
                    self._gold_ends.pop(next(iter(self._gold_ends)))
        return EnvCheck(db_match=check["db_match"], env_assertions=list(check["env_assertions"]),
                        tool_types=dict(check["tool_types"]), replay_problems=list(check["replay_problems"]),
                        replay_error=check["replay_error"], db_diff=dict(check["db_diff"]))

    # ---- async API: each worker's requests run on its own thread ----

    async def _in_slot(self, slot: _Slot, function: Callable[..., _T], *args: Any) -> _T:
        return await asyncio.get_running_loop().run_in_executor(slot.executor, function, *args)

    async def open_async(self, domain: str, task_record: dict[str, Any], source_root: Path) -> Session:
        """`open`, once fewer than the host's bound of sessions are open on this loop (waiting, never failing,
        for a conversation to close one); close the session with close_async to give its place back."""
        place = self.open_sessions.semaphore()
        await place.acquire()
        try:
            slot = self._pick_slot(source_root)
            session = await self._in_slot(slot, self.open, domain, task_record, source_root, slot)
        except BaseException:
            place.release()
            raise
        session.place = place
        return session

    async def call_async(self, session: Session, call_id: str, name: str, requestor: str,
                         arguments: dict[str, Any]) -> ToolResult:
        return await self._in_slot(session.slot, self.call, session, call_id, name, requestor, arguments)

    async def step_end_async(self, session: Session) -> None:
        if session.syncs or session.ended:  # else nothing to send: not even a turn in the slot's queue
            await self._in_slot(session.slot, self.step_end, session)

    async def state_async(self, session: Session) -> dict[str, Any]:
        return await self._in_slot(session.slot, self.state, session)

    async def close_async(self, session: Session) -> None:
        try:
            await self._in_slot(session.slot, self.close, session)
        finally:
            place, session.place = session.place, None
            if place is not None:
                place.release()

    async def evaluate_env_async(self, domain: str, task_record: dict[str, Any], messages: list[dict[str, Any]],
                                 strict: bool = False, *, source_root: Path) -> EnvCheck:
        def evaluate() -> EnvCheck:
            return self.evaluate_env(domain, task_record, messages, strict, source_root=source_root)
        return await asyncio.get_running_loop().run_in_executor(None, evaluate)

    def shutdown(self) -> None:
        with self._lock:
            self._closed = True
            for pool in self._pools.values():
                for slot in pool:
                    if slot.worker is not None:
                        slot.worker.kill()
                    slot.executor.shutdown(wait=False)


_shared: dict[str, EnvironmentHost] = {}
_shared_lock = threading.Lock()
SESSIONS, CHECKS = "sessions", "checks"
# The check workers replay finished trajectories (evaluate_env, a few hundred ms each); apart from the session
# workers, so a conversation's short requests (a tool call, a sync) never queue behind a replay.
CHECK_WORKERS = 2


def _shared_host(kind: str, workers: int) -> EnvironmentHost:
    with _shared_lock:
        host = _shared.get(kind)
        if host is None or host._closed:
            host = _shared[kind] = EnvironmentHost(workers=workers)
            atexit.register(host.shutdown)
        return host


def shared_host() -> EnvironmentHost:
    """The process's host for conversations' sessions (started on first use, shut down at exit)."""
    return _shared_host(SESSIONS, DEFAULT_WORKERS)


def shared_check_host() -> EnvironmentHost:
    """The process's host for the scorer's replays (its own workers)."""
    return _shared_host(CHECKS, CHECK_WORKERS)
