"""The BFCL AST checker (evaluators/benchmarks/bfcl/checker.py, values.py) on small items of our own in the BFCL schema:
each official_* rule of spec §4-§5 decides the verdict it names."""

from __future__ import annotations

from typing import Any

import pytest

from evaluators.benchmarks.bfcl.categories import language_of
from evaluators.benchmarks.bfcl.checker import score
from evaluators.benchmarks.bfcl.values import official_normalises_strings
from evaluators.core.types import Prediction, Sample, SampleScore, ToolCall


def doc(name: str, properties: dict[str, dict], required: list[str] | None = None) -> dict:
    return {"name": name, "description": "A test function.",
            "parameters": {"type": "dict", "properties": properties, "required": required or []}}


def item(category: str, functions: list[dict], gold: list[dict] | None, sample_id: str | None = None) -> Sample:
    return Sample(id=sample_id or f"{category}_0", subset=category,
                  input={"question": [[{"role": "user", "content": "Do it."}]], "function": functions}, gold=gold,
                  meta={"category": category, "language": language_of(category)})


def verdict(sample: Sample, output: str | None = None, mode: str = "official", **prediction: Any) -> SampleScore:
    return score(sample, Prediction(sample_id=sample.id, output=output, **prediction), mode)


BOOK = doc("library.book_room", {
    "room": {"type": "string", "description": "Room name."},
    "hours": {"type": "integer", "description": "How long."},
    "rate": {"type": "float", "description": "Price per hour."},
    "quiet": {"type": "boolean", "description": "Quiet room."},
    "floor": {"type": "integer", "description": "Floor, optional."},
}, required=["room", "hours"])
BOOK_GOLD = {"library.book_room": {"room": ["Reading Room", "reading room 1"], "hours": [2], "rate": [10.0, ""],
                                   "quiet": ["", True]}}
SIMPLE = item("simple_python", [BOOK], [BOOK_GOLD])


def rule_of(sample: Sample, output: str, mode: str = "official") -> tuple[bool, str | None, str | None]:
    result = verdict(sample, output, mode)
    return result.correct, result.error_type, result.rule


# ---- the call itself ------------------------------------------------------------------------------------------


def test_gold_call_passes_and_optional_ones_may_be_left_out():
    assert rule_of(SIMPLE, "[library.book_room(room='Reading Room', hours=2)]") == (True, None,
                                                                                    "official_call_matches")
    assert verdict(SIMPLE, "library.book_room(room='reading room 1', hours=2, rate=10, quiet=True)").correct


def test_decoded_calls_are_kept_as_evidence():
    result = verdict(SIMPLE, "[library.book_room(room='x', hours=2)]")
    assert result.decoded == [{"library.book_room": {"room": "x", "hours": 2}}]


def test_official_function_name_exact():
    assert rule_of(SIMPLE, "[library_book_room(room='Reading Room', hours=2)]") == (
        False, "wrong_func_name", "official_function_name_exact")
    assert rule_of(SIMPLE, "[Library.book_room(room='Reading Room', hours=2)]")[2] == "official_function_name_exact"


def test_official_required_from_doc_even_when_the_gold_leaves_it_out():
    sample = item("simple_python", [doc("f", {"a": {"type": "string"}, "b": {"type": "string"}}, ["a", "b"])],
                  [{"f": {"a": ["x"]}}])
    assert rule_of(sample, "[f(a='x')]") == (False, "missing_required", "official_required_from_doc")
    assert rule_of(sample, "[f(a='x', b='y')]")[2] == "official_unlisted_optional_param_is_unexpected"


def test_official_unlisted_optional_param_is_unexpected():
    assert rule_of(SIMPLE, "[library.book_room(room='Reading Room', hours=2, floor=3)]") == (
        False, "unexpected_param", "official_unlisted_optional_param_is_unexpected")
    assert rule_of(SIMPLE, "[library.book_room(room='Reading Room', hours=2, color='red')]")[1] == "unexpected_param"


def test_a_gold_parameter_missing_from_the_doc_can_never_be_given():
    sample = item("simple_python", [doc("f", {"a": {"type": "string"}}, ["a"])], [{"f": {"a": ["x"], "z": [1]}}])
    assert rule_of(sample, "[f(a='x', z=1)]")[1] == "unexpected_param"
    assert rule_of(sample, "[f(a='x')]") == (False, "missing_optional", "official_missing_param_needs_empty_string")


