"""Decoding model text into calls: official extraction rules and the safe AST walk (no eval)."""

from __future__ import annotations

import pytest

from evaluators.benchmarks.acebench.decode import (
    DecodeError,
    decode_text,
    decode_tool_calls,
    official_first_bracket_extraction,
    official_multi_turn_deletes_all_whitespace,
    parse_call_list,
    strict_bracket_candidates,
)
from evaluators.core.types import ToolCall


def test_official_first_bracket_extraction():
    assert official_first_bracket_extraction("Sure: [f(a=1)] and [g()]") == "[f(a=1)]"
    assert official_first_bracket_extraction("```python\n[f(a=[1, 2])]\n```") == "[f(a=[1, 2])]"
    assert official_first_bracket_extraction("no brackets") is None
    # brackets inside strings are counted too
    assert official_first_bracket_extraction("[f(a=']')]") == "[f(a=']"


def test_prose_before_call_list_is_ignored_in_single_turn():
    assert decode_text("I will call it now. [f(a=1)] Done.", multi_turn=False) == [{"f": {"a": 1}}]


def test_thinking_bracket_first_is_a_format_error_officially():
    with pytest.raises(DecodeError):
        decode_text("[thinking] [f()]", multi_turn=False)


def test_official_multi_turn_deletes_all_whitespace():
    assert official_multi_turn_deletes_all_whitespace(" [f(a='HTC Vive')]\n") == "[f(a='HTCVive')]"
    assert decode_text("[f(a='HTC Vive')]", multi_turn=True) == [{"f": {"a": "HTCVive"}}]


def test_multi_turn_prose_is_a_format_error():
    with pytest.raises(DecodeError):
        decode_text("Here: [f(a=1)]", multi_turn=True)


def test_official_drops_positional_args():
    assert parse_call_list("[f(1, 2, b=3)]") == [{"f": {"b": 3}}]
    assert parse_call_list("[f(1)]") == [{"f": {}}]
    with pytest.raises(DecodeError):
        parse_call_list("[f(1, b=3)]", strict=True)


def test_official_name_becomes_string():
    assert parse_call_list("[f(a=true, b=null, c=False)]") == [{"f": {"a": "true", "b": "null", "c": False}}]


def test_strict_json_literals():
    assert parse_call_list("[f(a=true, b=null, c=x)]", strict=True) == [{"f": {"a": True, "b": None, "c": "x"}}]


def test_official_unary_op_negates():
    assert parse_call_list("[f(a=-3, b=+5, c=-2.5)]") == [{"f": {"a": -3, "b": -5, "c": -2.5}}]
    assert parse_call_list("[f(b=+5)]", strict=True) == [{"f": {"b": 5}}]
    with pytest.raises(DecodeError):
        parse_call_list("[f(a=-'x')]")


def test_official_binop_evaluated_safely():
    assert parse_call_list("[f(a=1+2, b=2**3, c=7/2, d='ab'+'cd')]") == [{"f": {"a": 3, "b": 8, "c": 3.5, "d": "abcd"}}]
    decoded = parse_call_list("[f(a=5|2, b=True & False, c=['x']+['y'], d='%s!' % 'hi', e=(1,)*2, g=1e308*10, h=-1+2, i=2**2000)]")
    assert decoded == [{"f": {"a": 7, "b": False, "c": ["x", "y"], "d": "hi!", "e": (1, 1), "g": float("inf"), "h": 1, "i": 2**2000}}]
    decoded = parse_call_list("[f(a='North'[0:3] + '', b=[5][0] + 1, c=(1 if True else 2) + 0, d=f'v{1+1:>3}' + '', e=(1 < 2 < 3) + 0)]")
    assert decoded == [{"f": {"a": "Nor", "b": 6, "c": 1, "d": "v  2", "e": 1}}]
    for unsafe in (
        "[f(a=__import__('os').getcwd()+'x')]", "[f(a=x+1)]", "[f(a=1/0)]", "[f(a=2**99999999)]", "[f(a='x'*10**9)]",
        "[f(a=abs(2)+1)]", "[f(a='%*d' % (10**9, 1))]", "[f(a=1<<10**9)]", "[f(a=[1]*10**9)]", "[f(a='x'+1)]",
        "[f(a='%(a)s' % {'b': 1})]", "[f(a=(303).real + 0)]", "[f(a=f'{1:99999}' + '')]", "[f(a=[1][5] + 0)]",
    ):
        with pytest.raises(DecodeError):
            parse_call_list(unsafe)


def test_nested_values_and_dotted_names():
    decoded = parse_call_list("[ai.model.Select(cfg={'k': [1, (2, 3)]}, cb=g(x=1), h=k(), s=a[0])]")
    assert decoded == [{"ai.model.Select": {"cfg": {"k": [1, (2, 3)]}, "cb": {"g": {"x": 1}}, "h": {"k": {}}, "s": "a[0]"}}]


def test_unsupported_nodes_are_format_errors():
    for text in ("[f(a=lambda: 1)]", "[f(a={1, 2})]", "[f(a=x.y)]", "[f(a=f'{x}')]", "[1, f()]", "[]x", "[f(a=[i for i in y])]"):
        with pytest.raises(DecodeError):
            parse_call_list(text)


def test_empty_list_decodes_to_no_calls():
    assert parse_call_list("[]") == []


def test_deeply_nested_input_is_an_error_not_a_crash():
    with pytest.raises(DecodeError):
        parse_call_list("[f(a=" + "[" * 5000 + "]" * 5000 + ")]")


def test_strict_bracket_candidates_ignore_brackets_in_strings():
    assert strict_bracket_candidates("x [f(a=']')] y [g()]") == ["[f(a=']')]", "[g()]"]
    assert decode_text("[thinking] [f(a='x y')]", multi_turn=True, strict=True) == [{"f": {"a": "x y"}}]


def test_native_tool_calls_are_decoded_from_json():
    calls = [ToolCall("f", '{"a": 1, "b": true}'), ToolCall("g", {"x": [1]}), ToolCall("h", "")]
    assert decode_tool_calls(calls) == [{"f": {"a": 1, "b": True}}, {"g": {"x": [1]}}, {"h": {}}]
    with pytest.raises(DecodeError):
        decode_tool_calls([ToolCall("f", "{not json")])
    with pytest.raises(DecodeError):
        decode_tool_calls([ToolCall("f", "[1, 2]")])
