"""Calls into code that may crash the process (native code given hostile input), made in a long-lived child
process so that a crash or a hang costs that one call, not the caller.

An IsolatedWorker owns at most one child at a time: a fresh Python interpreter started with `subprocess` (fork and
an immediate exec, safe in a multi-threaded parent; unlike multiprocessing's "spawn", the parent's `__main__` is not
imported again, so a worker started from `python app.py` does not build the app a second time). The child is started
on the first call and reused by every call after it. Calls are serialised by a lock, so one call is in flight per
child and a death is the death of that call:

- the child dies (a signal such as SIGSEGV, or an exit): the call raises IsolatedCallFailed ("crashed", naming the
  signal); the child has been reaped;
- the call runs past its time limit: the child is killed and reaped, the call raises IsolatedCallFailed ("timeout");
- either way the next call starts a fresh child.

What the function returns comes back as it is; what it raises is raised again in the caller (IsolatedCallError when
the exception cannot travel back). The function travels by reference (a module-level function, imported by the
child), its arguments and result pickled over a socket pair. The child takes the parent's `sys.path`, ignores Ctrl-C
(the parent decides), exits when the parent closes its end or goes away, and is closed and reaped at interpreter
exit. This isolates crashes, not privileges: the child runs as the same user with the same files.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

START_SECONDS = 60.0  # a fresh child's start-up (imports included) before it is given up as broken
EXIT_SECONDS = 5.0  # a closed child's time to exit before it is killed
ORPHAN_CHECK_SECONDS = 1.0  # how often a busy child looks whether its parent is still there
CRASHED = "crashed"
TIMEOUT = "timeout"

_BOOTSTRAP = ("import json, sys; sys.path[:] = json.loads(sys.argv[2]); "
              "from evaluators.core.isolated_call import serve; serve(int(sys.argv[1]))")


class IsolatedCallFailed(Exception):
    """The child died (kind "crashed"; `status` says how: "SIGSEGV", "exit code 1") or ran past the time limit
    (kind "timeout") during this call; it has been reaped, and the next call starts a fresh one."""

    def __init__(self, kind: str, status: str | None, detail: str):
        super().__init__(detail)
        self.kind = kind
        self.status = status
        self.detail = detail


class IsolatedCallError(RuntimeError):
    """The function raised in the child an exception that cannot be sent back as it is; its type and message."""


class IsolatedStartError(RuntimeError):
    """A fresh child could not be started (its interpreter or a preloaded module failed): not any one call's fault."""


def exit_status(returncode: int | None) -> str:
    """How a process ended, in a few words: "SIGSEGV" (the signal's name), "exit code 1"."""
    if returncode is None:
        return "still running"
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit code {returncode}"


class _Child:
    def __init__(self, process: subprocess.Popen, connection: Connection):
        self.process = process
        self.connection = connection
        self.owner = os.getpid()


