"""BFCL gold answers written as model text: the "oracle" whose scores are the official ceilings (spec §7).

Every gold call keeps the first allowed value (not `""`) of each parameter it needs: the ones without `""`
among their allowed values and the ones the function doc requires (a required parameter whose only allowed
value is `""` gets the empty string explicitly); optional ones are left out. Python answers are Python call
text; Java and JavaScript answers are natural source text for the declared type of the ORIGINAL doc.
"""

from __future__ import annotations

import json
import re
from typing import Any

OPTIONAL = ""
_JAVA_ELEMENT_TYPES = {"String": "String", "integer": "int", "long": "long", "float": "float", "double": "double",
                       "boolean": "boolean", "char": "char", "short": "short", "byte": "byte", "any": "Object"}


def first_allowed(allowed: Any) -> Any:
    """The first allowed value that is not `""`; `""` when there is none."""
    if not isinstance(allowed, list):
        return allowed
    for value in allowed:
        if value != OPTIONAL:
            return value
    return OPTIONAL


def needed_arguments(gold_params: dict[str, list], doc: dict | None) -> dict[str, Any]:
    """Gold parameter -> the value the oracle gives, in gold order; parameters with no allowed value at all
    (an empty allowed list) are left out."""
    required = set((doc or {}).get("parameters", {}).get("required", []))
    chosen: dict[str, Any] = {}
    for param, allowed in gold_params.items():
        if OPTIONAL in allowed and param not in required:
            continue
        if not allowed:
            continue
        chosen[param] = _first_of_nested(first_allowed(allowed))
    return chosen


def _first_of_nested(value: Any) -> Any:
    """Allowed dicts hold allowed-value lists per key (one level; lists of such dicts too): keep the first
    value of each key that is needed."""
    if isinstance(value, dict):
        return {key: _first_of_nested(first_allowed(allowed)) for key, allowed in value.items()
                if not (isinstance(allowed, list) and OPTIONAL in allowed)}
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        return [_first_of_nested(item) for item in value]
    return value


def _doc_of(functions: list[dict], name: str) -> dict | None:
    return next((function for function in functions if function.get("name") == name), None)


def oracle_text(category: str, functions: list[dict], gold: list[dict]) -> str:
    """The oracle's answer for one item, as the model's text."""
    if category == "simple_java":
        render = java_call
    elif category == "simple_javascript":
        render = javascript_call
    else:
        render = python_call
    calls = []
    for gold_call in gold:
        name, params = next(iter(gold_call.items()))
        doc = _doc_of(functions, name)
        calls.append(render(name, needed_arguments(params, doc), doc))
    return "[" + ", ".join(calls) + "]"


def python_call(name: str, arguments: dict[str, Any], doc: dict | None = None) -> str:
    return f"{name}({', '.join(f'{param}={value!r}' for param, value in arguments.items())})"


# ---- Java ------------------------------------------------------------------------------------------------


def java_call(name: str, arguments: dict[str, Any], doc: dict | None) -> str:
    properties = (doc or {}).get("parameters", {}).get("properties", {})
    rendered = [f"{param}={java_value_text(value, properties.get(param, {}))}" for param, value in arguments.items()]
    return f"{name}({', '.join(rendered)})"


def _java_string(text: str) -> str:
    """A string literal; text that holds a double quote is Java code already (`new A("x", 1)`) and is written
    as it is, since the Java decoder keeps escapes as written."""
    return text if '"' in text else '"' + text + '"'


def java_value_text(value: Any, param_doc: dict) -> str:
    declared = param_doc.get("type", "any")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value}L" if declared == "long" else str(value)
    if isinstance(value, float):
        return f"{value!r}f" if declared == "float" else repr(value)
    if value is None:
        return "null"
    if isinstance(value, str):
        return _java_string(value) if declared in ("String", "char", "any") else value
    if isinstance(value, list):
        item_type = param_doc.get("items", {}).get("type", "any")
        if declared == "ArrayList":
            items = ", ".join(_java_element(item, item_type, quoted=True) for item in value)
            return f"new ArrayList<>(Arrays.asList({items}))"
        items = ", ".join(_java_element(item, item_type, quoted=False) for item in value)
        return f"new {_JAVA_ELEMENT_TYPES.get(item_type, item_type)}[]{{{items}}}"
    if isinstance(value, dict):
        puts = " ".join(f"put({json.dumps(key)}, {_java_element(item, 'any', quoted=True)});"
                        for key, item in value.items())
        return f"new HashMap<String, String>() {{{{ {puts} }}}}"
    return str(value)


def _java_element(value: Any, item_type: str, quoted: bool) -> str:
    """An element of an array (String elements as bare words: quoted ones keep their quotes in the official
    conversion) or of an ArrayList (String elements quoted: the conversion drops one character at each end)."""
    if isinstance(value, str):
        return '"' + value + '"' if quoted else value
    return java_value_text(value, {"type": item_type})


# ---- JavaScript ------------------------------------------------------------------------------------------


def javascript_call(name: str, arguments: dict[str, Any], doc: dict | None) -> str:
    properties = (doc or {}).get("parameters", {}).get("properties", {})
    rendered = [f"{param}={javascript_value_text(value, properties.get(param, {}))}"
                for param, value in arguments.items()]
    return f"{name}({', '.join(rendered)})"


def _js_string(text: str) -> str:
    return "'" + text + "'" if '"' in text else '"' + text + '"'


def javascript_value_text(value: Any, param_doc: dict) -> str:
    declared = param_doc.get("type", "any")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value}n" if declared == "Bigint" else str(value)
    if isinstance(value, float):
        return repr(value)
    if value is None:
        return "null"
    if isinstance(value, str):
        return _js_string(value) if declared in ("String", "any") else value
    if isinstance(value, list):
        item_type = param_doc.get("items", {}).get("type", "any")
        return "[" + ", ".join(javascript_value_text(item, {"type": item_type}) for item in value) + "]"
    if isinstance(value, dict):
        pairs = ", ".join(f"{_js_key(key)}: {javascript_value_text(item, {'type': 'any'})}" for key, item in value.items())
        return "{" + pairs + "}"
    return str(value)


def _js_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z_$][\w$]*", key) else json.dumps(key)
