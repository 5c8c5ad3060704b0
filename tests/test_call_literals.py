"""The core reader of model-written calls (evaluators.core.call_literals): its bounds, its refusals (each a
specific CallLiteralError), and rules passed in by a benchmark deciding what a node means."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from evaluators.core.call_literals import (
    CONSTANT_EXPRESSIONS,
    LITERAL_ARITHMETIC,
    MAX_CALL_TEXT_CHARS,
    MAX_COMPUTED_SIZE,
    MAX_FORMAT_WIDTH,
    MAX_INT_BITS,
    MAX_NESTING_DEPTH,
    ArithmeticRefusedError,
    CallLiteralError,
    CallReader,
    CallRules,
    CallSyntaxError,
    ComputeBudget,
    NestedTooDeepError,
    TooLargeError,
    UnsupportedValueError,
    parse_call_text,
    read_calls,
    source_text,
)


class RuleRefusal(Exception):
    """A benchmark's own error, raised by one of its rules."""


def _negate_constant(node: ast.UnaryOp, reader: CallReader) -> Any:
    if not isinstance(node.operand, ast.Constant):
        raise RuleRefusal("unary operator on a non-constant")
    return -node.operand.value


def _refuse_positional(node: ast.Call, name: str) -> None:
    if node.args:
        raise RuleRefusal(f"positional argument in {name}")


def rules(arithmetic: frozenset[type[ast.AST]] = CONSTANT_EXPRESSIONS, **changed: Any) -> CallRules:
    chosen: dict[str, Any] = {
        "unary": lambda node, reader: reader.compute(node),
        "name": lambda node: node.id,
        "nested_call": lambda node, reader: reader.call(node),
        "subscript": lambda node: source_text(node),
        "call_arguments": lambda node, name: None,
        "arithmetic": arithmetic,
    }
    return CallRules(**{**chosen, **changed})


def read(text: str, call_rules: CallRules | None = None, budget: ComputeBudget | None = None) -> list[dict[str, Any]]:
    body = parse_call_text(text)
    assert isinstance(body, ast.List) and all(isinstance(element, ast.Call) for element in body.elts)
    return read_calls(body.elts, call_rules or rules(), budget)  # type: ignore[arg-type]


def argument(value_text: str, call_rules: CallRules | None = None) -> Any:
    return read(f"[f(a={value_text})]", call_rules)[0]["f"]["a"]


def refusal(value_text: str, call_rules: CallRules | None = None) -> CallLiteralError:
    with pytest.raises(CallLiteralError) as raised:
        argument(value_text, call_rules)
    message = str(raised.value)
    assert message and len(message) < 200, message
    return raised.value


# ---- what it reads -------------------------------------------------------------------------------


def test_calls_and_literal_values_are_read_without_eval():
    assert read("[a.b.f(x=1, y='s', z=[1, (2, 3)], w={'k': None}, v=..., u=b'x'), g()]") == [
        {"a.b.f": {"x": 1, "y": "s", "z": [1, (2, 3)], "w": {"k": None}, "v": "...", "u": b"x"}}, {"g": {}}]
    assert read("[f(**rest)]") == [{"f": {None: "rest"}}]  # `**x` under the key None, its value by the name rule
    assert read("[f(a=g(b=h()))]") == [{"f": {"a": {"g": {"b": {"h": {}}}}}}]


def test_constant_arithmetic_gives_what_eval_gives():
    for text in ("2**10", "'-'*20", "24*60", "[0]*3", "(1, 2)*2", "'%s!' % 'hi'", "7/2", "2**-1", "1<<3", "'ab'+'cd'",
                 "{'a': 1} | {'b': 2}", "-(1+2)", "f'x'+'y'", "10**4000 + 0"):
        assert argument(text) == eval(text), text  # the test compares with eval on trusted text; the reader never evals
    for text in ("(1 if True else 2) + 0", "'North'[0:3] + ''", "(1 < 2 < 3) + 0", "(0 or 5) + 1", "f'v{1+1:>3}' + ''"):
        assert argument(text) == eval(text), text


def test_the_arithmetic_node_kinds_are_the_rules_choice():
    literal_only = rules(LITERAL_ARITHMETIC)
    assert argument("2*3+1", literal_only) == 7
    for text in ("(1 if True else 2) + 0", "'North'[0:3] + ''", "(1 < 2) + 0", "(0 or 5) + 1", "f'{1}' + ''"):
        assert isinstance(refusal(text, literal_only), ArithmeticRefusedError), text
        assert argument(text) == eval(text)


def test_names_calls_and_attributes_in_arithmetic_are_refused_never_looked_up():
    for text in ("x + 1", "abs(-5) + 1", "__import__('os').getcwd() + 'x'", "(303).real + 0", "math.pi * 2", "[i for i in y] + []"):
        error = refusal(text)
        assert isinstance(error, ArithmeticRefusedError) and "never evaluated" in str(error), text


def test_an_operation_that_fails_is_refused_with_its_reason():
    for text, reason in (("1/0", "ZeroDivisionError"), ("'x'+1", "TypeError"), ("2.0**10000", "OverflowError"),
                         ("[1][5] + 0", "IndexError"), ("'%(a)s' % {'b': 1}", "KeyError")):
        error = refusal(text)
        assert isinstance(error, ArithmeticRefusedError) and reason in str(error), text


def test_the_rules_decide_what_a_node_means_and_may_raise_their_own_errors():
    official = rules(unary=_negate_constant, name=lambda node: {"true": True}.get(node.id, node.id),
                     nested_call=lambda node, reader: source_text(node), subscript=lambda node: "subscript",
                     call_arguments=_refuse_positional)
    assert read("[f(a=+5, b=true, c=other, d=g(1), e=x[0])]", official) == [
        {"f": {"a": -5, "b": True, "c": "other", "d": "g(1)", "e": "subscript"}}]
    assert argument("+5") == 5 and argument("x[0]") == "x[0]"
    with pytest.raises(RuleRefusal):
        read("[f(1, a=2)]", official)
    with pytest.raises(RuleRefusal):
        argument("-x", official)


