"""Shared fixtures: the built-in example data, the real benchmark data (skipped when absent), the pinned
official BFCL wheel (downloaded once per session) and an isolated TOOLBOARD_HOME for every test."""

from __future__ import annotations

import atexit
import inspect
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path
from types import CodeType

import pytest


def keep_bytecode_outside_the_project() -> None:
    """Bytecode cached, as a user's install has it, but outside the project. Where PYTHONDONTWRITEBYTECODE=1 is set
    (these machines set it), every test process compiled every module anew and pytest rewrote every test file's
    asserts anew: about 8 CPU-seconds of each worker's start, and 0.13 s of each CLI the tests start. The cache goes
    to a folder of ours under ~/.cache (a PYTHONPYCACHEPREFIX already set is kept), so the tree stays free of
    __pycache__ as the setting wants; the tests' subprocesses (the CLI, Celery workers, xdist's workers) inherit it."""
    if not sys.dont_write_bytecode:
        return
    prefix = os.environ.get("PYTHONPYCACHEPREFIX") or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "toolboard-tests" / "pycache")
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False


keep_bytecode_outside_the_project()

from evaluators.core.registry import get_benchmark  # noqa: E402  (after the bytecode setting, which it uses)
from tests.acebench_fixtures import EXAMPLE_DIR  # noqa: E402
from tests.browser_fixtures import SHARED_CHROMIUM  # noqa: E402

PROJECT = Path(__file__).resolve().parent.parent


