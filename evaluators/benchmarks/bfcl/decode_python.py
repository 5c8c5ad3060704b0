"""Prompt-mode Python decoding: model text -> `[{name: {keyword: value}}]`, parsed with `ast`, never `eval`.

Official mode reproduces `default_decode_ast_prompting` (language Python) of bfcl-eval 2026.3.23, rule by rule:
- official_wraps_in_brackets / official_strips_backticks_newlines_spaces_only: `decode_common.bracketed`.
- official_strips_single_quotes: the bracketed text loses single quotes at both ends (a no-op once bracketed).
- official_list_of_calls_only: the text is one expression, a call or a list/tuple whose every element is a call.
- official_syntax_error_fails_decode: text `ast` cannot parse fails.
- official_dotted_call_name: the name is the attribute chain ending in a plain name (`math.factorial`); whatever
  else stands in front (`f().g`, `a[0]`) is left out of the name.
- official_drops_positional_args: only keyword arguments are read; `**kwargs` lands under a `None` key.
- Values (official_* each):
  official_ellipsis_is_string (`...` -> "..."); official_negates_any_unary_operand (`+5` -> -5, `not True` -> -1,
  `~5` -> -5; a non-numeric or non-constant operand fails); official_name_value_is_string (`x=true` -> "true");
  official_computes_binop_on_constants (what the official `eval` of the operation gives, computed here on
  literal operands only, with size bounds; a name, call or attribute inside fails the decode, even where the
  official `eval` would find it among its module's names, e.g. `abs(-5) + 1`);
  official_nested_call_without_keywords_is_text (`g(1)` -> "g(1)" as `ast.unparse` writes it);
  official_nested_call_is_dict (`g(a=1)` -> {"g": {"a": 1}}); official_subscript_is_text (`d["k"]` ->
  "d['k']": unparse of the value, `[`, unparse of the index, `]`); official_tuple_stays_tuple;
  official_lambda_and_attribute_values_fail_decode; official_unsupported_value_fails_decode (sets, f-strings,
  comparisons, comprehensions, starred items, `**` in a dict literal).

The walk, the arithmetic and the bounds are the core reader's (evaluators.core.call_literals), given the rules
above as OFFICIAL_RULES / STRICT_RULES. Its bounds (the official code has none; real answers are far below them):
an answer over MAX_CALL_TEXT_CHARS fails official_syntax_error_fails_decode, values nested past MAX_NESTING_DEPTH
too; an int over MAX_INT_BITS and arithmetic building more than MAX_COMPUTED_SIZE fail
official_computes_binop_on_constants instead of being built.

Strict mode (`mode="strict"`) fixes what is a bug, each a named rule:
- strict_reads_language_fenced_block: a whole answer that is one ```python / ```py / ```json fenced block is read
  from inside the fence (official: the tag word stays and the decode fails).
- strict_unary_operator_applied: `+5` -> 5, `not True` -> False, `~5` -> -6, `-5` -> -5 (the real operator).
- strict_positional_args_refused: a positional argument fails the decode instead of silently vanishing.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from evaluators.benchmarks.bfcl.decode_common import DecodeFailure, bracketed
from evaluators.core.call_literals import (
    LITERAL_ARITHMETIC,
    UNARY_OPERATORS,
    ArithmeticRefusedError,
    CallLiteralError,
    CallReader,
    CallRules,
    NestedTooDeepError,
    TooLargeError,
    UnsupportedValueError,
    bounded_int,
    dotted_name,
    parse_call_text,
    source_text,
)

OFFICIAL = "official"
STRICT = "strict"

DecodedCalls = list[dict[str, dict[Any, Any]]]

_NUMBER = (int, float, complex)
_LANGUAGE_FENCE = re.compile(r"\A\s*```[ \t]*(?:python|py|json)[ \t]*\r?\n(?P<body>.*?)\r?\n?[ \t]*```\s*\Z",
                             re.DOTALL | re.IGNORECASE)

SYNTAX_RULE = "official_syntax_error_fails_decode"
BINOP_RULE = "official_computes_binop_on_constants"
UNARY_RULE = "official_negates_any_unary_operand"
UNSUPPORTED_RULE = "official_unsupported_value_fails_decode"
LAMBDA_ATTRIBUTE_RULE = "official_lambda_and_attribute_values_fail_decode"


def decode_python(text: str, mode: str = OFFICIAL) -> DecodedCalls:
    """The model's text as a list of `{name: {keyword: value}}`; raises DecodeFailure naming the deciding rule."""
    if not isinstance(text, str):
        raise DecodeFailure("official_output_must_be_text", f"output is {type(text).__name__}, not text")
    if mode == STRICT:
        text = strict_reads_language_fenced_block(text)
    return decode_python_source(official_strips_single_quotes(bracketed(text)), mode)


def decode_python_source(source: str, mode: str = OFFICIAL) -> DecodedCalls:
    """The calls of a text already prepared as the official `ast_parse` receives it (bracketed, or the inside of a
    tool-call tag, which is not bracketed again), quotes stripped: one call, or a list/tuple of calls."""
    strict = mode == STRICT
    body = _parse(source)
    elements = [body] if isinstance(body, ast.Call) else getattr(body, "elts", None)
    if elements is None:
        raise DecodeFailure("official_list_of_calls_only", f"expected a list of calls, got {type(body).__name__}")
    reader = CallReader(STRICT_RULES if strict else OFFICIAL_RULES)
    calls: DecodedCalls = []
    try:
        for element in elements:
            if not isinstance(element, ast.Call):
                raise DecodeFailure("official_list_of_calls_only",
                                    f"list element is not a call: {type(element).__name__}")
            calls.append(reader.call(element))
    except CallLiteralError as error:
        raise DecodeFailure(_rule_of(error), str(error)) from None
    return calls


