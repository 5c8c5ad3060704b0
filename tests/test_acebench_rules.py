"""Each official checker quirk and each strict fix, one named test per rule."""

from __future__ import annotations

import pytest

from evaluators.benchmarks.acebench import value_rules as rules
from evaluators.benchmarks.acebench.checker import score
from evaluators.benchmarks.acebench.normal_checker import (
    official_find_description,
    official_strips_digit_suffix,
    strict_strips_digit_suffix,
)
from evaluators.core.types import Prediction, Sample
from tests.acebench_fixtures import GOLD, OTHER, SPEC, passes, verdict


def test_exact_answer_passes_in_both_modes():
    assert passes("[Trip_plan(city='Paris', days=3)]", GOLD)
    assert passes("[Trip_plan(city='Paris', days=3)]", GOLD, strict=True)


def test_official_no_value_check_for_scalars():
    assert passes("[Trip_plan(city='Paris', days=30)]", GOLD)
    assert passes("[Trip_plan(city='Paris', kids=False)]", {"Trip_plan": {"city": "Paris", "kids": True}})
    assert not passes("[Trip_plan(city='Paris', days=30)]", GOLD, strict=True)
    assert not passes("[Trip_plan(city='Paris', kids=False)]", {"Trip_plan": {"city": "Paris", "kids": True}}, strict=True)


def test_official_number_means_int():
    assert rules.official_number_means_int("number") is int
    # a float for a `number` whose gold is an int is a type error
    assert verdict("[Trip_plan(city='Paris', budget=10.5)]", {"Trip_plan": {"city": "Paris", "budget": 10}}).error_type == "wrong_type"


def test_official_gold_type_mismatch_skips_value_check():
    gold = {"Trip_plan": {"city": "Paris", "budget": 99.5}}
    assert rules.official_gold_type_mismatch_skips_value_check(99.5, int)
    assert passes("[Trip_plan(city='Paris', budget=1.25)]", gold)
    assert not passes("[Trip_plan(city='Paris', budget=1.25)]", gold, strict=True)


def test_float_spec_accepts_int_values():
    assert passes("[Trip_plan(city='Paris', rate=2)]", {"Trip_plan": {"city": "Paris", "rate": 2.0}})


def test_official_true_false_strings_pass_as_bool():
    assert rules.official_true_false_strings_pass_as_bool("true") is True
    assert passes("[Trip_plan(city='Paris', kids='true')]", {"Trip_plan": {"city": "Paris", "kids": True}})
    assert passes("[Trip_plan(city='Paris', kids=true)]", {"Trip_plan": {"city": "Paris", "kids": True}})
    assert not passes("[Trip_plan(city='Paris', kids='true')]", {"Trip_plan": {"city": "Paris", "kids": True}}, strict=True)


def test_official_type_check_is_exact():
    # a bool is not an int, and a string is not an int
    assert verdict("[Trip_plan(city='Paris', days=True)]", GOLD).error_type == "wrong_type"
    assert verdict("[Trip_plan(city='Paris', days='3')]", GOLD).error_type == "wrong_type"
    assert rules.official_type_check(3, 3, int, None) == (True, False)


def test_official_string_substring_match():
    assert rules.official_string_substring_match("Paris, France", "paris")
    assert passes("[Trip_plan(city='Paris France')]", {"Trip_plan": {"city": "Paris"}})
    assert not passes("[Trip_plan(city='Pa')]", {"Trip_plan": {"city": "Paris"}})


def test_strict_string_equal():
    assert rules.strict_string_equal("PARIS.", "paris")
    assert not passes("[Trip_plan(city='Paris France')]", {"Trip_plan": {"city": "Paris"}}, strict=True)


def test_standardize_string_ignores_case_spaces_and_punctuation():
    assert rules.standardize_string("New-York, N.Y. 'x'") == 'newyorkny"x"'


