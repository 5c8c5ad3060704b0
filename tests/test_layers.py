"""The layers of docs/architecture.md, read from the source: every module of evaluators/, ui/ and app.py is
parsed (imports inside functions count: they make a circle as surely as top-level ones, only later).

- No import circle between the parts of the project: each package of evaluators/, each module loose at the
  top of it, ui/ and app.py; and none between the modules of evaluators/ either.
- core imports nothing above it, the engine nothing but core, the benchmarks only core and the engine,
  publish nothing from the service, the CLI or the front doors, the service nothing from the CLI or the
  front doors; only `python -m evaluators` (evaluators/__main__.py) imports the CLI from outside it.
- At most two modules loose at the top of evaluators/ (__init__ and __main__); every package of it is a layer.
- A benchmark package imports no other benchmark package.
- The engine and the core never import argparse (the CLI's parsing stays in the CLI).
(The CLI package's own checks, formerly tests/test_cli_package.py, are among these.)
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import evaluators
from tests.conftest import PROJECT

PACKAGE_ROOT = PROJECT / "evaluators"
# The packages of evaluators/, lowest first (docs/architecture.md draws them).
LAYERS = ("core", "engine", "benchmarks", "publish", "service", "cli")
# The root package (`evaluators/__init__.py`: the version) imports nothing of the project, so anyone may import it.
ROOT = "evaluators"
LOOSE_ALLOWED = {"evaluators/__init__.py", "evaluators/__main__.py"}
FRONT_DOORS = ("evaluators.cli", "evaluators.__main__", "ui", "app")
# What each part may import besides itself and the root package (None: anything not forbidden below).
ALLOWED: dict[str, tuple[str, ...]] = {
    "evaluators.core": (),
    "evaluators.engine": ("evaluators.core",),
    "evaluators.benchmarks": ("evaluators.core", "evaluators.engine"),
}
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "evaluators.publish": ("evaluators.service", *FRONT_DOORS),
    "evaluators.service": FRONT_DOORS,
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PROJECT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_files() -> list[Path]:
    return sorted([*PACKAGE_ROOT.rglob("*.py"), *(PROJECT / "ui").rglob("*.py"), PROJECT / "app.py"])


MODULES = {module_name(path): path for path in project_files()}


def imported_modules(path: Path) -> set[str]:
    """Every module an import statement of the file names (see imports_in)."""
    return imports_in(path.read_text(encoding="utf-8"), module_name(path), path.name == "__init__.py")


def imports_in(source: str, name: str, is_package: bool, known: dict[str, Path] | None = None) -> set[str]:
    """Every module an import statement of the module `name` names, at any depth, relative imports resolved;
    `from a import b` names `a.b` when that is a module of `known` (the project's), else `a`."""
    known = MODULES if known is None else known
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join([*parts[:len(parts) - (node.level - 1)], *([node.module] if node.module else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known)
    return found


def part_of(name: str) -> str | None:
    """The part of the project a module belongs to: `evaluators.<package>` (a package of evaluators/, or a module
    loose at its top), the root package, `ui` or `app`; None outside the project."""
    parts = name.split(".")
    if parts[0] in ("ui", "app"):
        return parts[0]
    if parts[0] != ROOT:
        return None
    return ROOT if len(parts) == 1 else f"{ROOT}.{parts[1]}"


def is_in(name: str, part: str) -> bool:
    return name == part or name.startswith(part + ".")


def part_imports() -> dict[str, dict[str, set[str]]]:
    """part -> {imported part: {"module -> imported module", …}} for imports across parts."""
    graph: dict[str, dict[str, set[str]]] = {}
    for name, path in MODULES.items():
        part = part_of(name)
        assert part is not None
        graph.setdefault(part, {})
        for imported in imported_modules(path):
            other = part_of(imported)
            if other is not None and other != part:
                graph[part].setdefault(other, set()).add(f"{name} -> {imported}")
    return graph


def find_circle(graph: dict[str, set[str]]) -> list[str]:
    """One circle of the graph as the list of its nodes (the first repeated at the end), or [] when it has none."""
    done: set[str] = set()
    path: list[str] = []

    def visit(name: str) -> list[str]:
        if name in path:
            return path[path.index(name):] + [name]
        if name in done:
            return []
        path.append(name)
        for imported in sorted(graph.get(name, ())):
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


def layer_breaches(graph: dict[str, dict[str, set[str]]]) -> dict[str, list[str]]:
    """part -> the imports (`module -> imported module`) that break ALLOWED or FORBIDDEN."""
    breaches: dict[str, list[str]] = {}
    for part, imported in graph.items():
        for other, lines in imported.items():
            allowed = ALLOWED.get(part)
            if other == ROOT:
                continue
            if allowed is not None and other not in allowed or other in FORBIDDEN.get(part, ()):
                breaches.setdefault(part, []).extend(sorted(lines))
    return breaches


# ---- the rules --------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_no_import_circle_between_the_parts_of_the_project():
    graph = {part: set(imported) for part, imported in part_imports().items()}
    circle = find_circle(graph)
    assert circle == [], f"import circle between {' -> '.join(circle)}: " + "; ".join(
        sorted(line for a, b in zip(circle, circle[1:]) for line in part_imports()[a][b]))


@pytest.mark.slow
def test_no_import_circle_between_the_modules_of_evaluators():
    modules = {name: path for name, path in MODULES.items() if is_in(name, ROOT)}
    graph = {name: {other for other in imported_modules(path) if other in modules and other != name}
             for name, path in modules.items()}
    assert find_circle(graph) == []


@pytest.mark.slow
def test_each_layer_imports_only_the_layers_below_it():
    assert layer_breaches(part_imports()) == {}


@pytest.mark.slow  # over half a second in the fast loop
def test_a_benchmark_package_imports_no_other_benchmark_package():
    """A benchmark joins by adding its package: nothing else, another benchmark included, depends on it."""
    crossings = []
    for name, path in MODULES.items():
        parts = name.split(".")
        if parts[:2] != [ROOT, "benchmarks"] or len(parts) < 3:
            continue
        own = ".".join(parts[:3])
        crossings += [f"{name} -> {other}" for other in sorted(imported_modules(path))
                      if is_in(other, f"{ROOT}.benchmarks") and len(other.split(".")) > 2 and not is_in(other, own)]
    assert crossings == []


def test_the_root_package_imports_nothing_of_the_project():
    assert {n for n in imported_modules(PACKAGE_ROOT / "__init__.py") if part_of(n)} == set()


@pytest.mark.slow
def test_only_the_entry_point_imports_the_cli_from_outside_it():
    importers = {name for name, path in MODULES.items()
                 if not is_in(name, "evaluators.cli") and any(is_in(n, "evaluators.cli") for n in imported_modules(path))}
    assert importers == {"evaluators.__main__"}


@pytest.mark.slow
def test_the_engine_and_the_core_never_import_argparse():
    offenders = {name: sorted(n for n in imported_modules(path) if n == "argparse")
                 for name, path in MODULES.items() if is_in(name, "evaluators.engine") or is_in(name, "evaluators.core")}
    assert {name: found for name, found in offenders.items() if found} == {}


# The deployment's policy that the service hands the engine (quotas, room on disk, models an endpoint does not list).
SERVICE_SETTINGS = ("TOOLBOARD_MAX_RUNS_PER_DAY", "TOOLBOARD_MAX_UPLOADS_PER_DAY", "TOOLBOARD_MAX_STORE_MB",
                    "TOOLBOARD_MAX_STORED_MB_PER_DAY", "TOOLBOARD_MIN_FREE_DISK_MB", "TOOLBOARD_ALLOW_UNLISTED_MODELS")


def test_the_engine_reads_none_of_the_settings_the_service_hands_it():
    named = {name: [setting for setting in SERVICE_SETTINGS if setting in path.read_text(encoding="utf-8")]
             for name, path in MODULES.items() if is_in(name, "evaluators.engine") or is_in(name, "evaluators.core")}
    assert {name: found for name, found in named.items() if found} == {}


def test_at_most_two_modules_are_loose_at_the_top_of_evaluators_and_every_package_is_a_layer():
    loose = {path.relative_to(PROJECT).as_posix() for path in PACKAGE_ROOT.glob("*.py")}
    assert loose <= LOOSE_ALLOWED
    packages = {path.name for path in PACKAGE_ROOT.iterdir() if (path / "__init__.py").is_file()}
    assert packages <= set(LAYERS), f"give {sorted(packages - set(LAYERS))} a place in LAYERS and docs/architecture.md"


def test_every_module_of_evaluators_imports():
    for module in pkgutil.walk_packages(evaluators.__path__, "evaluators."):
        if not module.name.endswith("__main__"):  # it runs the CLI on import
            importlib.import_module(module.name)


# ---- the checker itself -----------------------------------------------------------------------------------


def test_the_circle_finder_finds_the_old_cli_circle():
    # cli.py imported engine/cli_run.py for `run`, which imported cli.py back for its report printer.
    old = {"evaluators.cli": {"evaluators.engine.cli_run"}, "evaluators.engine.cli_run": {"evaluators.cli"}}
    assert find_circle(old) == ["evaluators.cli", "evaluators.engine.cli_run", "evaluators.cli"]


def test_an_import_inside_a_function_counts_and_relative_imports_resolve():
    source = ("def later():\n    from evaluators.publish.hub_sync import from_env\n"
              "from . import store\nfrom ..core import errors\nfrom .store import Store\n")
    known = {"evaluators.engine.store": Path("store.py"), "evaluators.core.errors": Path("errors.py")}
    found = imports_in(source, "evaluators.engine.probe", is_package=False, known=known)
    assert found == {"evaluators.publish.hub_sync", "evaluators.engine", "evaluators.engine.store", "evaluators.core",
                     "evaluators.core.errors"}
    graph = {"evaluators.engine": {"evaluators.publish": {"evaluators.engine.probe -> evaluators.publish.hub_sync"}}}
    assert layer_breaches(graph) == {"evaluators.engine": ["evaluators.engine.probe -> evaluators.publish.hub_sync"]}


def test_the_layer_rules_let_each_layer_import_downward():
    downward = {"evaluators.benchmarks": {"evaluators.engine": {"a -> b"}, "evaluators.core": {"c -> d"}},
                "evaluators.publish": {"evaluators.benchmarks": {"e -> f"}},
                "evaluators.service": {"evaluators.publish": {"g -> h"}},
                "ui": {"evaluators.service": {"i -> j"}}}
    assert layer_breaches(downward) == {}
    upward = {"evaluators.publish": {"evaluators.service": {"p -> s"}}, "evaluators.service": {"ui": {"s -> u"}},
              "evaluators.core": {"evaluators.engine": {"c -> e"}}}
    assert layer_breaches(upward) == {"evaluators.publish": ["p -> s"], "evaluators.service": ["s -> u"],
                                      "evaluators.core": ["c -> e"]}
