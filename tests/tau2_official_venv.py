"""Test-only: the official τ²-bench code (github.com/sierra-research/tau2-bench at a2c0247, package `tau2` 1.0.1) in
a Python 3.12 virtual environment of its own, built once and cached outside the project, and a driver that runs it
on JSON payloads, so tests can compare the project's τ²-bench parts with what the official code does.

The official package is never imported by the project or by the pytest process: the pytest side builds the venv
and exchanges JSON with a subprocess started on this very file with the venv's Python (`-s -P`: no user
site-packages, not tests/ on the path). Only the functions below the "venv side" line import `tau2`.

API (the pytest side):

- `official_venv() -> OfficialVenv`: the cached venv, built first when missing or incomplete (minutes; under
  `nice`). Skips the calling test (pytest.skip) with the reason when there is no Python 3.12
  (/root/.pyenv/versions/3.12.1/bin/python or `python3.12` on PATH), no reference archive
  (../shared/reference/tau2-bench-a2c0247.tar.gz beside the project), or the build fails (no network, a pip
  error). `OfficialVenv.folder`, `.python`, `.data_dir` (what TAU2_DATA_DIR is set to).
- `run_official(mode, payload, timeout=900) -> Any`: the driver in the venv on `payload` (JSON), its JSON answer.
  Raises OfficialRunFailed (with the driver's log tail) when the driver itself fails. Modes:

  - "schemas" (payload ignored): {domain: {"agent": [openai_schema, ...], "user": [openai_schema, ...] | None}} for
    airline, retail and telecom, in the official order (`Tool.openai_schema` of `get_tools()`/`get_user_tools()`).
  - "evaluate" (payload: a list of cases): one answer per case, in order. A case is
    `{"domain", "task": <task record as in tasks.json>, "termination_reason": "user_stop"|..., "messages":
    [Message, ...] (the messages of a trajectory in Prediction.extra: role, content, tool_calls [{id, name, arguments,
    requestor}], tool messages with id, requestor, error; other keys ignored), "nl_verdicts": [bool, ...] | None,
    "raw": <judge answer text> (optional, instead of nl_verdicts), "strict_replay": bool (default true, as a live
    official run; false as `tau2 evaluate-trajs`)}`; its answer is the official
    `evaluate_simulation(sim, task, EvaluationType.ALL, solo_mode=False, domain=...)` as
    `RewardInfo.model_dump(mode="json")`, or `{"error": {"type", "message"}}` when the official evaluation raised
    (e.g. a judge answer that is not bare JSON). The judge (`evaluator_nl_assertions.generate`) is replaced by a
    stub answering `raw` verbatim, or `{"results": [{"expectedOutcome": a, "reasoning": ..., "metExpectation": v}
    for a, v in zip(the task's nl_assertions, nl_verdicts)]}` (so fewer verdicts than assertions give fewer results,
    and `[]` gives the official empty-results quirk); with neither, a judge call is an error.
    A case `{"kind": "gold", "domain", "task", "actions": [action records] (optional, default the task's gold
    actions), "final_text": str (optional, default the task's communicate_info joined by spaces, or "Done."),
    "nl_verdicts"/"raw" (optional, default every assertion met)}` builds the gold trajectory (docs/tau2-notes.md
    §5.7: the official greeting, a user line, each action as an assistant or user tool-call message followed by
    its result from a live official environment set up with the task's initial state, a final assistant text, a
    user `###STOP###`), and answers `{"messages": [Message, ...] (contract shape, turn_idx = position),
    "reward_info": {...}}` (the trajectory evaluated as above, user_stop).
  - "metrics" (payload: `{"results": [{"task_id", "trial", "reward" (None: no reward), "termination_reason"}],
    "num_trials": int, "tasks": [task records] (optional; stand-ins with no actions by default)}`): the official
    `compute_metrics` over a `Results` made of them: `{"pass_hat_ks": {"1": float, ...}, "avg_reward", "max_k"
    (get_metrics_df's), "infra_error_count", "total_simulations", "total_tasks", "pandas_version"}`.
  - "run" (payload: `{"domain", "base_url" (an OpenAI-compatible endpoint, ".../v1"), "agent_model", "user_model"
    (the names the server sees; sent through litellm as "openai/<name>", so pick names litellm does not rewrite),
    "task_ids": [...], "num_trials": int, "max_steps", "max_errors", "max_retries" (optional, official defaults
    200, 10, 3)}`): the official `run_domain(TextRunConfig(...))` with max_concurrency 1, seed 300, the default
    llm args ({"temperature": 0.0}), the endpoint given through OPENAI_API_BASE (API key "scripted-key"); answers
    the results.json it wrote in the call's own folder (read back as JSON: the official file, ASCII-escaped once a
    simulation has been appended). The requests are what the caller's server records.

The cache folder is `$TOOLBOARD_TEST_CACHE/tau2-official-a2c0247` (default `~/.cache/toolboard-tests/...`). A build
holds an exclusive file lock and writes its marker last, so a half-built folder is never taken for a complete one.
The folder holds the venv (the official package installed from the reference archive without its dependencies,
then PINNED_REQUIREMENTS, also without dependencies, so every version is the one listed) and `data/`, the archive's
`data/` tree plus the two files it lacks (airline db.json, telecom tasks.json) taken from the inspect-evals 0.26.0
wheel by the project's own source.py (sha256 of the wheel, blob id of each file); every pinned file is checked by
its git blob id.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parent.parent
CACHE_ENV = "TOOLBOARD_TEST_CACHE"
VENV_NAME = "tau2-official-a2c0247"
ARCHIVE = PROJECT.parent / "shared" / "reference" / "tau2-bench-a2c0247.tar.gz"
ARCHIVE_TOP = "tau2-bench-a2c0247"
PYTHON_CANDIDATES = ("/root/.pyenv/versions/3.12.1/bin/python", "python3.12")
# What the official code imports on the four modes' paths (tau2/__init__ imports the runner, hence litellm and its
# client stack), with everything those packages declare they require, each pinned: the versions `pip install -e` of
# the archive resolved (/tmp/tau2-research/venv312), except pandas 2.2.3 (the plan's decision 6: the official pass^k
# intent, infrastructure errors dropped) with the numpy 2.2.6 and pytz it was verified with. Installed with
# --no-deps, so nothing else is resolved at build time. The official package's other dependencies are not imported
# on these paths and are left out: uvicorn (its API server), typer and shellingham (its CLI), tabulate, psutil,
# tenacity.
PINNED_REQUIREMENTS = (
    "addict==2.4.0", "aiohappyeyeballs==2.7.1", "aiohttp==3.14.5", "aiosignal==1.4.0", "annotated-doc==0.0.7",
    "annotated-types==0.8.0", "anyio==4.16.0", "attrs==26.1.0", "cachebox==5.2.3", "certifi==2026.10.19.post1",
    "charset-normalizer==3.5.3", "click==8.5.1", "deepdiff==9.1.0", "docstring_parser==0.18.0", "fastapi==0.165.0",
    "fastuuid==0.14.0", "filelock==4.3.2", "frozenlist==1.8.0", "fsspec==2026.9.0", "h11==0.16.0", "hf-xet==1.8.0",
    "httpcore==1.0.9", "httpcore2==2.17.0", "httpx==0.29.0", "httpx2==2.17.0", "huggingface_hub==2.4.0", "idna==3.21",
    "importlib_metadata==10.2.0", "Jinja2==3.1.6", "jiter==0.19.0", "jsonschema==4.26.0",
    "jsonschema-specifications==2025.9.1", "lazy-importer==0.1.0", "litellm==1.82.6", "loguru==0.7.3",
    "markdown-it-py==4.3.0", "MarkupSafe==3.0.4", "mdurl==0.1.2", "multidict==7.2.1", "numpy==2.2.6",
    "openai==3.63.0", "opentelemetry-api==1.45.3", "orderly-set==5.5.0", "packaging==26.4", "pandas==2.2.3",
    "propcache==0.5.4", "pydantic==2.14.4", "pydantic_core==2.50.5", "Pygments==2.21.0", "python-dateutil==4.0.0",
    "python-dotenv==1.2.4", "pytz==2026.6", "PyYAML==6.0.4", "referencing==0.37.0", "regex==2026.12.2",
    "requests==2.34.2", "rich==15.0.0", "rpds-py==2026.9.1", "sniffio==1.3.1", "starlette==1.10.0",
    "tiktoken==0.14.0", "tokenizers==0.23.3", "toml==0.10.2", "tqdm==4.70.1", "truststore==0.10.5",
    "typing-inspection==0.4.5", "typing_extensions==4.16.0", "tzdata==2026.6", "urllib3==2.8.0", "yarl==1.25.1",
    "zipp==4.1.2",
)
DOMAINS = ("airline", "retail", "telecom")
MARKER = "complete.json"
# No user site-packages, and not this file's folder (tests/) on the path of the driver process.
DRIVER_FLAGS = ("-s", "-P")
DRIVE = "--drive"
CHECK = "--check"
LOCK_WAIT_SECONDS = 1800
STEP_TIMEOUTS = {"venv": 300, "package": 900, "runtime": 1800, "check": 600}


class VenvUnavailable(Exception):
    """The official venv cannot be built here (no Python 3.12, no archive, no network, a pip failure)."""


class OfficialRunFailed(RuntimeError):
    """The driver in the venv failed (not an answer the official code gave: a crash of the driver itself)."""


@dataclass(frozen=True)
class OfficialVenv:
    folder: Path

    @property
    def python(self) -> Path:
        return self.folder / "venv" / "bin" / "python"

    @property
    def data_dir(self) -> Path:
        return self.folder / "data"


def cache_root() -> Path:
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else Path.home() / ".cache" / "toolboard-tests"


def official_venv() -> OfficialVenv:
    """The cached venv (built first when missing or incomplete); the calling test is skipped with the reason when
    it cannot be built here."""
    import pytest

    try:
        return build_official_venv()
    except VenvUnavailable as reason:
        pytest.skip(f"the official τ²-bench venv ({VENV_NAME}) is unavailable: {reason}")


def build_official_venv() -> OfficialVenv:
    """official_venv without pytest: VenvUnavailable says why it cannot be built."""
    venv = OfficialVenv(cache_root() / VENV_NAME)
    if _is_complete(venv):
        return venv
    if not ARCHIVE.is_file():
        raise VenvUnavailable(f"the reference archive {ARCHIVE} is absent")
    python = find_python312()
    venv.folder.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive_lock(venv.folder.parent / f"{VENV_NAME}.lock"):
        if not _is_complete(venv):  # another session may have finished it while we waited
            _build(venv, python)
    return venv


def find_python312() -> str:
    for candidate in PYTHON_CANDIDATES:
        path = candidate if os.path.isabs(candidate) else shutil.which(candidate)
        if not path or not os.access(path, os.X_OK):
            continue
        try:  # a pyenv shim exists even where its version is not installed: ask the interpreter itself
            done = subprocess.run([path, "-c", "import sys; print(sys.version_info[:2] == (3, 12))"],
                                  capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.stdout.strip() == "True":
            return path
    raise VenvUnavailable(f"no Python 3.12 interpreter ({' or '.join(PYTHON_CANDIDATES)})")


def _archive_sha256() -> str:
    digest = hashlib.sha256()
    with ARCHIVE.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _expected_marker() -> dict[str, Any]:
    # The driver's own source is not in the marker: changing it needs no rebuild (it is run from this file).
    return {"archive_sha256": _archive_sha256(), "requirements": list(PINNED_REQUIREMENTS), "python": "3.12"}


def _is_complete(venv: OfficialVenv) -> bool:
    """The marker is written last and names what was built: a build from another archive or other pins is stale."""
    try:
        marker = json.loads((venv.folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return ARCHIVE.is_file() and marker == _expected_marker() and venv.python.exists() and venv.data_dir.is_dir()


@contextmanager
def _exclusive_lock(path: Path) -> Iterator[None]:
    """An flock on a file: the kernel releases it if the holder dies, so a crashed build never blocks."""
    import fcntl

    with path.open("w") as handle:
        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise VenvUnavailable(f"another session has held {path} for over {LOCK_WAIT_SECONDS} s") from None
                time.sleep(2)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _niced(command: list[str]) -> list[str]:
    """The machine is shared: builds run at a lower priority."""
    nice = shutil.which("nice")
    return [nice, "-n", "10", *command] if nice else command


def _run(step: str, command: list[str], **kwargs: Any) -> None:
    try:
        done = subprocess.run(_niced(command), capture_output=True, text=True, timeout=STEP_TIMEOUTS[step], **kwargs)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise VenvUnavailable(f"{step}: {error}") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-8:]
        raise VenvUnavailable(f"{step} step failed: " + " | ".join(tail))


def _build(venv: OfficialVenv, python: str) -> None:
    shutil.rmtree(venv.folder, ignore_errors=True)
    venv.folder.mkdir(parents=True)
    _run("venv", [python, "-m", "venv", str(venv.folder / "venv")])
    pip = [str(venv.python), "-m", "pip", "install", "--no-input", "--disable-pip-version-check", "--timeout", "60",
           "--retries", "3", "--no-deps"]
    _run("package", [*pip, str(ARCHIVE)])
    _run("runtime", [*pip, "--only-binary", ":all:", *PINNED_REQUIREMENTS])
    _write_data(venv.data_dir)
    _run("check", [str(venv.python), *DRIVER_FLAGS, __file__, CHECK], env=_driver_env(venv),
         cwd=str(venv.folder))
    (venv.folder / MARKER).write_text(json.dumps(_expected_marker()), encoding="utf-8")


def _write_data(data_dir: Path) -> None:
    """The archive's data/ tree (regular files only, each written under its own relative path, never where a
    member's name alone says), the pinned files checked by blob id, and the two it lacks from the wheel."""
    import tarfile

    from evaluators.benchmarks.tau2 import source
    from evaluators.core.errors import DataError

    prefix = f"{ARCHIVE_TOP}/data/"
    try:
        with tarfile.open(ARCHIVE, "r:gz") as bundle:
            for member in bundle:
                if not member.isfile() or not member.name.startswith(prefix):
                    continue
                relative = member.name[len(ARCHIVE_TOP) + 1:]
                parts = relative.split("/")
                if any(part in ("", ".", "..") for part in parts):
                    raise VenvUnavailable(f"unsafe path in the archive: {member.name}")
                stream = bundle.extractfile(member)
                assert stream is not None
                content = stream.read()
                if relative in source.BLOB_IDS:
                    source.check_blob(relative, content, f"{ARCHIVE}:{member.name}")
                target = data_dir.parent / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(content)
        missing = [relative for relative in source.BLOB_IDS if not (data_dir.parent / relative).is_file()]
        if set(missing) - set(source.WHEEL_MEMBERS):
            raise VenvUnavailable(f"the archive lacks {', '.join(missing)}")
        with tempfile.TemporaryDirectory(prefix="tau2-wheel-") as folder:
            wheel = source.download_wheel(Path(folder))
            for relative, content in source.read_wheel(wheel, missing).items():
                target = data_dir.parent / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(content)
    except (DataError, OSError, tarfile.TarError) as error:
        raise VenvUnavailable(f"data: {error}") from None


