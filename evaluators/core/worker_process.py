"""A worker process that answers one JSON request per line on stdin with one JSON reply per line on stdout
(`{"ok": true, ...}` or `{"ok": false, "error": text}`), its first line `{"ok": true, "ready": true}` once it has
started. The hosts of official environment code (each benchmark's own) run their workers through this.

Each host names its own exceptions: `gone` (raised when the process is ended, gone, or gives no reply in time:
the worker is then killed) and `refused` (raised when it answers `ok: false`, or does not start).
"""

from __future__ import annotations

import collections
import json
import os
import queue
import shutil
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

STDERR_TAIL = 4096


def limit_memory(megabytes: int) -> None:
    """The worker's own address-space limit (RLIMIT_AS); where the system refuses it (macOS caps some limits) the
    worker runs with its per-call time limit only, and says so on stderr."""
    import resource
    import sys

    limit = megabytes * 1024 * 1024
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError) as exc:
        print(f"environment worker: no memory limit on this system ({exc})", file=sys.stderr)


def serve_json_lines(requests: IO[str], replies: IO[str], handle: Callable[[dict[str, Any]], dict[str, Any]],
                     refused: tuple[type[BaseException], ...], exit_on_memory: int) -> None:
    """The worker side: one reply per request line. A request that raises one of `refused` is that request's
    failure (`ok: false` with the exception's type and text; the worker goes on); memory running out ends the
    process at once with `exit_on_memory` (its state may be anything by then), so the host sees it gone."""
    for line in requests:
        if not line.strip():
            continue
        try:
            reply = handle(json.loads(line))
        except MemoryError:
            os._exit(exit_on_memory)
        except refused as exc:
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        try:
            text = json.dumps(reply)
        except MemoryError:
            os._exit(exit_on_memory)
        replies.write(text + "\n")
        replies.flush()


class WorkerProcess:
    """One worker process and the threads reading its replies and its stderr. Callers hold `lock` around
    `request`; `sessions` and `in_flight` are the host's bookkeeping (how loaded the worker is)."""

    def __init__(self, command: list[str], env: dict[str, str], gone: type[Exception], refused: type[Exception],
                 cwd: Path | None = None, remove_cwd: bool = False):
        self.gone = gone
        self.refused = refused
        self.cwd = cwd
        self.remove_cwd = remove_cwd  # a temporary working folder made for this worker: removed when it is killed
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, env=env, cwd=cwd, text=True, encoding="utf-8",
                                        bufsize=1)
        self.replies: queue.Queue[str | None] = queue.Queue()
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=64)
        self.lock = threading.Lock()
        self.sessions: set[str] = set()
        self.in_flight = 0
        self.dead = False
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.replies.put(line)
        self.replies.put(None)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr_tail.append(line[:STDERR_TAIL])

    def wait_ready(self, seconds: float) -> None:
        reply = self._reply(seconds)
        if reply is None or not reply.get("ready"):
            self.kill()
            tail = "".join(self.stderr_tail)[-STDERR_TAIL:]
            raise self.refused(f"the environment worker did not start (exit code {self.process.poll()}): "
                               f"{tail.strip() or 'no output'}")

    def _reply(self, timeout: float) -> dict[str, Any] | None:
        try:
            line = self.replies.get(timeout=timeout)
        except queue.Empty:
            return None
        return None if line is None else json.loads(line)

    def request(self, payload: dict[str, Any], timeout: float) -> dict[str, Any]:
        """One request and its reply (the caller holds `lock`); no reply in time kills the worker."""
        if self.dead:
            raise self.gone("the environment worker was ended")
        try:
            assert self.process.stdin is not None
            self.process.stdin.write(json.dumps(payload) + "\n")
            self.process.stdin.flush()
        except (OSError, ValueError):
            self.kill()
            raise self.gone("the environment worker is gone") from None
        reply = self._reply(timeout)
        if reply is None:
            self.kill()
            raise self.gone(f"the environment worker exceeded its limits (exit code {self.process.poll()})")
        if not reply.get("ok"):
            raise self.refused(str(reply.get("error")))
        return reply

    def kill(self) -> None:
        self.dead = True
        if self.process.poll() is None:
            self.process.kill()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        if self.remove_cwd and self.cwd is not None:
            shutil.rmtree(self.cwd, ignore_errors=True)