def test_values_no_rule_reads_are_unsupported_and_named():
    for text, kind in (("lambda: 1", "Lambda"), ("x.y", "Attribute"), ("{1, 2}", "Set"), ("1 < 2", "Compare"),
                       ("[*x]", "Starred"), ("(y := 1)", "NamedExpr"), ("f'{x}'", "JoinedStr")):
        error = refusal(text)
        assert isinstance(error, UnsupportedValueError) and error.node_kind == kind, text
    assert isinstance(refusal("{**d}"), UnsupportedValueError)
    assert isinstance(refusal("{[1]: 2}"), UnsupportedValueError)  # an unhashable key


# ---- bounds ----------------------------------------------------------------------------------------


def test_every_refusal_is_a_call_literal_error_and_a_value_error():
    for kind in (CallSyntaxError, NestedTooDeepError, TooLargeError, ArithmeticRefusedError, UnsupportedValueError):
        assert issubclass(kind, CallLiteralError) and issubclass(kind, ValueError)


def test_the_call_text_is_bounded_and_its_syntax_errors_are_specific():
    with pytest.raises(TooLargeError, match=f"longer than {MAX_CALL_TEXT_CHARS:,} characters"):
        parse_call_text("[f(a='" + "x" * MAX_CALL_TEXT_CHARS + "')]")
    assert isinstance(parse_call_text("[f(a='" + "x" * 1000 + "')]"), ast.List)
    with pytest.raises(CallSyntaxError, match="invalid syntax"):
        parse_call_text("[f(a=]")
    # the parser's words once, with where: never "invalid syntax: invalid syntax"
    for text, said in (("f(a=)", "invalid syntax at character 5"),
                       ("f(a b)", "invalid syntax at character 3: Perhaps you forgot a comma?"),
                       ("[f(a=1", "invalid syntax at character 3: '(' was never closed")):
        with pytest.raises(CallSyntaxError) as raised:
            parse_call_text(text)
        assert str(raised.value) == said
    with pytest.raises(CallSyntaxError, match="null bytes"):
        parse_call_text("[f(a='\x00')]")
    with pytest.raises(TooLargeError, match="4,300 digits"):
        parse_call_text("[f(a=" + "7" * 5000 + ")]")
    with pytest.raises(CallSyntaxError):  # the parser's own limit on brackets
        parse_call_text("[f(a=" + "[" * 5000 + "]" * 5000 + ")]")


def test_values_and_operations_nest_at_most_the_bound():
    inside = MAX_NESTING_DEPTH - 2  # the argument itself and the innermost list count too
    assert argument("[" * inside + "]" * inside) is not None
    assert isinstance(refusal("[" * (MAX_NESTING_DEPTH + 1) + "]" * (MAX_NESTING_DEPTH + 1)), NestedTooDeepError)
    assert isinstance(refusal("+".join(["1"] * (MAX_NESTING_DEPTH + 5))), NestedTooDeepError)
    assert isinstance(refusal("-" * (MAX_NESTING_DEPTH + 5) + "1"), NestedTooDeepError)
    assert argument("+".join(["1"] * 50)) == 50


def test_big_exponents_shifts_products_and_literals_are_refused_before_they_are_built():
    assert argument("10**5000") == 10**5000  # over the 4,300-digit print limit, under MAX_INT_BITS: still an int
    for text in ("2**100000", "2**10**9", "1<<10**9", "0x" + "f" * 5000 + " * 0x" + "f" * 5000, "0x" + "f" * (MAX_INT_BITS // 4 + 1)):
        error = refusal(text)
        assert isinstance(error, TooLargeError) and f"{MAX_INT_BITS:,} bits" in str(error), text


def test_long_strings_and_repetitions_are_paid_from_one_budget_per_answer():
    half = MAX_COMPUTED_SIZE // 2 + 1
    assert argument(f"'x'*{half}") == "x" * half
    for text in (f"'x'*{MAX_COMPUTED_SIZE + 1}", "'a'*10**9", "[1]*10**9", "[[1]*99999]*99999", "['a'*99999]*99999"):
        error = refusal(text)
        assert isinstance(error, TooLargeError) and f"more than {MAX_COMPUTED_SIZE:,} elements" in str(error), text
    with pytest.raises(TooLargeError):  # two halves in one answer pass the bound together
        read(f"[f(a='x'*{half}), g(b='y'*{half})]")
    budget = ComputeBudget()  # one budget shared by two texts of the same answer
    read(f"[f(a='x'*{half})]", budget=budget)
    with pytest.raises(TooLargeError):
        read(f"[g(b='y'*{half})]", budget=budget)


def test_format_widths_are_bounded():
    assert argument("'%5d' % 1") == "    1" and argument("f'{3:>4}' + ''") == "   3"
    for text in (f"'%{MAX_FORMAT_WIDTH + 1}d' % 1", "'%*d' % (10**9, 1)", f"'%(a){MAX_FORMAT_WIDTH + 1}s' % {{'a': 1}}",
                 f"f'{{1:{MAX_FORMAT_WIDTH + 1}}}' + ''"):
        error = refusal(text)
        assert isinstance(error, TooLargeError) and "format width" in str(error), text


def test_a_subscript_too_large_to_write_out_is_refused():
    with pytest.raises(TooLargeError, match="too large to write out"):
        argument("x[0x" + "f" * 4000 + "]")  # ~4,800 digits: an int, but over the print limit