def _driver_env(venv: OfficialVenv) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "PYTHONHOME") and not key.startswith(("OPENAI_", "LITELLM_", "TAU2_"))}
    env.update(PYTHONNOUSERSITE="1", PYTHONUTF8="1", PYTHONIOENCODING="utf-8", TAU2_DATA_DIR=str(venv.data_dir),
               # litellm fetches its price map from the network at import unless told to use its bundled copy.
               LITELLM_LOCAL_MODEL_COST_MAP="True", OPENAI_API_KEY="scripted-key")
    return env


def run_official(mode: str, payload: Any, timeout: float = 900) -> Any:
    """The driver in the official venv on `payload` (see the module docstring for the modes); its JSON answer.
    Each call runs in a fresh temporary folder (its working directory, so no `.env` or git repository is read, and
    where a run writes its results.json), removed afterwards. The answers of the modes that depend on nothing but
    their payload and the official code are kept (answer_memo)."""
    venv = official_venv()
    memo = answer_memo(venv, mode, payload)
    if memo is not None and memo.is_file():
        return json.loads(memo.read_text(encoding="utf-8"))
    answer = _run_driver(venv, mode, payload, timeout)
    if memo is not None:
        from tests.kept_answers import keep_text  # pytest side only: the venv side never has tests/ on its path

        keep_text(memo, json.dumps(answer))
    return answer


