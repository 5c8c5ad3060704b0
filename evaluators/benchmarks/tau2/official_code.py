"""The official τ²-bench domain environments' code, served to an environment worker process (env_worker.py) from
the pinned source files (source.CODE_BLOB_IDS), each checked by its git blob id when it is loaded.

ONLY in a worker process: `install_official_finder(source)` puts a meta-path finder first on sys.meta_path. It
serves `tau2.*` modules under their official names, compiled from the checked files under `src/tau2/`. Every
parent package is an empty stand-in (so `tau2/__init__.py`, which imports litellm and the runner, never runs),
except the packages whose `__init__.py` is pinned (`tau2/utils`, whose re-exports the domain code imports): those
run as the official file. Any other `tau2.*` import fails, naming the module. The main process never installs it
(it only reads the tables below).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any

from evaluators.benchmarks.tau2.source import CODE_BLOB_IDS, CODE_PREFIX, DOMAINS_PREFIX, Source

PACKAGE_ROOT = "tau2"
SOURCE_FOLDER = CODE_PREFIX.removesuffix(PACKAGE_ROOT)  # "src/": the pinned paths' folder above the package
INIT = "__init__.py"


def module_files(code_files: list[str] | None = None) -> dict[str, str]:
    """Official module name -> its pinned file (`src/tau2/utils/utils.py` -> `tau2.utils.utils`; a package's
    `__init__.py` -> the package)."""
    files: dict[str, str] = {}
    for relative in code_files if code_files is not None else list(CODE_BLOB_IDS):
        parts = relative.removeprefix(SOURCE_FOLDER).removesuffix(".py").split("/")
        if parts[-1] == INIT.removesuffix(".py"):
            parts = parts[:-1]
        files[".".join(parts)] = relative
    return files


def stand_in_packages(modules: dict[str, str]) -> set[str]:
    """Every parent package of a served module that has no pinned `__init__.py`: served empty."""
    parents = {".".join(name.split(".")[:depth]) for name in modules for depth in range(1, name.count(".") + 1)}
    return {name for name in parents if name not in modules}


# What each domain's environment reads from the data folder (checked before the official code opens them).
DOMAIN_DATA_FILES: dict[str, tuple[str, ...]] = {
    "airline": ("db.json", "policy.md"),
    "retail": ("db.json", "policy.md"),
    "telecom": ("db.toml", "user_db.toml", "main_policy.md", "tech_support_manual.md"),
}


def check_domain_files(source: Source, domain: str) -> None:
    """Reads each data file the domain's official environment opens, so a file whose blob id differs is refused
    (DataError) before the official code parses it."""
    for name in DOMAIN_DATA_FILES[domain]:
        source.read(f"{DOMAINS_PREFIX}/{domain}/{name}")


class _CheckedSourceLoader(importlib.abc.Loader):
    def __init__(self, source: Source, relative: str | None):
        self.source = source
        self.relative = relative  # None: an empty stand-in package

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        if self.relative is None:
            return
        where = str(self.source.where(self.relative))
        # dont_inherit: this module's `from __future__ import annotations` must not turn the official code's
        # annotations into strings (its tools' parameter models are built from them at run time).
        code = compile(self.source.text(self.relative), where, "exec", dont_inherit=True)
        exec(code, module.__dict__)  # noqa: S102 - official source, blob-id checked, in a worker process by design


class OfficialCodeFinder(importlib.abc.MetaPathFinder):
    """Serves `tau2.*` from the pinned files (see the module's docstring); refuses every other `tau2.*` name."""

    def __init__(self, source: Source):
        self.source = source
        # The code files of the source's table (the pinned CODE_BLOB_IDS; a test's stand-in tree has its own).
        self.modules = module_files([relative for relative in source.blob_ids
                                     if relative.startswith(CODE_PREFIX + "/")])
        self.stand_ins = stand_in_packages(self.modules)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != PACKAGE_ROOT and not fullname.startswith(PACKAGE_ROOT + "."):
            return None
        if fullname in self.stand_ins:
            spec = importlib.machinery.ModuleSpec(fullname, _CheckedSourceLoader(self.source, None), is_package=True)
            spec.submodule_search_locations = []
            return spec
        relative = self.modules.get(fullname)
        if relative is None:
            raise ImportError(f"{fullname} is not among the pinned official τ²-bench modules "
                              "(source.CODE_BLOB_IDS)", name=fullname)
        is_package = relative.endswith("/" + INIT)
        spec = importlib.machinery.ModuleSpec(fullname, _CheckedSourceLoader(self.source, relative),
                                              origin=str(self.source.where(relative)), is_package=is_package)
        if is_package:
            spec.submodule_search_locations = []
        spec.has_location = False
        return spec


_installed: OfficialCodeFinder | None = None


def install_official_finder(source: Source) -> None:
    """Puts the finder first on sys.meta_path (once per process; a second source is refused)."""
    global _installed
    if _installed is not None:
        if _installed.source.root != source.root:
            raise RuntimeError(f"the official code finder already serves {_installed.source.root}")
        return
    _installed = OfficialCodeFinder(source)
    sys.meta_path.insert(0, _installed)


def official_module(name: str) -> types.ModuleType:
    """An official module (`tau2.domains.airline.environment`), imported through the finder."""
    if _installed is None:
        raise RuntimeError("install_official_finder was not called in this process")
    return importlib.import_module(name)
