"""toolboard installs as a package: `pip wheel . --no-deps` builds a wheel, and from a venv holding it the `toolboard`
command lists the benchmarks, scores the built-in example and reads the published tables, run outside the checkout
(so nothing is imported from it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.project_copies import COPIED

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parents[1]
# pip's words when it cannot reach the package index for the pinned build backend.
OFFLINE_SIGNS = ("No matching distribution found for setuptools", "Could not find a version that satisfies",
                 "NewConnectionError", "Temporary failure in name resolution")


def _source_copy(root: Path) -> Path:
    """What a wheel is built from, copied, so that the build's own folders (build/, *.egg-info) never land in the
    checkout, nor a stale build/ of an earlier layout in the wheel."""
    for part in (*COPIED, "pyproject.toml", "README.md", "requirements.txt"):
        source = PROJECT / part
        if source.is_dir():
            shutil.copytree(source, root / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, root / part)
    return root


def _built_wheel(folder: Path) -> Path:
    source = _source_copy(folder.parent / "source")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q", "-w", str(folder)],
                           capture_output=True, text=True, timeout=900)
    if built.returncode and any(sign in built.stderr for sign in OFFLINE_SIGNS):
        pytest.skip(f"the pinned build backend cannot be fetched (no package index): {built.stderr.strip()[-300:]}")
    assert built.returncode == 0, built.stderr
    wheels = list(folder.glob("toolboard-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin folder of a venv holding the built wheel (its dependencies from this interpreter's site-packages)."""
    root = tmp_path_factory.mktemp("installed")
    wheel = _built_wheel(root / "wheel")
    # No pip of its own: ensurepip costs about 7 CPU-seconds here; this interpreter's pip installs into it instead.
    venv.create(root / "venv", system_site_packages=True, with_pip=False)
    bin_dir = root / "venv" / "bin"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "install", "-q", "--no-deps",
                    str(wheel)], check=True, capture_output=True, timeout=300)
    return bin_dir


def _outside_checkout(tmp_path: Path) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name not in ("PYTHONPATH", "TOOLBOARD_DATA_DIR")}
    return {**env, "TOOLBOARD_HOME": str(tmp_path / "home")}


def test_the_wheel_holds_the_packages_the_example_and_the_published_tables(installed: Path) -> None:
    import zipfile

    wheel = next((installed.parents[1] / "wheel").glob("*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "evaluators/cli/main.py" in names and "ui/app.py" in names
    assert "leaderboard_data/bfcl.json" in names and "leaderboard_data/models.json" in names
    assert any(name.startswith("evaluators/benchmarks/acebench/example/data_en/") for name in names)
    assert not any(name.startswith(("tests/", "benchmarks/")) for name in names)


def test_the_toolboard_command_works_from_the_installed_wheel(installed: Path, tmp_path: Path) -> None:
    env = _outside_checkout(tmp_path)
    listed = subprocess.run([str(installed / "toolboard"), "list"], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=300)
    assert listed.returncode == 0, listed.stderr
    for name in ("acebench", "bfcl", "toolbench_static", "stepeval_audio"):
        assert f"\n{name}: " in f"\n{listed.stdout}"
    demo = subprocess.run([str(installed / "toolboard"), "demo"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert demo.returncode == 0, demo.stderr
    assert "summary: " in demo.stdout and "overall=" in demo.stdout
    usage = subprocess.run([str(installed / "toolboard"), "--help"], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=300)
    assert usage.stdout.startswith("usage: toolboard ")


def test_the_installed_package_reads_its_published_tables(installed: Path, tmp_path: Path) -> None:
    code = ("import evaluators, json; from evaluators.core.leaderboard import load_published; "
            "print(json.dumps([evaluators.__file__, len(load_published('bfcl')['rows'])]))")
    read = subprocess.run([str(installed / "python"), "-c", code], cwd=tmp_path, env=_outside_checkout(tmp_path),
                          capture_output=True, text=True, timeout=300)
    assert read.returncode == 0, read.stderr
    import json

    location, rows = json.loads(read.stdout)
    assert "site-packages" in location and not location.startswith(str(PROJECT))
    assert rows > 10
