"""Calls as the official multi-turn code makes and executes them, without `eval`.

Main process (decoding; pure):
- `official_call_texts(text) -> list[str]`: the official `default_decode_execute_prompting`: the bracket
  wrapper and our Python decoder (decode_python, official mode), then `decoded_output_to_execution_list`
  (official_execution_list: `name(k=<parse_nested_value(v)>, ...)` per call). Raises DecodeFailure where the
  official decode raises (official_empty_dict_fails_execute_decode included).
- `is_empty_execute_response(calls) -> bool`: the official check (no call, or one empty call).

Worker process (execution; environments.py has loaded the official classes):
- `open_environment(classes, initial_config, namespace, item_id, long_context, stateless, omit_state)`: the
  instances as `execute_multi_turn_func_call` creates them (class(); `_load_scenario(deepcopy(config),
  long_context=...)` for stateful classes), under the official instance names
  (official_instance_name: f"{namespace}_{item_id}_{class}_instance" with [-./:] -> _), and the official map
  of public method names to instance names (a later class wins a shared name).
- `execute_call_texts(environment, call_texts) -> list[str]`: per text, exactly as the official loop:
  official_rewrites_method_names (the `_process_method_calls` regex, also inside string literals),
  official_blocked_names (on the rewritten text), then `ast.parse(text, "<string>", "eval")` + compile (the
  same SyntaxErrors eval raises, nothing run) and the Interpreter (below); official_result_text for the value, and
  `Error during execution: <str(exc)>` for any exception.
- `Interpreter`: constants, unary operators, +/- (complex numbers print as `(1+2j)`), list/tuple/set/dict
  displays, names (an instance name -> its instance; any other -> NameError "name 'x' is not defined"),
  `instance.method` attributes, and calls (func, then positional, then keyword arguments, evaluated in
  eval's order: nested calls ARE executed). Documented deviations (counted by tests):
  deviation_builtin_names_undefined (builtins and the official module's globals, e.g. `print`, `json`, read as
  undefined names instead of being run) and deviation_unsupported_expression (node kinds no decoded call and
  no ground truth holds: subscripts, comparisons, private or non-method attributes, `*`/`**` unpacking...:
  "Error during execution: unsupported expression ..." instead of what eval would do).
- `public_state(environment)`: each stateful, shown class's public attributes, JSON-safe (objects -> their
  public vars, datetimes -> isoformat, a back-reference -> "<TypeName>"), for evidence only.
"""

from __future__ import annotations

import ast
import builtins
import copy
import datetime
import inspect
import json
import math
import operator
import re
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from evaluators.benchmarks.bfcl.decode_common import DecodeFailure
from evaluators.benchmarks.bfcl.decode_python import decode_python

# ---- main process: the official execute decode -------------------------------------------------------------


def official_call_texts(text: str) -> list[str]:
    """default_decode_execute_prompting: decode_python (official mode) + official_execution_list."""
    return official_execution_list(decode_python(text, mode="official"))


def official_execution_list(decoded: list[dict]) -> list[str]:
    """decoded_output_to_execution_list: one `name(k=v, ...)` text per (name, arguments) of each decoded call."""
    texts = []
    for call in decoded:
        for name, arguments in call.items():
            texts.append(f"{name}({', '.join(f'{key}={parse_nested_value(value)}' for key, value in arguments.items())})")
    return texts


def parse_nested_value(value: Any) -> str:
    """The official parse_nested_value: a dict whose values are all dicts is a nested call text (its first key
    the name; official_empty_dict_fails_execute_decode: `{}` has no first key, the official decode raises); any
    other dict prints as `{'key': value}` (keys quoted as they are, values nested the same way); the rest is
    repr()."""
    if isinstance(value, dict):
        if all(isinstance(item, dict) for item in value.values()):
            if not value:
                raise DecodeFailure("official_empty_dict_fails_execute_decode",
                                    "an empty dict argument: the official execute decode raises IndexError on it")
            name = next(iter(value))
            return f"{name}({', '.join(f'{key}={parse_nested_value(item)}' for key, item in value[name].items())})"
        return "{" + ", ".join(f"'{key}': {parse_nested_value(item)}" for key, item in value.items()) + "}"
    return repr(value)


def is_empty_execute_response(calls: list) -> bool:
    """The official check: no call, or a single empty one."""
    return len(calls) == 0 or (len(calls) == 1 and len(calls[0]) == 0)


# ---- worker process: instances and the official execute loop without eval --------------------------------

