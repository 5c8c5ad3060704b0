"""Model output -> list of calls `[{name: {argument: value}}]`, never through eval.

The bracket syntax `[Api(key='value'), Other()]` is parsed with `ast` and resolved node by node,
as the official `decode_ast` does. Where the reference calls `eval` (an argument that is a binary
operation), we compute expressions built from constants only and refuse everything else.

Decoding is bounded: a short answer such as `[F(a=[[1]*99999]*99999)]` would otherwise decode to a
small shared list that expands to 10^10 elements when written out. What arithmetic builds is
measured as it is built (shared values counted every time they appear) and an answer over a bound
is a format error, so nothing after decoding can blow up.
"""

from __future__ import annotations

import ast
import json
import operator
import re
from typing import Any

from evaluators.core.types import ToolCall
from evaluators.core.value_size import expanded_size, leaf_size

DecodedCalls = list[dict[str, dict[Any, Any]]]

# Bounds that keep one answer cheap to decode and its decoded calls cheap to store and show. Real
# answers are far below them (the longest ACEBench gold call list is ~3,000 characters).
MAX_ANSWER_CHARS = 1_000_000  # text the extraction rules scan; a longer answer is a format error
MAX_CALL_LIST_CHARS = 100_000  # bracket text given to `ast.parse` per answer (its tree costs ~500 bytes a character)
# Elements plus characters that constant arithmetic may build in one answer, intermediate values
# included and a shared value counted every time it appears (as json.dumps writes it out). Real
# answers compute a number or a short string ('-'*20, 24*60); the rest of a decoded answer is no
# bigger than its own text, so a whole predictions file decodes to at most its size plus this much per answer.
MAX_COMPUTED_SIZE = 10_000
# ~9,000 digits, so an int fits MAX_COMPUTED_SIZE. Above Python's 4,300-digit print limit on purpose:
# the reference computes and type-checks `10 ** 5000`, so it stays a valid (unprintable) int here.
MAX_INT_BITS = 30_000
MAX_FORMAT_WIDTH = 1_000


class DecodeError(ValueError):
    """The output is not a list of calls (official error type `wrong_output_format`)."""


# ---- extraction: which part of the text is parsed -------------------------------------------

_BRACKET = re.compile(r"[\[\]]")
_STRICT_TOKEN = re.compile(r"""[\[\]'"\\]""")


def official_first_bracket_extraction(text: str, max_chars: int = MAX_CALL_LIST_CHARS) -> str | None:
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


def strict_bracket_candidates(text: str, max_chars: int = MAX_CALL_LIST_CHARS) -> list[str]:
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


# ---- resolving AST nodes into values ---------------------------------------------------------

_NUMBER = (int, float, complex)
_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.BitAnd: operator.and_,
    ast.MatMult: operator.matmul,
}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg, ast.Invert: operator.invert, ast.Not: operator.not_}
_COMPARE = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_JSON_LITERALS = {"true": True, "false": False, "null": None}
_FORMAT_WIDTH = re.compile(r"%[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")
_REPEATABLE = (str, bytes, list, tuple)
Sized = tuple[Any, int]  # a value and its expanded size


class ComputeBudget:
    """What constant arithmetic may still build for one answer (see MAX_COMPUTED_SIZE)."""

    def __init__(self, limit: int = MAX_COMPUTED_SIZE) -> None:
        self.limit = limit
        self.left = limit

    def too_big(self) -> DecodeError:
        return DecodeError(f"constant arithmetic in the answer builds more than {self.limit:,} elements and characters")

    def spend(self, size: int) -> None:
        if size > self.left:
            raise self.too_big()
        self.left -= size


def _checked_int(value: Any) -> Any:
    """Ints past MAX_INT_BITS (e.g. hex literals) could not even be printed: a format error."""
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise DecodeError(f"integer with more than {MAX_INT_BITS:,} bits")
    return value


def _computed(value: Any, budget: ComputeBudget) -> Sized:
    """A value an operation built: its size is paid from the answer's budget."""
    _checked_int(value)
    size = expanded_size(value, budget.left)
    if size is None:
        raise budget.too_big()
    budget.spend(size)
    return value, size


