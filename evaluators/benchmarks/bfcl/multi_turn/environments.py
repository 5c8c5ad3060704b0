"""The official multi-turn environment classes (a file system, messaging, posting, tickets, trading, travel
booking, vehicle control, math), loaded from the pinned, hash-checked wheel at run time.

Two parts:
- `backend_config(wheel)`: the official tables of `bfcl_eval/constants/executable_backend_config.py`
  (which doc file and which module hold each class, the stateless classes, the classes whose state is not
  shown), read from the wheel's source with `ast` as data, never imported. The main process uses it.
- `install_environment_finder(wheel)` / `environment_class(name)`: ONLY in an environment worker process
  (worker.py). A meta-path finder serves the official modules of
  `bfcl_eval/eval_checker/multi_turn_eval/func_source_code/` that the eight classes need (ENVIRONMENT_MODULES),
  compiled from the zip's source under their official module names; their parent packages are empty
  stand-ins, so `bfcl_eval/__init__.py` and the rest of the package are never imported. The memory classes
  MemoryAPI_kv and MemoryAPI_rec_sum (MEMORY_MODULES, with their base class) are served too; the three helpers their
  base class imports from `bfcl_eval.utils` come from agentic/memory_ids.py (a stand-in checked equal to the
  official functions), so the official utils module (and its import-time folders) is never run. Any other
  `bfcl_eval.*` import fails. `mpmath` (math_api), `rank_bm25` (memory_kv) and `overrides` (the memory base class)
  are pinned requirements.
"""

from __future__ import annotations

import ast
import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from evaluators.benchmarks.bfcl.official_source import decode, module_constants
from evaluators.benchmarks.bfcl.wheel import check_sha256, pinned_wheel, read_member
from evaluators.core.errors import DataError

BACKEND_CONFIG_FILE = "bfcl_eval/constants/executable_backend_config.py"
PACKAGE_ROOT = "bfcl_eval"
BACKEND_PACKAGE = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
# The modules the eight multi-turn classes need (long_context holds the long-context extensions).
ENVIRONMENT_MODULES = ("gorilla_file_system", "long_context", "math_api", "message_api", "posting_api",
                       "ticket_api", "trading_bot", "travel_booking", "vehicle_control")
# The memory backends played against an endpoint (issue 44) and their base class. memory_vector imports torch,
# sentence-transformers and faiss (the optional extra, requirements-memory-vector.txt) and loads its encoder at
# import: its class is loaded only by a vector worker (VECTOR_CLASSES), never by the other workers.
MEMORY_MODULES = ("memory_api_metaclass", "memory_kv", "memory_rec_sum")
VECTOR_MODULE = "memory_vector"
VECTOR_CLASSES = ("MemoryAPI_vector",)
SERVED_MODULES = ENVIRONMENT_MODULES + MEMORY_MODULES + (VECTOR_MODULE,)
# `bfcl_eval.utils`, served as the stand-in module (agentic/memory_ids.py) with the three names the memory base
# class imports.
UTILS_MODULE = "bfcl_eval.utils"
# The stand-in parent packages of the official modules (empty: their __init__ files are not run).
PARENT_PACKAGES = ("bfcl_eval", "bfcl_eval.eval_checker", "bfcl_eval.eval_checker.multi_turn_eval", BACKEND_PACKAGE)


@dataclass(frozen=True)
class BackendConfig:
    """The official tables, for the multi-turn classes and the served memory classes (not web search, whose tools
    are ours, nor memory_vector)."""

    func_doc_files: dict[str, str]  # class name -> file in data/multi_turn_func_doc/
    class_modules: dict[str, str]  # class name -> official module name
    stateless: tuple[str, ...]  # classes without an initial configuration
    omit_state: tuple[str, ...]  # stateful classes whose state the official inference log leaves out

    @property
    def classes(self) -> tuple[str, ...]:
        """The classes an ordinary worker loads (every one but the vector memory's)."""
        return tuple(name for name in self.class_modules if name not in VECTOR_CLASSES)


def _joined(node: ast.expr, constants: dict[str, Any]) -> str | None:
    """An f-string of module constants (`f"{BACKEND_PATH_PREFIX}.math_api"`) as text; None otherwise."""
    if not isinstance(node, ast.JoinedStr):
        return None
    parts = []
    for value in node.values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            parts.append(value.value)
        elif (isinstance(value, ast.FormattedValue) and isinstance(value.value, ast.Name)
              and value.conversion == -1 and value.format_spec is None
              and isinstance(constants.get(value.value.id), str)):
            parts.append(constants[value.value.id])
        else:
            return None
    return "".join(parts)


def _class_module_mapping(source: str, constants: dict[str, Any], where: str) -> dict[str, str]:
    tree = ast.parse(source, filename=where)
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "CLASS_FILE_PATH_MAPPING" and isinstance(node.value, ast.Dict)):
            mapping = {}
            for key, value in zip(node.value.keys, node.value.values):
                text = _joined(value, constants) if value is not None else None
                if not isinstance(key, ast.Constant) or not isinstance(key.value, str) or text is None:
                    raise DataError("CLASS_FILE_PATH_MAPPING holds an entry that is not a name -> f-string of "
                                    "constants", where)
                mapping[key.value] = text
            return mapping
    raise DataError("no CLASS_FILE_PATH_MAPPING dict literal found", where)


