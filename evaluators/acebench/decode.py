"""Model output -> list of calls `[{name: {argument: value}}]`, never through eval.

The bracket syntax `[Api(key='value'), Other()]` is parsed with `ast` and resolved node by node,
as the official `decode_ast` does. Where the reference calls `eval` (an argument that is a binary
operation), we compute expressions built from constants only and refuse everything else.
"""

from __future__ import annotations

import ast
import json
import operator
import re
from typing import Any

from evaluators.core.types import ToolCall

DecodedCalls = list[dict[str, dict[Any, Any]]]

MAX_STRING = 100_000


class DecodeError(ValueError):
    """The output is not a list of calls (official error type `wrong_output_format`)."""


# ---- extraction: which part of the text is parsed -------------------------------------------


def official_first_bracket_extraction(text: str) -> str | None:
    """Single-turn (newer repo): keep the first balanced `[...]`, brackets inside strings counted too."""
    start = -1
    depth = 0
    for index, char in enumerate(text):
        if char == "[":
            if depth == 0:
                start = index
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0 and start != -1:
                return text[start : index + 1]
    return None


def official_multi_turn_deletes_all_whitespace(text: str) -> str:
    """Multi-turn (both repos): `"".join(text.split())`, which also deletes spaces inside strings."""
    return "".join(text.split())


def strict_bracket_candidates(text: str) -> list[str]:
    """Every top-level `[...]` in order, counting brackets outside string literals only."""
    found: list[str] = []
    start, depth, quote, escaped = -1, 0, "", False
    for index, char in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
            continue
        if char in "'\"" and depth > 0:
            quote = char
        elif char == "[":
            if depth == 0:
                start = index
            depth += 1
        elif char == "]" and depth > 0:
            depth -= 1
            if depth == 0:
                found.append(text[start : index + 1])
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
MAX_INT_BITS = 100_000  # about 30,000 digits: printable, cheap to convert
_FORMAT_WIDTH = re.compile(r"%[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")


def _size(value: Any) -> int:
    if isinstance(value, (str, bytes, list, tuple)):
        return len(value)
    return 1


def _guard_operation(op: ast.operator, left: Any, right: Any) -> None:
    """Refuse the few constant operations whose result would be too large to hold."""
    if isinstance(op, ast.Pow) and isinstance(left, int) and isinstance(right, int) and right > 0:
        if abs(left) > 1 and left.bit_length() * right > MAX_INT_BITS:
            raise DecodeError("power too large")
    if isinstance(op, ast.LShift) and isinstance(left, int) and isinstance(right, int) and right > MAX_INT_BITS:
        raise DecodeError("shift too large")
    if isinstance(op, ast.Mult):
        for seq, count in ((left, right), (right, left)):
            if isinstance(seq, (str, bytes, list, tuple)) and isinstance(count, int) and _size(seq) * count > MAX_STRING:
                raise DecodeError("repetition too large")
        if isinstance(left, int) and isinstance(right, int) and left.bit_length() + right.bit_length() > MAX_INT_BITS:
            raise DecodeError("product too large")
    if isinstance(op, ast.Mod) and isinstance(left, (str, bytes)):
        text = left.decode("latin-1") if isinstance(left, bytes) else left
        for width, precision in _FORMAT_WIDTH.findall(text):
            for spec in (width, precision):
                if spec == "*" or (spec and int(spec) > 1000):
                    raise DecodeError("format width too large")