def _guard_operation(op: ast.operator, left: Sized, right: Sized, budget: ComputeBudget) -> None:
    """Refuse, before computing it, an operation whose result would be too large to hold."""
    (left_value, left_size), (right_value, right_size) = left, right
    both_int = isinstance(left_value, int) and isinstance(right_value, int)
    if isinstance(op, ast.Pow) and both_int and right_value > 0 and abs(left_value) > 1:
        if left_value.bit_length() * right_value > MAX_INT_BITS:
            raise DecodeError("power too large")
    if isinstance(op, ast.LShift) and both_int and left_value and right_value > 0:
        if left_value.bit_length() + right_value > MAX_INT_BITS:
            raise DecodeError("shift too large")
    if isinstance(op, ast.Mult):
        for (repeated, size), count in (((left_value, left_size), right_value), ((right_value, right_size), left_value)):
            if isinstance(repeated, _REPEATABLE) and isinstance(count, int) and size * count > budget.left:
                raise budget.too_big()
        if both_int and left_value.bit_length() + right_value.bit_length() > MAX_INT_BITS:
            raise DecodeError("product too large")
    if isinstance(op, ast.Mod) and isinstance(left_value, (str, bytes)):
        text = left_value.decode("latin-1") if isinstance(left_value, bytes) else left_value
        for width, precision in _FORMAT_WIDTH.findall(text):
            for spec in (width, precision):
                if spec == "*" or (spec and int(spec) > MAX_FORMAT_WIDTH):
                    raise DecodeError("format width too large")


def _display(node: ast.List | ast.Tuple | ast.Set, budget: ComputeBudget) -> Sized:
    items = [_evaluate(item, budget) for item in node.elts]
    try:
        value = {ast.List: list, ast.Tuple: tuple, ast.Set: set}[type(node)](item for item, _ in items)
    except TypeError as exc:
        raise DecodeError(f"invalid constant: {exc}") from None
    return value, 1 + sum(size for _, size in items)


def _dict_display(node: ast.Dict, budget: ComputeBudget) -> Sized:
    if any(key is None for key in node.keys):
        raise DecodeError("`**` inside a dict literal")
    pairs = [(_evaluate(key, budget), _evaluate(value, budget)) for key, value in zip(node.keys, node.values)]  # type: ignore[arg-type]
    try:
        value = {key: item for (key, _), (item, _) in pairs}
    except TypeError as exc:
        raise DecodeError(f"invalid constant: {exc}") from None
    return value, 1 + sum(key_size + item_size for (_, key_size), (_, item_size) in pairs)


def _evaluate(node: ast.AST, budget: ComputeBudget) -> Sized:
    """What `eval` gives for an expression built from constants only (literals, displays and
    operators), with its expanded size. Names, calls, attributes and the like are refused (the
    reference would eval them); every value an operation builds is paid from the budget."""
    if isinstance(node, ast.Constant):
        return _checked_int(node.value), leaf_size(node.value)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return _display(node, budget)
    if isinstance(node, ast.Dict):
        return _dict_display(node, budget)
    if isinstance(node, ast.UnaryOp):
        operand, _ = _evaluate(node.operand, budget)
        return _computed(_apply(lambda: _UNARY[type(node.op)](operand)), budget)
    if isinstance(node, ast.BinOp):
        left = _evaluate(node.left, budget)
        right = _evaluate(node.right, budget)
        _guard_operation(node.op, left, right, budget)
        return _computed(_apply(lambda: _BINARY[type(node.op)](left[0], right[0])), budget)
    if isinstance(node, ast.BoolOp):
        chosen: Sized = (None, 1)
        for operand_node in node.values:
            chosen = _evaluate(operand_node, budget)
            if isinstance(node.op, ast.And) != bool(chosen[0]):
                return chosen
        return chosen
    if isinstance(node, ast.Compare):
        left_value, _ = _evaluate(node.left, budget)
        for op, comparator in zip(node.ops, node.comparators):
            right_value, _ = _evaluate(comparator, budget)
            if not _apply(lambda: _COMPARE[type(op)](left_value, right_value)):  # noqa: B023 - called at once
                return False, 1
            left_value = right_value
        return True, 1
    if isinstance(node, ast.IfExp):
        return _evaluate(node.body if _evaluate(node.test, budget)[0] else node.orelse, budget)
    if isinstance(node, ast.Subscript):
        container, _ = _evaluate(node.value, budget)
        index, _ = _evaluate(node.slice, budget)
        return _computed(_apply(lambda: container[index]), budget)
    if isinstance(node, ast.Slice):
        bounds = [None if part is None else _evaluate(part, budget)[0] for part in (node.lower, node.upper, node.step)]
        return _apply(lambda: slice(*bounds)), 1
    if isinstance(node, ast.JoinedStr):
        text = "".join(_formatted_part(part, budget) for part in node.values)
        return text, leaf_size(text)
    raise DecodeError(f"unsupported expression in arithmetic: {type(node).__name__}")


