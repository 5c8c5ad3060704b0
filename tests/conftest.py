"""Shared fixtures: the built-in example data, the real benchmark data (skipped when absent) and
an isolated TOOLBOARD_HOME for every test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluators.core.registry import get_benchmark
from tests.acebench_fixtures import EXAMPLE_DIR

PROJECT = Path(__file__).resolve().parent.parent


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """`python -m evaluators ARGS` as a user runs it: a whole process, its output captured."""
    return subprocess.run([sys.executable, "-m", "evaluators", *args], cwd=PROJECT, capture_output=True, text=True,
                          timeout=120)


def shared_data_dir() -> Path | None:
    configured = os.environ.get("TOOLBOARD_DATA_DIR")
    candidate = Path(configured) if configured else PROJECT.parent / "shared" / "data"
    return candidate if candidate.is_dir() else None


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
