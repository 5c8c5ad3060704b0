"""A local model server that crashes (llama.cpp built for the wrong CPU dies with SIGSEGV on its first
completion): the crash is named with its signal and log tail, the server is restarted once, and the
engine reports the crash, at once, instead of timeouts. The "server" is a real process on a real port: a
small Python HTTP server that kills itself with SIGSEGV when told to. Also: how the real server is started
(threads, context, no scores for every prompt token), and a request whose client gave up is dropped."""

from __future__ import annotations

import asyncio
import http.client
import inspect
import json
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from evaluators.core.errors import ToolboardError
from evaluators.core.types import ChatRequest
from evaluators.engine import local_model, local_model_server
from evaluators.engine.client import ChatClient, RequestFailed
from evaluators.engine.local_model_server import LocalServer, exit_description
from evaluators.engine.settings import ModelSettings

CRASH_LINE = "fake ggml: illegal instruction in the matmul kernel"

# argv: port, mode, folder. Modes: `crash` (every completion), `crash-once` (the first completion of all
# its starts), `crash-at-start` (before it listens), `answer`, `hold` (a completion is answered once
# folder/release exists; one whose client closed the connection first is dropped, as llama.cpp's server
# drops a queued request whose client left, and noted in folder/gone). Each start appends a line to
# folder/starts; each completion received, to folder/received.
FAKE_SERVER = f"""
import json, os, select, signal, socket, sys
from http.server import BaseHTTPRequestHandler, HTTPServer

port, mode, folder = int(sys.argv[1]), sys.argv[2], sys.argv[3]
with open(os.path.join(folder, "starts"), "a") as starts:
    starts.write("start\\n")
print("fake server: loading model", flush=True)
if mode == "crash-at-start":
    print({CRASH_LINE!r}, flush=True)
    os.kill(os.getpid(), signal.SIGSEGV)


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.answer({{"object": "list", "data": [{{"id": "smollm2", "object": "model"}}]}})

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with open(os.path.join(folder, "received"), "a") as received:
            received.write("completion\\n")
        while mode == "hold" and not os.path.exists(os.path.join(folder, "release")):
            if select.select([self.connection], [], [], 0.05)[0] and self.connection.recv(1, socket.MSG_PEEK) == b"":
                with open(os.path.join(folder, "gone"), "a") as gone:
                    gone.write("client gone\\n")
                return
        marker = os.path.join(folder, "crashed")
        if mode == "crash" or (mode == "crash-once" and not os.path.exists(marker)):
            open(marker, "w").close()
            print({CRASH_LINE!r}, flush=True)
            os.kill(os.getpid(), signal.SIGSEGV)
        self.answer({{"id": "c1", "object": "chat.completion", "model": "smollm2",
                      "choices": [{{"index": 0, "finish_reason": "stop",
                                   "message": {{"role": "assistant", "content": "hello"}}}}],
                      "usage": {{"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}}})

    def answer(self, data):
        body = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


HTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""

MODEL = local_model.LOCAL_MODELS["smollm2"]


def fake_command(folder: Path, mode: str) -> Callable[[int], list[str]]:
    script = folder / "fake_server.py"
    script.write_text(FAKE_SERVER, encoding="utf-8")
    return lambda port: [sys.executable, str(script), str(port), mode, str(folder)]


@contextmanager
def fake_server(folder: Path, mode: str) -> Iterator[LocalServer]:
    server = LocalServer(MODEL, startup_timeout=60, command=fake_command(folder, mode))
    try:
        yield server
    finally:
        server.stop()


def starts(folder: Path) -> int:
    return len((folder / "starts").read_text().splitlines())


def lines_in(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def wait_until(condition: Callable[[], bool], what: str, within: float = 60.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:  # a time-out for the wait, not a speed check
            raise AssertionError(f"still waiting for {what} after {within:.0f} s")
        time.sleep(0.05)


def post_completion(server: LocalServer) -> tuple[int, dict[str, Any]]:
    body = json.dumps({"model": "smollm2", "messages": [{"role": "user", "content": "hi"}]}).encode()
    request = urllib.request.Request(f"{server.base_url}/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_exit_statuses_and_signals_are_named():
    assert exit_description(-11) == "signal 11, SIGSEGV"
    assert exit_description(-4) == "signal 4, SIGILL"
    assert exit_description(3) == "exit status 3"


def test_a_log_tail_keeps_the_headline_of_a_long_crash_dump(tmp_path: Path):
    log_file = tmp_path / "server.log"
    frames = [f'  File "llama.py", line {n} in eval' for n in range(40)]
    log_file.write_text("\n".join(["loading", "Fatal Python error: Segmentation fault", *frames]))
    tail = local_model_server.log_tail(log_file).splitlines()
    assert tail[0] == "Fatal Python error: Segmentation fault" and tail[-1] == frames[-1]
    assert len(tail) == 2 + local_model_server.LOG_TAIL_LINES


def test_a_build_with_avx512_or_amx_code_is_named_with_the_portable_rebuild(monkeypatch: pytest.MonkeyPatch):
    def build_reporting(features: str) -> str | None:
        monkeypatch.setitem(sys.modules, "llama_cpp", SimpleNamespace(llama_print_system_info=lambda: features.encode()))
        return local_model.unsafe_build_problem()

    assert build_reporting("CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | OPENMP = 1 |") is None
    problem = build_reporting("CPU : AVX2 = 1 | AVX512 = 1 | AVX512_VNNI = 1 | AMX_INT8 = 1 | OPENMP = 1 |")
    assert problem and "AVX512, AVX512_VNNI, AMX_INT8" in problem
    assert 'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install --no-cache-dir --force-reinstall --no-deps llama-cpp-python' in problem


@pytest.mark.slow
def test_a_server_crashing_on_every_completion_is_restarted_once_then_answers_with_the_crash(tmp_path: Path):
    with fake_server(tmp_path, "crash") as server:
        status, answer = post_completion(server)
        message = answer["error"]["message"]
        assert status == local_model_server.CRASH_STATUS
        assert "crashed (signal 11, SIGSEGV) while answering, after 1 restart" in message
        assert CRASH_LINE in message and str(server.log_path) in message
        assert 'rebuild it portably: CMAKE_ARGS="-DGGML_NATIVE=OFF"' in message
        assert server.restarts == 1 and starts(tmp_path) == 2
        # Down for good: later requests get the same crash at once, with no further start.
        assert post_completion(server) == (status, answer)
        assert starts(tmp_path) == 2
        log_text = server.log_path.read_text()
        assert "--- restart 1: the previous server ended with signal 11, SIGSEGV" in log_text
        assert log_text.count(CRASH_LINE) == 2


@pytest.mark.slow
def test_a_server_crashing_once_is_restarted_and_every_request_is_answered(tmp_path: Path):
    with fake_server(tmp_path, "crash-once") as server:
        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(lambda _: post_completion(server), range(2)))
        assert [status for status, _ in results] == [200, 200]
        assert all(answer["choices"][0]["message"]["content"] == "hello" for _, answer in results)
        # Both requests may have found the same death: there was one restart, not two.
        assert server.restarts == 1 and starts(tmp_path) == 2 and server.failure is None


def test_a_server_crashing_while_starting_is_named_with_its_signal_and_log_tail(tmp_path: Path):
    with pytest.raises(ToolboardError) as raised:
        LocalServer(MODEL, startup_timeout=60, command=fake_command(tmp_path, "crash-at-start"))
    message = str(raised.value)
    assert "the local model server crashed (signal 11, SIGSEGV) while starting" in message
    assert CRASH_LINE in message and "fake server: loading model" in message


def complete_through_the_engine() -> tuple[str | None, RequestFailed | None]:
    async def send() -> str | None:
        client = ChatClient(ModelSettings(base_url="local:smollm2", model="smollm2", api_key_env=""), concurrency=2)
        try:
            return (await client.complete(ChatRequest(messages=[{"role": "user", "content": "hi"}]))).text
        finally:
            await client.close()

    try:
        return asyncio.run(send()), None
    except RequestFailed as failure:
        return None, failure


@pytest.mark.slow
def test_the_engine_reports_a_crashed_local_server_as_the_crash_not_as_timeouts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    with fake_server(tmp_path, "crash") as server:
        monkeypatch.setitem(local_model_server._SERVERS, MODEL.name, server)
        text, failure = complete_through_the_engine()
        assert text is None and failure is not None
        assert "crashed (signal 11, SIGSEGV)" in str(failure) and "timeout" not in str(failure)
        assert failure.attempts == 1  # not retried: retrying a crashed model only repeats the crash


@pytest.mark.slow
def test_the_engine_gets_its_answer_from_the_restarted_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    with fake_server(tmp_path, "crash-once") as server:
        monkeypatch.setitem(local_model_server._SERVERS, MODEL.name, server)
        assert complete_through_the_engine() == ("hello", None)
        assert server.restarts == 1


@pytest.mark.slow
def test_a_new_run_starts_a_server_that_gave_up_afresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    with fake_server(tmp_path, "crash") as server:
        monkeypatch.setitem(local_model_server._SERVERS, MODEL.name, server)
        assert post_completion(server)[0] == local_model_server.CRASH_STATUS
        assert local_model_server.resolve("local:smollm2") == server.base_url  # the same URL, a new process
        assert server.failure is None and server.restarts == 0 and starts(tmp_path) == 3
        assert "--- started again for a new run" in server.log_path.read_text()


@pytest.mark.slow
def test_stopping_ends_the_server_process_and_the_front(tmp_path: Path):
    with fake_server(tmp_path, "answer") as server:
        assert post_completion(server)[0] == 200
        process = server._backend.process
    assert process.poll() is not None and not server.alive()
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{server.base_url}/models", timeout=5)


def test_the_server_uses_half_the_cores_for_prompts_and_answers_and_keeps_no_scores_per_prompt_token(
        monkeypatch: pytest.MonkeyPatch):
    # llama.cpp's threads wait for each other at each step: half the cores (1 on 2), for reading prompts
    # too (the server's default reads them with every core, and the prompt is most of the work).
    assert [local_model_server.server_threads(cores) for cores in (1, 2, 3, 4, 16)] == [1, 1, 1, 2, 8]
    monkeypatch.setattr(local_model_server, "model_file", lambda model: Path("/models", model.file))
    monkeypatch.setattr(local_model_server, "usable_cores", lambda: 2)
    command = local_model_server.llama_server_command(MODEL, 4321)
    launcher = command.index(str(local_model_server.LAUNCHER))  # run by its path: it needs nothing of ours on sys.path
    assert command[:launcher] == [sys.executable, "-X", "faulthandler"]
    arguments = command[launcher + 1:]
    options = dict(zip(arguments[::2], arguments[1::2], strict=True))
    assert options == {
        "--model": str(Path("/models", MODEL.file)), "--host": "127.0.0.1", "--port": "4321",
        "--n_ctx": "8192", "--chat_format": "chatml-function-calling", "--model_alias": "smollm2",
        "--n_threads": "1", "--n_threads_batch": "1",
        # The default (true) keeps a context x vocabulary table of scores (1.6 GB) for log-probabilities.
        "--logits_all": "false",
    }
    assert local_model_server.LAUNCHER.is_file()


def test_the_server_start_is_given_time_for_a_busy_machine():
    default = inspect.signature(LocalServer).parameters["startup_timeout"].default
    assert default == local_model_server.STARTUP_TIMEOUT >= 300


@pytest.mark.slow
def test_a_request_whose_client_stopped_waiting_is_dropped_at_the_server_too(tmp_path: Path):
    """The engine gives up on a request at its timeout and sends it again: the server (one request at a
    time) must not compute the one given up on while the run's requests wait behind it."""
    with fake_server(tmp_path, "hold") as server:
        body = json.dumps({"model": "smollm2", "messages": [{"role": "user", "content": "hi"}]})
        waiting = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        waiting.request("POST", "/v1/chat/completions", body=body, headers={"Content-Type": "application/json"})
        wait_until(lambda: lines_in(tmp_path / "received") == 1, "the server to receive the request")
        waiting.close()  # the client's own timeout: it stops waiting
        wait_until(lambda: lines_in(tmp_path / "gone") == 1, "the front to drop the request at the server")
        # The front goes on serving, with the same server process.
        (tmp_path / "release").touch()
        status, answer = post_completion(server)
        assert status == 200 and answer["choices"][0]["message"]["content"] == "hello"
        assert lines_in(tmp_path / "received") == 2 and lines_in(tmp_path / "gone") == 1
        assert server.restarts == 0 and starts(tmp_path) == 1
