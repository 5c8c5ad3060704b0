"""A decoded simple_java value (always text) converted by its parameter's declared Java type, as the official
checker converts it before applying the Python type and value rules.

Which doc: the official runner loads the test entries for scoring WITHOUT the language hints
(`load_dataset_entry(..., include_language_specific_hint=False)`), so the checker sees the data file's
original parameter docs: types such as "long", "ArrayList", "HashMap", "any", and `items` on Array/ArrayList.
`java_value` therefore takes the parameter's entry from the item's `function` as in the file (never the
prompt-side preprocessed doc, whose types are all "string").

Official rules (each a name a reader can grep):
- official_java_integer_pattern: byte/short/integer need `^-?\\d+$`; anything else stays the text.
- official_java_long_needs_L: long needs an `L`/`l` suffix (`10L` -> 10; `10` stays "10").
- official_java_float_needs_f: float needs an `f`/`F` suffix (`0.5f` -> 0.5); double takes no suffix.
- official_java_boolean_exact: exactly `true`/`false`, else the text stays.
- official_java_char_pattern_never_matches: the official char pattern cannot match; the text stays.
- official_java_array_string_keeps_quotes: `new T[]{...}` splits on commas and converts each element by
  the item type, so a String element keeps its double quotes (`new String[]{"a"}` -> ['"a"']).
- official_java_arraylist_forms: `new ArrayList<...>(Arrays.asList(...))` or a double-brace `add(...)` body;
  String/char elements lose one character at each end; `new ArrayList<>()` -> [].
- official_java_hashmap_puts: a double-brace `put("k", v)` body is read (after the decoder it is gone:
  official_java_drops_anonymous_class_body); `new HashMap<...>()` -> {}.
- official_java_unconverted_stays_text: any value that matches no pattern stays the decoded text.
- official_java_unsupported_type: Set, Hashtable, Queue and Stack (and undeclared types) make the official
  checker raise; java_value raises UnsupportedJavaType (none occur in the data).
The official regular expressions below (ARRAY, ARRAYLIST_*, HASHMAP_*) backtrack quadratically or worse on long
values; they are matched with the same results in linear time by linear_patterns (the expressions stay here as
the reference that module is tested against).

Strict fix (mode="strict"):
- strict_java_array_string_unquotes: a double-quoted String element of `new String[]{...}` loses its quotes,
  as ArrayList elements already do.
"""

from __future__ import annotations

import re
from typing import Any

from evaluators.benchmarks.bfcl.linear_patterns import (
    java_array_elements,
    java_arraylist_added,
    java_arraylist_adds_body,
    java_arraylist_as_list,
    java_hashmap_body,
    java_hashmap_empty,
    java_hashmap_puts,
)
from evaluators.core.registry import MODES

# Declared Java type -> the BFCL Python type name whose rules the checker then applies (as the official
# JAVA_TYPE_CONVERSION maps them to Python types; Set has no Python-side rules and is unsupported anyway).
JAVA_TO_PYTHON_TYPE = {
    "byte": "integer",
    "short": "integer",
    "integer": "integer",
    "long": "integer",
    "float": "float",
    "double": "float",
    "boolean": "boolean",
    "char": "string",
    "String": "string",
    "any": "any",
    "Array": "array",
    "ArrayList": "array",
    "Queue": "array",
    "Stack": "array",
    "HashMap": "dict",
    "Hashtable": "dict",
}
# Types the official checker knows but cannot convert (official_java_unsupported_type).
UNCONVERTIBLE = ("Set", "Hashtable", "Queue", "Stack")
# Declared types whose `items` type the checker reads.
WITH_ITEMS = ("Array", "ArrayList")

INTEGER = re.compile(r"^-?\d+$")
FLOAT_WITH_F = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$")
DOUBLE = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?$")
LONG_WITH_L = re.compile(r"^-?\d+[lL]$")
ARRAY = re.compile(r"new\s+\w+\[\]\s*\{(.*?)\}")
ARRAYLIST_AS_LIST = re.compile(r"new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)")
ARRAYLIST_ADDS = re.compile(r"new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}", re.DOTALL)
ARRAYLIST_ADD = re.compile(r"add\((.+?)\)")
ARRAYLIST_EMPTY = re.compile(r"new\s+ArrayList<\w*>\(\)")
HASHMAP_BODY = re.compile(r"new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}", re.DOTALL)
HASHMAP_PUT = re.compile(r"put\(\"(.*?)\",\s*(.*?)\)")
HASHMAP_EMPTY = re.compile(r"new\s+HashMap<.*?>\s*\(\)")


class UnsupportedJavaType(ValueError):
    """official_java_unsupported_type: the official checker raises on this declared type (or lacking items)."""


