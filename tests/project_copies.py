"""A copy of the project with one new benchmark package added and nothing else of it changed: how the tests
prove that a benchmark joins by adding its package alone. Commands run in the copy as a user runs them."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
COPIED = ("evaluators", "ui", "leaderboard_data", "app.py")


def file_hashes(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def copy_with_package(root: Path, name: str, declaration: Path, added: dict[str, str] | None = None) -> Path:
    """The project copied into `root`, plus the package evaluators/benchmarks/<name>/ (its benchmark.py is
    `declaration`) and the files `added` (path in the copy -> text); checks that nothing else changed."""
    for part in COPIED:
        source = PROJECT / part
        if source.is_dir():
            shutil.copytree(source, root / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, root / part)
    before = file_hashes(root)
    package = root / "evaluators" / "benchmarks" / name
    package.mkdir()
    (package / "__init__.py").write_text(f'"""{name} (test only)."""\n', encoding="utf-8")
    shutil.copy2(declaration, package / "benchmark.py")
    for path, text in (added or {}).items():
        (root / path).write_text(text, encoding="utf-8")
    after = file_hashes(root)
    if {k: v for k, v in after.items() if before.get(k) == v} != before:
        raise AssertionError("a file of the project changed in the copy")
    expected = sorted([f"evaluators/benchmarks/{name}/__init__.py", f"evaluators/benchmarks/{name}/benchmark.py",
                       *(added or {})])
    if sorted(set(after) - set(before)) != expected:
        raise AssertionError(f"the copy gained {sorted(set(after) - set(before))}, expected {expected}")
    return root


def run_in_copy(copy: Path, *args: str, home: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """`python ARGS` in the copy (its own modules first on the path), with its own TOOLBOARD_HOME."""
    env = {**os.environ, "TOOLBOARD_HOME": str(home), "PYTHONPATH": str(copy)}
    return subprocess.run([sys.executable, *args], cwd=copy, env=env, capture_output=True, text=True, timeout=timeout)