def bytecode_env() -> dict[str, str]:
    """The bytecode settings, for a subprocess given an environment of its own (one without them writes
    __pycache__ into the project)."""
    return {name: os.environ[name] for name in ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE") if name in os.environ}


def pytest_configure(config: pytest.Config) -> None:
    """Gradio keeps uploads in one folder per machine, at a path made of the file's content, and the app deletes
    an upload once checked: test processes side by side (two workers) uploading the same file would delete each
    other's. Each process (and the apps it starts) gets a folder of its own, before any test module imports Gradio."""
    folder = tempfile.mkdtemp(prefix="toolboard-tests-gradio-")
    os.environ["GRADIO_TEMP_DIR"] = folder
    atexit.register(shutil.rmtree, folder, True)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """`python -m evaluators ARGS` as a user runs it: a whole process, its output captured."""
    return subprocess.run([sys.executable, "-m", "evaluators", *args], cwd=PROJECT, capture_output=True, text=True,
                          timeout=120)


def shared_data_dir() -> Path | None:
    configured = os.environ.get("TOOLBOARD_DATA_DIR")
    candidate = Path(configured) if configured else PROJECT.parent / "shared" / "data"
    return candidate if candidate.is_dir() else None


# ---- the `slow` marker (issue 43): `python -m pytest -m "not slow"` is the one-minute loop ----------------------

# What makes a test slow: it reaches one of these names, in its own body, in a helper of tests/ it calls (at any
# depth) or in a fixture of tests/ it uses. Such a test is marked slow at collection, so a new test that opens the
# browser (say) is marked without anyone remembering to. Tests slow for other reasons carry the mark themselves.
SLOW_PARTS = {
    "browser_page": "a headless Chromium", "headless_chromium": "a headless Chromium",
    "official_venv": "an official checker's venv", "redis_server": "a real Redis server",
    "workers": "Celery workers", "start_worker": "a Celery worker",
    "served": "the local model's real server (test_local_model.py's fixture)",
    "real_data": "the whole real data (../shared/data)", "real_acebench_dir": "the whole real data (../shared/data)",
    "shared_data_dir": "the whole real data (../shared/data)",
    "full_source_root": "the τ²-bench reference source (../shared/reference)",
    "running_app": "the real app on loopback (tests/app_fixtures.running_app)",
}


def _names(code: CodeType) -> set[str]:
    """Every global, attribute and free name `code` (and the functions, lambdas and comprehensions in it) uses."""
    names = set(code.co_names) | set(code.co_freevars)
    for constant in code.co_consts:
        if isinstance(constant, CodeType):
            names |= _names(constant)
    return names


def _slow_parts(function: Callable | None, seen: set[int]) -> set[str]:
    """Every slow part `function` reaches through tests/' own code."""
    function = inspect.unwrap(function) if function is not None else None
    code = getattr(function, "__code__", None)
    if code is None or id(code) in seen:
        return set()
    seen.add(id(code))
    namespace = getattr(function, "__globals__", {})
    parts: set[str] = set()
    for name in _names(code):
        if name in SLOW_PARTS:
            parts.add(SLOW_PARTS[name])
            continue
        found = namespace.get(name)
        if inspect.isclass(found) and found.__module__.startswith("tests."):
            for member in vars(found).values():
                parts |= _slow_parts(member if inspect.isfunction(member) else None, seen)
        elif inspect.isfunction(inspect.unwrap(found) if callable(found) else None) \
                and inspect.unwrap(found).__module__.startswith("tests."):
            parts |= _slow_parts(found, seen)
    return parts


def why_slow(item: pytest.Item) -> str | None:
    """The costliest slow part a collected test reaches (see SLOW_PARTS and EXPECTED_SECONDS), or None: a browser
    test starts the app too, and is a browser test."""
    names = list(getattr(item, "fixturenames", ()))
    parts = {SLOW_PARTS[name] for name in names if name in SLOW_PARTS}
    functions = [getattr(item, "function", None)]
    # A fixture of ours, found where the test can see it (its module, or this conftest), read through `__wrapped__`.
    homes = [getattr(item, "module", None), sys.modules[__name__]]
    for name in names:
        found = next((getattr(home, name) for home in homes if home is not None and hasattr(home, name)), None)
        function = inspect.unwrap(found) if callable(found) else None
        if inspect.isfunction(function) and function.__module__.startswith("tests"):
            functions.append(function)
    seen: set[int] = set()
    for function in functions:
        parts |= _slow_parts(function, seen)
    return max(sorted(parts), key=lambda part: EXPECTED_SECONDS.get(part, MARKED_SLOW_SECONDS), default=None)


# What a test is expected to cost, in rough seconds, by the slow part it reaches: only to start the costliest test
# files first (below). A file's tests run together on one worker, so a heavy file started last is a tail alone.
EXPECTED_SECONDS = {
    "a headless Chromium": 8.0, "an official checker's venv": 2.5, "a real Redis server": 7.0,
    "Celery workers": 7.0, "a Celery worker": 7.0, "the local model's real server (test_local_model.py's fixture)": 10.0,
    "the whole real data (../shared/data)": 1.0, "the τ²-bench reference source (../shared/reference)": 3.0,
    # an app is built and launched once per test or per file (a module fixture): about 3 s, shared by its tests
    "the real app on loopback (tests/app_fixtures.running_app)": 0.5,
}
MARKED_SLOW_SECONDS = 1.5
SLOW_PART = pytest.StashKey[str | None]()
# The slow parts whose tests spend much of their time waiting rather than computing (the files' order, below).
WAITING_PARTS = {SLOW_PARTS[name] for name in ("browser_page", "redis_server", "workers", "start_worker")}
QUICK_SECONDS = 0.05


def expected_seconds(item: pytest.Item, part: str | None) -> float:
    if part is not None:
        return EXPECTED_SECONDS.get(part, MARKED_SLOW_SECONDS)
    return MARKED_SLOW_SECONDS if item.get_closest_marker("slow") else QUICK_SECONDS


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    cost_of_file: dict[str, float] = {}
    for item in items:
        part = why_slow(item)
        item.stash[SLOW_PART] = part
        if part and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)
        path = item.nodeid.split("::")[0]
        cost_of_file[path] = cost_of_file.get(path, 0.0) + expected_seconds(item, part)
    # Costliest files first (xdist hands files out in this order: `--no-loadscope-reorder` in pyproject.toml), so
    # that the last files to start are short ones and both workers end together. Files that mostly wait (on a page,
    # a Redis restart, a Celery worker) alternate with files that compute, each kind costliest first, so that while
    # one worker waits the other has work for the idle core (one whole run each on 2 cores: 585 s, against 614 s
    # with the costliest first alone). Within a file, the order stays.
    waiting_files = {item.nodeid.split("::")[0] for item in items if item.stash[SLOW_PART] in WAITING_PARTS}
    by_cost = sorted(cost_of_file, key=lambda path: -cost_of_file[path])
    waiting = [path for path in by_cost if path in waiting_files]
    working = [path for path in by_cost if path not in waiting_files]
    alternated = [path for pair in zip_longest(waiting, working) for path in pair if path is not None]
    position = {path: index for index, path in enumerate(alternated)}
    items.sort(key=lambda item: position[item.nodeid.split("::")[0]])