def test_official_list_ordered_equal():
    gold = {"Trip_plan": {"city": "Paris", "stops": ["Lyon", "Nice"]}}
    assert passes("[Trip_plan(city='Paris', stops=['lyon', 'NICE'])]", gold)
    assert not passes("[Trip_plan(city='Paris', stops=['Nice', 'Lyon'])]", gold)
    assert not passes("[Trip_plan(city='Paris', stops=['Lyon'])]", gold)


def test_tuple_spec_without_items_expects_dicts():
    # `tuple` is a nested type whose item type defaults to dict, so string items fail the value check
    gold = {"Trip_plan": {"city": "Paris", "dates": ["a", "b"]}}
    result = verdict("[Trip_plan(city='Paris', dates=('a', 'b'))]", gold)
    assert not result.correct and result.rule == "official_list_of_dicts_match"
    assert passes("[Trip_plan(city='Paris', dates=['a', 'b'])]", gold, strict=True)


def test_official_nested_item_type():
    assert rules.official_nested_item_type("array", {"items": {"type": "integer"}}) == "integer"
    assert rules.official_nested_item_type("list(string)", {}) == "string"
    assert rules.official_nested_item_type("object", {}) == "dict"
    assert rules.official_nested_item_type("list", {}) is None


def test_official_nested_type_check():
    # only gold elements that are lists trigger an inner check
    assert rules.official_nested_type_check([[1, 2]], [[1, 2]], int)
    # the value's items are checked against each gold list as a whole, so a list item passes
    assert rules.official_nested_type_check([["a"]], [[1]], int)
    assert not rules.official_nested_type_check(["a"], [[1]], int)
    assert not rules.official_nested_type_check(["a"], [], str)
    assert rules.official_nested_type_check(["x"], ["y"], str)


def test_official_empty_gold_list_is_impossible():
    gold = {"Trip_plan": {"city": "Paris", "stops": []}}
    assert rules.official_empty_gold_list_is_impossible([])
    result = verdict("[Trip_plan(city='Paris', stops=[])]", gold)
    assert not result.correct and result.rule == "official_empty_gold_list_is_impossible"
    assert passes("[Trip_plan(city='Paris', stops=[])]", gold, strict=True)


def test_official_dict_match():
    gold = {"Trip_plan": {"city": "Paris", "traveler": {"name": "Ana Lima", "age": 30}}}
    assert passes("[Trip_plan(city='Paris', traveler={'name': 'ana-lima', 'age': 30})]", gold)
    assert not passes("[Trip_plan(city='Paris', traveler={'name': 'Ana Lima'})]", gold)
    assert not passes("[Trip_plan(city='Paris', traveler={'name': 'Ana Lima', 'age': 30, 'x': 1})]", gold)
    assert rules.official_dict_match({"a": {"b": "X"}}, {"a": {"b": "x"}})


def test_official_nested_value_substring_match():
    assert rules.official_nested_value_substring_match(137.98381, 37.9838)
    assert rules.official_nested_value_substring_match("Ana Lima Jr", "ana lima")
    assert rules.official_nested_value_substring_match(["a", "b"], ["a", "b"])
    assert not rules.official_nested_value_substring_match(["b", "a"], ["a", "b"])
    gold = {"Trip_plan": {"city": "Paris", "traveler": {"name": "Ana", "age": 3}}}
    assert passes("[Trip_plan(city='Paris', traveler={'name': 'Ana', 'age': 30})]", gold)
    assert not passes("[Trip_plan(city='Paris', traveler={'name': 'Ana', 'age': 30})]", gold, strict=True)


def test_official_flatten_single_item_lists():
    assert rules.official_flatten_single_item_lists({"a": [1], "b": [1, 2]}) == {"a": 1, "b": [1, 2]}