def run_official_scripted(payload: dict[str, Any], server: Any, script_sources: list[Path],
                          timeout: float = 900) -> tuple[Any, list[dict[str, Any]]]:
    """A "run" against `server`, a scripted server whose every answer is a function of the request alone, written
    in `script_sources`: the run's answer and the request bodies the server received, in order. Both are kept
    (answer_memo, named also by the payload without its base URL and by the scripts' text), since what the server
    answers is then known without it: a kept run does not reach the server (tests/kept_answers.kept_or_played)."""
    from tests.kept_answers import kept_or_played  # pytest side only: the venv side never has tests/ on its path

    venv = official_venv()
    return kept_or_played(scripted_run_memo(venv, payload, script_sources), lambda: list(server.bodies),
                          lambda: _run_driver(venv, "run", payload, timeout))


def scripted_run_memo(venv: OfficialVenv, payload: dict[str, Any], script_sources: list[Path]) -> Path | None:
    """Where run_official_scripted keeps a run: answer_memo of the payload without its base URL (a server's port),
    with the text of the scripts the server answers from."""
    keyed = {key: value for key, value in payload.items() if key != "base_url"}
    scripts = [source.read_text(encoding="utf-8") for source in script_sources]
    return answer_memo(venv, "run-scripted", {"payload": keyed, "scripts": scripts})


