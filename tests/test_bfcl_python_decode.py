"""BFCL prompt-mode Python decoding: each official_* rule (as bfcl-eval 2026.3.23 decodes) and each strict_* fix."""

from __future__ import annotations

import pytest

from evaluators.benchmarks.bfcl.decode_common import DecodeFailure
from evaluators.benchmarks.bfcl.decode_python import decode_python
from evaluators.core.value_size import expanded_size


def failure_rule(text: str, mode: str = "official") -> str:
    with pytest.raises(DecodeFailure) as caught:
        decode_python(text, mode)
    return caught.value.rule


def test_official_wraps_in_brackets():
    assert decode_python("get_weather(city='Paris')") == [{"get_weather": {"city": "Paris"}}]
    assert decode_python("[get_weather(city='Paris')]") == [{"get_weather": {"city": "Paris"}}]
    assert decode_python("") == []
    assert decode_python("[]") == []
    assert decode_python("f(a=1), g(b=2)") == [{"f": {"a": 1}}, {"g": {"b": 2}}]


def test_official_strips_backticks_newlines_spaces_only():
    assert decode_python("```\n[f(a=1)]\n```") == [{"f": {"a": 1}}]
    assert decode_python("\n\n  [f(a=1)]  \n") == [{"f": {"a": 1}}]
    assert failure_rule("```python\n[f(a=1)]\n```") == "official_syntax_error_fails_decode"
    assert failure_rule("Sure: [f(a=1)]") == "official_syntax_error_fails_decode"
    assert failure_rule("[f(a=1)].") == "official_syntax_error_fails_decode"
    # a tab or a carriage return is not stripped: it ends up outside the brackets
    assert failure_rule("\t[f(a=1)]") == "official_syntax_error_fails_decode"
    assert failure_rule("[f(a=1)]\r\n") == "official_syntax_error_fails_decode"


def test_official_strips_single_quotes_is_a_no_op_once_bracketed():
    # bracketing comes first, so the quoted answer becomes a list holding one string
    assert failure_rule("'[f(a=1)]'") == "official_list_of_calls_only"


def test_official_list_of_calls_only():
    assert failure_rule("[1, f(a=1)]") == "official_list_of_calls_only"
    assert failure_rule("[f(a=1)], [g(b=2)]") == "official_list_of_calls_only"
    assert failure_rule("[f(a=x) for x in y]") == "official_list_of_calls_only"
    assert failure_rule("[get_weather]") == "official_list_of_calls_only"


def test_official_dotted_call_name():
    assert decode_python("[math.factorial(n=5)]") == [{"math.factorial": {"n": 5}}]
    assert decode_python("[a.b.c(x=1)]") == [{"a.b.c": {"x": 1}}]
    assert decode_python("[f().g(x=1)]") == [{"g": {"x": 1}}]
    assert decode_python("[a[0](x=1)]") == [{"": {"x": 1}}]


def test_official_drops_positional_args():
    assert decode_python("[f(1, 'two', a=3)]") == [{"f": {"a": 3}}]
    assert decode_python("[f(1)]") == [{"f": {}}]


def test_official_double_star_gives_a_none_key():
    assert decode_python("[f(a=1, **extra)]") == [{"f": {"a": 1, None: "extra"}}]


def test_official_ellipsis_is_string():
    assert decode_python("[f(a=...)]") == [{"f": {"a": "..."}}]


def test_constants_and_containers():
    decoded = decode_python("[f(a=None, b=True, c=1.5, d='x', e=[1, 'y'], g={'k': [1, {'z': None}]}, h=b'x')]")
    assert decoded == [{"f": {"a": None, "b": True, "c": 1.5, "d": "x", "e": [1, "y"], "g": {"k": [1, {"z": None}]},
                              "h": b"x"}}]


def test_official_tuple_stays_tuple():
    (call,) = decode_python("[f(a=(1, 2))]")
    assert call["f"]["a"] == (1, 2) and type(call["f"]["a"]) is tuple


def test_official_negates_any_unary_operand():
    (call,) = decode_python("[f(a=-5, b=+5, c=not True, d=~5, e=-2.5, g=not 0)]")
    assert call["f"] == {"a": -5, "b": -5, "c": -1, "d": -5, "e": -2.5, "g": 0}
    assert type(call["f"]["c"]) is int
    assert failure_rule("[f(a=-x)]") == "official_negates_any_unary_operand"
    assert failure_rule("[f(a=-'s')]") == "official_negates_any_unary_operand"
    assert failure_rule("[f(a=-(-5))]") == "official_negates_any_unary_operand"
    # a unary operator over an operation is unary first: the official decoder fails on it
    assert failure_rule("[f(a=-2**2)]") == "official_negates_any_unary_operand"
    assert failure_rule("[f(a=not 1 + 1)]") == "official_negates_any_unary_operand"


def test_strict_unary_operator_applied():
    (call,) = decode_python("[f(a=-5, b=+5, c=not True, d=~5)]", "strict")
    assert call["f"] == {"a": -5, "b": 5, "c": False, "d": -6}
    assert type(call["f"]["c"]) is bool
    assert failure_rule("[f(a=~1.5)]", "strict") == "strict_unary_operator_applied"