def backend_config_from_source(source: str, where: str) -> BackendConfig:
    constants = module_constants(source, where)
    doc_files = constants.get("MULTI_TURN_FUNC_DOC_FILE_MAPPING")
    stateless = constants.get("STATELESS_CLASSES")
    omitted = constants.get("OMIT_STATE_INFO_CLASSES")
    if not isinstance(doc_files, dict) or not isinstance(stateless, list) or not isinstance(omitted, list):
        raise DataError("expected MULTI_TURN_FUNC_DOC_FILE_MAPPING, STATELESS_CLASSES and OMIT_STATE_INFO_CLASSES "
                        "as literals", where)
    modules = _class_module_mapping(source, constants, where)
    prefix = BACKEND_PACKAGE + "."
    # Only the classes whose module is one of ours: the multi-turn suite and the served memory backends.
    ours = {name: module for name, module in modules.items()
            if module.startswith(prefix) and module.removeprefix(prefix) in SERVED_MODULES and name in doc_files}
    return BackendConfig(func_doc_files={name: doc_files[name] for name in ours}, class_modules=ours,
                         stateless=tuple(stateless), omit_state=tuple(omitted))


@lru_cache(maxsize=4)
def _backend_config_of(wheel_text: str) -> BackendConfig:
    where = f"{wheel_text}:{BACKEND_CONFIG_FILE}"
    return backend_config_from_source(decode(read_member(Path(wheel_text), BACKEND_CONFIG_FILE), where), where)


def backend_config(wheel: Path | None = None) -> BackendConfig:
    return _backend_config_of(str(wheel or pinned_wheel()))


# ---- worker side: the official modules compiled from the wheel --------------------------------------------


class _WheelSourceLoader(importlib.abc.Loader):
    def __init__(self, wheel: Path, member: str | None):
        self.wheel = wheel
        self.member = member  # None: an empty stand-in package

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        if self.member is None:
            return
        where = f"{self.wheel}:{self.member}"
        code = compile(decode(read_member(self.wheel, self.member), where), where, "exec")
        exec(code, module.__dict__)  # noqa: S102 - official source from the hash-checked wheel, by design


class _StandInLoader(importlib.abc.Loader):
    """`bfcl_eval.utils` as the memory base class needs it: the three functions of agentic/memory_ids.py."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        from evaluators.benchmarks.bfcl.agentic import memory_ids

        for name in memory_ids.OFFICIAL_NAMES:
            setattr(module, name, getattr(memory_ids, name))


class EnvironmentFinder(importlib.abc.MetaPathFinder):
    """Serves `bfcl_eval.*` from the wheel: the empty parent packages and SERVED_MODULES (the stand-in
    `bfcl_eval.utils` for the memory base class); refuses the rest."""

    def __init__(self, wheel: Path):
        self.wheel = wheel

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != PACKAGE_ROOT and not fullname.startswith(PACKAGE_ROOT + "."):
            return None
        if fullname in PARENT_PACKAGES:
            spec = importlib.machinery.ModuleSpec(fullname, _WheelSourceLoader(self.wheel, None), is_package=True)
            spec.submodule_search_locations = []
            return spec
        if fullname == UTILS_MODULE:
            spec = importlib.machinery.ModuleSpec(fullname, _StandInLoader(), origin="agentic/memory_ids.py")
            spec.has_location = False
            return spec
        prefix = BACKEND_PACKAGE + "."
        if fullname.startswith(prefix) and fullname.removeprefix(prefix) in SERVED_MODULES:
            member = fullname.replace(".", "/") + ".py"
            spec = importlib.machinery.ModuleSpec(fullname, _WheelSourceLoader(self.wheel, member), origin=member)
            spec.has_location = False
            return spec
        raise ImportError(f"{fullname} is not among the official environment modules loaded from the wheel")


_installed: EnvironmentFinder | None = None


def install_environment_finder(wheel: Path) -> None:
    """Checks the wheel's sha256, then puts the finder first on sys.meta_path (once per process)."""
    global _installed
    if _installed is not None:
        if _installed.wheel != wheel:
            raise RuntimeError(f"the environment finder already serves {_installed.wheel}")
        return
    check_sha256(wheel, "the wheel the environment modules are loaded from")
    _installed = EnvironmentFinder(wheel)
    sys.meta_path.insert(0, _installed)


def environment_class(config: BackendConfig, class_name: str) -> type:
    """The official class, its module imported through the finder (install_environment_finder first)."""
    if _installed is None:
        raise RuntimeError("install_environment_finder was not called in this process")
    module_name = config.class_modules.get(class_name)
    if module_name is None:
        raise DataError(f"unknown environment class {class_name!r}; known: {', '.join(config.classes)}")
    cls = getattr(importlib.import_module(module_name), class_name)
    if not isinstance(cls, type):
        raise DataError(f"{module_name}.{class_name} is not a class")
    return cls