# The names the official loop refuses to run (the text's function name, after the rewrite).
BLOCKED_NAMES = ("kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run")
_METHOD_CALL = re.compile(r"\b([a-zA-Z_]\w*)\s*(?=\()")
_INSTANCE_NAME_CHARACTERS = re.compile(r"[-./:]")
ERROR_PREFIX = "Error during execution: "
UNSUPPORTED = "unsupported expression"
# Names the official `eval` would find (builtins, the globals of multi_turn_utils, the locals of
# execute_multi_turn_func_call) but the interpreter reads as undefined (deviation_builtin_names_undefined).
OFFICIAL_EVAL_NAMES = frozenset(dir(builtins)) | frozenset((
    "copy", "importlib", "inspect", "json", "re", "CLASS_FILE_PATH_MAPPING", "STATELESS_CLASSES",
    "execute_multi_turn_func_call", "is_empty_execute_response", "_process_method_calls", "func_call_list",
    "initial_config", "involved_classes", "model_name", "test_entry_id", "long_context", "is_evaL_run",
    "class_method_name_mapping", "involved_instances", "class_name", "module_name", "instance_name", "class_instance",
    "module", "class_", "class_initial_config", "method_name", "method", "execution_results", "func_call",
    "func_call_copy", "func_call_result", "e"))


@dataclass
class Environment:
    """One item's instances in a worker: by class (involved order) and by official instance name."""

    instances: dict[str, Any]
    by_name: dict[str, Any]
    method_instances: dict[str, str]
    stateless: tuple[str, ...] = ()
    omit_state: tuple[str, ...] = ()
    deviations: dict[str, int] = field(default_factory=dict)


def official_instance_name(namespace: str, item_id: str, class_name: str) -> str:
    return _INSTANCE_NAME_CHARACTERS.sub("_", f"{namespace}_{item_id}_{class_name}_instance")


def open_environment(classes: dict[str, type], initial_config: dict, namespace: str, item_id: str,
                     long_context: bool, stateless: tuple[str, ...] = (), omit_state: tuple[str, ...] = ()
                     ) -> Environment:
    """`classes`: class name -> official class, in involved_classes order."""
    instances: dict[str, Any] = {}
    by_name: dict[str, Any] = {}
    method_instances: dict[str, str] = {}
    for class_name, cls in classes.items():
        instance = cls()
        if class_name not in stateless:
            instance._load_scenario(copy.deepcopy(initial_config.get(class_name, {})), long_context=long_context)
        name = official_instance_name(namespace, item_id, class_name)
        instances[class_name] = instance
        by_name[name] = instance
        for method_name, _ in inspect.getmembers(instance, predicate=inspect.ismethod):
            if not method_name.startswith("_"):
                method_instances[method_name] = name
    return Environment(instances, by_name, method_instances, stateless, omit_state)


def official_rewrites_method_names(text: str, method_instances: dict[str, str]) -> str:
    """`_process_method_calls`: every `name(` whose name is a method of an involved class becomes
    `instance.name(` (the regex also rewrites such text inside string literals)."""
    def replace(match: re.Match) -> str:
        name = match.group(1)
        return f"{method_instances[name]}.{name}" if name in method_instances else name

    return _METHOD_CALL.sub(replace, text)


def official_blocked_names(text: str) -> str | None:
    """The name the official check reads (before the first `(`, then the part after the first `.`) when it is
    one of BLOCKED_NAMES."""
    head = text.split("(")[0]
    if "." in head:
        head = head.split(".")[1]
    return head if head in BLOCKED_NAMES else None


def official_result_text(value: Any) -> str:
    """A str as it is, a dict as JSON (its str when JSON fails), anything else str()."""
    if type(value) is str:
        return value
    if type(value) is dict:
        try:
            return json.dumps(value)
        except Exception:  # noqa: BLE001 - the official code falls back on any failure
            return str(value)
    return str(value)


def execute_call_texts(environment: Environment, call_texts: list[str],
                       guard: Callable[[], AbstractContextManager] = nullcontext) -> list[str]:
    """The official results of one step's calls; `guard()` is entered around each call (the worker's time limit)."""
    results = []
    for text in call_texts:
        text = official_rewrites_method_names(text, environment.method_instances)
        with guard():
            results.append(_execute_one(text, environment))
    return results


def _execute_one(text: str, environment: Environment) -> str:
    try:
        blocked = official_blocked_names(text)
        if blocked is not None:
            raise Exception(f"Function call {blocked} is not allowed.")  # noqa: TRY002 - the official text
        return official_result_text(evaluate_call_text(text, environment))
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - the official loop turns every failure into its text
        return f"{ERROR_PREFIX}{exc}"


def evaluate_call_text(text: str, environment: Environment) -> Any:
    # eval skips leading spaces and tabs of a source string; compiling the parsed tree raises the SyntaxErrors
    # eval's compile step raises (e.g. a repeated keyword). Nothing compiled is run.
    tree = ast.parse(text.lstrip(" \t"), "<string>", "eval")
    compile(tree, "<string>", "eval")
    return Interpreter(environment).value(tree.body)