def test_official_missing_param_needs_empty_string():
    sample = item("simple_python", [doc("f", {"a": {"type": "string"}, "b": {"type": "integer"}})],
                  [{"f": {"a": ["x"], "b": ["", 3]}}])
    assert verdict(sample, "[f(a='x')]").correct
    assert rule_of(sample, "[f(b=3)]") == (False, "missing_optional", "official_missing_param_needs_empty_string")


def test_arguments_are_checked_in_the_model_order():
    # the first failing argument decides: here the unexpected one comes before the mistyped one
    assert rule_of(SIMPLE, "[library.book_room(color='red', room='Reading Room', hours='2')]")[1] == "unexpected_param"
    assert rule_of(SIMPLE, "[library.book_room(hours='2', room='Reading Room', color='red')]")[1] == "type_error"


# ---- types ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("hours", ["True", "2.0", "'2'", "[2]"])
def test_official_exact_python_types(hours):
    assert rule_of(SIMPLE, f"[library.book_room(room='Reading Room', hours={hours})]") == (
        False, "type_error", "official_exact_python_types")


def test_int_for_a_float_parameter_is_converted():
    assert verdict(SIMPLE, "[library.book_room(room='Reading Room', hours=2, rate=10)]").correct
    assert not verdict(SIMPLE, "[library.book_room(room='Reading Room', hours=2, rate='10')]").correct


def test_bool_is_not_an_int_and_an_int_is_not_a_bool():
    assert rule_of(SIMPLE, "[library.book_room(room='Reading Room', hours=2, quiet=1)]")[1] == "type_error"


TUPLE_DOC = doc("plot", {"size": {"type": "tuple", "items": {"type": "integer"}},
                         "ticks": {"type": "array", "items": {"type": "integer"}}}, ["size"])
TUPLE_ITEM = item("simple_python", [TUPLE_DOC], [{"plot": {"size": [[3, 4]], "ticks": ["", [1, 2]]}}])


def test_tuple_for_a_tuple_parameter_becomes_a_list_but_not_for_an_array():
    assert verdict(TUPLE_ITEM, "[plot(size=(3, 4))]").correct
    assert verdict(TUPLE_ITEM, "[plot(size=[3, 4])]").correct
    assert rule_of(TUPLE_ITEM, "[plot(size=(3, 4), ticks=(1, 2))]") == (False, "type_error",
                                                                       "official_exact_python_types")


def test_official_list_elements_type_checked_one_level():
    floats = item("simple_python", [doc("f", {"xs": {"type": "array", "items": {"type": "float"}}}, ["xs"])],
                  [{"f": {"xs": [[1.0, 3.0]]}}])
    assert verdict(floats, "[f(xs=[1.0, 3.0])]").correct
    assert rule_of(floats, "[f(xs=[1, 3])]") == (False, "type_error",
                                                  "official_list_elements_type_checked_one_level")
    # an element of the allowed list's own type passes the type check (the variable rule, one level down)
    mixed = item("simple_python", [doc("f", {"xs": {"type": "array", "items": {"type": "integer"}}}, ["xs"])],
                 [{"f": {"xs": [["a", "b"]]}}])
    assert verdict(mixed, "[f(xs=['a', 'b'])]").correct


def test_an_allowed_value_that_is_not_a_list_lets_the_element_check_pass():
    sample = item("simple_python", [doc("f", {"xs": {"type": "array", "items": {"type": "integer"}}})],
                  [{"f": {"xs": ["", [1, 2]]}}])
    # the element types are not checked, the value check then fails
    assert rule_of(sample, "[f(xs=['1', '2'])]") == (False, "value_error", "official_list_order_matters")


# ---- variables ----------------------------------------------------------------------------------------------------


def test_official_variable_answers_compare_exactly():
    sample = item("simple_python", [doc("f", {"n": {"type": "integer"}, "d": {"type": "dict"}})],
                  [{"f": {"n": ["dontcare", ""], "d": ["my_data"]}}])
    assert verdict(sample, "[f(n='dontcare', d='my_data')]").correct
    assert verdict(sample, "[f(d=my_data)]").correct
    assert verdict(sample, "[f(n='', d='my_data')]").correct
    assert rule_of(sample, "[f(n='DontCare', d='my_data')]") == (False, "value_error",
                                                                  "official_variable_answers_compare_exactly")
    assert rule_of(sample, "[f(n=2, d='my_data')]") == (False, "value_error",
                                                         "official_variable_answers_compare_exactly")
    assert rule_of(sample, "[f(d='My Data')]")[2] == "official_variable_answers_compare_exactly"
    assert rule_of(sample, "[f(d={'k': 1})]")[2] == "official_variable_answers_compare_exactly"


