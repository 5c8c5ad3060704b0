"""A format sensitivity answer decoded as the official `default_decode_ast_prompting` + `ast_parse` decode it for the
configuration's return format and tool-call tag (model_handler/utils.py, parser/json_parser.py,
parser/xml_parser.py of bfcl-eval 2026.3.23). Each step is a named rule:

- official_wraps_in_brackets (decode_common.bracketed): backticks, newlines and spaces stripped from both ends,
  `[` / `]` added where missing; for every return format.
- official_tool_call_tag_required: with the tag, the text between the first `<TOOLCALL>` and the first
  `</TOOLCALL>` after it, stripped, is what is decoded (not bracketed again); no such pair fails the decode.
- python: decode_python's rules (one call, or a list / tuple of calls, read with `ast`, never `eval`).
- json: official_json_outer_brackets (from the first `[` to the last `]`, when there are both), then the official
  JSON parser: official_json_call_list_pattern (the first `[ {…} , {…} ]` run the parser's pattern finds, when it
  finds one), official_invalid_json_is_no_call (text that is not JSON decodes to NO call, not to a failure),
  official_json_call_needs_function_and_parameters (each object of the list gives `{function: parameters}`; one
  without them fails the decode; anything not an object is skipped; a value that cannot be iterated fails).
- verbose_xml / concise_xml: official_xml_functions_block_required (the first `<functions>…</functions>`, else the
  decode fails), parsed as XML (bounded_xml_parse); each direct `<function name=…>` child gives one call:
  official_verbose_xml_params (`<param name value type>` inside `<params>`, or directly in the function when it
  has no `<params>`; a missing name is the key None, a missing value is "") and official_concise_xml_params
  (`<param name type>text</param>`, the text stripped; the name is required); values typed by
  official_xml_value_by_type (string as is, integer `int`, float `float`, boolean `== "true"` after lower-casing,
  null None, array / tuple / object / dict `ast.literal_eval`, any other type as text).

Bounds (the official code has none): an answer over MAX_CALL_TEXT_CHARS fails (bounded_answer_too_long); the
patterns are matched in linear time with the results the official regular expressions give (the JSON pattern
backtracks exponentially on hostile text); the XML is parsed with expat, and the text parsed starts at
`<functions>`, so no document type declaration (and so no entity definition, no entity expansion) can occur in
it; values are read with `ast.literal_eval`, never `eval`. Any exception a step raises fails the decode, as the
official runner turns any exception of its decoder into "decoder failed".
"""

from __future__ import annotations

import ast
import json
import xml.etree.ElementTree as ElementTree
from typing import Any

from evaluators.benchmarks.bfcl.decode_common import DecodeFailure, bracketed
from evaluators.benchmarks.bfcl.decode_python import OFFICIAL, decode_python, decode_python_source, official_strips_single_quotes
from evaluators.core.call_literals import MAX_CALL_TEXT_CHARS

TAG_OPEN, TAG_CLOSE = "<TOOLCALL>", "</TOOLCALL>"
FUNCTIONS_OPEN, FUNCTIONS_CLOSE = "<functions>", "</functions>"
XML_RETURN_FORMATS = ("verbose_xml", "concise_xml")


def official_format_sensitivity_decode(text: Any, return_format: str, tool_call_tag: bool,
                                       mode: str = OFFICIAL) -> Any:
    """The decoded calls (`[{name: {param: value}}]` when well formed); DecodeFailure naming the deciding rule."""
    if not isinstance(text, str):
        raise DecodeFailure("official_output_must_be_text", f"output is {type(text).__name__}, not text")
    if len(text) > MAX_CALL_TEXT_CHARS:
        raise DecodeFailure("bounded_answer_too_long", f"the answer is longer than {MAX_CALL_TEXT_CHARS:,} characters")
    if not tool_call_tag and return_format == "python":
        return decode_python(text, mode)
    source = bracketed(text)
    if tool_call_tag:
        source = official_tool_call_tag_required(source)
    try:
        if return_format == "python":
            return decode_python_source(official_strips_single_quotes(source), mode)
        if return_format == "json":
            return official_json_parser(official_json_outer_brackets(source))
        if return_format in XML_RETURN_FORMATS:
            root = bounded_xml_parse(official_xml_functions_block_required(source))
            reader = official_verbose_xml_params if return_format == "verbose_xml" else official_concise_xml_params
            return [{_function_name(function): reader(function)} for function in root.findall("function")]
    except DecodeFailure:
        raise
    except Exception as exc:  # noqa: BLE001 - the official runner turns any exception of its decoder into a failure
        raise DecodeFailure(f"official_{return_format}_decode_raises", f"{type(exc).__name__}: {_short(exc)}") from None
    raise ValueError(f"unknown return format {return_format!r}")


def _short(exc: BaseException, limit: int = 300) -> str:
    text = str(exc)
    return text if len(text) <= limit else text[:limit] + "…"


def _between(text: str, opening: str, closing: str) -> tuple[int, int] | None:
    """re.search(opening + "(.*?)" + closing, DOTALL) in linear time: the first opening, and the first closing
    after it (no later opening has one when the first has none); (start of the opening, start of the closing)."""
    start = text.find(opening)
    if start < 0:
        return None
    end = text.find(closing, start + len(opening))
    return None if end < 0 else (start, end)


