"""The API classes' default state: from the data's scenario files, or read out of the official
repository's Python sources without executing them (`ast.literal_eval` on the literal assignments)."""

from __future__ import annotations

import ast
import copy
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from evaluators.benchmarks.acebench.agent.apis import API_CLASSES
from evaluators.benchmarks.acebench.data import OFFICIAL_COMMIT, download_official_code, is_downloaded
from evaluators.core.errors import DataError
from evaluators.core.paths import datasets_dir

# Where each class lives in the official repository, under model_inference/multi_turn/scenarios<lang>/
# (the multi_step copies hold the same data).
SOURCE_FILES = {
    "BaseApi": "phone_platform/base_api.py",
    "MessageApi": "phone_platform/message.py",
    "ReminderApi": "phone_platform/reminder.py",
    "FoodPlatform": "phone_platform/food_services.py",
    "Travel": "travel.py",
}
SOURCE_DIR = "model_inference/multi_turn/scenarios{language}"


def scenario_location(language_dir: Path, language: str) -> Path:
    """The folder holding the defaults for the data in `language_dir` (a `data_<lang>` folder):
    `<parent>/scenarios/<lang>/` (JSON, the shared data's layout), else the official sources next to
    the data (a repository checkout, or the downloaded archive)."""
    json_dir = language_dir.parent / "scenarios" / language
    if json_dir.is_dir():
        return json_dir
    for root in (language_dir.parent.parent, language_dir.parent):
        source_dir = root / SOURCE_DIR.format(language=language)
        if source_dir.is_dir():
            return source_dir
    if is_downloaded(language_dir):
        older_cache = datasets_dir() / f"acebench-{OFFICIAL_COMMIT[:12]}-scenarios" / SOURCE_DIR.format(language=language)
        if older_cache.is_dir():  # the scenario sources a cache from before kept: no new download needed
            return older_cache
        return download_official_code() / SOURCE_DIR.format(language=language)
    raise DataError(
        f"no default state for the agent environment: expected {json_dir}/<Class>.json or the official "
        f"repository's {SOURCE_DIR.format(language=language)}/ next to the data",
        language_dir,
    )


@lru_cache(maxsize=8)
def _cached_defaults(location: str, language: str) -> dict[str, dict[str, Any]]:
    folder = Path(location)
    if folder.name == language and folder.parent.name == "scenarios":
        return _read_json_folder(folder)
    return _read_source_defaults(folder)


def default_states(language_dir: Path, language: str) -> dict[str, dict[str, Any]]:
    """Class name -> its full initial state (attributes in assignment order), a fresh copy each call."""
    return copy.deepcopy(_cached_defaults(str(scenario_location(language_dir, language)), language))


# ---- the shared data's JSON files ------------------------------------------------------------


def _read_json_folder(folder: Path) -> dict[str, dict[str, Any]]:
    files = {name: _read_json_defaults(folder / f"{name}.json", name) for name in API_CLASSES}
    states = {}
    for name, (state, bases) in files.items():
        inherited: dict[str, Any] = {}
        for base in bases:  # the constructor called super().__init__() first
            inherited.update(files[base][0])
        states[name] = {**inherited, **state}
    return states


def _read_json_defaults(path: Path, name: str) -> tuple[dict[str, Any], list[str]]:
    """The state of one class, and the bases whose constructor its constructor calls first."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"missing default state of {name}", path) from None
    except json.JSONDecodeError as exc:
        raise DataError(f"invalid JSON: {exc.msg}", path, exc.lineno) from None
    if not isinstance(data, dict) or not isinstance(data.get("state"), dict):
        raise DataError("expected an object with a 'state' object", path)
    state = dict(data["state"])
    for attribute in data.get("integer_keyed_attributes") or []:
        state[attribute] = integer_keys(state.get(attribute), f"{name}.{attribute}", path)
    bases = [b for b in data.get("base_classes") or [] if b in API_CLASSES] if data.get("init_calls_base_init") else []
    return state, bases


def integer_keys(mapping: Any, where: str, path: Path) -> dict[int, Any]:
    """JSON turned the int keys of inbox / reminder_list into strings; calls pass ints, so convert back."""
    if not isinstance(mapping, dict):
        raise DataError(f"{where} must be an object", path)
    try:
        return {int(key): value for key, value in mapping.items()}
    except ValueError:
        raise DataError(f"{where} has a key that is not an integer", path) from None


# ---- the official Python sources, read without executing them -------------------------------


def _read_source_defaults(folder: Path) -> dict[str, dict[str, Any]]:
    parsed = {name: _init_assignments(folder / relative, name) for name, relative in SOURCE_FILES.items()}
    return {name: _flatten(parsed, name) for name in parsed}


_SUPER_INIT = ("super().__init__()", None)


def _flatten(parsed: dict[str, tuple[list[str], list[Any]]], name: str) -> dict[str, Any]:
    """The attributes in assignment order; `super().__init__()` assigns the base's at that point."""
    state: dict[str, Any] = {}
    bases, steps = parsed[name]
    for step in steps:
        if step == _SUPER_INIT:
            for base in bases:
                state.update(_flatten(parsed, base))
        else:
            state[step[0]] = step[1]
    return state


def _init_assignments(path: Path, name: str) -> tuple[list[str], list[Any]]:
    """The class's base names and, in order, its `__init__`'s `self.x = <literal>` assignments
    (as (attribute, value)) and `super().__init__()` calls."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except FileNotFoundError:
        raise DataError(f"missing source of {name}", path) from None
    except SyntaxError as exc:
        raise DataError(f"cannot parse: {exc.msg}", path, exc.lineno) from None
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None) if cls else None
    if cls is None or init is None:
        raise DataError(f"no class {name} with an __init__", path)
    bases = [b.id for b in cls.bases if isinstance(b, ast.Name) and b.id in API_CLASSES]
    steps: list[Any] = []
    for statement in init.body:
        target, value = _self_assignment(statement)
        if target is not None:
            try:
                steps.append((target, ast.literal_eval(value)))
            except (ValueError, TypeError, SyntaxError, RecursionError):
                raise DataError(f"{name}.{target} is not a literal", path, statement.lineno) from None
        elif _is_super_init(statement):
            steps.append(_SUPER_INIT)
    return bases, steps


def _self_assignment(statement: ast.stmt) -> tuple[str | None, Any]:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target, value = statement.targets[0], statement.value
    elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
        target, value = statement.target, statement.value
    else:
        return None, None
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
        return target.attr, value
    return None, None


def _is_super_init(statement: ast.stmt) -> bool:
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return False
    func = statement.value.func
    return (isinstance(func, ast.Attribute) and func.attr == "__init__" and isinstance(func.value, ast.Call)
            and isinstance(func.value.func, ast.Name) and func.value.func.id == "super")