def java_value(text: str, param_doc: dict, mode: str = "official") -> Any:
    """`text` (a decoded Java value) converted by `param_doc["type"]` (and `param_doc["items"]["type"]` for
    Array/ArrayList), the parameter's doc as in the data file. Values matching no pattern stay text."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    declared = param_doc.get("type")
    if declared not in JAVA_TO_PYTHON_TYPE or declared in UNCONVERTIBLE:
        raise UnsupportedJavaType(f"declared Java type {declared!r} cannot be converted")
    item = None
    if declared in WITH_ITEMS:
        item = (param_doc.get("items") or {}).get("type")
        if item not in JAVA_TO_PYTHON_TYPE:
            raise UnsupportedJavaType(f"{declared} parameter without a known items type: {item!r}")
    return convert(text, declared, item, mode)


def convert(value: str, declared: str, item: str | None = None, mode: str = "official") -> Any:
    """One value by one declared type (item: the element type of Array/ArrayList)."""
    if declared in ("byte", "short", "integer"):
        return int(value) if INTEGER.match(value) else value
    if declared == "float":
        return float(re.sub(r"[fF]$", "", value)) if FLOAT_WITH_F.match(value) else value
    if declared == "double":
        return float(value) if DOUBLE.match(value) else value
    if declared == "long":
        return int(re.sub(r"[lL]$", "", value)) if LONG_WITH_L.match(value) else value
    if declared == "boolean":
        return value == "true" if value in ("true", "false") else value
    if declared == "Array":
        return parse_array(value, item, mode)
    if declared == "ArrayList":
        return parse_arraylist(value, item)
    if declared == "HashMap":
        return parse_hashmap(value)
    if declared in UNCONVERTIBLE or declared not in JAVA_TO_PYTHON_TYPE:
        raise UnsupportedJavaType(f"declared Java type {declared!r} cannot be converted")
    # char (official_java_char_pattern_never_matches), String and any: the text as decoded.
    return value


def parse_array(value: str, item: str | None, mode: str = "official") -> list | str:
    """official_java_array_string_keeps_quotes: `new T[]{a, b}` split on commas, by item type."""
    listed = java_array_elements(value)  # ARRAY.search(value).group(1), in linear time
    if listed is None:
        return value
    elements = [part.strip() for part in listed.split(",") if part.strip()]
    if item is None:
        return [parse_java_value(element) for element in elements]
    if mode == "strict" and item == "String":
        # strict_java_array_string_unquotes
        elements = [element[1:-1] if _double_quoted(element) else element for element in elements]
    return [convert(element, item, None, mode) for element in elements]


def _double_quoted(text: str) -> bool:
    return len(text) >= 2 and text.startswith('"') and text.endswith('"')


def _arraylist_element(text: str, item: str | None) -> Any:
    if item in ("char", "String"):
        return text[1:-1]
    return convert(text, item) if item else parse_java_value(text)


def parse_arraylist(value: str, item: str | None) -> list | str:
    """official_java_arraylist_forms."""
    # The official expressions, matched in linear time (linear_patterns): ARRAYLIST_AS_LIST, ARRAYLIST_ADDS, ARRAYLIST_ADD.
    listed = java_arraylist_as_list(value)
    if listed is not None:
        return [_arraylist_element(part.strip(), item) for part in listed.split(",")]
    body = java_arraylist_adds_body(value)
    if body is not None:
        return [_arraylist_element(added.strip(), item) for added in java_arraylist_added(body)]
    if ARRAYLIST_EMPTY.search(value):
        return []
    return value


def parse_hashmap(value: str) -> dict | str:
    """official_java_hashmap_puts: string keys, values by parse_java_value."""
    # The official expressions, matched in linear time (linear_patterns): HASHMAP_BODY, HASHMAP_PUT, HASHMAP_EMPTY.
    body = java_hashmap_body(value)
    if body is not None:
        entries: dict[str, Any] = {}
        if body.strip():
            for key, entry in java_hashmap_puts(body):
                entries[key] = parse_java_value(entry.strip())
        return entries
    if java_hashmap_empty(value):
        return {}
    return value


def parse_java_value(value: str) -> Any:
    """A collection element without a declared type: boolean, quoted string, long, float, int, double, else
    the text (Python's int()/float() decide the last two, as in the official code)."""
    if value in ("true", "false"):
        return value == "true"
    if value.startswith('"') and value.endswith('"'):
        return value[1:-1]
    if LONG_WITH_L.match(value):
        return int(value[:-1])
    if FLOAT_WITH_F.match(value):
        return float(re.sub(r"[fF]$", "", value))
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        return value
