"""The local demo model's server (see local_model): llama-cpp-python's OpenAI-compatible server as a child
process, behind a small forwarding front in this process that restarts a crashed server once and otherwise
answers with the crash. Imported only when a run uses the local model (`resolve`)."""

from __future__ import annotations

import atexit
import functools
import http.client
import json
import logging
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from evaluators.core.errors import ToolboardError
from evaluators.core.paths import toolboard_home
from evaluators.engine.local_model import LocalModel, installed_problem, is_local, local_model, model_file, rebuild_command

log = logging.getLogger(__name__)

# A server that died once is restarted this many times; then its requests fail with its crash.
MAX_RESTARTS = 1
# Not retried by the engine (only 408/409/429/5xx are): a crashed model does not come back by asking again.
CRASH_STATUS = 424
LOG_TAIL_LINES = 20
LOG_TAIL_CHARS = 2000
EXIT_GRACE = 2.0  # seconds a process whose connection broke is given to be seen as ended
BACKEND_TIMEOUT = 3600.0  # the engine's own timeout is what limits a request; this only frees a stuck thread
# How often a request waiting for the server looks whether its client is still there.
CLIENT_POLL = 0.5
# Starting takes seconds on a quiet machine (imports, a 100 MB model); allow for a machine that is busy.
STARTUP_TIMEOUT = 300.0
# Runs the server with its chat templates rendering text as given (see that file).
LAUNCHER = Path(__file__).with_name("llama_server_launch.py")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def exit_description(returncode: int) -> str:
    """How a process ended, as a person reads it: `signal 11, SIGSEGV` or `exit status 1`."""
    if returncode >= 0:
        return f"exit status {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = "unknown signal"
    return f"signal {-returncode}, {name}"


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    """The last lines of a server log (a native crash prints its cause there, if anywhere)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    every_line = text.strip().splitlines()
    tail = every_line[-lines:]
    # faulthandler's headline ("Fatal Python error: Segmentation fault") comes before a long stack dump.
    headlines = [line for line in every_line if line.startswith("Fatal Python error")]
    if headlines and headlines[-1] not in tail:
        tail = [headlines[-1], "…"] + tail
    return "\n".join(tail)[-LOG_TAIL_CHARS:] or "(empty log)"


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def server_threads(cores: int | None = None) -> int:
    """Threads llama.cpp uses, for reading the prompt and for generating: half the cores (1 on 2 cores).
    Its threads wait for each other at every step, so a thread whose core another process takes stalls
    them all: on 2 cores with the other one busy, 2 threads read a 1,811-token official prompt in 57-179 s,
    1 thread in 22-24 s. The server's defaults are half the cores for generating but all of them for
    reading the prompt, which is most of the work."""
    return max(1, (cores or usable_cores()) // 2)


def llama_server_command(model: LocalModel, port: int) -> list[str]:
    """The server process: llama-cpp-python's server (through LAUNCHER), on 127.0.0.1 only.

    `--logits_all false`: the server's default (true) computes the scores of every prompt token, not
    only the last, and keeps a context × vocabulary table of them (8,192 × 49,152 floats, 1.6 GB) for
    log-probabilities, which no run asks for."""
    threads = str(server_threads())
    # faulthandler: a native crash prints where it happened (the Python frames above llama.cpp) into
    # the log before the process dies of the same signal, so the log's tail says more than nothing.
    return [
        sys.executable, "-X", "faulthandler", str(LAUNCHER), "--model", str(model_file(model)), "--host", "127.0.0.1",
        "--port", str(port), "--n_ctx", str(model.context), "--chat_format", model.chat_format,
        "--model_alias", model.name, "--n_threads", threads, "--n_threads_batch", threads, "--logits_all", "false",
    ]


def _stop_process(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _error_answer(status: int, message: str) -> tuple[int, str, bytes]:
    body = {"error": {"message": message, "type": "local_model_server"}}
    return status, "application/json", json.dumps(body).encode()


@dataclass(frozen=True)
class _Backend:
    """One llama.cpp server process and the port it listens on."""

    process: subprocess.Popen[bytes]
    port: int


class LocalServer:
    """One model served by a llama.cpp server child process, behind a small forwarding front on a port
    of its own (the URL runs get). The front is what lets a crash be handled without the engine's
    client knowing: a native crash (llama.cpp built for the wrong CPU dies with SIGSEGV on its first
    completion) would otherwise reach the engine as dropped connections and timeouts. When the process
    has died, the front names its exit status or signal and its log's tail, restarts it once (the
    request that found it dead is sent again), and after a second death answers every request with
    that crash, at once and not retried."""

    def __init__(self, model: LocalModel, startup_timeout: float = STARTUP_TIMEOUT,
                 command: Callable[[int], list[str]] | None = None):
        self.model = model
        self._command = command or functools.partial(llama_server_command, model)
        self._startup_timeout = startup_timeout
        # The server logs a lot: into a file (a pipe nobody reads would fill up and stall it).
        self.log_path = toolboard_home() / "logs" / f"local-{model.name}.log"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()  # one (re)start at a time
        self._stopped = False
        self.restarts = 0
        # Why it is down for good (it died again after its restart); every request is answered with it.
        self.failure: str | None = None
        self._backend = self._start_backend(note=None)
        self._front = _FrontServer(self)
        self.port = self._front.server_port
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        threading.Thread(target=self._front.serve_forever, name=f"local-{model.name}-front", daemon=True).start()

    def _start_backend(self, note: str | None) -> _Backend:
        """Start a server process and wait until it answers; a first start begins a new log, a restart
        appends to it under a note, so the crash before it stays readable."""
        port = _free_port()
        with self.log_path.open("a" if note else "w", encoding="utf-8") as log_file:
            if note:
                log_file.write(f"\n--- {note}\n")
                log_file.flush()
            process = subprocess.Popen(self._command(port), stdout=log_file, stderr=subprocess.STDOUT)
        backend = _Backend(process, port)
        self._wait_until_ready(backend)
        return backend

    def _wait_until_ready(self, backend: _Backend) -> None:
        deadline = time.monotonic() + self._startup_timeout
        while time.monotonic() < deadline:
            if backend.process.poll() is not None:
                raise ToolboardError(self._death_message(backend.process, "while starting"))
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{backend.port}/v1/models", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        _stop_process(backend.process)
        raise ToolboardError(f"the local model server did not answer within {self._startup_timeout:.0f} s "
                             f"(log: {self.log_path})")

    def _death_message(self, process: subprocess.Popen[bytes], when: str) -> str:
        crashed = process.returncode < 0
        # The known cause of a native crash here: llama.cpp built for this CPU (pip's default).
        hint = f"\nif llama-cpp-python was built natively, rebuild it portably: {rebuild_command()}" if crashed else ""
        return (f"the local model server {'crashed' if crashed else 'exited'} ({exit_description(process.returncode)}) "
                f"{when} (log: {self.log_path}); last log lines:\n{log_tail(self.log_path)}{hint}")

    def forward(self, method: str, path: str, body: bytes, content_type: str | None,
                client_gone: Callable[[], bool] | None = None) -> tuple[int, str, bytes] | None:
        """One request through to the server process: (status, content type, body) to answer with, or
        None when `client_gone` said its client stopped waiting (then the server is told so too)."""
        while True:
            backend, failure = self._backend, self.failure
            if failure is not None:
                return _error_answer(CRASH_STATUS, failure)
            if self._stopped:  # no restart will come: never loop on a server stopped on purpose
                return _error_answer(503, "the local model server was stopped")
            try:
                return _send(backend.port, method, path, body, content_type, client_gone)
            except _ClientGone:
                return None
            except (OSError, http.client.HTTPException) as exc:
                if not _has_exited(backend.process):
                    return _error_answer(502, f"the local model server dropped the request: {exc}")
                self._after_death(backend)

    def _after_death(self, dead: _Backend) -> None:
        """Restart a dead server once; after that, remember why it is down. Requests that found the
        same death wait here for the one restart."""
        with self._lock:
            if self._backend is not dead or self.failure is not None or self._stopped:
                return
            when = "while answering" if self.restarts == 0 else f"while answering, after {self.restarts} restart"
            message = self._death_message(dead.process, when)
            log.error("%s", message)
            if self.restarts >= MAX_RESTARTS:
                self.failure = message
                return
            self.restarts += 1
            try:
                self._backend = self._start_backend(note=f"restart {self.restarts}: the previous server "
                                                         f"ended with {exit_description(dead.process.returncode)}")
            except ToolboardError as exc:
                self.failure = str(exc)
                return
            if self._stopped:
                _stop_process(self._backend.process)

    def revive(self) -> None:
        """After it gave up, a new run starts it afresh (with its one restart again)."""
        with self._lock:
            if self.failure is None or self._stopped:
                return
            try:
                self._backend = self._start_backend(note="started again for a new run")
            except ToolboardError as exc:
                self.failure = str(exc)
                raise
            self.failure, self.restarts = None, 0

    def alive(self) -> bool:
        return not self._stopped

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._front.shutdown()
        self._front.server_close()
        _stop_process(self._backend.process)


def _has_exited(process: subprocess.Popen[bytes]) -> bool:
    # A dying process drops its connections a moment before it can be reaped.
    try:
        process.wait(EXIT_GRACE)
    except subprocess.TimeoutExpired:
        return False
    return True


def _readable(sock: socket.socket, timeout: float) -> bool:
    """Whether the socket has something to read (or was closed) within `timeout` seconds."""
    with selectors.DefaultSelector() as selector:
        selector.register(sock, selectors.EVENT_READ)
        return bool(selector.select(timeout))


class _ClientGone(Exception):
    """The client of a forwarded request closed its connection (its own timeout) before the answer."""


def _send(port: int, method: str, path: str, body: bytes, content_type: str | None,
          client_gone: Callable[[], bool] | None = None) -> tuple[int, str, bytes]:
    """One request to the server process. While no answer has come, `client_gone` is asked now and then;
    when the client has left, the connection to the server is closed: the server answers one request at
    a time and skips a queued request whose connection is closed, so a request a run gave up on (and
    sends again) is not computed for nobody while the run's requests wait behind it."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=BACKEND_TIMEOUT)
    try:
        connection.request(method, path, body=body if method != "GET" else None,
                           headers={"Content-Type": content_type} if content_type else {})
        if client_gone is not None:
            while not _readable(connection.sock, CLIENT_POLL):
                if client_gone():
                    raise _ClientGone
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type") or "application/json", response.read()
    finally:
        connection.close()