def _rule_of(error: CallLiteralError) -> str:
    """The official_* rule a refusal of the core reader falls under."""
    if isinstance(error, NestedTooDeepError):
        return SYNTAX_RULE
    if isinstance(error, UnsupportedValueError):
        return LAMBDA_ATTRIBUTE_RULE if error.node_kind in ("Lambda", "Attribute") else UNSUPPORTED_RULE
    if isinstance(error, (ArithmeticRefusedError, TooLargeError)):
        return BINOP_RULE
    return UNSUPPORTED_RULE


def strict_reads_language_fenced_block(text: str) -> str:
    """A whole answer of one ```python / ```py / ```json fence -> the fence's content; other text unchanged."""
    match = _LANGUAGE_FENCE.match(text)
    return match.group("body") if match else text


def official_strips_single_quotes(source: str) -> str:
    """Surrounding whitespace and single quotes go (the official code removes quotes a model may wrap around
    its answer); after bracketing the text starts with `[` and ends with `]`, so nothing changes."""
    return source.strip().strip("'")


def _parse(source: str) -> ast.expr:
    try:
        return parse_call_text(source)
    except CallLiteralError as error:
        raise DecodeFailure(SYNTAX_RULE, str(error)) from None


# official_dotted_call_name: `a.b.c` for an attribute chain ending in a plain name; anything else in front is
# left out (the core reader names every call so).
official_dotted_call_name = dotted_name


def official_drops_positional_args(node: ast.Call, name: str) -> None:
    """Only keyword arguments are read; positional ones vanish and `**kwargs` lands under a None key."""


def strict_positional_args_refused(node: ast.Call, name: str) -> None:
    if node.args:
        raise DecodeFailure("strict_positional_args_refused", f"positional argument in the call to {name or '?'}")


def official_negates_any_unary_operand(node: ast.UnaryOp, reader: CallReader) -> Any:
    """The official decoder returns `-operand` for every unary operator: `+5` -> -5, `not True` -> -1."""
    operand = node.operand
    if not isinstance(operand, ast.Constant) or not isinstance(operand.value, _NUMBER):
        raise DecodeFailure(UNARY_RULE, "a unary operator on something other than a number")
    return -bounded_int(operand.value)


def strict_unary_operator_applied(node: ast.UnaryOp, reader: CallReader) -> Any:
    """The operator itself on a constant operand: `+5` -> 5, `not True` -> False, `~5` -> -6."""
    operand = node.operand
    if not isinstance(operand, ast.Constant) or not isinstance(operand.value, _NUMBER):
        raise DecodeFailure("strict_unary_operator_applied", "a unary operator on something other than a number")
    value = bounded_int(operand.value)
    try:
        return UNARY_OPERATORS[type(node.op)](value)
    except TypeError as exc:  # ~ on a float
        raise DecodeFailure("strict_unary_operator_applied", f"unary operator failed: {exc}") from None


def official_name_value_is_string(node: ast.Name) -> str:
    """A bare name is its identifier as text: `x=true` gives "true", `x=my_var` gives "my_var"."""
    return node.id


def official_nested_call_text_or_dict(node: ast.Call, reader: CallReader) -> Any:
    """official_nested_call_without_keywords_is_text, else official_nested_call_is_dict."""
    if not node.keywords:
        return official_nested_call_without_keywords_is_text(node)
    return reader.call(node)


def official_nested_call_without_keywords_is_text(node: ast.Call) -> str:
    """A nested call without keywords is its text as `ast.unparse` writes it (`g( 1 )` -> "g(1)")."""
    return _unparsed(node)


def official_subscript_is_text(node: ast.Subscript) -> str:
    """Unparse of the subscripted value + `[` + unparse of the index + `]` (`d[1, 2]` -> "d[(1, 2)]")."""
    return _unparsed(node.value) + "[" + _unparsed(node.slice) + "]"


def _unparsed(node: ast.AST) -> str:
    try:
        return source_text(node)
    except CallLiteralError as error:
        raise DecodeFailure(UNSUPPORTED_RULE, str(error)) from None


# official_computes_binop_on_constants: the official decoder `eval`s a binary operation's source; the core reader
# computes the same value when every operand is a literal (numbers, strings, bytes, None, lists, tuples, dicts,
# sets, unary operators, nested operations, f-strings of plain text) and refuses names, calls, attributes,
# comparisons, conditionals and anything whose result would pass the size bounds.
OFFICIAL_COMPUTES_BINOP_ON_CONSTANTS = LITERAL_ARITHMETIC

OFFICIAL_RULES = CallRules(
    unary=official_negates_any_unary_operand, name=official_name_value_is_string,
    nested_call=official_nested_call_text_or_dict, subscript=official_subscript_is_text,
    call_arguments=official_drops_positional_args, arithmetic=OFFICIAL_COMPUTES_BINOP_ON_CONSTANTS,
)
STRICT_RULES = CallRules(
    unary=strict_unary_operator_applied, name=official_name_value_is_string,
    nested_call=official_nested_call_text_or_dict, subscript=official_subscript_is_text,
    call_arguments=strict_positional_args_refused, arithmetic=OFFICIAL_COMPUTES_BINOP_ON_CONSTANTS,
)