def test_strict_positional_args_refused():
    assert failure_rule("[f(1, a=3)]", "strict") == "strict_positional_args_refused"
    assert failure_rule("[f(a=g(b=1, 2))]", "strict") == "official_syntax_error_fails_decode"
    assert failure_rule("[f(a=g(1, b=2))]", "strict") == "strict_positional_args_refused"
    assert decode_python("[f(a=g(1))]", "strict") == [{"f": {"a": "g(1)"}}]


def test_strict_reads_language_fenced_block():
    assert decode_python("```python\n[f(a=1)]\n```", "strict") == [{"f": {"a": 1}}]
    assert decode_python("```json\n[f(a=1)]\n```", "strict") == [{"f": {"a": 1}}]
    assert decode_python("```PY\n[f(a=1)]\n```\n", "strict") == [{"f": {"a": 1}}]
    # prose around the fence is still not read
    assert failure_rule("Here:\n```python\n[f(a=1)]\n```", "strict") == "official_syntax_error_fails_decode"


def test_official_name_value_is_string():
    assert decode_python("[f(a=true, b=my_var, c=null)]") == [{"f": {"a": "true", "b": "my_var", "c": "null"}}]


@pytest.mark.parametrize(("source", "value"), [
    ("2*3", 6), ("'a'+'b'", "ab"), ("[1]*2", [1, 1]), ("10**3", 1000), ("7/2", 3.5), ("7//2", 3), ("7%3", 1),
    ("2**-1", 0.5), ("1<<3", 8), ("5&3", 1), ("5|3", 7), ("5^3", 6), ("(1, 2)+(3,)", (1, 2, 3)),
    ("'%s-%d' % ('a', 3)", "a-3"), ("1+2j", 1 + 2j), ("(-2)**2", 4), ("(1+2)*3", 9), ("True+True", 2),
    ("'ab'*3", "ababab"), ("[1, 2]*-1", []), ("0.1+0.2", 0.1 + 0.2), ("{'a': 1} | {'b': 2}", {"a": 1, "b": 2}),
    ("f'x'+'y'", "xy"), ("-1+2", 1),
])
def test_official_computes_binop_on_constants(source, value):
    assert decode_python(f"[f(a={source})]") == [{"f": {"a": value}}]


@pytest.mark.parametrize("source", [
    "x*2", "1/0", "None+1", "'a'+1", "[1]+(2,)", "len('ab')+1", "math.pi*2", "2.0**10000", "f'{x}'+'y'",
    "[1]*10**9", "'a'*10**9", "2**10**9", "1<<10**9", "[[1]*1000]*1000", "'%999999999d' % 1", "'%*d' % (5, 1)",
    "[1] @ [2]",
])
def test_binop_refused_or_failing_is_a_decode_failure(source):
    assert failure_rule(f"[f(a={source})]") == "official_computes_binop_on_constants"


def test_expanded_size_counts_shared_parts_each_time():
    inner = [1] * 10
    assert expanded_size([inner] * 10, limit=1000) == 1 + 10 * 11
    assert expanded_size([inner] * 10, limit=50) is None


def test_official_nested_call_without_keywords_is_text():
    assert decode_python("[f(a=g( 1 , \"x\" ))]") == [{"f": {"a": "g(1, 'x')"}}]
    assert decode_python("[f(a=g())]") == [{"f": {"a": "g()"}}]


def test_official_nested_call_is_dict():
    assert decode_python("[f(a=g(b=2, c=h(3)))]") == [{"f": {"a": {"g": {"b": 2, "c": "h(3)"}}}}]


def test_official_subscript_is_text():
    assert decode_python('[f(a=data["k"])]') == [{"f": {"a": "data['k']"}}]
    assert decode_python("[f(a=d[1, 2], b=d[1:2])]") == [{"f": {"a": "d[(1, 2)]", "b": "d[1:2]"}}]


def test_official_lambda_and_attribute_values_fail_decode():
    assert failure_rule("[f(a=lambda x: x)]") == "official_lambda_and_attribute_values_fail_decode"
    assert failure_rule("[f(a=math.pi)]") == "official_lambda_and_attribute_values_fail_decode"
    assert failure_rule("[f(a=Units.METRIC)]") == "official_lambda_and_attribute_values_fail_decode"


@pytest.mark.parametrize("source", ["{1, 2}", "f'{x}'", "1 < 2", "1 if x else 2", "[*x]", "{**d}", "{[1]: 2}",
                                    "(x := 1)"])
def test_official_unsupported_value_fails_decode(source):
    assert failure_rule(f"[f(a={source})]") == "official_unsupported_value_fails_decode"


def test_repeated_keyword_keeps_the_last_value():
    assert decode_python("[f(a=1, a=2)]") == [{"f": {"a": 2}}]


def test_official_syntax_error_fails_decode():
    assert failure_rule("[f(a=]") == "official_syntax_error_fails_decode"
    assert failure_rule("[f(a='\x00')]") == "official_syntax_error_fails_decode"
    assert failure_rule("[" * 5000 + "]" * 5000) == "official_syntax_error_fails_decode"


def test_output_must_be_text():
    assert failure_rule(None) == "official_output_must_be_text"  # type: ignore[arg-type]
