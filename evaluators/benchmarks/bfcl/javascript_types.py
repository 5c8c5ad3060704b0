"""A decoded simple_javascript value (always text) converted by its parameter's declared type, as the official
checker converts it before applying the Python type and value rules.

Which doc: the official runner loads the test entries for scoring WITHOUT the language hints
(`load_dataset_entry(..., include_language_specific_hint=False)`), so the checker sees the data file's
original parameter docs: types "String", "integer", "float", "Bigint", "Boolean", "dict", "array", "any",
with `items` on arrays. `javascript_value` takes the parameter's entry as in the file.

Official rules (each a name a reader can grep):
- official_js_string_strips_quotes: a String value still wrapped in a pair of `"` or `'` loses them.
- official_js_number_patterns: integer `^-?\\d+$`, float `^-?\\d+(\\.\\d+)?$` (so `3` -> 3.0, `1e3` stays
  text), Bigint `^-?\\d+n$`, Boolean exactly `true`/`false`; no match -> the text stays.
- official_js_array_naive_split: `[...]` or `new Array(...)` split on every comma; elements converted by the
  item type (a quoted element loses its quotes), or by parse_js_value without one; `[[...], [...]]` goes
  through a 2-D pattern whose elements use parse_js_value; anything else, or any failure, stays the text.
- official_js_dict_regex: `{}` -> {}; otherwise the text up to the FIRST `}` (and on the first line only)
  is split into `key: value` pairs by a regular expression; keys lose quotes; `[...]` values parse as arrays,
  the rest lose surrounding quotes and go through parse_js_value, so `'5'` becomes the int 5; a nested
  object breaks at its first `}`.
- official_js_unconverted_stays_text.
- official_js_unsupported_type: a declared (or item) type outside the eight above makes the official
  checker raise; javascript_value raises UnsupportedJavaScriptType (none occur in the data).
ARRAY_2D (exponential backtracking on `[[1],[1],…,1]`) and the dict pair expression (linear_patterns.OBJECT_PAIR,
quadratic) are matched with the same results in linear time by linear_patterns; ARRAY_2D stays here as the
reference it is tested against.

Strict fix (mode="strict"):
- strict_js_reads_literals: a dict or array value that is one JavaScript object or array literal is read
  with the tree-sitter JavaScript parser instead of the regular expressions, so nested objects, objects
  written over several lines and commas inside strings come out right, and a quoted number stays a string
  (`{a: '5'}` -> {"a": "5"}). Keys lose their quotes; string literals lose their quotes (escapes kept, as the
  decoder keeps them); numbers become numbers; true/false booleans; arrays and objects recurse; anything
  else (identifiers, calls, null, template strings) stays its source text. Array elements of a declared item
  type: strings, objects and arrays as read, any other element's text through the item type's official
  conversion (`60` -> 60.0 for float items). Any other text converts as officially. The literal is parsed in the
  parser's child process (native_parsing.read_isolated runs read_literal_in_process there), within the parser's
  bounds; a text past them converts as officially.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from evaluators.benchmarks.bfcl.decode_javascript import javascript_parser
from evaluators.benchmarks.bfcl.linear_patterns import js_array_2d, js_object_pairs
from evaluators.benchmarks.bfcl.native_parsing import read_isolated, within_parse_bounds
from evaluators.core.registry import MODES

if TYPE_CHECKING:  # tree_sitter is imported on first use only (tree_sitter_grammars)
    from tree_sitter import Node

# Declared JavaScript type -> the BFCL Python type name whose rules the checker then applies (as the official
# JS_TYPE_CONVERSION maps them to Python types).
JAVASCRIPT_TO_PYTHON_TYPE = {
    "String": "string",
    "integer": "integer",
    "float": "float",
    "Bigint": "integer",
    "Boolean": "boolean",
    "dict": "dict",
    "array": "array",
    "any": "any",
}

INTEGER = re.compile(r"^-?\d+$")
FLOAT = re.compile(r"^-?\d+(\.\d+)?$")
BIGINT = re.compile(r"^-?\d+n$")
ARRAY_2D = re.compile(r"\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\)")
ARRAY_1D = re.compile(r"\[(.*?)\]|\bnew\s+Array\((.*?)\)")
INNER_ARRAY = re.compile(r"\[(.*?)\]")
OBJECT = re.compile(r"\{(.*?)\}")
QUOTES = ('"', "'")


class UnsupportedJavaScriptType(ValueError):
    """official_js_unsupported_type: the official checker raises on this declared or item type."""


def javascript_value(text: str, param_doc: dict, mode: str = "official") -> Any:
    """`text` (a decoded JavaScript value) converted by `param_doc["type"]` (and `param_doc["items"]["type"]`
    for arrays), the parameter's doc as in the data file. Values matching no pattern stay text."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    declared = param_doc.get("type")
    if declared not in JAVASCRIPT_TO_PYTHON_TYPE:
        raise UnsupportedJavaScriptType(f"declared JavaScript type {declared!r} cannot be converted")
    item = None
    if declared == "array":
        item = (param_doc.get("items") or {}).get("type")
        if item not in JAVASCRIPT_TO_PYTHON_TYPE:
            raise UnsupportedJavaScriptType(f"array parameter without a known items type: {item!r}")
    if mode == "strict" and declared in ("dict", "array"):
        literal = read_literal(text)
        if declared == "dict" and isinstance(literal, dict):
            return literal
        if declared == "array" and isinstance(literal, list):
            return _plain(literal) if item is None else _typed_elements(literal, item)
    return convert(text, declared, item)