def test_none_in_the_gold_is_a_variable_too():
    sample = item("simple_python", [doc("f", {"s": {"type": "string"}})], [{"f": {"s": [None, ""]}}])
    assert verdict(sample, "[f(s=None)]").correct
    assert not verdict(sample, "[f(s='None')]").correct


# ---- values ---------------------------------------------------------------------------------------------------------


def test_official_normalises_strings():
    assert official_normalises_strings("New York, N.Y.") == "newyorkny"
    assert official_normalises_strings("x**2") == official_normalises_strings("X^2") == official_normalises_strings("x 2")
    assert official_normalises_strings("it's") == 'it"s'
    city = item("simple_python", [doc("f", {"city": {"type": "string"}}, ["city"])], [{"f": {"city": ["New York"]}}])
    for answer in ("'new-york'", "'NEWYORK.'", "'New_York'"):
        assert verdict(city, f"[f(city={answer})]").correct, answer
    assert rule_of(city, "[f(city='New Yorks')]") == (False, "value_error", "official_normalises_strings")


def test_an_explicit_empty_string_passes_where_empty_is_allowed():
    sample = item("simple_python", [doc("f", {"s": {"type": "string"}}, ["s"])], [{"f": {"s": [""]}}])
    assert verdict(sample, "[f(s='')]").correct
    assert rule_of(sample, "[f()]")[1] == "missing_required"


LIST_ITEM = item("simple_python", [doc("f", {"tags": {"type": "array", "items": {"type": "string"}}})],
                 [{"f": {"tags": [["Red Wine", "blue"], ["blue", "Red Wine"], ""]}}])


def test_official_list_order_matters():
    assert verdict(LIST_ITEM, "[f(tags=['red-wine', 'BLUE'])]").correct
    assert verdict(LIST_ITEM, "[f(tags=['blue', 'red wine'])]").correct
    assert rule_of(LIST_ITEM, "[f(tags=['blue'])]") == (False, "value_error", "official_list_order_matters")


def test_official_empty_list_matches_optional_array():
    assert verdict(LIST_ITEM, "[f(tags=[])]").correct
    assert verdict(LIST_ITEM, "[f()]").correct


DICT_ITEM = item("simple_python", [doc("f", {"opts": {"type": "dict"}}, ["opts"])],
                 [{"f": {"opts": [{"mode": ["Fast", "quick"], "level": [3], "note": ["", "x"]}]}}])


def test_official_dict_one_level():
    assert verdict(DICT_ITEM, "[f(opts={'mode': 'fast', 'level': 3})]").correct
    assert verdict(DICT_ITEM, "[f(opts={'level': 3.0, 'mode': 'QUICK', 'note': 'x'})]").correct
    assert rule_of(DICT_ITEM, "[f(opts={'mode': 'fast'})]") == (False, "value_error", "official_dict_one_level")
    assert rule_of(DICT_ITEM, "[f(opts={'mode': 'fast', 'level': 3, 'extra': 1})]")[2] == "official_dict_one_level"
    assert rule_of(DICT_ITEM, "[f(opts={'mode': 'slow', 'level': 3})]")[2] == "official_dict_one_level"


def test_dict_values_are_not_compared_deeper():
    sample = item("simple_python", [doc("f", {"opts": {"type": "dict"}}, ["opts"])],
                  [{"f": {"opts": [{"inner": [{"a": "X"}]}]}}])
    assert verdict(sample, "[f(opts={'inner': {'a': 'X'}})]").correct
    assert not verdict(sample, "[f(opts={'inner': {'a': 'x'}})]").correct


def test_official_list_of_dicts_positional():
    sample = item("simple_python", [doc("f", {"rows": {"type": "array", "items": {"type": "dict"}}}, ["rows"])],
                  [{"f": {"rows": [[{"n": ["A"]}, {"n": ["B"]}]]}}])
    assert verdict(sample, "[f(rows=[{'n': 'a'}, {'n': 'b'}])]").correct
    assert rule_of(sample, "[f(rows=[{'n': 'b'}, {'n': 'a'}])]") == (False, "value_error",
                                                                       "official_list_of_dicts_positional")
    assert rule_of(sample, "[f(rows=[{'n': 'a'}])]")[2] == "official_list_of_dicts_positional"


