"""Packages whose `__init__` runs only when a name is asked of them, not when they (or their submodules) are
imported: for third-party packages whose `__init__` imports far more than this project uses.

This leans on how those packages are laid out (their submodules import without their `__init__`), which no
library promises: the packages deferred are named here only (`defer_sdk_type_catalogue`,
`defer_rouge_score_imports`), each kept for what it saves a measured figure (docs/architecture.md), and
tests/test_public_library_apis.py fails when a pinned version no longer allows it.

`import openai` runs `openai/types/__init__.py`, which imports every one of the SDK's ~400 request and
response types (the Responses API, evals, graders, realtime, …) and builds a pydantic model for each: most of
the 0.5 s the import takes, paid by every run before its first request, though a chat completion needs a
handful of them. `httpcore2/__init__.py` imports its whole sync and async stack (~80 ms) for the SDK's one
`import httpcore2` line on the way to its aiohttp transport; `nltk/__init__.py` imports nearly all of NLTK
(~0.15 s) where rouge-score uses its Porter stemmer module, and rouge-score imports numpy (~30 ms) for what
Rouge-L never calls.

A deferred package exists at once, its submodules import as usual (each with exactly what it imports
itself), and a submodule asked for by name (`from nltk import redos`) is imported as that submodule, as
Python's import gives it when the package's own `__init__` does not bind the name otherwise. Any other name
asked of the package runs its `__init__`, unchanged and whole, then answers from it; other threads asking a
name meanwhile wait for it to end, while submodules (which that `__init__` may be waiting for another thread
to finish importing) are imported without waiting. Nothing of the package is changed or left out: only built
later, if ever."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
from types import ModuleType
from typing import Any

_RUN_LOCK = threading.RLock()
_RUNNING: set[str] = set()  # packages whose `__init__` the thread holding _RUN_LOCK is running


class _DeferredInit(importlib.abc.Loader):
    """A package's loader whose `__init__` runs on the first name asked of the package (not on its import)."""

    def __init__(self, real: importlib.abc.Loader):
        self.real = real

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.real.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        real = self.real

        def __getattr__(name: str) -> Any:
            # Asked only for names the module does not hold yet: the import system's own (__path__, __spec__, …)
            # are set already; any other, dunders too (`__all__`, `__version__`), is the real `__init__`'s.
            if not name.startswith("__") and importlib.util.find_spec(f"{module.__name__}.{name}") is not None:
                # A submodule (`from . import x` in a module of the package) is imported without the lock: another
                # thread may hold it, running the `__init__`, and wait for this very import to end.
                return importlib.import_module(f"{module.__name__}.{name}")
            with _RUN_LOCK:
                # This function stays in place while the `__init__` runs (which may replace it with its own), so
                # that other threads asking a name wait here for the `__init__` to end.
                if module.__dict__.get("__getattr__") is __getattr__ and module.__name__ not in _RUNNING:
                    _RUNNING.add(module.__name__)
                    try:
                        real.exec_module(module)
                    finally:
                        _RUNNING.discard(module.__name__)
                        if module.__dict__.get("__getattr__") is __getattr__:
                            del module.__dict__["__getattr__"]
            if name in module.__dict__:
                return module.__dict__[name]
            own = module.__dict__.get("__getattr__")
            if own is None or own is __getattr__:  # none of its own; or asked by its `__init__` as it runs
                raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")
            return own(name)

        module.__dict__["__getattr__"] = __getattr__


class _DeferringFinder(importlib.abc.MetaPathFinder):
    def __init__(self) -> None:
        self.packages: set[str] = set()  # with every package below them
        self.alone: set[str] = set()  # only the package itself
        self._finding = threading.local()

    def _deferred(self, name: str) -> bool:
        return name in self.alone or any(name == package or name.startswith(package + ".") for package in self.packages)

    def find_spec(self, fullname: str, path: Any, target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if not self._deferred(fullname) or getattr(self._finding, "active", False):
            return None
        self._finding.active = True  # the real finders, below this one, find it
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._finding.active = False
        if spec is None or spec.submodule_search_locations is None or spec.loader is None:
            return spec  # a plain module: imported as usual
        spec.loader = _DeferredInit(spec.loader)
        return spec


_FINDER = _DeferringFinder()


def defer_package_inits(*packages: str, below: bool = True) -> None:
    """Defer the `__init__` of these packages and (`below`) of every package below them, from their first import
    on (a package imported already is left as it is). `below=False` for a package whose sub-packages need their
    own `__init__` run as they are imported (compiled extensions set up there)."""
    (_FINDER.packages if below else _FINDER.alone).update(packages)
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def defer_sdk_type_catalogue() -> None:
    """The `openai` SDK's type catalogue (`openai.types`) and `httpcore2` (its default transport's HTTP stack,
    which the aiohttp transport replaces), before the SDK is first imported: a chat completion needs a handful
    of the catalogue's ~400 models."""
    defer_package_inits("openai.types", "httpcore2")


def defer_rouge_score_imports() -> None:
    """NLTK's `__init__` (all of NLTK, where rouge-score uses its Porter stemmer module) and numpy's (rouge-score
    imports it for a bootstrap Rouge-L never calls; its sub-packages set up compiled extensions in theirs)."""
    defer_package_inits("nltk")
    defer_package_inits("numpy", below=False)
