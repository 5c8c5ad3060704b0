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

Bounds (the official code has none; real answers are far below them): an answer over MAX_SOURCE_CHARS, an int
over MAX_INT_BITS and a computed value over MAX_COMPUTED_SIZE fail the decode instead of being built.

Strict mode (`mode="strict"`) fixes what is a bug, each a named rule:
- strict_reads_language_fenced_block: a whole answer that is one ```python / ```py / ```json fenced block is read
  from inside the fence (official: the tag word stays and the decode fails).
- strict_unary_operator_applied: `+5` -> 5, `not True` -> False, `~5` -> -6, `-5` -> -5 (the real operator).
- strict_positional_args_refused: a positional argument fails the decode instead of silently vanishing.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable
from typing import Any

from evaluators.benchmarks.bfcl.decode_common import DecodeFailure, bracketed
from evaluators.core.value_size import expanded_size as _expanded_size
from evaluators.core.value_size import leaf_size

OFFICIAL = "official"
STRICT = "strict"

DecodedCalls = list[dict[str, dict[Any, Any]]]

# Bounds on what constant arithmetic may build, so a short answer such as `[f(x=[1]*10**9)]` is refused rather
# than computed. Real answers compute a number or a short string; both bounds are far above that.
MAX_COMPUTED_SIZE = 100_000  # elements plus characters of one computed value, shared parts counted each time
MAX_INT_BITS = 30_000  # ~9,000 digits
MAX_FORMAT_WIDTH = 1_000  # widths and precisions in `'%5d' % x` formatting
MAX_SOURCE_CHARS = 200_000  # bracketed text handed to `ast.parse` (its tree costs ~500 bytes a character)

_NUMBER = (int, float, complex)
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift, ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.BitAnd: operator.and_,
    ast.MatMult: operator.matmul,
}
_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.UAdd: operator.pos, ast.USub: operator.neg, ast.Invert: operator.invert, ast.Not: operator.not_,
}
_REPEATABLE = (str, bytes, list, tuple)
_FORMAT_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")
_LANGUAGE_FENCE = re.compile(r"\A\s*```[ \t]*(?:python|py|json)[ \t]*\r?\n(?P<body>.*?)\r?\n?[ \t]*```\s*\Z",
                             re.DOTALL | re.IGNORECASE)

BINOP_RULE = "official_computes_binop_on_constants"
UNARY_RULE = "official_negates_any_unary_operand"


def decode_python(text: str, mode: str = OFFICIAL) -> DecodedCalls:
    """The model's text as a list of `{name: {keyword: value}}`; raises DecodeFailure naming the deciding rule."""
    if not isinstance(text, str):
        raise DecodeFailure("official_output_must_be_text", f"output is {type(text).__name__}, not text")
    strict = mode == STRICT
    if strict:
        text = strict_reads_language_fenced_block(text)
    source = official_strips_single_quotes(bracketed(text))
    body = _parse(source)
    elements = [body] if isinstance(body, ast.Call) else getattr(body, "elts", None)
    if elements is None:
        raise DecodeFailure("official_list_of_calls_only", f"expected a list of calls, got {type(body).__name__}")
    calls: DecodedCalls = []
    try:
        for element in elements:
            if not isinstance(element, ast.Call):
                raise DecodeFailure("official_list_of_calls_only",
                                    f"list element is not a call: {type(element).__name__}")
            calls.append(_resolve_call(element, strict))
    except RecursionError:
        raise DecodeFailure("official_syntax_error_fails_decode", "expression nested too deeply") from None
    return calls


def strict_reads_language_fenced_block(text: str) -> str:
    """A whole answer of one ```python / ```py / ```json fence -> the fence's content; other text unchanged."""
    match = _LANGUAGE_FENCE.match(text)
    return match.group("body") if match else text


def official_strips_single_quotes(source: str) -> str:
    """Surrounding whitespace and single quotes go (the official code removes quotes a model may wrap around
    its answer); after bracketing the text starts with `[` and ends with `]`, so nothing changes."""
    return source.strip().strip("'")


def _parse(source: str) -> ast.expr:
    rule = "official_syntax_error_fails_decode"
    if len(source) > MAX_SOURCE_CHARS:
        raise DecodeFailure(rule, f"the answer is longer than {MAX_SOURCE_CHARS:,} characters")
    try:
        return ast.parse(source, mode="eval").body
    except SyntaxError as exc:
        raise DecodeFailure(rule, f"invalid syntax: {exc.msg}") from None
    except ValueError as exc:  # null bytes
        raise DecodeFailure(rule, f"invalid syntax: {exc}") from None
    except (RecursionError, MemoryError):
        raise DecodeFailure(rule, "nested too deeply to parse") from None