# The modes whose answer is a function of the payload and the official code alone ("run" talks to a server; a run
# against a scripted server is kept by run_official_scripted, as "run-scripted").
MEMO_MODES = ("schemas", "evaluate", "metrics", "run-scripted")
# Set to 1 to ask the official code again instead of reading a kept answer.
FRESH_ENV = "TOOLBOARD_TEST_FRESH_OFFICIAL"


def answer_memo(venv: OfficialVenv, mode: str, payload: Any) -> Path | None:
    """Where the official answer to (mode, payload) is kept, in the venv's cache folder: named by the hash of the
    mode, the payload, the built venv's marker (the archive's sha256 and every pinned package) and this file's text
    (the driver), so that a change to any of them asks the official code again. None: not kept (a mode talking to a
    server, or FRESH_ENV set)."""
    if mode not in MEMO_MODES or os.environ.get(FRESH_ENV) == "1":
        return None
    digest = hashlib.sha256()
    for part in (mode, json.dumps(payload, sort_keys=True), (venv.folder / MARKER).read_text(encoding="utf-8"),
                 Path(__file__).read_text(encoding="utf-8")):
        digest.update(part.encode())
        digest.update(b"\0")
    return venv.folder / "answers" / f"{mode}-{digest.hexdigest()[:32]}.json"


