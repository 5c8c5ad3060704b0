"""An environment worker process: the official environment classes (environments.py) run here and nowhere
else. Started by env_host.py as `python -m evaluators.benchmarks.bfcl.multi_turn.worker WHEEL MEMORY_MB
CALL_SECONDS [vector]`; it limits its own address space (RLIMIT_AS), loads the classes from the hash-checked wheel and
answers one JSON request per line on stdin with one JSON reply per line on stdout (anything the official code
prints goes to stderr).

Requests (`op`): open {session, classes, initial_config, namespace, item_id, long_context, with_state};
execute {session, calls, with_state}; state {session}; close {session}; check {entry, decoded, gold, model_name}
(checker.py's worker side); memory_context {session} (the memory class's `_dump_core_memory_to_context()`, what the
official loop puts in the memory system prompt); flush_memory {session} (its `_flush_memory_to_local_file()`, which
the official loop calls at the end of a prerequisite conversation); ping. A memory class's initial config holds
`model_result_dir` as text in JSON: it is made a Path here, as the official code passes it. A `vector` worker
(agentic/vector_extra.py prepares its process: one thread, an offline Hugging Face cache of the packaged weights)
loads the vector memory class only, and MEMORY_MB 0 sets no address-space limit (torch maps far more than it
uses; the host bounds such workers by their number). With `with_state` true, open and execute replies also hold the session's
state afterwards (what `state` would answer next), saving a round trip. Replies: {"ok": true, ...} or {"ok": false, "error": text} (e.g. an unknown session or class).
A call that runs longer than CALL_SECONDS, or memory running out, ends the process (exit codes below): the host
sees it gone and ends every session it held with "environment_limit". The time limit is SIGALRM with its
default action (the process ends with -14); memory running out ends it with EXIT_MEMORY.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from evaluators.core.worker_process import limit_memory, serve_json_lines

EXIT_MEMORY = 3
VECTOR_KIND = "vector"


class Worker:
    def __init__(self, wheel: Path, call_seconds: float, vector: bool = False):
        from evaluators.benchmarks.bfcl.multi_turn.environments import (
            VECTOR_CLASSES,
            backend_config,
            environment_class,
            install_environment_finder,
        )

        install_environment_finder(wheel)
        self.config = backend_config(wheel)
        # A vector worker loads the vector memory class only (torch and the encoder: no other class shares it).
        wanted = VECTOR_CLASSES if vector else self.config.classes
        # Every class loaded before the memory limit is set. A class whose module cannot be imported here (a
        # memory backend's third-party package missing) is refused when asked for, with the reason; the others work.
        self.classes: dict[str, type] = {}
        self.unloadable: dict[str, str] = {}
        for name in wanted:
            try:
                self.classes[name] = environment_class(self.config, name)
            except ImportError as missing:
                self.unloadable[name] = f"{type(missing).__name__}: {missing}"
        self.call_seconds = call_seconds
        self.sessions: dict[str, Any] = {}

    @contextmanager
    def time_limit(self) -> Iterator[None]:
        """One call's time limit: past it the process ends (its state may be anything by then)."""
        signal.setitimer(signal.ITIMER_REAL, self.call_seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def environment(self, classes: list[str], initial_config: dict, namespace: str, item_id: str,
                    long_context: bool) -> Any:
        from evaluators.benchmarks.bfcl.agentic.vector_extra import VECTOR_INSTALL
        from evaluators.benchmarks.bfcl.multi_turn.environments import VECTOR_CLASSES
        from evaluators.benchmarks.bfcl.multi_turn.execution import open_environment

        for name in classes:
            if name not in self.classes and name not in self.unloadable and name in VECTOR_CLASSES:
                raise ValueError(f"environment class {name} runs in a vector worker only")
            if name in self.unloadable:
                fix = VECTOR_INSTALL if name in VECTOR_CLASSES else "pip install -r requirements.txt"
                raise ValueError(f"environment class {name} cannot be loaded in this installation "
                                 f"({self.unloadable[name]}): {fix}")
        unknown = [name for name in classes if name not in self.classes]
        if unknown:
            raise ValueError(f"unknown environment classes {unknown}; known: {', '.join(self.classes)}")
        loaded = {name: self.classes[name] for name in classes}
        initial_config = {name: _with_paths(config) for name, config in initial_config.items()}
        with self.time_limit():
            return open_environment(loaded, initial_config, namespace, item_id, long_context,
                                    self.config.stateless, self.config.omit_state)

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        from evaluators.benchmarks.bfcl.multi_turn.execution import execute_call_texts, public_state

        op = request.get("op")
        if op == "ping":
            return {"ok": True}
        if op == "open":
            opened = self.sessions[request["session"]] = self.environment(
                request["classes"], request["initial_config"], request["namespace"], request["item_id"],
                bool(request["long_context"]))
            return {"ok": True, **({"state": public_state(opened)} if request.get("with_state") else {})}
        if op == "check":
            from evaluators.benchmarks.bfcl.multi_turn.checker import run_official_checker

            return {"ok": True, "result": run_official_checker(self, request)}
        session = self.sessions.get(request.get("session", ""))
        if session is None:
            return {"ok": False, "error": f"no open session {request.get('session')!r} in this worker"}
        if op == "execute":
            results = execute_call_texts(session, request["calls"], self.time_limit)
            return {"ok": True, "results": results, "deviations": dict(session.deviations),
                    **({"state": public_state(session)} if request.get("with_state") else {})}
        if op == "state":
            return {"ok": True, "state": public_state(session)}
        if op in ("memory_context", "flush_memory"):
            instance = _memory_instance(session)
            with self.time_limit():
                if op == "memory_context":
                    return {"ok": True, "memory_context": instance._dump_core_memory_to_context()}
                try:
                    instance._flush_memory_to_local_file()
                except OSError as failure:  # a snapshot that cannot be written: that chain's failure, not the worker's
                    return {"ok": False, "error": f"the memory snapshot could not be written: {failure}"}
            return {"ok": True}
        if op == "close":
            del self.sessions[request["session"]]
            return {"ok": True}
        return {"ok": False, "error": f"unknown op {op!r}"}


MEMORY_RESULT_DIR = "model_result_dir"


def _with_paths(config: Any) -> Any:
    """A class's initial config with `model_result_dir` (a memory class's, text in JSON) as the Path the official
    code joins with `/`."""
    if isinstance(config, dict) and isinstance(config.get(MEMORY_RESULT_DIR), str):
        return {**config, MEMORY_RESULT_DIR: Path(config[MEMORY_RESULT_DIR])}
    return config


def _memory_instance(session: Any) -> Any:
    """The session's one memory instance (the official loop asserts a memory item involves one class)."""
    instances = list(session.instances.values())
    if len(instances) != 1 or not hasattr(instances[0], "_flush_memory_to_local_file"):
        raise ValueError("a memory request needs a session of exactly one memory class")
    return instances[0]


def serve(requests: IO[str], replies: IO[str], worker: Worker) -> None:
    from evaluators.core.errors import DataError

    serve_json_lines(requests, replies, worker.handle, (DataError, KeyError, OSError, TypeError, ValueError),
                     EXIT_MEMORY)


def main(argv: list[str]) -> None:
    wheel, megabytes, call_seconds = Path(argv[0]), int(argv[1]), float(argv[2])
    vector = argv[3:4] == [VECTOR_KIND]
    # The replies get their own copy of stdout; fd 1 and sys.stdout then point at stderr, so nothing the
    # official code prints reaches the reply channel.
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    # SIGALRM's default action ends the process at once, even inside C code (a Decimal square root of ten
    # million digits), where a Python handler would wait for the C call to return.
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    if vector:  # before the official module builds its encoder at import
        import tempfile

        from evaluators.benchmarks.bfcl.agentic.vector_extra import prepare_vector_process

        prepare_vector_process(Path(tempfile.mkdtemp(prefix="toolboard-bfcl-vector-")))
    worker = Worker(wheel, call_seconds, vector)
    if megabytes > 0:  # 0: no address-space limit (a vector worker: torch maps far more than it uses)
        limit_memory(megabytes)
    replies.write(json.dumps({"ok": True, "ready": True}) + "\n")
    replies.flush()
    serve(sys.stdin, replies, worker)


if __name__ == "__main__":
    main(sys.argv[1:])