def test_official_value_in_allowed_list():
    assert rule_of(SIMPLE, "[library.book_room(room='Reading Room', hours=3)]") == (
        False, "value_error", "official_value_in_allowed_list")
    assert not verdict(SIMPLE, "[library.book_room(room='Reading Room', hours=2, quiet=False)]").correct


# ---- routing ------------------------------------------------------------------------------------------------------


def test_official_call_count_must_match():
    assert rule_of(SIMPLE, "[]") == (False, "wrong_count", "official_call_count_must_match")
    two = "[library.book_room(room='Reading Room', hours=2), library.book_room(room='Reading Room', hours=2)]"
    assert rule_of(SIMPLE, two)[1] == "wrong_count"


WEATHER = doc("weather", {"city": {"type": "string"}}, ["city"])
TIME = doc("time", {"zone": {"type": "string"}}, ["zone"])


def test_multiple_checks_the_doc_of_the_gold_function():
    sample = item("multiple", [WEATHER, TIME], [{"time": {"zone": ["UTC"]}}])
    assert verdict(sample, "[time(zone='utc')]").correct
    assert rule_of(sample, "[weather(city='Paris')]")[1] == "wrong_func_name"
    assert rule_of(sample, "[time(zone='utc'), weather(city='Paris')]")[1] == "wrong_count"


def test_official_parallel_greedy_unordered():
    sample = item("parallel_multiple", [WEATHER, TIME],
                  [{"weather": {"city": ["Paris"]}}, {"weather": {"city": ["Rome"]}}, {"time": {"zone": ["UTC"]}}])
    assert verdict(sample, "[time(zone='UTC'), weather(city='Rome'), weather(city='Paris')]").correct
    assert rule_of(sample, "[time(zone='UTC'), weather(city='Rome')]")[1] == "wrong_count"
    assert rule_of(sample, "[time(zone='UTC'), weather(city='Rome'), weather(city='Oslo')]") == (
        False, "no_match", "official_parallel_greedy_unordered")


def test_parallel_matching_is_greedy_not_maximal():
    # gold 0 accepts both answers and takes the first; gold 1 only accepts that first one, which is gone
    sample = item("parallel", [WEATHER], [{"weather": {"city": ["Paris", "Rome"]}}, {"weather": {"city": ["Paris"]}}])
    assert not verdict(sample, "[weather(city='Paris'), weather(city='Rome')]").correct
    assert verdict(sample, "[weather(city='Rome'), weather(city='Paris')]").correct


def test_routing_reads_the_category_name():
    # live_parallel_multiple contains "parallel": order-free
    sample = item("live_parallel_multiple", [WEATHER, TIME],
                  [{"weather": {"city": ["Paris"]}}, {"time": {"zone": ["UTC"]}}], "live_parallel_multiple_0-0-0")
    assert verdict(sample, "[time(zone='UTC'), weather(city='Paris')]").correct


def test_simple_checks_against_the_first_doc():
    sample = item("live_simple", [WEATHER], [{"weather": {"city": ["Paris"]}}], "live_simple_0-0-0")
    assert verdict(sample, "weather(city='Paris')").correct


# ---- decoding outcomes ----------------------------------------------------------------------------------------------


def test_decoder_failure_names_the_decoder_rule():
    result = verdict(SIMPLE, "```python\n[library.book_room(room='Reading Room', hours=2)]\n```")
    assert (result.correct, result.error_type, result.rule) == (False, "decoder_failed",
                                                                "official_syntax_error_fails_decode")
    assert verdict(SIMPLE, "```python\n[library.book_room(room='Reading Room', hours=2)]\n```", mode="strict").correct


def test_strict_sign_fix_reaches_the_checker():
    sample = item("simple_python", [doc("f", {"n": {"type": "integer"}}, ["n"])], [{"f": {"n": [5]}}])
    assert not verdict(sample, "[f(n=+5)]").correct
    assert verdict(sample, "[f(n=+5)]", mode="strict").correct
    assert verdict(sample, "[f(n=-5)]").correct is False


def test_official_function_calling_format_for_tool_call_arguments():
    calls = [ToolCall(name="library.book_room", arguments="[1, 2]")]
    result = score(SIMPLE, Prediction(sample_id=SIMPLE.id, tool_calls=calls), "official")
    assert (result.correct, result.error_type, result.rule) == (False, "wrong_output_format",
                                                                "official_function_calling_format")