def test_official_list_of_dicts_match():
    gold = {"Trip_plan": {"city": "Paris", "rooms": [{"beds": 2}, {"beds": 1}]}}
    assert passes("[Trip_plan(city='Paris', rooms=[{'beds': 2}, {'beds': 1}])]", gold)
    assert not passes("[Trip_plan(city='Paris', rooms=[{'beds': 1}, {'beds': 2}])]", gold)
    assert not passes("[Trip_plan(city='Paris', rooms=[{'beds': 2}])]", gold)


def test_official_extra_parameter_fails():
    assert verdict("[Trip_plan(city='Paris', days=3, kids=True)]", GOLD).error_type == "extra_parameter"
    assert verdict("[Trip_plan(city='Paris', days=3, nope=1)]", GOLD).error_type == "extra_parameter"


def test_required_parameter_missing():
    assert verdict("[Trip_plan(days=3)]", GOLD).error_type == "missing_parameter"


def test_optional_gold_parameter_left_out_passes_officially_only():
    assert passes("[Trip_plan(city='Paris')]", GOLD)
    result = verdict("[Trip_plan(city='Paris')]", GOLD, strict=True)
    assert not result.correct and result.rule == "strict_gold_parameters_must_be_present"


def test_official_strips_digit_suffix():
    assert official_strips_digit_suffix("Trip_plan_2") == "Trip_plan"
    assert official_strips_digit_suffix("learning_2") == "learning"
    assert strict_strips_digit_suffix("learning_2", {"learning_2"}) == "learning_2"
    assert strict_strips_digit_suffix("Trip_plan_2", {"Trip_plan"}) == "Trip_plan"
    spec = {"name": "learning_2", "parameters": {"type": "object", "properties": {"x": {"type": "string"}}, "required": []}}
    gold = {"learning_2": {"x": "a"}}
    assert not passes("[learning_2(x='a')]", gold, functions=[spec])
    assert passes("[learning_2(x='a')]", gold, functions=[spec], strict=True)


def test_official_find_description():
    # the first spec whose name is a substring of the gold key is used, here the wrong one
    assert official_find_description([OTHER, SPEC], "Trip_plan")["name"] == "Trip"
    result = verdict("[Trip_plan(city='Paris')]", {"Trip_plan": {"city": "Paris"}}, functions=[OTHER, SPEC])
    assert not result.correct and result.rule == "official_find_description"
    assert passes("[Trip_plan(city='Paris')]", {"Trip_plan": {"city": "Paris"}}, functions=[OTHER, SPEC], strict=True)


def test_official_parallel_match_not_one_to_one():
    gold = {"Trip_plan_1": {"city": "Paris"}, "Trip_plan_2": {"city": "Paris Nord"}}
    # one model call ("Paris Nord") satisfies both gold calls by substring; the other is never checked
    output = "[Trip_plan(city='Paris Nord'), Trip_plan(city='Rome')]"
    assert passes(output, gold)
    assert not passes(output, gold, strict=True)


def test_strict_one_to_one_parallel_match():
    gold = {"Trip_plan_1": {"city": "Paris"}, "Trip_plan_2": {"city": "Rome"}}
    assert passes("[Trip_plan(city='Rome'), Trip_plan(city='Paris')]", gold, strict=True)
    assert passes("[Trip_plan(city='Rome'), Trip_plan(city='Paris')]", gold)


def test_function_count_and_name_mismatch():
    assert verdict("[Trip_plan(city='Paris'), Trip_plan(city='Rome')]", GOLD).error_type == "wrong_count"
    assert verdict("[trip_plan(city='Paris')]", GOLD).error_type == "wrong_function"
    assert verdict("[]", GOLD).error_type == "wrong_count"


def test_official_empty_arguments_rule():
    spec = {"name": "Ping", "parameters": {"type": "object", "properties": {}, "required": []}}
    assert not passes("[Ping()]", {"Ping": {}}, functions=[spec])
    assert passes("[Ping()]", {"Ping": {}}, functions=[spec], strict=True)
    literal_empty = {"name": "Ping", "parameters": {}}
    assert passes("[Ping()]", {"Ping": {}}, functions=[literal_empty])


