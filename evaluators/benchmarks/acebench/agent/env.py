"""The agent environment of one item: the involved API objects, calls dispatched to them by name,
the execution messages the model sees and the end state saved for scoring."""

from __future__ import annotations

import ast
import copy
import inspect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from evaluators.benchmarks.acebench.agent.apis import API_CLASSES, SAVED_ATTRIBUTES
from evaluators.benchmarks.acebench.agent.apis.reminder import official_en_search_reminders_missing
from evaluators.benchmarks.acebench.agent.calls import AgentCall, ReplySyntaxError, parse_reply

MULTI_STEP_NUDGE = "Please do not ask me any questions, use the known conditions to solve the problem"
FINISH = "finish conversation"
# The text of the exception Python 3.11 raises when the reference re-reads a result it never set.
UNSET_RESULT_ERROR = "cannot access local variable 'func_call_result' where it is not associated with a value"
# The reference forgot the f-prefix on its multi_turn error message.
MULTI_TURN_ERROR = "Error during execution: {str(e)}"
# What the reference finds the method name with, in the written-out call text.
_METHOD_NAME = re.compile(r"\b([a-zA-Z_]\w*)\s*(?=\()")


@dataclass(frozen=True)
class ExecutionMessage:
    """What execution answers: a list of per-call results, or (multi_step) the nudge sentence."""

    content: list[Any] | str

    @property
    def text(self) -> str:
        """The text the model sees: the Python rendering of the list."""
        return self.content if isinstance(self.content, str) else str(self.content)

    def finishes(self) -> bool:
        """`"finish conversation" in message`: a substring for text, an equal element for a list."""
        return FINISH in self.content


class _UnknownMethod(Exception):
    """No involved object has a public method of this name."""


class AgentEnvironment:
    """The API objects of one item, created on the first executed reply and kept for the item."""

    def __init__(self, defaults: dict[str, dict[str, Any]], involved_classes: list[str], initial_config: Any, language: str):
        unknown = [name for name in involved_classes if name not in API_CLASSES]
        if unknown:
            raise ValueError(f"unknown API class(es) {', '.join(map(repr, unknown))}; known: {', '.join(API_CLASSES)}")
        if not isinstance(initial_config, dict):
            raise ValueError(f"initial_config must be an object, got {type(initial_config).__name__}")
        self.defaults = defaults
        self.involved_classes = list(involved_classes)
        self.initial_config = initial_config
        self.language = language
        self.objects: dict[str, Any] | None = None
        # The reference saves the objects only once an execution has returned them (multi_turn: one
        # without an error), so an item whose every execution failed has no end state.
        self.registered = False

    # ---- objects ---------------------------------------------------------------------------

    def _ensure_objects(self) -> dict[str, Any]:
        if self.objects is None:
            self.objects = {name: official_build_object(name, self.defaults, self.initial_config, self.language)
                            for name in self.involved_classes}
        return self.objects

    def _methods(self) -> dict[str, list[Callable[..., Any]]]:
        """Public method name -> that method on every involved object that has it, in class order."""
        methods: dict[str, list[Callable[..., Any]]] = {}
        for obj in self._ensure_objects().values():
            for name, method in inspect.getmembers(obj, inspect.ismethod):
                if not name.startswith("_") and not official_en_search_reminders_missing(self.language, name):
                    methods.setdefault(name, []).append(method)
        return methods

    # ---- running calls ---------------------------------------------------------------------

    def _run(self, call: AgentCall, methods: dict[str, list[Callable[..., Any]]], last: list[Any]) -> Any:
        """Run one call on every object that has the method (official_call_goes_to_every_object);
        `last` holds the latest result, which an unknown method returns again."""
        source = call.source()
        match = _METHOD_NAME.search(source)
        if match is None or match.group(1) not in methods:
            return official_unknown_method_repeats_previous_result(last)
        if match.start() > 0:
            raise official_prefixed_name_fails(source[: match.start()])
        for method in official_call_goes_to_every_object(methods[match.group(1)]):
            arguments = official_arguments_read_back(call)
            check_keyword_arguments(method, arguments)
            last[:] = [method(**arguments)]
        return last[0]

    def execute_multi_step(self, reply: str | None) -> ExecutionMessage:
        """multi_step: an undecodable reply gets the nudge; a failing call contributes its error text
        and the later calls still run."""
        try:
            calls = parse_reply(reply)
        except ReplySyntaxError:
            return ExecutionMessage(MULTI_STEP_NUDGE)
        methods = self._methods()
        self.registered = True
        results: list[Any] = []
        last: list[Any] = []
        for call in calls:
            try:
                results.append(self._run(call, methods, last))
            except Exception as exc:  # noqa: BLE001 - any failure is shown to the model, as in the reference
                results.append(f"Error during execution: {exc}")
        return ExecutionMessage([official_result_shown_as_json_or_text(r) for r in results])

    def execute_multi_turn(self, reply: str) -> ExecutionMessage:
        """multi_turn (the reply was routed here, so it decodes): the first failing call discards
        the reply's results (official_multi_turn_error_split_into_characters)."""
        calls = parse_reply(reply)
        methods = self._methods()
        results: list[Any] = []
        last: list[Any] = []
        for call in calls:
            try:
                results.append(self._run(call, methods, last))
            except Exception:  # noqa: BLE001 - any failure, as in the reference
                return ExecutionMessage(official_multi_turn_error_split_into_characters())
        self.registered = True
        return ExecutionMessage([official_result_shown_as_json_or_text(r) for r in results])

    # ---- end state -------------------------------------------------------------------------

    def saved_state(self) -> list[dict[str, dict[str, Any]]]:
        """`[{Class: {attribute: value}}]` for the saved attributes, as JSON would store it."""
        if not self.registered or self.objects is None:
            return []
        state = [
            {name: {attr: getattr(obj, attr) for attr in SAVED_ATTRIBUTES[name] if hasattr(obj, attr)}}
            for name, obj in self.objects.items()
        ]
        return cast(list[dict[str, dict[str, Any]]], json.loads(json.dumps(state, ensure_ascii=False, default=repr)))