def official_dotted_call_name(func: ast.expr) -> str:
    """`a.b.c` for an attribute chain ending in a plain name; anything else in front is left out."""
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts))


def _resolve_call(node: ast.Call, strict: bool) -> dict[str, dict[Any, Any]]:
    """official_drops_positional_args (strict: strict_positional_args_refused)."""
    name = official_dotted_call_name(node.func)
    if strict and node.args:
        raise DecodeFailure("strict_positional_args_refused", f"positional argument in the call to {name or '?'}")
    arguments: dict[Any, Any] = {}
    for keyword in node.keywords:
        arguments[keyword.arg] = _resolve(keyword.value, strict)
    return {name: arguments}


def _resolve(node: ast.expr, strict: bool) -> Any:
    """One argument value as the official decoder resolves it."""
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else _bounded_int(node.value)  # official_ellipsis_is_string
    if isinstance(node, ast.UnaryOp):
        return strict_unary_operator_applied(node) if strict else official_negates_any_unary_operand(node)
    if isinstance(node, ast.List):
        return [_resolve(item, strict) for item in node.elts]
    if isinstance(node, ast.Dict):
        return _resolve_dict(node, strict)
    if isinstance(node, ast.BinOp):
        return official_computes_binop_on_constants(node)
    if isinstance(node, ast.Name):
        return official_name_value_is_string(node)
    if isinstance(node, ast.Call):
        if not node.keywords:
            return official_nested_call_without_keywords_is_text(node)
        return _resolve_call(node, strict)  # official_nested_call_is_dict
    if isinstance(node, ast.Tuple):
        return tuple(_resolve(item, strict) for item in node.elts)  # official_tuple_stays_tuple
    if isinstance(node, (ast.Lambda, ast.Attribute)):
        raise DecodeFailure("official_lambda_and_attribute_values_fail_decode",
                            f"a {type(node).__name__.lower()} is not a value the official decoder reads")
    if isinstance(node, ast.Subscript):
        return official_subscript_is_text(node)
    raise DecodeFailure("official_unsupported_value_fails_decode", f"unsupported value: {type(node).__name__}")


def _resolve_dict(node: ast.Dict, strict: bool) -> dict[Any, Any]:
    resolved: dict[Any, Any] = {}
    for key, value in zip(node.keys, node.values):
        if key is None:
            raise DecodeFailure("official_unsupported_value_fails_decode", "`**` inside a dict literal")
        resolved_key = _resolve(key, strict)
        resolved_value = _resolve(value, strict)
        try:
            resolved[resolved_key] = resolved_value
        except TypeError:
            raise DecodeFailure("official_unsupported_value_fails_decode", "unhashable dict key") from None
    return resolved


def official_negates_any_unary_operand(node: ast.UnaryOp) -> Any:
    """The official decoder returns `-operand` for every unary operator: `+5` -> -5, `not True` -> -1."""
    operand = node.operand
    if not isinstance(operand, ast.Constant) or not isinstance(operand.value, _NUMBER):
        raise DecodeFailure(UNARY_RULE, "a unary operator on something other than a number")
    return -_bounded_int(operand.value)


def strict_unary_operator_applied(node: ast.UnaryOp) -> Any:
    """The operator itself on a constant operand: `+5` -> 5, `not True` -> False, `~5` -> -6."""
    operand = node.operand
    if not isinstance(operand, ast.Constant) or not isinstance(operand.value, _NUMBER):
        raise DecodeFailure("strict_unary_operator_applied", "a unary operator on something other than a number")
    value = _bounded_int(operand.value)
    try:
        return _UNARY[type(node.op)](value)
    except TypeError as exc:  # ~ on a float
        raise DecodeFailure("strict_unary_operator_applied", f"unary operator failed: {exc}") from None


def official_name_value_is_string(node: ast.Name) -> str:
    """A bare name is its identifier as text: `x=true` gives "true", `x=my_var` gives "my_var"."""
    return node.id


def official_nested_call_without_keywords_is_text(node: ast.Call) -> str:
    """A nested call without keywords is its text as `ast.unparse` writes it (`g( 1 )` -> "g(1)")."""
    return _unparsed(node)


def official_subscript_is_text(node: ast.Subscript) -> str:
    """Unparse of the subscripted value + `[` + unparse of the index + `]` (`d[1, 2]` -> "d[(1, 2)]")."""
    return _unparsed(node.value) + "[" + _unparsed(node.slice) + "]"