def test_official_gold_equals_spec_properties_passes():
    spec = {"name": "Echo", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}, "required": []}}
    assert passes("[Echo(zzz=1)]", {"Echo": {"a": {"type": "string"}}}, functions=[spec])


def test_official_object_array_crashes():
    spec = {"name": "Box", "parameters": {"type": "object", "properties": {"items": {"type": "objectArray"}}, "required": []}}
    result = verdict("[Box(items=[{'a': 1}])]", {"Box": {"items": [{"a": 1}]}}, functions=[spec])
    assert not result.correct and result.rule == "official_checker_crash_counts_as_failure"


def test_official_checker_crash_counts_as_failure():
    # no spec matches the gold name: the reference raises TypeError on None
    result = verdict("[Ghost(a=1)]", {"Ghost": {"a": 1}}, functions=[SPEC])
    assert result.error_type == "checker_crash" and result.rule == "official_checker_crash_counts_as_failure"


def test_multiple_gold_candidates_any_passes():
    sample = Sample(
        id="normal_atom_bool_0",
        subset="normal_atom_bool",
        input={"functions": [SPEC]},
        gold=[{"Trip_plan": {"city": "Rome"}}, {"Trip_plan": {"city": "Paris"}}],
    )
    assert score(sample, Prediction(sample.id, output="[Trip_plan(city='Paris')]")).correct


def test_strict_values_equal():
    assert rules.strict_values_equal(3, 3.0)
    assert not rules.strict_values_equal(True, 1)
    assert rules.strict_values_equal({"a": ["X y"]}, {"a": ["xy"]})
    assert not rules.strict_values_equal({"a": 1}, {"a": 1, "b": 2})


@pytest.mark.parametrize("strict", [False, True])
def test_native_tool_calls_are_checked_like_text(strict: bool):
    from evaluators.core.types import ToolCall

    sample = Sample(id="normal_atom_bool_0", subset="normal_atom_bool", input={"functions": [SPEC]}, gold=GOLD)
    prediction = Prediction(sample.id, tool_calls=[ToolCall("Trip_plan", '{"city": "Paris", "days": 3}')])
    assert score(sample, prediction, "strict" if strict else "official").correct


def test_missing_prediction_and_request_error_are_failures_with_their_own_type():
    sample = Sample(id="normal_atom_bool_0", subset="normal_atom_bool", input={"functions": [SPEC]}, gold=GOLD)
    assert score(sample, None).error_type == "missing_prediction"
    assert score(sample, Prediction(sample.id, error="HTTP 500")).error_type == "request_error"


def test_huge_integer_arguments_pass_like_any_unchecked_int():
    # 10 ** 5000 cannot even be printed by Python 3.11; it is still only type-checked
    assert passes("[Trip_plan(city='Paris', days=10 ** 5000)]", GOLD)


def test_a_crash_on_one_candidate_ends_the_item():
    # the reference aborts at the crash, so a later candidate that would pass is never tried
    sample = Sample(
        id="normal_atom_bool_0",
        subset="normal_atom_bool",
        input={"functions": [SPEC]},
        # the first candidate's gold list holds a string where the checker expects a dict: it raises
        gold=[{"Trip_plan": {"city": "Paris", "rooms": ["x"]}}, {"Trip_plan": {"city": "Paris", "rooms": [{"beds": 2}]}}],
    )
    output = "[Trip_plan(city='Paris', rooms=[{'beds': 2}])]"
    result = score(sample, Prediction(sample.id, output=output))
    assert not result.correct and result.rule == "official_checker_crash_counts_as_failure"
    sample = Sample(id=sample.id, subset=sample.subset, input=sample.input, gold=list(reversed(sample.gold)))
    assert score(sample, Prediction(sample.id, output=output)).correct