def _quoted(text: str) -> bool:
    return any(text.startswith(quote) and text.endswith(quote) for quote in QUOTES)


def convert(value: str, declared: str, item: str | None = None) -> Any:
    """One value by one declared type (item: the element type of an array)."""
    if declared == "String":
        return value[1:-1] if _quoted(value) else value
    if declared == "integer":
        return int(value) if INTEGER.match(value) else value
    if declared == "float":
        return float(value) if FLOAT.match(value) else value
    if declared == "Bigint":
        return int(value[:-1]) if BIGINT.match(value) else value
    if declared == "Boolean":
        return value == "true" if value in ("true", "false") else value
    if declared == "dict":
        return parse_object(value.strip())
    if declared == "array":
        return parse_array(value.strip(), item)
    if declared == "any":
        return value
    raise UnsupportedJavaScriptType(f"declared JavaScript type {declared!r} cannot be converted")


def parse_array(code: str, item: str | None) -> list | str:
    """official_js_array_naive_split; any failure leaves the text as it is."""
    try:
        return _parse_array(code, item)
    except Exception:  # the official conversion falls back to the text on any error
        return code


def _parse_array(code: str, item: str | None) -> list | str:
    two_d = js_array_2d(code)  # ARRAY_2D.match(code).group(0), in linear time (the expression is exponential)
    if two_d is not None:
        rows = []
        for index, row in enumerate(INNER_ARRAY.findall(two_d)):
            row = row.strip()
            if index == 0 and row.startswith("["):
                row = row[1:]
            rows.append([parse_js_value(element.strip()) for element in row.split(",")])
        return rows
    match = ARRAY_1D.match(code)
    if not match:
        return code
    listed = match.group(1) if match.group(1) is not None else match.group(2)
    listed = (listed or "").strip()
    elements = listed.split(",") if listed else []
    if not item:
        return [parse_js_value(element.strip()) for element in elements]
    converted = []
    for element in elements:
        element = element.strip()
        # A quoted element goes through the item type with "String" as its own item type, as officially.
        nested = "String" if element.startswith(QUOTES) else None
        converted.append(convert(element, item, nested))
    return converted