# ---- the named official rules ----------------------------------------------------------------


def official_build_object(name: str, defaults: dict[str, dict[str, Any]], initial_config: dict[str, Any], language: str) -> Any:
    """A fresh object from the defaults whose loader runs twice: with the class's own config entry,
    then with the `BaseApi` entry (so the flags come from `BaseApi`; no merging of data)."""
    obj = API_CLASSES[name](copy.deepcopy(defaults[name]), language)
    obj._load_scenario(copy.deepcopy(_config_entry(initial_config, name)))
    obj._load_scenario(copy.deepcopy(_config_entry(initial_config, "BaseApi")))
    return obj


def _config_entry(initial_config: dict[str, Any], name: str) -> dict[str, Any]:
    entry = initial_config.get(name, {})
    if not isinstance(entry, dict):
        raise ValueError(f"initial_config[{name!r}] must be an object, got {type(entry).__name__}")
    return entry


def official_call_goes_to_every_object(methods: list[Callable[..., Any]]) -> list[Callable[..., Any]]:
    """A call runs on every involved object with that method (turn_on_wifi sets the flag on BaseApi
    and each phone app); the result shown is the last object's."""
    return methods


def official_unknown_method_repeats_previous_result(last: list[Any]) -> Any:
    """A method no involved object has repeats the reply's previous result; as the first call it is
    an error (the reference reads a variable it never set)."""
    if not last:
        raise UnboundLocalError(UNSET_RESULT_ERROR)
    return last[0]


def official_prefixed_name_fails(prefix: str) -> Exception:
    """A dotted name whose last part is a method (`phone.turn_on_wifi()`) runs as `phone.<object>...`
    and fails: the error eval would raise."""
    head = re.match(r"[A-Za-z_]\w*", prefix)
    return NameError(f"name '{head.group(0)}' is not defined") if head else SyntaxError("invalid syntax")


def official_arguments_read_back(call: AgentCall) -> dict[str, Any]:
    """Each argument is its written-out text read back (a fresh copy per object); a text eval would
    reject, or would call a name (a dict argument, inf, nan), is the error eval raises."""
    arguments: dict[str, Any] = {}
    for key, text in call.arguments:
        if key is None:
            raise SyntaxError("invalid syntax")
        try:
            arguments[key] = ast.literal_eval(text)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            raise _eval_error(text) from None
    return arguments


def _eval_error(text: str) -> Exception:
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return SyntaxError("invalid syntax")
    name = next((node.id for node in ast.walk(tree) if isinstance(node, ast.Name)), None)
    return NameError(f"name '{name}' is not defined") if name else ValueError(f"cannot evaluate {text[:80]}")


def check_keyword_arguments(method: Callable[..., Any], arguments: dict[str, Any]) -> None:
    """Refuse unknown and missing keyword arguments with the TypeError text Python gives."""
    signature = inspect.signature(method)
    qualname = f"{getattr(method, '__qualname__', method.__name__)}()"
    for key in arguments:
        if key not in signature.parameters:
            raise TypeError(f"{qualname} got an unexpected keyword argument '{key}'")
    missing = [name for name, p in signature.parameters.items() if p.default is inspect.Parameter.empty and name not in arguments]
    if missing:
        quoted = [f"'{name}'" for name in missing]
        listed = quoted[0] if len(quoted) == 1 else (
            f"{quoted[0]} and {quoted[1]}" if len(quoted) == 2 else ", ".join(quoted[:-1]) + f", and {quoted[-1]}")
        plural = "argument" if len(missing) == 1 else "arguments"
        raise TypeError(f"{qualname} missing {len(missing)} required positional {plural}: {listed}")


def official_result_shown_as_json_or_text(result: Any) -> Any:
    """A string stays; a dict goes through JSON (int keys become strings); anything else becomes its
    Python text — then each is read back as JSON where it parses (so 500.0 is a number, but a list
    such as a menu stays a string holding its Python repr)."""
    if isinstance(result, str):
        raw = result
    elif type(result) is dict:
        try:
            raw = json.dumps(result)
        except (TypeError, ValueError):
            raw = str(result)
    else:
        raw = str(result)
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def official_multi_turn_error_split_into_characters() -> list[str]:
    """multi_turn errors: the un-substituted message `Error during execution: {str(e)}`, split into
    single characters (the reference iterates over the string)."""
    return [official_result_shown_as_json_or_text(char) for char in MULTI_TURN_ERROR]