def official_tool_call_tag_required(text: str) -> str:
    found = _between(text, TAG_OPEN, TAG_CLOSE)
    if found is None:
        raise DecodeFailure("official_tool_call_tag_required", "no <TOOLCALL>…</TOOLCALL> in the answer")
    return text[found[0] + len(TAG_OPEN):found[1]].strip()


def official_xml_functions_block_required(text: str) -> str:
    found = _between(text, FUNCTIONS_OPEN, FUNCTIONS_CLOSE)
    if found is None:
        raise DecodeFailure("official_xml_functions_block_required", "no <functions>…</functions> in the answer")
    return text[found[0]:found[1] + len(FUNCTIONS_CLOSE)]


def official_json_outer_brackets(text: str) -> str:
    """re.search(r"\\[.*\\]", DOTALL): the first `[` to the last `]` after it; the text unchanged without them."""
    start, end = text.find("["), text.rfind("]")
    return text[start:end + 1] if 0 <= start < end else text


def _next_non_space(text: str) -> list[int]:
    """For every position, the first position at or after it that is not whitespace (`\\s`: str.isspace)."""
    after = [len(text)] * (len(text) + 1)
    for index in range(len(text) - 1, -1, -1):
        after[index] = after[index + 1] if text[index].isspace() else index
    return after


def official_json_call_list_pattern(text: str) -> tuple[int, int] | None:
    """re.search(r"\\[\\s*{.*?}\\s*(?:,\\s*{.*?}\\s*)*\\]", DOTALL) in linear time: (start, end) of its match.

    At a `[` followed (after spaces) by `{`, the expression tries each later `}` in turn (lazy); after one, spaces,
    then greedily one more `, {…}` item (recursively the same), else `]`. So the match end after a `}` at c,
    END(c), is: after its spaces, a `,`, spaces and `{` whose first `}` with an END gives that END, else a `]`
    (its position + 1), else none. Computed from the right, each `}` once; the leftmost `[` with a match wins."""
    after = _next_non_space(text)
    size = len(text)
    end_after: dict[int, int | None] = {}
    first_with_end: list[int | None] = [None] * (size + 1)  # the first `}` at or after a position that has an END
    nearest: int | None = None
    for index in range(size - 1, -1, -1):
        if text[index] == "}":
            found: int | None = None
            spot = after[index + 1]
            if spot < size and text[spot] == ",":
                brace = after[spot + 1]
                if brace < size and text[brace] == "{":
                    closing = first_with_end[brace + 1]
                    if closing is not None:
                        found = end_after[closing]
            if found is None and spot < size and text[spot] == "]":
                found = spot + 1
            end_after[index] = found
            if found is not None:
                nearest = index
        first_with_end[index] = nearest
    for index, char in enumerate(text):
        if char == "[":
            brace = after[index + 1]
            if brace < size and text[brace] == "{":
                closing = first_with_end[brace + 1]
                if closing is not None:
                    end = end_after[closing]
                    assert end is not None
                    return index, end
    return None


def official_json_parser(text: str) -> list[dict[Any, Any]]:
    """parse_json_function_call."""
    found = official_json_call_list_pattern(text)
    if found is not None:
        text = text[found[0]:found[1]]
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError:
        return official_invalid_json_is_no_call()
    calls = []
    for item in parsed:
        if isinstance(item, dict):
            calls.append(official_json_call_needs_function_and_parameters(item))
    return calls


def official_invalid_json_is_no_call() -> list[dict[Any, Any]]:
    """Text that is not JSON decodes to an empty list (the checker then finds no call), not a decode failure."""
    return []


def official_json_call_needs_function_and_parameters(item: dict[str, Any]) -> dict[Any, Any]:
    try:
        return {item["function"]: item["parameters"]}
    except KeyError as exc:
        raise DecodeFailure("official_json_call_needs_function_and_parameters",
                            f"a call object without {exc}") from None


def bounded_xml_parse(text: str) -> ElementTree.Element:
    """ElementTree (expat) on the `<functions>` block: as `ET.fromstring`; the block is within the answer's bound
    and starts at its root element, so it holds no document type declaration and expands no entity."""
    parser = ElementTree.XMLParser()
    parser.feed(text)
    return parser.close()


def _function_name(function: ElementTree.Element) -> str:
    return function.attrib["name"]


def official_xml_value_by_type(raw: str, kind: str) -> Any:
    """convert_value_by_type."""
    if kind == "string":
        return raw
    if kind == "integer":
        return int(raw)
    if kind == "float":
        return float(raw)
    if kind == "boolean":
        return raw.lower() == "true"
    if kind == "null":
        return None
    if kind in ("array", "tuple", "object", "dict"):
        return ast.literal_eval(raw)
    return raw


def official_verbose_xml_params(function: ElementTree.Element) -> dict[Any, Any]:
    container = function.find("params")
    params = container.findall("param") if container is not None else function.findall("param")
    values: dict[Any, Any] = {}
    for param in params:
        values[param.attrib.get("name")] = official_xml_value_by_type(param.attrib.get("value", ""),
                                                                       param.attrib.get("type", "string"))
    return values


def official_concise_xml_params(function: ElementTree.Element) -> dict[Any, Any]:
    values: dict[Any, Any] = {}
    for param in function.findall("param"):
        name = param.attrib["name"]
        values[name] = official_xml_value_by_type((param.text or "").strip(), param.attrib.get("type", "string"))
    return values