def parse_object(code: str) -> dict | str:
    """official_js_dict_regex; a failure leaves the text as it is."""
    if code == "{}":
        return {}
    match = OBJECT.match(code)
    if not match:
        return code
    try:
        entries: dict[str, Any] = {}
        for key, value in js_object_pairs(match.group(1)):  # OBJECT_PAIR.findall, in linear time
            key = key.strip().strip("'\"")
            value = value.strip()
            if value.startswith("[") and value.endswith("]"):
                entries[key] = parse_array(value, None)
            elif value.startswith("{") and value.endswith("}"):
                entries[key] = parse_object(value)
            else:
                entries[key] = parse_js_value(value.strip("'\""))
        return entries
    except Exception:  # the official conversion falls back to the text on any error
        return code


def parse_js_value(value: str) -> Any:
    """An element without a declared type: true/false, a quoted string, int, float, else the text (Python's
    int()/float() decide, as in the official code)."""
    value = value.strip()
    if value in ("true", "false"):
        return value == "true"
    if _quoted(value):
        return value[1:-1]
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        return value


class _Literal:
    """A value read from a JavaScript literal, with the source text of each array element (strict)."""

    def __init__(self, value: Any, text: str, node_type: str):
        self.value, self.text, self.node_type = value, text, node_type


def read_literal(text: str) -> Any:
    """strict_js_reads_literals: the value of `text` when it is one object or array literal, else None; read in
    the parser's child process (native_parsing). A text past the parser's bounds (native_parsing.MAX_PARSED_CHARS,
    MAX_BRACKET_NESTING), or one the child crashes or runs out of time on, is not read: the official conversion
    applies to it."""
    if not within_parse_bounds(_wrapped(text)):
        return None
    return read_isolated(read_literal_in_process, text)


def _wrapped(text: str) -> str:
    return "(" + text.strip() + ")"


def read_literal_in_process(text: str) -> Any:
    """read_literal in this process, without the bounds: for tests and trusted text (a native crash ends the caller)."""
    try:
        data = _wrapped(text).encode("utf8")
    except UnicodeEncodeError:
        return None
    root = javascript_parser().parse(data).root_node
    tree_text = root.sexp()
    # A MISSING node is tree-sitter's repair of an unclosed literal: not one literal as written.
    if "ERROR" in tree_text or "MISSING" in tree_text or len(root.named_children) != 1:
        return None
    statement = root.named_children[0]
    if statement.type != "expression_statement" or len(statement.named_children) != 1:
        return None
    wrapped = statement.named_children[0]
    if wrapped.type != "parenthesized_expression" or len(wrapped.named_children) != 1:
        return None
    inner = wrapped.named_children[0]
    if inner.type not in ("object", "array"):
        return None
    try:
        return _literal_value(inner)
    except RecursionError:
        return None


def _node_text(node: Node) -> str:
    return node.text.decode("utf8")


def _literal_value(node: Any) -> Any:
    if node.type == "string":
        return _node_text(node)[1:-1]
    if node.type in ("true", "false"):
        return node.type == "true"
    if node.type in ("number", "unary_expression"):
        return parse_js_value(_node_text(node))
    if node.type == "array":
        return [_Literal(_literal_value(child), _node_text(child), child.type) for child in node.named_children
                if child.type != "comment"]
    if node.type == "object":
        entries: dict[str, Any] = {}
        for child in node.named_children:
            if child.type == "pair":
                key = child.child_by_field_name("key")
                key_text = _node_text(key)[1:-1] if key.type == "string" else _node_text(key)
                entries[key_text] = _plain(_literal_value(child.child_by_field_name("value")))
            elif child.type == "shorthand_property_identifier":
                entries[_node_text(child)] = _node_text(child)
        return entries
    return _node_text(node)


def _plain(value: Any) -> Any:
    """Array elements without their source texts."""
    if isinstance(value, list):
        return [_plain(element.value) for element in value]
    return value


def _typed_elements(literal: list, item: str) -> list:
    """Array elements by the declared item type: a string element is its content (a string whatever the item
    type), an object or array element as read, any other element's source text through the item type's
    official conversion (`60` -> 60.0 for float items)."""
    elements = []
    for element in literal:
        if element.node_type == "string" or element.node_type in ("object", "array"):
            elements.append(_plain(element.value))
        else:
            elements.append(convert(element.text, item))
    return elements