def _run_driver(venv: OfficialVenv, mode: str, payload: Any, timeout: float) -> Any:
    with tempfile.TemporaryDirectory(prefix=f"tau2-official-{mode}-") as folder:
        work = Path(folder)
        log = work / "driver.log"
        with log.open("w", encoding="utf-8") as errors:
            try:
                done = subprocess.run([str(venv.python), *DRIVER_FLAGS, __file__, DRIVE, mode, str(work)],
                                      input=json.dumps(payload), stdout=subprocess.PIPE, stderr=errors, text=True,
                                      env=_driver_env(venv), cwd=str(work), timeout=timeout)
            except subprocess.TimeoutExpired:
                raise OfficialRunFailed(f"the official {mode} driver timed out after {timeout} s:\n"
                                        + log.read_text(encoding="utf-8")[-4000:]) from None
        if done.returncode != 0:
            raise OfficialRunFailed(f"the official {mode} driver failed:\n" + log.read_text(encoding="utf-8")[-4000:])
        return json.loads(done.stdout)


# ---- venv side: everything below runs only in the official venv's Python --------------------------------------


def _drive(mode: str, work: Path) -> None:
    """Reads the payload on stdin, answers JSON on stdout. The official code prints (rich consoles, loguru sinks,
    telecom status lines): file descriptor 1 points at stderr while it runs, the answer goes to the original."""
    payload = json.loads(sys.stdin.read())
    answer_fd = os.dup(1)
    os.dup2(2, 1)
    handlers = {"schemas": _schemas, "evaluate": _evaluate, "metrics": _metrics, "run": _run_domain}
    if mode not in handlers:
        raise SystemExit(f"unknown mode {mode!r}; one of {', '.join(handlers)}")
    answer = handlers[mode](payload, work)
    sys.stdout.flush()
    with os.fdopen(answer_fd, "w", encoding="utf-8") as out:
        json.dump(answer, out)