def test_fc_tool_calls_when_present():
    calls = [ToolCall(name="library.book_room", arguments='{"room": "Reading Room", "hours": 2}')]
    assert score(SIMPLE, Prediction(sample_id=SIMPLE.id, output="ignored", tool_calls=calls), "official").correct
    calls = [ToolCall(name="library.book_room", arguments={"room": "Reading Room", "hours": 2.0})]
    assert score(SIMPLE, Prediction(sample_id=SIMPLE.id, tool_calls=calls), "official").error_type == "type_error"
    broken = [ToolCall(name="library.book_room", arguments="{room")]
    result = score(SIMPLE, Prediction(sample_id=SIMPLE.id, tool_calls=broken), "official")
    assert (result.error_type, result.rule) == ("decoder_failed", "fc_arguments_are_json")


def test_no_output_text_fails_the_decode():
    result = score(SIMPLE, Prediction(sample_id=SIMPLE.id, output=None), "official")
    assert (result.correct, result.error_type, result.rule) == (False, "decoder_failed", "official_output_must_be_text")
    assert rule_of(SIMPLE, "")[1] == "wrong_count"


def test_missing_and_failed_predictions():
    assert score(SIMPLE, None, "official").error_type == "missing"
    failed = score(SIMPLE, Prediction(sample_id=SIMPLE.id, error="HTTP 500"), "official")
    assert (failed.correct, failed.error_type) == (False, "request_error")


def test_official_checker_crash_scores_wrong():
    # an array parameter without `items`: the official checker raises (KeyError) on any value for it
    sample = item("simple_python", [doc("f", {"xs": {"type": "array"}}, ["xs"])], [{"f": {"xs": [[1]]}}])
    result = verdict(sample, "[f(xs=[1])]")
    assert (result.correct, result.error_type, result.rule) == (False, "checker_crash",
                                                                "official_checker_crash_scores_wrong")


# ---- irrelevance and relevance -------------------------------------------------------------------------------------


IRRELEVANT = item("irrelevance", [WEATHER], None)
RELEVANT = item("live_relevance", [WEATHER], None, "live_relevance_0-0-0")


@pytest.mark.parametrize("output", ["[]", "", "I cannot help with that.", "weather", "Call [weather(city='x')] now",
                                    "```python\n[weather(city='x')]\n```", "[weather(city=lambda c: c)]", None])
def test_official_irrelevance_is_not_decodable_or_empty(output):
    result = verdict(IRRELEVANT, output)
    assert (result.correct, result.rule) == (True, "official_irrelevance_is_not_decodable_or_empty")


@pytest.mark.parametrize("output", ["[weather(city='x')]", "weather(city='x')", "```\n[weather()]\n```",
                                    "[anything(1)]"])
def test_a_call_on_an_irrelevance_item_is_wrong(output):
    result = verdict(IRRELEVANT, output)
    assert (result.correct, result.error_type) == (False, "contains_call")


def test_strict_fence_reading_applies_to_irrelevance_too():
    assert not verdict(IRRELEVANT, "```python\n[weather(city='x')]\n```", mode="strict").correct


def test_official_relevance_needs_a_call():
    assert verdict(RELEVANT, "[weather(city='nowhere', extra=1)]").correct
    assert verdict(RELEVANT, "[other()]").correct
    for output in ("[]", "No call needed.", "```python\n[weather(city='x')]\n```"):
        result = verdict(RELEVANT, output)
        assert (result.correct, result.error_type, result.rule) == (False, "no_call", "official_relevance_needs_a_call")


def test_native_tool_calls_count_for_relevance():
    calls = [ToolCall(name="weather", arguments='{"city": "x"}')]
    assert score(RELEVANT, Prediction(sample_id=RELEVANT.id, tool_calls=calls), "official").correct
    assert not score(IRRELEVANT, Prediction(sample_id=IRRELEVANT.id, tool_calls=calls), "official").correct
    assert score(IRRELEVANT, Prediction(sample_id=IRRELEVANT.id, tool_calls=[], output=""), "official").correct


# ---- Java and JavaScript values go through the converters ----------------------------------------------------------


def test_java_values_are_converted_by_the_declared_type():
    functions = [doc("Cache.put", {"key": {"type": "String"}, "ttl": {"type": "long"}, "on": {"type": "boolean"}},
                     ["key", "ttl", "on"])]
    sample = item("simple_java", functions, [{"Cache.put": {"key": ["user"], "ttl": [60], "on": [True]}}])
    assert verdict(sample, '[Cache.put(key="user", ttl=60L, on=true)]').correct
    assert verdict(sample, '[Cache.put(key="user", ttl=60, on=true)]').error_type == "type_error"