_CONVERSIONS = {-1: lambda v: v, ord("s"): str, ord("r"): repr, ord("a"): ascii}


def _formatted_part(part: ast.AST, budget: ComputeBudget) -> str:
    """One piece of an f-string made of constants; a formatted piece is paid from the budget."""
    if isinstance(part, ast.Constant):
        return str(part.value)
    if not isinstance(part, ast.FormattedValue):
        raise DecodeError(f"unsupported f-string part: {type(part).__name__}")
    value, _ = _evaluate(part.value, budget)
    converted = _apply(lambda: _CONVERSIONS[part.conversion](value))
    spec = _evaluate(part.format_spec, budget)[0] if part.format_spec is not None else ""
    if any(int(width) > MAX_FORMAT_WIDTH for width in re.findall(r"\d+", spec)):
        raise DecodeError("format width too large")
    text = _apply(lambda: format(converted, spec))
    budget.spend(leaf_size(text))
    return text


def _apply(operation: Any) -> Any:
    try:
        return operation()
    except Exception as exc:  # noqa: BLE001 - whatever eval would raise makes it a format error
        raise DecodeError(f"arithmetic failed: {type(exc).__name__}") from None


def official_binop_evaluated_safely(node: ast.BinOp, budget: ComputeBudget | None = None) -> Any:
    """The reference runs `eval` on a BinOp argument; we compute the same value for expressions of
    constants (numbers, strings, bytes, lists, …), refusing names, calls and oversized results.
    Pass one budget for all the arithmetic of an answer; without one, this expression gets its own."""
    try:
        return _evaluate(node, budget or ComputeBudget())[0]
    except RecursionError:
        raise DecodeError("expression nested too deeply") from None


def official_unary_op_negates(node: ast.UnaryOp) -> Any:
    """The reference returns `-operand.value` for any unary operator, so `+5` and `~5` give -5."""
    if not isinstance(node.operand, ast.Constant):
        raise DecodeError("unary operator on a non-constant")
    value = _checked_int(node.operand.value)
    if not isinstance(value, _NUMBER):
        raise DecodeError(f"bad operand type for unary operator: {type(value).__name__}")
    return -value


def official_name_becomes_string(node: ast.Name) -> str:
    """A bare name (e.g. JSON's true/false/null) becomes its own text as a string."""
    return node.id


def strict_json_literals(node: ast.Name) -> Any:
    """JSON's true/false/null mean True/False/None; other bare names stay strings."""
    return _JSON_LITERALS.get(node.id, node.id)


def dotted_name(func: ast.AST) -> str:
    """`a.b.c` for attribute chains ending in a plain name; anything else in front is dropped."""
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts))


def official_drops_positional_args(node: ast.Call, strict: bool) -> None:
    """The reference reads keyword arguments only and silently drops positional ones."""
    if strict and node.args:
        raise DecodeError(f"positional arguments in call to {dotted_name(node.func) or '?'}")


def _resolve_call(node: ast.Call, strict: bool, budget: ComputeBudget) -> dict[Any, Any]:
    official_drops_positional_args(node, strict)
    arguments: dict[Any, Any] = {}
    for keyword in node.keywords:
        if strict and keyword.arg is None:
            raise DecodeError("`**` arguments are not allowed")
        arguments[keyword.arg] = _resolve(keyword.value, strict, budget)
    return {dotted_name(node.func): arguments}


