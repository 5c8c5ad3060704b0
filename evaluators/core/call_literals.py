"""Calls a model wrote as Python text (`[f(a=1, b='x' * 3)]`) read into values, never through eval.

The text is parsed with `ast` and read node by node. References that read such text differ in what they
make of a node (a bare name, a unary operator, a nested call, a subscript); a benchmark states its
reference's choices as `CallRules`, each field one of its named rules. Where a reference runs `eval` on an
operation, `CallReader.compute` gives the same value for expressions of constants only: names, calls and
attributes are refused, never looked up.

Everything is bounded, so a short answer cannot make us build something huge: a text over
MAX_CALL_TEXT_CHARS is not parsed, values nest at most MAX_NESTING_DEPTH deep, an int holds at most
MAX_INT_BITS bits, a `%` or f-string width is at most MAX_FORMAT_WIDTH, and what arithmetic builds for one
answer (intermediate values included, a shared value counted every time it appears) is at most
MAX_COMPUTED_SIZE elements and characters. The references have no such bounds; real answers are far
below them. Anything refused raises a subclass of CallLiteralError saying why.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from evaluators.core.limits import MAX_ECHOED_CHARS
from evaluators.core.value_size import expanded_size, leaf_size

# Bracketed call text given to `ast.parse` (its tree costs ~500 bytes a character); the longest real
# answer, a gold call list written out, has ~3,000 characters.
MAX_CALL_TEXT_CHARS = 100_000
# Levels of values inside values and of operations inside operations (real answers: under 10). Kept
# well below Python's recursion limit, so reading never depends on how deep the caller's stack is.
MAX_NESTING_DEPTH = 100
# Elements plus characters that arithmetic may build for one answer. Real answers compute a number or
# a short string ('-' * 20, 24 * 60); the rest of a decoded answer is no bigger than its own text.
MAX_COMPUTED_SIZE = 10_000
# ~9,000 digits, so an int fits MAX_COMPUTED_SIZE. Above Python's 4,300-digit print limit on purpose:
# a reference computes and type-checks `10 ** 5000`, so it stays a valid (unprintable) int here.
MAX_INT_BITS = 30_000
# Widths and precisions in `'%5d' % x` and f-string format specs.
MAX_FORMAT_WIDTH = 1_000


class CallLiteralError(ValueError):
    """Model-written call text that cannot be read within the rules and bounds; the subclass says why."""


class CallSyntaxError(CallLiteralError):
    """The text does not parse as a Python expression."""


class NestedTooDeepError(CallLiteralError):
    """Values or operations nest deeper than MAX_NESTING_DEPTH (or than the parser itself allows)."""


class TooLargeError(CallLiteralError):
    """The text, an int, a format width or a computed value is over its bound; nothing large was built."""


class ArithmeticRefusedError(CallLiteralError):
    """An operation whose operand is not a constant the rules allow, or that fails as `eval` would."""


class UnsupportedValueError(CallLiteralError):
    """An argument value of a kind the rules do not read; `node_kind` names it (e.g. "Lambda")."""

    def __init__(self, message: str, node_kind: str):
        super().__init__(message)
        self.node_kind = node_kind


# ---- parsing ------------------------------------------------------------------------------------


def syntax_error_text(exc: SyntaxError) -> str:
    """The parser's complaint once ("invalid syntax", never "invalid syntax: invalid syntax"), with where it is."""
    said = str(exc.msg or "").strip()
    if said.lower().startswith("invalid syntax"):
        said = said[len("invalid syntax"):].lstrip(".:; ")
    where = f" at character {exc.offset}" if exc.offset else ""
    return f"invalid syntax{where}" + (f": {said}" if said else "")


def parse_call_text(source: str, max_chars: int = MAX_CALL_TEXT_CHARS) -> ast.expr:
    """The expression `source` holds, its parser failures as CallSyntaxError (or NestedTooDeepError)."""
    if len(source) > max_chars:
        raise TooLargeError(f"the call text is longer than {max_chars:,} characters")
    try:
        return ast.parse(source, mode="eval").body
    except SyntaxError as exc:
        if "integer string conversion" in str(exc.msg):
            raise TooLargeError("an integer literal has more than 4,300 digits") from None
        raise CallSyntaxError(syntax_error_text(exc)) from None
    except ValueError as exc:  # e.g. null bytes
        raise CallSyntaxError(f"invalid syntax: {exc}") from None
    except (RecursionError, MemoryError):  # the parser's own depth limits
        raise NestedTooDeepError("nested too deeply to parse") from None