def test_java_value_must_be_text_for_native_tool_calls():
    functions = [doc("Cache.get", {"key": {"type": "String"}}, ["key"])]
    sample = item("simple_java", functions, [{"Cache.get": {"key": ["user"]}}])
    calls = [ToolCall(name="Cache.get", arguments={"key": 5})]
    result = score(sample, Prediction(sample_id=sample.id, tool_calls=calls), "official")
    assert (result.error_type, result.rule) == ("type_error", "official_java_value_must_be_text")


def test_javascript_values_are_converted_by_the_declared_type():
    functions = [doc("paint", {"color": {"type": "String"}, "size": {"type": "float"}}, ["color", "size"])]
    sample = item("simple_javascript", functions, [{"paint": {"color": ["red"], "size": [3.0]}}])
    assert verdict(sample, '[paint(color="red", size=3)]').correct
    assert verdict(sample, "[paint(color='RED', size=3.0)]").correct
    assert not verdict(sample, '[paint(color="red", size="big")]').correct


def test_details_stay_short_and_printable():
    sample = item("simple_python", [doc("f", {"n": {"type": "integer"}}, ["n"])], [{"f": {"n": [5]}}])
    huge = verdict(sample, "[f(n=10**5000)]")
    assert (huge.error_type, huge.rule) == ("value_error", "official_value_in_allowed_list")
    assert "too large to print" in huge.detail
    assert len(verdict(sample, "[f(n=[1]*50000)]").detail) < 1000


# ---- Java / JavaScript: an empty decode is a wrong output format; the mode reaches the value converters --------


@pytest.mark.parametrize(("category", "rule"), [("simple_java", "official_java_no_call_is_wrong_format"),
                                                ("simple_javascript", "official_js_no_call_is_wrong_format")])
@pytest.mark.parametrize("mode", ["official", "strict"])
def test_official_no_call_is_wrong_output_format(category, rule, mode):
    sample = item(category, [doc("Cache.get", {"key": {"type": "String"}}, ["key"])], [{"Cache.get": {"key": ["u"]}}])
    assert rule_of(sample, "[]", mode) == (False, "wrong_output_format", rule)
    assert rule_of(sample, "", mode) == (False, "wrong_output_format", rule)


def test_other_java_decode_failures_stay_decoder_failed():
    sample = item("simple_java", [doc("A.b", {"x": {"type": "int"}}, ["x"])], [{"A.b": {"x": [1]}}])
    assert rule_of(sample, "[A.b(x=1, x=2)]") == (False, "decoder_failed", "official_java_repeated_argument_fails")


def test_strict_java_value_fix_reaches_the_checker():
    functions = [doc("Cli.run", {"flags": {"type": "Array", "items": {"type": "String"}}}, ["flags"])]
    sample = item("simple_java", functions, [{"Cli.run": {"flags": [["-v", "--fast"]]}}])
    text = '[Cli.run(flags=new String[]{"-v", "--fast"})]'
    assert rule_of(sample, text)[:2] == (False, "value_error")
    assert rule_of(sample, text, "strict") == (True, None, "official_call_matches")


def test_strict_javascript_value_fix_reaches_the_checker():
    functions = [doc("chart.draw", {"opts": {"type": "dict"}}, ["opts"])]
    sample = item("simple_javascript", functions, [{"chart.draw": {"opts": [{"title": ["Sales"], "code": ["5"]}]}}])
    text = "[chart.draw(opts={title: 'Sales', code: '5'})]"
    assert not verdict(sample, text).correct
    assert rule_of(sample, text, "strict") == (True, None, "official_call_matches")


def test_official_javascript_value_must_be_text_for_native_tool_calls():
    functions = [doc("paint", {"size": {"type": "float"}}, ["size"])]
    sample = item("simple_javascript", functions, [{"paint": {"size": [3.0]}}])
    result = score(sample, Prediction(sample_id=sample.id, tool_calls=[ToolCall("paint", {"size": 3.0})]), "official")
    assert (result.error_type, result.rule) == ("type_error", "official_javascript_value_must_be_text")
    text = score(sample, Prediction(sample_id=sample.id, tool_calls=[ToolCall("paint", {"size": "3.0"})]), "official")
    assert text.correct
