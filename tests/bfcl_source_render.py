"""A BFCL Java / JavaScript gold call written out as the natural source text a model would answer with.

Used by the Java/JS decoder tests and the official-ceiling tests: each needed parameter (one whose allowed
values lack "", or that the doc requires) gets its first allowed value that is not "", written by the
parameter's declared type (the doc as in the data file). Optional parameters are left out. The answer is
the bracketed call list the prompt asks for: `[Name(p1=v1, p2=v2)]`.

Java: long `42L`, float `0.5f`, double `0.5`, boolean `true`, String `"text"`, `any` a bare identifier
when the text is one (`mapController`) or an object creation (`new A("h", 80)`), else a string literal, Array `new int[]{1, 2}` with String elements
written as bare words (`new String[]{-v, --no-strict}`, which decode and convert to the words; quoted
elements keep their quotes officially), ArrayList `new ArrayList<>(Arrays.asList("a", "b"))`, HashMap a
double-brace `put(...)` body. A string gold for a typed parameter (a variable name such as `docFields`,
or `ResultSet.TYPE_SCROLL_INSENSITIVE`) is written bare.

JavaScript: String `"text"`, `any` bare when an identifier, dotted name or call (`React.createContext()`),
else quoted; numbers as numbers (`4` for 4.0); arrays `["a", "b"]`; objects `{key: "text", n: 5, on: true}`
with string values quoted.

Also here for the tests that use it: `read_lines` (a JSON Lines data file) and `matches_allowed` (the
checker's one-level acceptance of a converted value by the gold's allowed values).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

JAVA_IDENTIFIER_CHAIN = re.compile(r"^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$")
JS_BARE = re.compile(r"^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*(\(\))?$")
JAVA_ARRAY_ELEMENT_TYPES = {"String": "String", "integer": "int", "long": "long", "char": "char", "any": "Object",
                            "boolean": "boolean", "double": "double", "float": "float", "short": "short",
                            "byte": "byte"}


def needed_arguments(gold_call: dict, func_doc: dict) -> list[tuple[str, Any]]:
    """(name, first allowed value) for every gold parameter a correct answer must give, in gold order."""
    (arguments,) = gold_call.values()
    required = func_doc.get("parameters", {}).get("required", [])
    chosen = []
    for name, allowed in arguments.items():
        if "" in allowed and name not in required:
            continue
        values = [value for value in allowed if value != ""]
        chosen.append((name, values[0] if values else ""))
    return chosen


def _java_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _java_scalar(value: Any, declared: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        if declared == "String":
            return _java_string(value)
        # A string for a typed (or any) parameter: a variable or constant name, or an object creation such
        # as `new InetSocketAddress("h", 80)`, written as the expression it names.
        if JAVA_IDENTIFIER_CHAIN.match(value) or value.startswith("new "):
            return value
        return _java_string(value)
    if declared == "long":
        return f"{value}L"
    if declared == "float":
        return f"{value}f"
    if declared == "double":
        return repr(float(value))
    return str(value)


def java_value_text(value: Any, doc: dict) -> str:
    declared = doc.get("type", "any")
    item = (doc.get("items") or {}).get("type", "any")
    if declared == "Array" and isinstance(value, list):
        elements = ", ".join(value_ if isinstance(value_, str) and item == "String" else _java_scalar(value_, item)
                             for value_ in value)
        return f"new {JAVA_ARRAY_ELEMENT_TYPES.get(item, 'Object')}[]{{{elements}}}"
    if declared == "ArrayList" and isinstance(value, list):
        elements = ", ".join(_java_string(element) if isinstance(element, str) else _java_scalar(element, item)
                             for element in value)
        return f"new ArrayList<>(Arrays.asList({elements}))"
    if declared == "HashMap" and isinstance(value, dict):
        puts = " ".join(f"put({_java_string(key)}, {_java_map_value(allowed)});" for key, allowed in value.items())
        return f"new HashMap<String, Object>() {{{{ {puts} }}}}"
    return _java_scalar(value, declared)


def _java_map_value(allowed: Any) -> str:
    value = allowed[0] if isinstance(allowed, list) and allowed else allowed
    return _java_string(value) if isinstance(value, str) else _java_scalar(value, "any")


def java_call_text(gold_call: dict, func_doc: dict) -> str:
    """`[Name(p=v, ...)]` for a simple_java gold call, values written by their declared Java types."""
    (name,) = gold_call
    properties = func_doc.get("parameters", {}).get("properties", {})
    arguments = ", ".join(f"{param}={java_value_text(value, properties.get(param, {}))}"
                          for param, value in needed_arguments(gold_call, func_doc))
    return f"[{name}({arguments})]"


def _js_scalar(value: Any, declared: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        if declared != "String" and JS_BARE.match(value):
            return value
        return json.dumps(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def javascript_value_text(value: Any, doc: dict) -> str:
    declared = doc.get("type", "any")
    item = (doc.get("items") or {}).get("type", "any")
    if isinstance(value, list):
        return "[" + ", ".join(javascript_value_text(element, {"type": item}) for element in value) + "]"
    if isinstance(value, dict):
        entries = []
        for key, allowed in value.items():
            first = next((option for option in allowed if option != ""), "") if isinstance(allowed, list) else allowed
            entries.append(f"{key}: {javascript_value_text(first, {'type': 'String'})}")
        return "{" + ", ".join(entries) + "}"
    return _js_scalar(value, declared)


def javascript_call_text(gold_call: dict, func_doc: dict) -> str:
    """`[name(p=v, ...)]` for a simple_javascript gold call, values written as JavaScript source."""
    (name,) = gold_call
    properties = func_doc.get("parameters", {}).get("properties", {})
    arguments = ", ".join(f"{param}={javascript_value_text(value, properties.get(param, {}))}"
                          for param, value in needed_arguments(gold_call, func_doc))
    return f"[{name}({arguments})]"


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def normalised(text: str) -> str:
    for character in " ,./-_*^":
        text = text.replace(character, "")
    return text.lower().replace("'", '"')


def matches_allowed(value, allowed: list) -> bool:
    """The gold's allowed values accept `value`, by the checker's one-level rules (strings normalised, dicts
    key by key, a left-out key needing "" among its allowed values)."""
    options = [option for option in allowed if option != ""]
    if isinstance(value, str):
        return value in options or normalised(value) in [normalised(o) for o in options if isinstance(o, str)]
    if isinstance(value, dict):
        return any(isinstance(option, dict) and set(value) <= set(option)
                   and all(value[key] in option[key] for key in value)
                   and all("" in option[key] for key in option if key not in value) for option in options)
    if isinstance(value, list):
        return any(isinstance(option, list) and [normalised(v) if isinstance(v, str) else v for v in value]
                   == [normalised(o) if isinstance(o, str) else o for o in option] for option in options)
    return value in options