@pytest.fixture(autouse=True)
def shared_chromium_only_for_browser_tests(request: pytest.FixtureRequest) -> None:
    """The process's shared Chromium (tests/browser_fixtures.SharedChromium) is closed before any test that does
    not use it: while it runs, `asyncio.run` on the main thread fails."""
    if request.node.stash.get(SLOW_PART, None) != SLOW_PARTS["browser_page"]:
        SHARED_CHROMIUM.close()


def pytest_sessionfinish(session: pytest.Session) -> None:
    SHARED_CHROMIUM.close()


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("toolboard_home")
    monkeypatch.setenv("TOOLBOARD_HOME", str(home))
    return home


@pytest.fixture
def example_dir() -> Path:
    return EXAMPLE_DIR


@pytest.fixture
def acebench():
    return get_benchmark("acebench")


def real_data(relative: str, what: str, *inside: str) -> Path:
    """The real data at `relative` under ../shared/data (or TOOLBOARD_DATA_DIR; `../published/…` for the
    published figures), holding each of `inside`; else the test is skipped, saying what was not found
    and where it was looked for. The one way a test reaches data that is not in the project."""
    root = shared_data_dir()
    path = root / relative if root else None
    if path is None or not path.exists() or not all((path / part).exists() for part in inside):
        where = (root / relative).resolve() if root else f"../shared/data/{relative}"
        pytest.skip(f"real {what} not found at {where}: set TOOLBOARD_DATA_DIR or place ../shared beside the project")
    return path


@pytest.fixture(scope="session")
def real_acebench_dir() -> Path:
    return real_data("acebench", "ACEBench data", "data_en")


@dataclass(frozen=True)
class BfclOfficial:
    """The pinned bfcl-eval wheel (its sha256 checked) and its 13 single-turn data files unpacked into
    `data_dir`, laid out like ../shared/data/bfcl. Tests pass the wheel to the code under test by setting
    TOOLBOARD_BFCL_WHEEL themselves (monkeypatch or a subprocess env), each in its own TOOLBOARD_HOME."""

    wheel: Path
    data_dir: Path


def _bfcl_wheel_for_session(folder: Path) -> Path:
    """TOOLBOARD_BFCL_WHEEL when set, else the wheel downloaded once from the package index with the
    package's own wheel.py; a wrong sha256 fails the tests, only an unreachable index skips them."""
    from evaluators.benchmarks.bfcl import wheel as bfcl_wheel
    from evaluators.core.archive import download
    from evaluators.core.errors import DataError

    given = os.environ.get(bfcl_wheel.WHEEL_PATH_ENV)
    if given:
        path = Path(given).expanduser()
        if not path.is_file():
            pytest.fail(f"{bfcl_wheel.WHEEL_PATH_ENV} names no file: {path}")
    else:
        path = folder / bfcl_wheel.WHEEL_NAME
        try:
            download(bfcl_wheel.wheel_url_from_index(), path, bfcl_wheel.WHEEL_NAME)
        except DataError as exc:
            pytest.skip(f"no network to the package index, so no official BFCL files: {exc}")
    found = bfcl_wheel.file_sha256(path)
    if found != bfcl_wheel.WHEEL_SHA256:
        pytest.fail(f"{path} has sha256 {found}, not the pinned {bfcl_wheel.WHEEL_SHA256}")
    return path


@pytest.fixture(scope="session")
def bfcl_official(tmp_path_factory: pytest.TempPathFactory) -> BfclOfficial:
    from evaluators.benchmarks.bfcl.categories import NO_ANSWER, SINGLE_TURN
    from evaluators.benchmarks.bfcl.wheel import DATA_PREFIX, read_member

    folder = tmp_path_factory.mktemp("bfcl_official")
    wheel = _bfcl_wheel_for_session(folder)
    data_dir = folder / "bfcl"
    (data_dir / "possible_answer").mkdir(parents=True)
    for category in SINGLE_TURN:
        files = [f"BFCL_v4_{category}.json"]
        if category not in NO_ANSWER:
            files.append(f"possible_answer/BFCL_v4_{category}.json")
        for relative in files:
            (data_dir / relative).write_bytes(read_member(wheel, DATA_PREFIX + relative))
    return BfclOfficial(wheel, data_dir)


@pytest.fixture(scope="session")
def official_checker() -> object:
    """The official BFCL checker's venv (tests/bfcl_official_venv.py), built once and cached; skipped, with the
    reason, where it cannot be built."""
    from tests.bfcl_official_venv import VenvUnavailable, official_venv

    try:
        return official_venv()
    except VenvUnavailable as reason:
        pytest.skip(f"the official bfcl-eval 2026.3.23 venv could not be built: {reason}")
