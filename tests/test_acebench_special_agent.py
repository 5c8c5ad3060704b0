"""Special categories (keyword substrings) and agent categories (end state, milestones)."""

from __future__ import annotations

from evaluators.benchmarks.acebench.agent_checker import (
    check_end_state,
    milestone_fraction,
    official_process_score,
    official_unmatched_gold_class_is_skipped,
)
from evaluators.benchmarks.acebench.checker import score
from evaluators.benchmarks.acebench.evidence import agent_prediction
from evaluators.benchmarks.acebench.special_checker import check_error_param, check_incomplete, check_irrelevant
from evaluators.core.types import Prediction, Sample


def test_special_incomplete_needs_keyword_api_and_every_parameter():
    gold = {"Trip_plan": ["traveler", "stops"]}
    assert check_incomplete('["Missing necessary parameters (traveler, stops) for the api (Trip_plan)"]', gold).valid
    assert check_incomplete("missing necessary parameters (traveler, stops) for the api (Trip_plan)", gold).error_type == "not_detected"
    assert check_incomplete("Missing necessary parameters (traveler, stops)", gold).error_type == "wrong_correction"
    assert check_incomplete("Missing necessary parameters (traveler) for the api (Trip_plan)", gold).error_type == "wrong_correction"


def test_special_error_param_needs_keyword_and_values_not_names():
    gold = {"time": ["25:99"], "day": ["Funday"]}
    assert check_error_param("There is incorrect value (25:99, Funday) for the parameters (x)", gold).valid
    assert not check_error_param("There is incorrect value (25:99)", gold).valid
    assert check_error_param("[Clock_setAlarm(time='25:99')]", gold).error_type == "not_detected"


def test_special_irrelevant_keyword_is_case_sensitive():
    assert check_irrelevant("Due to the limitations of the function, I cannot solve this problem.", None).valid
    assert not check_irrelevant("Due to The Limitations of the function", None).valid
    assert not check_irrelevant("[Weather_getForecast(city='x')]", None).valid


def test_special_item_with_only_tool_calls_fails():
    from evaluators.core.types import ToolCall

    sample = Sample(id="special_irrelevant_0", subset="special_irrelevant", input={"functions": []}, gold="x")
    assert not score(sample, Prediction(sample.id, tool_calls=[ToolCall("f", {})])).correct


GOLD_STATE = [{"BaseApi": {"wifi": True, "logged_in": True}}, {"MessageApi": {"inbox": {"1": {"m": "hi"}}}}]


def test_agent_end_state_matches_in_any_class_order_and_ignores_extra_dict_keys():
    result = [{"MessageApi": {"inbox": {"1": {"m": "hi"}, "2": {"m": "extra"}}}}, {"BaseApi": {"wifi": True, "logged_in": True}}]
    assert check_end_state(result, GOLD_STATE, strict=False).valid


def test_agent_end_state_failures():
    assert check_end_state([], GOLD_STATE, strict=False).rule == "agent_class_count"
    wrong_wifi = [{"BaseApi": {"wifi": False, "logged_in": True}}, GOLD_STATE[1]]
    assert check_end_state(wrong_wifi, GOLD_STATE, strict=False).rule == "agent_attribute_equal"
    missing_key = [GOLD_STATE[0], {"MessageApi": {"inbox": {}}}]
    assert check_end_state(missing_key, GOLD_STATE, strict=False).rule == "agent_dict_attribute_subset"
    extra_attr = [{"BaseApi": {"wifi": True, "logged_in": True, "x": 1}}, GOLD_STATE[1]]
    assert check_end_state(extra_attr, GOLD_STATE, strict=False).rule == "agent_attribute_not_in_gold"


def test_official_unmatched_gold_class_is_skipped():
    gold = [{"BaseApi": {"wifi": True}}, {"ReminderAPI": {"reminder_list": {"1": "x"}}}]
    result = [{"BaseApi": {"wifi": True}}, {"ReminderApi": {"reminder_list": {}}}]
    assert official_unmatched_gold_class_is_skipped(gold[1], result)
    assert check_end_state(result, gold, strict=False).valid
    assert check_end_state(result, gold, strict=True).rule == "strict_unmatched_gold_class_fails"


def test_milestones_are_found_greedily_in_order_after_trimming():
    process = ["[a()]", " [b(x=1)] ", "[c()]", "[d()]"]
    assert milestone_fraction(process, ["[a()]", "[b(x=1)]", "[d()]"]) == 1.0
    assert milestone_fraction(process, ["[d()]", "[a()]"]) == 0.5
    assert milestone_fraction([], ["[a()]"]) == 0.0
    assert milestone_fraction([], []) == 1.0


def test_official_process_score():
    process = ["[a()]", "[c()]"]
    # alternatives: best fraction, rounded to 3 places; a single list is not rounded
    assert official_process_score(process, [["[a()]", "[b()]", "[x()]"], ["[a()]", "[c()]", "[d()]"]]) == 0.667
    assert official_process_score(process, ["[a()]", "[b()]", "[x()]"]) == 1 / 3


def test_agent_score_gives_full_process_to_correct_items():
    sample = Sample(id="agent_multi_step_0", subset="agent_multi_step", input={}, gold=GOLD_STATE, meta={"mile_stone": ["[z()]"]})
    right = score(sample, agent_prediction(sample.id, GOLD_STATE, []))
    assert right.correct and right.metrics == {"process_score": 1.0}
    wrong = score(sample, agent_prediction(sample.id, [], ["[z()]"]))
    assert not wrong.correct and wrong.metrics == {"process_score": 1.0} and wrong.decoded == []
    assert score(sample, None).metrics == {"process_score": 0.0}