def _written_out(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except (ValueError, RecursionError):  # an int too long to print, or nesting too deep
        raise DecodeError("subscript too large to write out") from None


def _resolve(node: ast.AST, strict: bool, budget: ComputeBudget) -> Any:
    """One argument node as the reference resolves it. Only arithmetic can make the result bigger
    than the node's own text, and that is paid from the budget."""
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else _checked_int(node.value)
    if isinstance(node, ast.UnaryOp):
        if strict:
            return _evaluate(node, budget)[0]
        return official_unary_op_negates(node)
    if isinstance(node, ast.List):
        return [_resolve(item, strict, budget) for item in node.elts]
    if isinstance(node, ast.Dict):
        resolved: dict[Any, Any] = {}
        for key, value in zip(node.keys, node.values):
            if key is None:
                raise DecodeError("`**` inside a dict literal")
            resolved_key = _resolve(key, strict, budget)
            try:
                resolved[resolved_key] = _resolve(value, strict, budget)
            except TypeError:
                raise DecodeError("unhashable dict key") from None
        return resolved
    if isinstance(node, ast.BinOp):
        return official_binop_evaluated_safely(node, budget)
    if isinstance(node, ast.Name):
        return strict_json_literals(node) if strict else official_name_becomes_string(node)
    if isinstance(node, ast.Call):
        return _resolve_call(node, strict, budget)
    if isinstance(node, ast.Tuple):
        return tuple(_resolve(item, strict, budget) for item in node.elts)
    if isinstance(node, ast.Subscript):
        return _written_out(node.value) + "[" + _written_out(node.slice) + "]"
    raise DecodeError(f"unsupported expression: {type(node).__name__}")


def _syntax_tree(source: str) -> ast.Expression:
    """`ast.parse` with its failures as plain format errors."""
    if len(source) > MAX_CALL_LIST_CHARS:
        raise DecodeError(f"the list of calls is longer than {MAX_CALL_LIST_CHARS:,} characters")
    try:
        return ast.parse(source, mode="eval")
    except SyntaxError as exc:
        if "integer string conversion" in str(exc.msg):
            raise DecodeError("invalid syntax: an integer literal has more than 4,300 digits") from None
        raise DecodeError(f"invalid syntax: {exc.msg}") from None
    except ValueError as exc:  # e.g. null bytes
        raise DecodeError(f"invalid syntax: {exc}") from None
    except (RecursionError, MemoryError):  # the parser's own depth limits
        raise DecodeError("invalid syntax: nested too deeply to parse") from None


def parse_call_list(source: str | None, strict: bool = False, budget: ComputeBudget | None = None) -> DecodedCalls:
    """`[A(x=1), B()]` -> `[{"A": {"x": 1}}, {"B": {}}]`; raises DecodeError on anything else.
    `budget` bounds the constant arithmetic (pass one to share it between an answer's candidates)."""
    if source is None:
        raise DecodeError("no bracketed list of calls found")
    body = _syntax_tree(source).body
    if not isinstance(body, (ast.List, ast.Tuple, ast.Set)):
        raise DecodeError(f"expected a list of calls, got {type(body).__name__}")
    budget = budget or ComputeBudget()
    calls: DecodedCalls = []
    try:
        for element in body.elts:
            if not isinstance(element, ast.Call):
                raise DecodeError(f"list element is not a call: {type(element).__name__}")
            calls.append(_resolve_call(element, strict, budget))
    except RecursionError:
        raise DecodeError("expression nested too deeply") from None
    return calls


def decode_text(text: str | None, multi_turn: bool, strict: bool = False) -> DecodedCalls:
    """Apply the category's extraction rule, then parse the bracket syntax. The work and the result
    are bounded by MAX_ANSWER_CHARS, MAX_CALL_LIST_CHARS and MAX_COMPUTED_SIZE."""
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
            raise DecodeError(f"no complete bracketed list of calls (of at most {MAX_CALL_LIST_CHARS:,} characters) found")
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
