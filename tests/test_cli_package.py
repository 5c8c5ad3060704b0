"""The CLI is one package that only `python -m evaluators` uses: the engine and the core never import
it nor argparse, and the CLI, engine and core modules import one another without a circle."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import evaluators
from tests.conftest import PROJECT

PACKAGE_ROOT = PROJECT / "evaluators"
LAYERS = ("evaluators.cli", "evaluators.engine", "evaluators.core")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PROJECT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_names(path: Path) -> set[str]:
    """Every module an `import` statement of the file names, at any depth (imports inside functions
    count too: they make a circle as surely as top-level ones, only later)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _in(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


MODULES = {_module_name(path): path for path in PACKAGE_ROOT.rglob("*.py")}


def test_every_module_of_evaluators_imports():
    for module in pkgutil.walk_packages(evaluators.__path__, "evaluators."):
        if not module.name.endswith("__main__"):  # it runs the CLI on import
            importlib.import_module(module.name)


def test_the_engine_and_the_core_never_import_the_cli_nor_argparse():
    offenders = {
        name: sorted(n for n in _imported_names(path) if n == "argparse" or _in(n, "evaluators.cli"))
        for name, path in MODULES.items() if _in(name, "evaluators.engine") or _in(name, "evaluators.core")
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_only_the_entry_point_imports_the_cli_from_outside_it():
    importers = {name for name, path in MODULES.items()
                 if not _in(name, "evaluators.cli") and any(_in(n, "evaluators.cli") for n in _imported_names(path))}
    assert importers == {"evaluators.__main__"}


def test_no_import_circle_among_the_cli_engine_and_core_modules():
    layered = {name: path for name, path in MODULES.items() if any(_in(name, layer) for layer in LAYERS)}
    graph = {name: {n for n in _imported_names(path) if n in layered and n != name} for name, path in layered.items()}
    assert _a_circle(graph) == []


def _a_circle(graph: dict[str, set[str]]) -> list[str]:
    """One import circle of the graph as the list of its modules, or [] when it has none."""
    done: set[str] = set()
    path: list[str] = []

    def visit(name: str) -> list[str]:
        if name in path:
            return path[path.index(name):] + [name]
        if name in done:
            return []
        path.append(name)
        for imported in sorted(graph[name]):
            circle = visit(imported)
            if circle:
                return circle
        path.pop()
        done.add(name)
        return []

    for name in sorted(graph):
        circle = visit(name)
        if circle:
            return circle
    return []


def test_the_circle_finder_finds_the_old_cli_circle():
    # cli.py imported engine/cli_run.py for `run`, which imported cli.py back for its report printer.
    old = {"evaluators.cli": {"evaluators.engine.cli_run"}, "evaluators.engine.cli_run": {"evaluators.cli"}}
    assert _a_circle(old) == ["evaluators.cli", "evaluators.engine.cli_run", "evaluators.cli"]