def _safe_constant_arithmetic(node: ast.AST) -> Any:
    """What `eval` gives for an expression built from constants only: literals, displays and
    operators. Names, calls, attributes and the like are refused (the reference would eval them)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = [_safe_constant_arithmetic(item) for item in node.elts]
        try:
            return {ast.List: list, ast.Tuple: tuple, ast.Set: set}[type(node)](items)
        except TypeError as exc:
            raise DecodeError(f"invalid constant: {exc}") from None
    if isinstance(node, ast.Dict):
        if any(key is None for key in node.keys):
            raise DecodeError("`**` inside a dict literal")
        try:
            return {_safe_constant_arithmetic(k): _safe_constant_arithmetic(v) for k, v in zip(node.keys, node.values)}  # type: ignore[arg-type]
        except TypeError as exc:
            raise DecodeError(f"invalid constant: {exc}") from None
    if isinstance(node, ast.UnaryOp):
        operand = _safe_constant_arithmetic(node.operand)
        return _apply(lambda: _UNARY[type(node.op)](operand))
    if isinstance(node, ast.BinOp):
        left = _safe_constant_arithmetic(node.left)
        right = _safe_constant_arithmetic(node.right)
        _guard_operation(node.op, left, right)
        return _apply(lambda: _BINARY[type(node.op)](left, right))
    if isinstance(node, ast.BoolOp):
        value: Any = None
        for operand_node in node.values:
            value = _safe_constant_arithmetic(operand_node)
            if isinstance(node.op, ast.And) != bool(value):
                return value
        return value
    if isinstance(node, ast.Compare):
        left = _safe_constant_arithmetic(node.left)
        for op, comparator in zip(node.ops, node.comparators):
            right = _safe_constant_arithmetic(comparator)
            if not _apply(lambda: _COMPARE[type(op)](left, right)):  # noqa: B023 - called at once
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        chosen = node.body if _safe_constant_arithmetic(node.test) else node.orelse
        return _safe_constant_arithmetic(chosen)
    if isinstance(node, ast.Subscript):
        container = _safe_constant_arithmetic(node.value)
        index = _safe_constant_arithmetic(node.slice)
        return _apply(lambda: container[index])
    if isinstance(node, ast.Slice):
        bounds = [None if part is None else _safe_constant_arithmetic(part) for part in (node.lower, node.upper, node.step)]
        return _apply(lambda: slice(*bounds))
    if isinstance(node, ast.JoinedStr):
        return "".join(_formatted_part(part) for part in node.values)
    raise DecodeError(f"unsupported expression in arithmetic: {type(node).__name__}")


_CONVERSIONS = {-1: lambda v: v, ord("s"): str, ord("r"): repr, ord("a"): ascii}


def _formatted_part(part: ast.AST) -> str:
    """One piece of an f-string made of constants."""
    if isinstance(part, ast.Constant):
        return str(part.value)
    if not isinstance(part, ast.FormattedValue):
        raise DecodeError(f"unsupported f-string part: {type(part).__name__}")
    value = _CONVERSIONS[part.conversion](_safe_constant_arithmetic(part.value))
    spec = _safe_constant_arithmetic(part.format_spec) if part.format_spec is not None else ""
    if any(int(width) > 1000 for width in re.findall(r"\d+", spec)):
        raise DecodeError("format width too large")
    return _apply(lambda: format(value, spec))


def _apply(operation: Any) -> Any:
    try:
        return operation()
    except Exception as exc:  # noqa: BLE001 - whatever eval would raise makes it a format error
        raise DecodeError(f"arithmetic failed: {type(exc).__name__}") from None


def official_binop_evaluated_safely(node: ast.BinOp) -> Any:
    """The reference runs `eval` on a BinOp argument; we compute the same value for expressions of
    constants (numbers, strings, bytes, lists, …), refusing names, calls and oversized results."""
    return _safe_constant_arithmetic(node)


def official_unary_op_negates(node: ast.UnaryOp) -> Any:
    """The reference returns `-operand.value` for any unary operator, so `+5` and `~5` give -5."""
    if not isinstance(node.operand, ast.Constant):
        raise DecodeError("unary operator on a non-constant")
    value = node.operand.value
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


def _resolve_call(node: ast.Call, strict: bool) -> dict[Any, Any]:
    official_drops_positional_args(node, strict)
    arguments: dict[Any, Any] = {}
    for keyword in node.keywords:
        if strict and keyword.arg is None:
            raise DecodeError("`**` arguments are not allowed")
        arguments[keyword.arg] = _resolve(keyword.value, strict)
    return {dotted_name(node.func): arguments}


def _resolve(node: ast.AST, strict: bool) -> Any:
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp):
        if strict:
            return _safe_constant_arithmetic(node)
        return official_unary_op_negates(node)
    if isinstance(node, ast.List):
        return [_resolve(item, strict) for item in node.elts]
    if isinstance(node, ast.Dict):
        resolved: dict[Any, Any] = {}
        for key, value in zip(node.keys, node.values):
            if key is None:
                raise DecodeError("`**` inside a dict literal")
            resolved_key = _resolve(key, strict)
            try:
                resolved[resolved_key] = _resolve(value, strict)
            except TypeError:
                raise DecodeError("unhashable dict key") from None
        return resolved
    if isinstance(node, ast.BinOp):
        return official_binop_evaluated_safely(node)
    if isinstance(node, ast.Name):
        return strict_json_literals(node) if strict else official_name_becomes_string(node)
    if isinstance(node, ast.Call):
        return _resolve_call(node, strict)
    if isinstance(node, ast.Tuple):
        return tuple(_resolve(item, strict) for item in node.elts)
    if isinstance(node, ast.Subscript):
        return ast.unparse(node.value) + "[" + ast.unparse(node.slice) + "]"
    raise DecodeError(f"unsupported expression: {type(node).__name__}")


def parse_call_list(source: str | None, strict: bool = False) -> DecodedCalls:
    """`[A(x=1), B()]` -> `[{"A": {"x": 1}}, {"B": {}}]`; raises DecodeError on anything else."""
    if source is None:
        raise DecodeError("no bracketed list of calls found")
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise DecodeError(f"invalid syntax: {exc.__class__.__name__}: {exc}") from None
    body = tree.body
    if not isinstance(body, (ast.List, ast.Tuple, ast.Set)):
        raise DecodeError(f"expected a list of calls, got {type(body).__name__}")
    calls: DecodedCalls = []
    try:
        for element in body.elts:
            if not isinstance(element, ast.Call):
                raise DecodeError(f"list element is not a call: {type(element).__name__}")
            calls.append(_resolve_call(element, strict))
    except RecursionError:
        raise DecodeError("expression nested too deeply") from None
    return calls


def decode_text(text: str | None, multi_turn: bool, strict: bool = False) -> DecodedCalls:
    """Apply the category's extraction rule, then parse the bracket syntax."""
    if text is None:
        raise DecodeError("no output")
    if not strict:
        source = official_multi_turn_deletes_all_whitespace(text) if multi_turn else official_first_bracket_extraction(text)
        return parse_call_list(source, strict=False)
    candidates = strict_bracket_candidates(text)
    if not candidates:
        raise DecodeError("no bracketed list of calls found")
    first_error: DecodeError | None = None
    for candidate in candidates:
        try:
            return parse_call_list(candidate, strict=True)
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
        if not isinstance(arguments, dict):
            raise DecodeError(f"arguments of {call.name} are not a JSON object")
        calls.append({call.name: arguments})
    return calls