def dotted_name(func: ast.AST) -> str:
    """`a.b.c` for an attribute chain ending in a plain name; anything else in front is left out."""
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts))


def source_text(node: ast.AST) -> str:
    """The node written back out as `ast.unparse` writes it."""
    try:
        return ast.unparse(node)
    except (ValueError, RecursionError):  # an int too long to print, or nesting too deep
        raise TooLargeError("value too large to write out") from None


def bounded_int(value: Any) -> Any:
    """`value` unchanged, unless it is an int over MAX_INT_BITS (e.g. a long hex literal)."""
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise TooLargeError(f"integer with more than {MAX_INT_BITS:,} bits")
    return value


# ---- what arithmetic may read -------------------------------------------------------------------

# Literals, displays, unary and binary operators, and f-strings of plain text.
LITERAL_ARITHMETIC: frozenset[type[ast.AST]] = frozenset({
    ast.Constant, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.UnaryOp, ast.BinOp, ast.JoinedStr,
})
# Also boolean operators, comparisons, conditionals, subscripts, slices and formatted f-string parts.
CONSTANT_EXPRESSIONS: frozenset[type[ast.AST]] = LITERAL_ARITHMETIC | frozenset({
    ast.BoolOp, ast.Compare, ast.IfExp, ast.Subscript, ast.Slice, ast.FormattedValue,
})


@dataclass(frozen=True)
class CallRules:
    """How one reference reads the argument values of a call list. Each function is a named rule of the
    benchmark; it may raise the benchmark's own error, or call back into the reader."""

    unary: Callable[[ast.UnaryOp, CallReader], Any]
    name: Callable[[ast.Name], Any]
    nested_call: Callable[[ast.Call, CallReader], Any]
    subscript: Callable[[ast.Subscript], Any]
    # Checks a call's arguments before they are read (e.g. refuses positional ones); returns nothing.
    call_arguments: Callable[[ast.Call, str], None]
    # Node kinds an operation's operands may be (LITERAL_ARITHMETIC or CONSTANT_EXPRESSIONS).
    arithmetic: frozenset[type[ast.AST]]


class ComputeBudget:
    """What arithmetic may still build for one answer (see MAX_COMPUTED_SIZE)."""

    def __init__(self, limit: int = MAX_COMPUTED_SIZE) -> None:
        self.limit = limit
        self.left = limit

    def too_big(self) -> TooLargeError:
        return TooLargeError(f"constant arithmetic in the answer builds more than {self.limit:,} elements and characters")

    def spend(self, size: int) -> None:
        if size > self.left:
            raise self.too_big()
        self.left -= size


Sized = tuple[Any, int]  # a value and its expanded size