def _check() -> None:
    """What a build must be able to do: import the official package, its runner, evaluator and metrics, and read
    each domain's base tasks from the data folder."""
    os.dup2(2, 1)
    from tau2.metrics.agent_metrics import compute_metrics  # noqa: F401
    from tau2.run import run_domain  # noqa: F401
    from tau2.runner.helpers import get_tasks

    counts = {domain: len(get_tasks(domain, "base")) for domain in DOMAINS}
    if counts != {"airline": 50, "retail": 114, "telecom": 114}:
        raise SystemExit(f"unexpected base task counts {counts}")


def _schemas(payload: Any, work: Path) -> dict[str, Any]:
    from tau2.registry import registry

    answer: dict[str, Any] = {}
    for domain in DOMAINS:
        environment = registry.get_env_constructor(domain)()
        user_tools = environment.get_user_tools() if environment.user_tools is not None else None
        answer[domain] = {"agent": [tool.openai_schema for tool in environment.get_tools()],
                          "user": None if user_tools is None else [tool.openai_schema for tool in user_tools]}
    return answer


def _official_message(message: dict[str, Any]) -> Any:
    from tau2.data_model.message import AssistantMessage, ToolMessage, UserMessage

    kinds = {"assistant": AssistantMessage, "user": UserMessage, "tool": ToolMessage}
    return kinds[message["role"]].model_validate(message)


def _contract_message(message: Any, position: int) -> dict[str, Any]:
    """An official message in the shape of the plan's Trajectory contract."""
    dumped = message.model_dump(mode="json")
    calls = dumped.get("tool_calls")
    shaped: dict[str, Any] = {
        "role": dumped["role"], "content": dumped.get("content"),
        "tool_calls": None if not calls else [{key: call[key] for key in ("id", "name", "arguments", "requestor")}
                                              for call in calls],
        "turn_idx": position,
    }
    if dumped["role"] == "tool":
        shaped.update(id=dumped["id"], requestor=dumped["requestor"], error=dumped["error"])
    return shaped