class IsolatedWorker:
    """One child process at a time for calls of module-level functions: `call(function, *args, timeout=s)`.

    `preload`: modules the child imports before it says it is ready (so their import time is not part of the first
    call's time limit); `stack_bytes`: the stack size of the thread that runs the calls in the child (deeply
    recursive native code needs more than the default 8 MiB); `start_seconds`: the start-up limit."""

    def __init__(self, name: str, *, preload: tuple[str, ...] = (), stack_bytes: int | None = None,
                 start_seconds: float = START_SECONDS):
        self.name = name
        self.preload = tuple(preload)
        self.stack_bytes = stack_bytes
        self.start_seconds = start_seconds
        self.started = 0  # children started so far (a test can see that a crash costs one restart, not one per call)
        self._lock = threading.Lock()
        self._child: _Child | None = None
        _WORKERS.add(self)

    @property
    def pid(self) -> int | None:
        """The running child's process id, if there is one."""
        child = self._child
        return child.process.pid if child is not None and child.process.poll() is None else None

    def call(self, function: Callable[..., Any], *args: Any, timeout: float) -> Any:
        """`function(*args)` in the child, within `timeout` seconds; raises IsolatedCallFailed when the child dies or
        runs out of time, and whatever the function raised (IsolatedCallError when it cannot travel back)."""
        request = pickle.dumps((function, args), protocol=pickle.HIGHEST_PROTOCOL)
        with self._lock:
            child = self._running_child()
            try:
                try:
                    child.connection.send_bytes(request)
                except OSError:
                    # Gone before it read this call (killed from outside while idle): not this call's doing.
                    self._discard(child)
                    child = self._running_child()
                    child.connection.send_bytes(request)
                reply = self._reply_of(child, timeout)
            except IsolatedCallFailed:
                raise
            except BaseException:
                # Cut short otherwise (Ctrl-C, a failed start): the child's state is unknown, so it goes.
                self._discard(child, kill=True)
                raise
        try:
            kind, value = pickle.loads(reply)
        except Exception as exc:  # noqa: BLE001 - a reply that does not unpickle is the child's fault, said as such
            raise IsolatedCallError(f"the child's reply could not be read: {type(exc).__name__}: {exc}") from None
        if kind == "raised":
            raise value
        return value

    def close(self) -> None:
        """Stop the child (if any) and reap it; a later call starts a fresh one."""
        locked = self._lock.acquire(timeout=EXIT_SECONDS)
        try:
            child, self._child = self._child, None
            if child is not None and child.owner == os.getpid():
                _stop(child, kill=not locked)
        finally:
            if locked:
                self._lock.release()

    # ---- the child's life (called with the lock held) --------------------------------------------------------

    def _reply_of(self, child: _Child, timeout: float) -> bytes:
        try:
            answered = child.connection.poll(timeout)
        except OSError:
            answered = True  # the read below tells what happened
        if not answered:
            self._discard(child, kill=True)
            raise IsolatedCallFailed(TIMEOUT, None, f"no answer within {timeout:g} s; the child was stopped")
        try:
            return child.connection.recv_bytes()
        except (EOFError, OSError):
            status = exit_status(self._discard(child))
            raise IsolatedCallFailed(CRASHED, status, f"the child process ended during the call ({status})") from None

    def _running_child(self) -> _Child:
        child = self._child
        if child is not None and (child.owner != os.getpid() or child.process.poll() is not None):
            if child.owner == os.getpid():
                self._discard(child)  # died while idle: reaped here, and a fresh one started
            else:
                self._child = None
            child = None
        if child is None:
            child = self._child = self._start()
        return child

    def _start(self) -> _Child:
        parent_end, child_end = socket.socketpair()
        try:
            process = subprocess.Popen(
                [sys.executable, "-c", _BOOTSTRAP, str(child_end.fileno()), json.dumps([str(p) for p in sys.path])],
                pass_fds=(child_end.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        except (OSError, ValueError) as exc:
            parent_end.close()
            raise IsolatedStartError(f"the {self.name} child could not be started: {exc}") from None
        except BaseException:
            parent_end.close()
            raise
        finally:
            child_end.close()
        child = _Child(process, Connection(parent_end.detach()))
        self.started += 1
        try:
            child.connection.send({"preload": self.preload, "stack_bytes": self.stack_bytes})
            if not child.connection.poll(self.start_seconds):
                raise IsolatedStartError(f"the {self.name} child did not start within {self.start_seconds:g} s")
            child.connection.recv()
        except (EOFError, OSError):
            _stop(child, kill=False)
            status = exit_status(child.process.returncode)
            raise IsolatedStartError(f"the {self.name} child ended during start-up ({status})") from None
        except BaseException:
            _stop(child, kill=True)
            raise
        return child

    def _discard(self, child: _Child, kill: bool = False) -> int | None:
        if self._child is child:
            self._child = None
        return _stop(child, kill)


def _stop(child: _Child, kill: bool) -> int | None:
    """Close the child's end, kill it if asked (or if it does not exit in time), and reap it: its return code."""
    try:
        child.connection.close()
    except OSError:
        pass
    if kill:
        child.process.kill()
    try:
        return child.process.wait(EXIT_SECONDS)
    except subprocess.TimeoutExpired:
        child.process.kill()
        return child.process.wait()


_WORKERS: weakref.WeakSet[IsolatedWorker] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for worker in list(_WORKERS):
        worker.close()


def _forget_after_fork() -> None:
    """In a forked copy of a parent: its children and locks are not this process's; calls here start their own."""
    for worker in list(_WORKERS):
        worker._lock = threading.Lock()
        child, worker._child = worker._child, None
        if child is not None:
            try:
                child.connection.close()  # this process's copy of the socket; the parent's stays open
            except OSError:
                pass


os.register_at_fork(after_in_child=_forget_after_fork)


# ---- in the child ------------------------------------------------------------------------------------------------


def serve(fd: int) -> None:
    """The child's main: read the settings, import the preloaded modules, then answer calls until the parent closes
    its end (or goes away), in a thread with the stack size asked for."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    connection = Connection(fd)
    settings = connection.recv()
    for module in settings["preload"]:
        importlib.import_module(module)
    threading.Thread(target=_exit_when_orphaned, args=(os.getppid(),), daemon=True).start()
    if settings["stack_bytes"]:
        threading.stack_size(settings["stack_bytes"])
    answering = threading.Thread(target=_answer_calls, args=(connection,), name="isolated-calls")
    answering.start()
    answering.join()


def _exit_when_orphaned(parent: int) -> None:
    # A call stuck in native code would never see the parent's end close: this ends the child anyway.
    while True:
        time.sleep(ORPHAN_CHECK_SECONDS)
        if os.getppid() != parent:
            os._exit(0)


def _answer_calls(connection: Connection) -> None:
    connection.send(("ready", os.getpid()))
    while True:
        try:
            request = connection.recv_bytes()
        except (EOFError, OSError):
            return
        connection.send_bytes(_reply(request))


def _reply(request: bytes) -> bytes:
    try:
        function, args = pickle.loads(request)
        outcome: tuple[str, Any] = ("returned", function(*args))
    except BaseException as exc:  # noqa: BLE001 - raised again in the caller
        outcome = ("raised", exc)
    try:
        reply = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
        if outcome[0] == "raised":
            pickle.loads(reply)  # an exception whose class cannot be rebuilt from its pickle is sent as text
        return reply
    except Exception as exc:  # noqa: BLE001 - described instead
        what = outcome[1] if outcome[0] == "raised" else exc
        error = IsolatedCallError(f"{type(what).__name__}: {what}")
        return pickle.dumps(("raised", error), protocol=pickle.HIGHEST_PROTOCOL)
