"""τ²-bench test fixtures shared by the test files: a folder holding every pinned file of the official repository
(data, prompt texts and the environments' code), filled once from the reference archive (../shared/reference) and
the inspect-evals wheel (the two files the archive lacks), cached outside the project; skipped with the reason
where either is out of reach."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from evaluators.benchmarks.tau2 import source
from evaluators.core.downloads import DownloadFailed

PROJECT = Path(__file__).resolve().parent.parent
REFERENCE_ARCHIVE = PROJECT.parent / "shared" / "reference" / "tau2-bench-a2c0247.tar.gz"


def _cache_root() -> Path:
    configured = os.environ.get("TOOLBOARD_TEST_CACHE")
    base = Path(configured) if configured else Path.home() / ".cache" / "toolboard-tests"
    return base / f"tau2-source-{source.COMMIT[:7]}"


def full_source_root() -> Path:
    """The folder, filled on first use (each file written whole and renamed into place, so two test processes may
    fill it at once)."""
    folder = _cache_root()
    if not source._cache_complete(folder):
        if not REFERENCE_ARCHIVE.is_file():
            pytest.skip(f"the τ²-bench reference archive not found at {REFERENCE_ARCHIVE}: place ../shared beside "
                        "the project")
        folder.parent.mkdir(parents=True, exist_ok=True)
        downloads = Path(tempfile.mkdtemp(dir=folder.parent))
        try:
            try:
                wheel = source.download_wheel(downloads)
            except DownloadFailed as exc:
                pytest.skip(f"the package index is unreachable (the inspect-evals wheel is needed): {exc}")
            source.fill_cache(folder, REFERENCE_ARCHIVE, wheel)
        finally:
            shutil.rmtree(downloads, ignore_errors=True)
    return folder