def _judge_stub(assertions: list[str], verdicts: list[bool] | None, raw: str | None) -> Any:
    """Stands in for `generate` in the NL evaluator: answers `raw`, or the verdicts as the judge's JSON."""
    from tau2.data_model.message import AssistantMessage

    def generate(model: str, messages: list[Any], call_name: str | None = None, **kwargs: Any) -> Any:
        if raw is not None:
            content = raw
        elif verdicts is not None:
            content = json.dumps({"results": [
                {"expectedOutcome": assertion, "reasoning": "scripted verdict", "metExpectation": bool(verdict)}
                for assertion, verdict in zip(assertions, verdicts)]})
        else:
            raise RuntimeError("the task needs the NL judge but the case gives neither nl_verdicts nor raw")
        return AssistantMessage(role="assistant", content=content, cost=0.0)

    return generate


def _evaluate_one(domain: str, task: Any, termination: str, messages: list[Any], verdicts: list[bool] | None,
                  raw: str | None, strict_replay: bool) -> dict[str, Any]:
    import tau2.evaluator.evaluator_nl_assertions as nl_module
    from tau2.data_model.simulation import SimulationRun, TerminationReason
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

    criteria = task.evaluation_criteria
    nl_module.generate = _judge_stub(list(criteria.nl_assertions or []) if criteria else [], verdicts, raw)
    simulation = SimulationRun(id="oracle", task_id=task.id, start_time="", end_time="", duration=0.0,
                               termination_reason=TerminationReason(termination), messages=messages)
    try:
        reward = evaluate_simulation(simulation, task, EvaluationType.ALL, solo_mode=False, domain=domain,
                                     strict_replay=strict_replay)
    except Exception as error:  # noqa: BLE001 - what the official evaluation raises is the answer
        return {"error": {"type": type(error).__name__, "message": str(error)}}
    return reward.model_dump(mode="json")


def _gold_messages(domain: str, task: Any, actions: list[Any], final_text: str) -> list[Any]:
    """docs/tau2-notes.md §5.7: the gold actions played on a live official environment."""
    import copy

    from tau2.data_model.message import AssistantMessage, ToolCall, UserMessage
    from tau2.orchestrator.orchestrator import DEFAULT_FIRST_AGENT_MESSAGE
    from tau2.registry import registry

    environment = registry.get_env_constructor(domain)()
    initial = task.initial_state
    environment.set_state(initial.initialization_data if initial else None,
                          initial.initialization_actions if initial else None,
                          (initial.message_history or []) if initial else [])
    messages: list[Any] = [copy.deepcopy(DEFAULT_FIRST_AGENT_MESSAGE),
                           UserMessage(role="user", content="Hello, I need some help.", cost=0.0)]
    for position, action in enumerate(actions):
        call = ToolCall(id=f"call_{position}", name=action.name, arguments=copy.deepcopy(action.arguments),
                        requestor=action.requestor)
        kind = UserMessage if action.requestor == "user" else AssistantMessage
        messages.append(kind(role=action.requestor, tool_calls=[call], cost=0.0))
        messages.append(environment.get_response(call))
        environment.sync_tools()  # the orchestrator does so after every step
    messages.append(AssistantMessage(role="assistant", content=final_text, cost=0.0))
    messages.append(UserMessage(role="user", content="Thank you. ###STOP###", cost=0.0))
    for position, message in enumerate(messages):
        message.turn_idx = position
    return messages


def _evaluate(cases: list[dict[str, Any]], work: Path) -> list[dict[str, Any]]:
    from tau2.data_model.tasks import Action, Task

    answers = []
    for case in cases:
        task = Task.model_validate(case["task"])
        if case.get("kind") == "gold":
            criteria = task.evaluation_criteria
            actions = ([Action.model_validate(action) for action in case["actions"]] if "actions" in case
                       else list(criteria.actions or []) if criteria else [])
            final_text = (case.get("final_text")
                          or " ".join((criteria.communicate_info or []) if criteria else []) or "Done.")
            verdicts = case.get("nl_verdicts")
            if verdicts is None and case.get("raw") is None:
                verdicts = [True] * len((criteria.nl_assertions or []) if criteria else [])
            messages = _gold_messages(case["domain"], task, actions, final_text)
            reward = _evaluate_one(case["domain"], task, "user_stop", messages, verdicts, case.get("raw"),
                                   case.get("strict_replay", True))
            answers.append({"messages": [_contract_message(m, i) for i, m in enumerate(messages)],
                            "reward_info": reward})
        else:
            messages = [_official_message(message) for message in case["messages"]]
            answers.append(_evaluate_one(case["domain"], task, case["termination_reason"], messages,
                                         case.get("nl_verdicts"), case.get("raw"), case.get("strict_replay", True)))
    return answers