_BINARY: dict[type[ast.AST], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift, ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.BitAnd: operator.and_,
    ast.MatMult: operator.matmul,
}
UNARY_OPERATORS: dict[type[ast.AST], Callable[[Any], Any]] = {
    ast.UAdd: operator.pos, ast.USub: operator.neg, ast.Invert: operator.invert, ast.Not: operator.not_,
}
_COMPARE: dict[type[ast.AST], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
_CONVERSIONS: dict[int, Callable[[Any], Any]] = {-1: lambda v: v, ord("s"): str, ord("r"): repr, ord("a"): ascii}
_REPEATABLE = (str, bytes, list, tuple)
_PERCENT_FORMAT = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")
_DIGITS = re.compile(r"\d+")


def _applied(operation: Callable[[], Any]) -> Any:
    """What the operation gives; whatever `eval` would raise refuses it."""
    try:
        return operation()
    except Exception as exc:  # noqa: BLE001 - any failure of the operation is a refusal
        detail = str(exc)[:MAX_ECHOED_CHARS]
        raise ArithmeticRefusedError(f"the operation failed ({type(exc).__name__}: {detail})") from None


def _check_format_widths(template: str | bytes) -> None:
    text = template.decode("latin-1") if isinstance(template, bytes) else template
    for width, precision in _PERCENT_FORMAT.findall(text):
        for spec in (width, precision):
            if spec == "*" or (spec and int(spec) > MAX_FORMAT_WIDTH):
                raise TooLargeError(f"a format width over {MAX_FORMAT_WIDTH:,}")


def _guard_operation(op: ast.operator, left: Sized, right: Sized, budget: ComputeBudget) -> None:
    """Refuse, before computing it, an operation whose result would be too large to hold."""
    (left_value, left_size), (right_value, right_size) = left, right
    both_int = isinstance(left_value, int) and isinstance(right_value, int)
    if isinstance(op, ast.Pow) and both_int and right_value > 0 and abs(left_value) > 1:
        if left_value.bit_length() * right_value > MAX_INT_BITS:
            raise TooLargeError(f"a power of more than {MAX_INT_BITS:,} bits")
    if isinstance(op, ast.LShift) and both_int and left_value and right_value > 0:
        if left_value.bit_length() + right_value > MAX_INT_BITS:
            raise TooLargeError(f"a shift to more than {MAX_INT_BITS:,} bits")
    if isinstance(op, ast.Mult):
        for repeated, size, count in ((left_value, left_size, right_value), (right_value, right_size, left_value)):
            if isinstance(repeated, _REPEATABLE) and isinstance(count, int) and size * count > budget.left:
                raise budget.too_big()
        if both_int and left_value.bit_length() + right_value.bit_length() > MAX_INT_BITS:
            raise TooLargeError(f"a product of more than {MAX_INT_BITS:,} bits")
    if isinstance(op, ast.Mod) and isinstance(left_value, (str, bytes)):
        _check_format_widths(left_value)


class CallReader:
    """Reads the calls, values and constant expressions of one answer under one set of rules; all its
    arithmetic is paid from one budget (pass one to share it between an answer's candidates)."""

    def __init__(self, rules: CallRules, budget: ComputeBudget | None = None) -> None:
        self.rules = rules
        self.budget = budget or ComputeBudget()
        self._depth = 0

    # ---- calls and argument values

    def call(self, node: ast.Call) -> dict[str, dict[Any, Any]]:
        """`f(a=1)` -> `{"f": {"a": 1}}`; `**x` lands under the key None, as the references read it."""
        name = dotted_name(node.func)
        self.rules.call_arguments(node, name)
        arguments: dict[Any, Any] = {}
        for keyword in node.keywords:
            arguments[keyword.arg] = self.value(keyword.value)
        return {name: arguments}

    def value(self, node: ast.AST) -> Any:
        """One argument value under the rules."""
        self._enter()
        try:
            return self._value(node)
        except RecursionError:
            raise NestedTooDeepError("expression nested too deeply") from None
        finally:
            self._depth -= 1

    def _value(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return "..." if node.value is Ellipsis else bounded_int(node.value)
        if isinstance(node, ast.UnaryOp):
            return self.rules.unary(node, self)
        if isinstance(node, ast.List):
            return [self.value(item) for item in node.elts]
        if isinstance(node, ast.Tuple):
            return tuple(self.value(item) for item in node.elts)
        if isinstance(node, ast.Dict):
            return self._dict(node)
        if isinstance(node, ast.BinOp):
            return self.compute(node)
        if isinstance(node, ast.Name):
            return self.rules.name(node)
        if isinstance(node, ast.Call):
            return self.rules.nested_call(node, self)
        if isinstance(node, ast.Subscript):
            return self.rules.subscript(node)
        kind = type(node).__name__
        raise UnsupportedValueError(f"unsupported value: {kind}", kind)

    def _dict(self, node: ast.Dict) -> dict[Any, Any]:
        resolved: dict[Any, Any] = {}
        for key, item in zip(node.keys, node.values):
            if key is None:
                raise UnsupportedValueError("`**` inside a dict literal", "DictUnpacking")
            resolved_key = self.value(key)
            resolved_item = self.value(item)
            try:
                resolved[resolved_key] = resolved_item
            except TypeError:
                raise UnsupportedValueError("unhashable dict key", type(key).__name__) from None
        return resolved

    def _enter(self) -> None:
        self._depth += 1
        if self._depth > MAX_NESTING_DEPTH:
            self._depth -= 1
            raise NestedTooDeepError(f"values nest more than {MAX_NESTING_DEPTH} deep")

    # ---- arithmetic on constants

    def compute(self, node: ast.AST) -> Any:
        """What `eval` gives for an expression built from constants of the rules' arithmetic kinds; names,
        calls, attributes and the like are refused, and every value an operation builds is paid from the budget."""
        try:
            return self._computed(node)[0]
        except RecursionError:
            raise NestedTooDeepError("expression nested too deeply") from None

    def _computed(self, node: ast.AST) -> Sized:
        if type(node) not in self.rules.arithmetic:
            raise ArithmeticRefusedError(f"an operand that is not a constant: {type(node).__name__} (never evaluated)")
        self._enter()
        try:
            return self._compute(node)
        finally:
            self._depth -= 1

    def _paid(self, value: Any) -> Sized:
        """A value an operation built: its size is paid from the budget."""
        bounded_int(value)
        size = expanded_size(value, self.budget.left)
        if size is None:
            raise self.budget.too_big()
        self.budget.spend(size)
        return value, size

    def _compute(self, node: ast.AST) -> Sized:
        if isinstance(node, ast.Constant):
            return bounded_int(node.value), leaf_size(node.value)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = [self._computed(item) for item in node.elts]
            build = {ast.List: list, ast.Tuple: tuple, ast.Set: set}[type(node)]
            return _applied(lambda: build(item for item, _ in items)), 1 + sum(size for _, size in items)
        if isinstance(node, ast.Dict):
            return self._computed_dict(node)
        if isinstance(node, ast.UnaryOp):
            operand, _ = self._computed(node.operand)
            return self._paid(_applied(lambda: UNARY_OPERATORS[type(node.op)](operand)))
        if isinstance(node, ast.BinOp):
            left, right = self._computed(node.left), self._computed(node.right)
            _guard_operation(node.op, left, right, self.budget)
            return self._paid(_applied(lambda: _BINARY[type(node.op)](left[0], right[0])))
        if isinstance(node, ast.BoolOp):
            chosen: Sized = (None, 1)
            for operand in node.values:
                chosen = self._computed(operand)
                if isinstance(node.op, ast.And) != bool(chosen[0]):
                    return chosen
            return chosen
        if isinstance(node, ast.Compare):
            return self._compared(node), 1
        if isinstance(node, ast.IfExp):
            return self._computed(node.body if self._computed(node.test)[0] else node.orelse)
        if isinstance(node, ast.Subscript):
            container, _ = self._computed(node.value)
            index, _ = self._computed(node.slice)
            return self._paid(_applied(lambda: container[index]))
        if isinstance(node, ast.Slice):
            bounds = [None if part is None else self._computed(part)[0] for part in (node.lower, node.upper, node.step)]
            return _applied(lambda: slice(*bounds)), 1
        if isinstance(node, ast.JoinedStr):
            text = "".join(self._formatted_part(part) for part in node.values)
            return text, leaf_size(text)
        raise ArithmeticRefusedError(f"an operand that is not a constant: {type(node).__name__} (never evaluated)")

    def _computed_dict(self, node: ast.Dict) -> Sized:
        if any(key is None for key in node.keys):
            raise ArithmeticRefusedError("`**` inside a dict literal")
        pairs = [(self._computed(key), self._computed(item)) for key, item in zip(node.keys, node.values) if key is not None]
        value = _applied(lambda: {key: item for (key, _), (item, _) in pairs})
        return value, 1 + sum(key_size + item_size for (_, key_size), (_, item_size) in pairs)

    def _compared(self, node: ast.Compare) -> bool:
        left, _ = self._computed(node.left)
        for op, comparator in zip(node.ops, node.comparators):
            right, _ = self._computed(comparator)
            if not _applied(lambda: _COMPARE[type(op)](left, right)):  # noqa: B023 - called at once
                return False
            left = right
        return True

    def _formatted_part(self, part: ast.AST) -> str:
        """One piece of an f-string; a formatted piece is paid from the budget."""
        if isinstance(part, ast.Constant):
            return str(part.value)
        if not isinstance(part, ast.FormattedValue) or ast.FormattedValue not in self.rules.arithmetic:
            raise ArithmeticRefusedError(f"an f-string part that is not plain text: {type(part).__name__}")
        value, _ = self._computed(part.value)
        converted = _applied(lambda: _CONVERSIONS[part.conversion](value))
        spec = self._computed(part.format_spec)[0] if part.format_spec is not None else ""
        if any(int(width) > MAX_FORMAT_WIDTH for width in _DIGITS.findall(spec)):
            raise TooLargeError(f"a format width over {MAX_FORMAT_WIDTH:,}")
        text: str = _applied(lambda: format(converted, spec))
        self.budget.spend(leaf_size(text))
        return text


def read_calls(elements: Sequence[ast.Call], rules: CallRules, budget: ComputeBudget | None = None) -> list[dict[str, dict[Any, Any]]]:
    """Each call of a parsed call list read under the rules."""
    reader = CallReader(rules, budget)
    return [reader.call(element) for element in elements]