def _unparsed(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except (ValueError, RecursionError):  # an int too long to print, or nesting too deep
        raise DecodeFailure("official_unsupported_value_fails_decode", "value too large to write out") from None


def _bounded_int(value: Any) -> Any:
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise DecodeFailure(BINOP_RULE, f"integer with more than {MAX_INT_BITS:,} bits refused")
    return value


# ---- official_computes_binop_on_constants: what eval gives, computed on literals only ----------------------


def official_computes_binop_on_constants(node: ast.BinOp) -> Any:
    """The official decoder `eval`s a binary operation's source; we compute the same value when every operand is
    a literal (numbers, strings, bytes, None, lists, tuples, dicts, sets, unary operators, nested operations) and
    refuse names, calls, attributes and anything whose result would pass the size bounds."""
    try:
        return _evaluate(node)[0]
    except RecursionError:
        raise DecodeFailure(BINOP_RULE, "expression nested too deeply") from None


Sized = tuple[Any, int]  # a value and its expanded size


def expanded_size(value: Any, limit: int = MAX_COMPUTED_SIZE) -> int | None:
    """core.value_size.expanded_size with this decoder's bound."""
    return _expanded_size(value, limit)


def _sized(value: Any) -> Sized:
    _bounded_int(value)
    size = expanded_size(value)
    if size is None:
        raise DecodeFailure(BINOP_RULE, f"computed value larger than {MAX_COMPUTED_SIZE:,} elements refused")
    return value, size


def _apply(operation: Callable[[], Any]) -> Any:
    try:
        return operation()
    except Exception as exc:  # noqa: BLE001 - whatever eval would raise makes the official decode fail too
        raise DecodeFailure(BINOP_RULE, f"operation failed: {type(exc).__name__}: {exc}") from None


def _guard(op: ast.operator, left: Sized, right: Sized) -> None:
    """Refuse, before computing it, an operation whose result would be too large to hold."""
    (left_value, left_size), (right_value, right_size) = left, right
    both_int = isinstance(left_value, int) and isinstance(right_value, int)
    too_large = DecodeFailure(BINOP_RULE, "result too large: refused, not computed")
    if isinstance(op, ast.Pow) and both_int and right_value > 0 and abs(left_value) > 1:
        if left_value.bit_length() * right_value > MAX_INT_BITS:
            raise too_large
    if isinstance(op, ast.LShift) and both_int and left_value and right_value > 0:
        if left_value.bit_length() + right_value > MAX_INT_BITS:
            raise too_large
    if isinstance(op, ast.Mult):
        for repeated, size, count in ((left_value, left_size, right_value), (right_value, right_size, left_value)):
            if isinstance(repeated, _REPEATABLE) and isinstance(count, int) and size * count > MAX_COMPUTED_SIZE:
                raise too_large
        if both_int and left_value.bit_length() + right_value.bit_length() > MAX_INT_BITS:
            raise too_large
    if isinstance(op, ast.Mod) and isinstance(left_value, (str, bytes)):
        text = left_value.decode("latin-1") if isinstance(left_value, bytes) else left_value
        for width, precision in _FORMAT_SPEC.findall(text):
            for spec in (width, precision):
                if spec == "*" or (spec and int(spec) > MAX_FORMAT_WIDTH):
                    raise too_large


def _evaluate(node: ast.AST) -> Sized:
    if isinstance(node, ast.Constant):
        return _bounded_int(node.value), leaf_size(node.value)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = [_evaluate(item) for item in node.elts]
        build = {ast.List: list, ast.Tuple: tuple, ast.Set: set}[type(node)]
        return _apply(lambda: build(value for value, _ in items)), 1 + sum(size for _, size in items)
    if isinstance(node, ast.Dict):
        if any(key is None for key in node.keys):
            raise DecodeFailure(BINOP_RULE, "`**` inside a dict literal")
        pairs = [(_evaluate(key), _evaluate(value)) for key, value in zip(node.keys, node.values)]  # type: ignore[arg-type]
        value = _apply(lambda: {key: item for (key, _), (item, _) in pairs})
        return value, 1 + sum(key_size + item_size for (_, key_size), (_, item_size) in pairs)
    if isinstance(node, ast.UnaryOp):
        operand, _ = _evaluate(node.operand)
        return _sized(_apply(lambda: _UNARY[type(node.op)](operand)))
    if isinstance(node, ast.BinOp):
        left, right = _evaluate(node.left), _evaluate(node.right)
        _guard(node.op, left, right)
        return _sized(_apply(lambda: _BINARY[type(node.op)](left[0], right[0])))
    if isinstance(node, ast.JoinedStr) and all(isinstance(part, ast.Constant) for part in node.values):
        text = "".join(str(part.value) for part in node.values)  # type: ignore[attr-defined]
        return text, leaf_size(text)
    raise DecodeFailure(BINOP_RULE, f"operand is not a literal: {type(node).__name__} (never evaluated)")