class UnsupportedExpressionError(Exception):
    """deviation_unsupported_expression: a node kind the interpreter does not run."""


_UNARY: dict[type, Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
                                            ast.Invert: operator.invert}
_BINARY: dict[type, Callable[[Any, Any], Any]] = {ast.Add: operator.add, ast.Sub: operator.sub}


class Interpreter:
    def __init__(self, environment: Environment):
        self.environment = environment

    def unsupported(self, node: ast.AST, what: str = "") -> UnsupportedExpressionError:
        kind = type(node).__name__
        self.environment.deviations["deviation_unsupported_expression"] = (
            self.environment.deviations.get("deviation_unsupported_expression", 0) + 1)
        return UnsupportedExpressionError(f"{UNSUPPORTED} ({kind}{': ' + what if what else ''}); it is not executed")

    def value(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Attribute):
            return self.attribute(node)
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](self.value(node.operand))
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left = self.value(node.left)
            right = self.value(node.right)
            if not all(isinstance(side, (int, float, complex)) for side in (left, right)):
                raise self.unsupported(node, "+/- on something other than numbers")
            return _BINARY[type(node.op)](left, right)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            if any(isinstance(item, ast.Starred) for item in node.elts):
                raise self.unsupported(node, "starred item")
            items = [self.value(item) for item in node.elts]
            return items if isinstance(node, ast.List) else tuple(items) if isinstance(node, ast.Tuple) else set(items)
        if isinstance(node, ast.Dict):
            keys = [key for key in node.keys if key is not None]
            if len(keys) < len(node.keys):
                raise self.unsupported(node, "** in a dict display")
            result = {}
            for key, item in zip(keys, node.values):
                result[self.value(key)] = self.value(item)
            return result
        raise self.unsupported(node)

    def name(self, node: ast.Name) -> Any:
        if node.id in self.environment.by_name:
            return self.environment.by_name[node.id]
        if node.id in OFFICIAL_EVAL_NAMES:  # deviation_builtin_names_undefined
            self.environment.deviations["deviation_builtin_names_undefined"] = (
                self.environment.deviations.get("deviation_builtin_names_undefined", 0) + 1)
        raise NameError(f"name '{node.id}' is not defined")

    def attribute(self, node: ast.Attribute) -> Any:
        base = self.value(node.value)
        if not any(base is instance for instance in self.environment.by_name.values()):
            raise self.unsupported(node, "an attribute of something other than an environment instance")
        if node.attr.startswith("_"):
            raise self.unsupported(node, "a private attribute")
        found = getattr(base, node.attr)
        if not inspect.ismethod(found):
            raise self.unsupported(node, "an attribute that is not a method")
        return found

    def call(self, node: ast.Call) -> Any:
        function = self.value(node.func)
        if any(isinstance(arg, ast.Starred) for arg in node.args) or any(kw.arg is None for kw in node.keywords):
            raise self.unsupported(node, "* or ** unpacking")
        args = [self.value(arg) for arg in node.args]
        kwargs = {kw.arg: self.value(kw.value) for kw in node.keywords if kw.arg is not None}
        if inspect.ismethod(function) and any(function.__self__ is instance
                                              for instance in self.environment.by_name.values()):
            return function(*args, **kwargs)
        if callable(function) and not any(function is instance for instance in self.environment.by_name.values()):
            raise self.unsupported(node, "a call of something other than an environment method")
        raise TypeError(f"'{type(function).__name__}' object is not callable")


# ---- state for evidence ------------------------------------------------------------------------------------


def public_state(environment: Environment) -> dict[str, dict[str, Any]]:
    """The public attributes of each stateful class the official log shows, JSON-safe."""
    return {class_name: public_vars(instance) for class_name, instance in environment.instances.items()
            if class_name not in environment.stateless and class_name not in environment.omit_state}


def public_vars(instance: Any) -> dict[str, Any]:
    return {key: json_safe(value, (id(instance),)) for key, value in vars(instance).items() if not key.startswith("_")}


def json_safe(value: Any, path: tuple[int, ...] = ()) -> Any:
    """Plain JSON values as they are; containers item by item; datetimes as isoformat; other objects as their
    public vars; a value already on the path (a back-reference such as a directory's parent) as "<TypeName>"."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if id(value) in path:
        return f"<{type(value).__name__}>"
    inner = (*path, id(value))
    if isinstance(value, dict):
        return {str(key): json_safe(item, inner) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [json_safe(item, inner) for item in value]
    if hasattr(value, "__dict__"):
        return {key: json_safe(item, inner) for key, item in vars(value).items() if not key.startswith("_")}
    return str(value)