def _metrics(payload: dict[str, Any], work: Path) -> dict[str, Any]:
    import pandas
    from tau2.data_model.simulation import (
        AgentInfo,
        Info,
        Results,
        RewardInfo,
        SimulationRun,
        TerminationReason,
        UserInfo,
    )
    from tau2.data_model.tasks import Task
    from tau2.environment.environment import EnvironmentInfo
    from tau2.metrics.agent_metrics import compute_metrics, get_metrics_df

    rows = payload["results"]
    given = {record["id"]: record for record in payload.get("tasks") or []}
    task_ids = list(dict.fromkeys(str(row["task_id"]) for row in rows))
    tasks = [Task.model_validate(given.get(task_id) or {"id": task_id, "user_scenario": {"instructions": "-"},
                                                        "evaluation_criteria": {}}) for task_id in task_ids]
    info = Info(git_commit="", num_trials=payload["num_trials"], max_steps=200, max_errors=10,
                user_info=UserInfo(implementation="user_simulator"), agent_info=AgentInfo(implementation="llm_agent"),
                environment_info=EnvironmentInfo(domain_name=payload.get("domain", "airline"), policy=""), seed=300)
    simulations = [
        SimulationRun(id=f"{row['task_id']}-{row['trial']}", task_id=str(row["task_id"]), start_time="", end_time="",
                      duration=0.0, trial=row["trial"], termination_reason=TerminationReason(row["termination_reason"]),
                      reward_info=None if row.get("reward") is None else RewardInfo(reward=row["reward"]))
        for row in rows]
    results = Results(info=info, tasks=tasks, simulations=simulations)
    metrics = compute_metrics(results)
    _, max_k = get_metrics_df(results)
    return {"pass_hat_ks": {str(k): float(v) for k, v in metrics.pass_hat_ks.items()},
            "avg_reward": float(metrics.avg_reward), "max_k": int(max_k),
            "infra_error_count": metrics.infra_error_count, "total_simulations": metrics.total_simulations,
            "total_tasks": metrics.total_tasks, "pandas_version": pandas.__version__}


def _run_domain(payload: dict[str, Any], work: Path) -> Any:
    from tau2.data_model.simulation import TextRunConfig
    from tau2.run import run_domain

    # litellm reads the endpoint of "openai/..." models from the environment at each call; set here, from a required
    # payload key, so a run never goes to a real provider (the llm args stay the official default, as recorded).
    os.environ["OPENAI_API_BASE"] = payload["base_url"]
    options = {key: payload[key] for key in ("max_steps", "max_errors", "max_retries") if key in payload}
    # run_domain saves to DATA_DIR/simulations/<save_to>; an absolute save_to puts results.json in this call's own
    # folder (pathlib joins to the absolute path), so the shared data folder is never written to.
    save_to = work / "run"
    config = TextRunConfig(domain=payload["domain"], task_ids=list(payload["task_ids"]),
                           num_trials=payload["num_trials"], max_concurrency=1, seed=300,
                           llm_agent=f"openai/{payload['agent_model']}", llm_user=f"openai/{payload['user_model']}",
                           save_to=str(save_to), **options)
    run_domain(config)
    return json.loads((save_to / "results.json").read_text(encoding="utf-8"))


if __name__ == "__main__":
    if sys.argv[1] == CHECK:
        _check()
    elif sys.argv[1] == DRIVE:
        _drive(sys.argv[2], Path(sys.argv[3]))
    else:
        raise SystemExit(f"usage: {sys.argv[0]} {DRIVE} MODE WORK | {CHECK}")
