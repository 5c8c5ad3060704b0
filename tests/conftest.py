"""Shared fixtures: the built-in example data, the real benchmark data (skipped when absent) and
an isolated TOOLBOARD_HOME for every test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evaluators.cli import EXAMPLE_DIR
from evaluators.core.registry import get_benchmark

PROJECT = Path(__file__).resolve().parent.parent


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


@pytest.fixture(scope="session")
def real_acebench_dir() -> Path:
    root = shared_data_dir()
    if root is None or not (root / "acebench" / "data_en").is_dir():
        pytest.skip("real ACEBench data not found: set TOOLBOARD_DATA_DIR or place it at ../shared/data/acebench")
    return root / "acebench"