class _Forwarder(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the engine's HTTP client uses it
    server: _FrontServer

    def do_GET(self) -> None:
        self._relay()

    def do_POST(self) -> None:
        self._relay()

    def _relay(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        forwarded = self.server.local.forward(self.command, self.path, body, self.headers.get("Content-Type"),
                                              client_gone=self._client_gone)
        if forwarded is None:  # nobody to answer
            self.close_connection = True
            return
        status, content_type, answer = forwarded
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def _client_gone(self) -> bool:
        """Whether the client closed its connection: it sends nothing while it waits for an answer, so a
        readable socket with nothing to read is a closed one."""
        try:
            return _readable(self.connection, 0) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: a line per request would flood the app's output (the server process logs them)."""


class _FrontServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, local: LocalServer):
        self.local = local
        super().__init__(("127.0.0.1", 0), _Forwarder)

    def handle_error(self, request: object, client_address: object) -> None:
        # A client that gave up (its own timeout) before the answer came is not an error of ours.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            log.exception("local model front: request from %s failed", client_address)


_SERVERS: dict[str, LocalServer] = {}
_LOCK = threading.Lock()


def resolve(base_url: str) -> str:
    """The URL to send requests to: `local:NAME` starts (or reuses) that model's server."""
    if not is_local(base_url):
        return base_url
    model = local_model(base_url)
    with _LOCK:
        server = _SERVERS.get(model.name)
        if server is None or not server.alive():
            problem = installed_problem(base_url)
            if problem:
                raise ToolboardError(problem)
            log.info("starting %s on 127.0.0.1", model.title)
            server = _SERVERS[model.name] = LocalServer(model)
        server.revive()
        return server.base_url


def stop_all() -> None:
    with _LOCK:
        for server in _SERVERS.values():
            server.stop()
        _SERVERS.clear()


atexit.register(stop_all)
