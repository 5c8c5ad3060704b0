"""Model output -> list of calls `[{name: {argument: value}}]`, never through eval.

Which part of the text is parsed is the reference's extraction rule for the category; the bracket syntax
`[Api(key='value'), Other()]` is then read by the core reader (evaluators.core.call_literals) under the
reference's rules, named below (OFFICIAL_RULES, STRICT_RULES). Where the reference calls `eval` (an argument
that is a binary operation), the reader computes expressions built from constants only and refuses the rest.

Decoding is bounded: a short answer such as `[F(a=[[1]*99999]*99999)]` would otherwise decode to a small
shared list that expands to 10^10 elements when written out. The reader's bounds (its MAX_* constants) and
MAX_ANSWER_CHARS make an answer over them a format error, so nothing after decoding can blow up.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from evaluators.core.call_literals import (
    CONSTANT_EXPRESSIONS,
    MAX_CALL_TEXT_CHARS,
    CallLiteralError,
    CallReader,
    CallRules,
    ComputeBudget,
    bounded_int,
    parse_call_text,
    source_text,
)
from evaluators.core.types import ToolCall

DecodedCalls = list[dict[str, dict[Any, Any]]]

# Text the extraction rules scan; a longer answer is a format error (the longest ACEBench gold call list
# is ~3,000 characters). The bracketed list they keep is bounded by the reader's MAX_CALL_TEXT_CHARS.
MAX_ANSWER_CHARS = 1_000_000

_NUMBER = (int, float, complex)
_JSON_LITERALS = {"true": True, "false": False, "null": None}


class DecodeError(ValueError):
    """The output is not a list of calls (official error type `wrong_output_format`)."""


# ---- extraction: which part of the text is parsed -------------------------------------------

_BRACKET = re.compile(r"[\[\]]")
_STRICT_TOKEN = re.compile(r"""[\[\]'"\\]""")


def official_first_bracket_extraction(text: str, max_chars: int = MAX_CALL_TEXT_CHARS) -> str | None:
    """Single-turn (newer repo): keep the first balanced `[...]`, brackets inside strings counted too.
    A list running past max_chars is a format error (it would not be parsed anyway)."""
    start = -1
    depth = 0
    for match in _BRACKET.finditer(text):
        index = match.start()
        if match.group() == "[":
            if depth == 0:
                start = index
            depth += 1
        else:
            depth -= 1
            if depth == 0 and start != -1:
                return text[start : index + 1]
        if start != -1 and index - start >= max_chars:
            raise DecodeError(f"the bracketed list of calls is longer than {max_chars:,} characters")
    return None


def official_multi_turn_deletes_all_whitespace(text: str) -> str:
    """Multi-turn (both repos): `"".join(text.split())`, which also deletes spaces inside strings."""
    return "".join(text.split())


def _strict_bracket_end(text: str, start: int, max_chars: int) -> int | None:
    """End of the `[...]` opening at start, brackets inside string literals ignored; None when it is
    not closed within max_chars characters."""
    depth, quote, escaped_at = 0, "", -1
    for match in _STRICT_TOKEN.finditer(text, start, start + max_chars):
        index, char = match.start(), match.group()
        if quote:
            if index == escaped_at:
                continue
            if char == "\\":
                escaped_at = index + 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def strict_bracket_candidates(text: str, max_chars: int = MAX_CALL_TEXT_CHARS) -> list[str]:
    """Every top-level `[...]` in order, counting brackets outside string literals only. The search
    stops at a list that is not closed within the max_chars the candidates may take in total, so the
    parsing they cost stays bounded however many there are."""
    found: list[str] = []
    position, left = 0, max_chars
    while (start := text.find("[", position)) != -1:
        end = _strict_bracket_end(text, start, left)
        if end is None:
            break
        found.append(text[start:end])
        left -= end - start
        position = end
    return found


# ---- reading the call list: the reference's rules for the core reader ------------------------


def official_unary_op_negates(node: ast.UnaryOp, reader: CallReader) -> Any:
    """The reference returns `-operand.value` for any unary operator, so `+5` and `~5` give -5."""
    if not isinstance(node.operand, ast.Constant):
        raise DecodeError("unary operator on a non-constant")
    value = node.operand.value
    if not isinstance(value, _NUMBER):
        raise DecodeError(f"bad operand type for unary operator: {type(value).__name__}")
    return -bounded_int(value)


def strict_unary_operator_applied(node: ast.UnaryOp, reader: CallReader) -> Any:
    """The operator itself, computed as constant arithmetic: `+5` -> 5, `-(1+2)` -> -3."""
    return reader.compute(node)


def official_name_becomes_string(node: ast.Name) -> str:
    """A bare name (e.g. JSON's true/false/null) becomes its own text as a string."""
    return node.id


def strict_json_literals(node: ast.Name) -> Any:
    """JSON's true/false/null mean True/False/None; other bare names stay strings."""
    return _JSON_LITERALS.get(node.id, node.id)


def official_nested_call_is_dict(node: ast.Call, reader: CallReader) -> Any:
    """A call inside an argument becomes `{name: {keyword: value}}`, with or without keywords."""
    return reader.call(node)


def official_subscript_written_out(node: ast.Subscript) -> str:
    """`d['k']` becomes the text of the value, `[`, the text of the index, `]`."""
    return source_text(node.value) + "[" + source_text(node.slice) + "]"


def official_drops_positional_args(node: ast.Call, name: str) -> None:
    """The reference reads keyword arguments only and silently drops positional ones."""


def strict_positional_and_unpacked_args_refused(node: ast.Call, name: str) -> None:
    """Strict: a positional or a `**` argument is a format error instead of vanishing."""
    if node.args:
        raise DecodeError(f"positional arguments in call to {name or '?'}")
    if any(keyword.arg is None for keyword in node.keywords):
        raise DecodeError("`**` arguments are not allowed")


# The reference `eval`s an argument that is a binary operation: computed here on constants only (also
# boolean operators, comparisons, conditionals, subscripts and formatted f-strings, which eval reads).
OFFICIAL_BINOP_EVALUATED_SAFELY = CONSTANT_EXPRESSIONS

OFFICIAL_RULES = CallRules(
    unary=official_unary_op_negates, name=official_name_becomes_string, nested_call=official_nested_call_is_dict,
    subscript=official_subscript_written_out, call_arguments=official_drops_positional_args,
    arithmetic=OFFICIAL_BINOP_EVALUATED_SAFELY,
)
STRICT_RULES = CallRules(
    unary=strict_unary_operator_applied, name=strict_json_literals, nested_call=official_nested_call_is_dict,
    subscript=official_subscript_written_out, call_arguments=strict_positional_and_unpacked_args_refused,
    arithmetic=OFFICIAL_BINOP_EVALUATED_SAFELY,
)


def _syntax_tree(source: str) -> ast.expr:
    try:
        return parse_call_text(source)
    except CallLiteralError as exc:
        raise DecodeError(str(exc)) from None


def parse_call_list(source: str | None, strict: bool = False, budget: ComputeBudget | None = None) -> DecodedCalls:
    """`[A(x=1), B()]` -> `[{"A": {"x": 1}}, {"B": {}}]`; raises DecodeError on anything else.
    `budget` bounds the constant arithmetic (pass one to share it between an answer's candidates)."""
    if source is None:
        raise DecodeError("no bracketed list of calls found")
    body = _syntax_tree(source)
    if not isinstance(body, (ast.List, ast.Tuple, ast.Set)):
        raise DecodeError(f"expected a list of calls, got {type(body).__name__}")
    reader = CallReader(STRICT_RULES if strict else OFFICIAL_RULES, budget)
    calls: DecodedCalls = []
    try:
        for element in body.elts:
            if not isinstance(element, ast.Call):
                raise DecodeError(f"list element is not a call: {type(element).__name__}")
            calls.append(reader.call(element))
    except CallLiteralError as exc:
        raise DecodeError(str(exc)) from None
    return calls


def decode_text(text: str | None, multi_turn: bool, strict: bool = False) -> DecodedCalls:
    """Apply the category's extraction rule, then parse the bracket syntax. The work and the result
    are bounded by MAX_ANSWER_CHARS and the reader's bounds."""
    if text is None:
        raise DecodeError("no output")
    if len(text) > MAX_ANSWER_CHARS:
        raise DecodeError(f"the answer is {len(text):,} characters long; at most {MAX_ANSWER_CHARS:,} are decoded")
    budget = ComputeBudget()
    if not strict:
        source = official_multi_turn_deletes_all_whitespace(text) if multi_turn else official_first_bracket_extraction(text)
        return parse_call_list(source, strict=False, budget=budget)
    candidates = strict_bracket_candidates(text)
    if not candidates:
        if "[" in text:
            raise DecodeError(f"no complete bracketed list of calls (of at most {MAX_CALL_TEXT_CHARS:,} characters) found")
        raise DecodeError("no bracketed list of calls found")
    first_error: DecodeError | None = None
    for candidate in candidates:
        try:
            return parse_call_list(candidate, strict=True, budget=budget)
        except DecodeError as exc:
            first_error = first_error or exc
    assert first_error is not None
    raise first_error


def decode_tool_calls(tool_calls: list[ToolCall]) -> DecodedCalls:
    """Native `tool_calls` -> calls; string arguments are JSON, as in the reference's FC decoding."""
    calls: DecodedCalls = []
    for call in tool_calls:
        arguments: Any = call.arguments
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as exc:
                raise DecodeError(f"arguments of {call.name} are not valid JSON: {exc.msg}") from None
            except ValueError:  # json reads numbers with int(), which refuses over 4,300 digits
                raise DecodeError(f"arguments of {call.name} hold a number with more than 4,300 digits") from None
            except RecursionError:
                raise DecodeError(f"arguments of {call.name} are nested too deeply") from None
        if not isinstance(arguments, dict):
            raise DecodeError(f"arguments of {call.name} are not a JSON object")
        calls.append({call.name: arguments})
    return calls
