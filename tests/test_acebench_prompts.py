"""Requests: the text protocol (en, zh; normal, preference, special) and native tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from evaluators.benchmarks.acebench.data import load
from evaluators.benchmarks.acebench.prompts import build_request, to_json_schema, to_openai_tool, tool_name


def _sample(samples, subset):
    return next(s for s in samples if s.subset == subset)


@pytest.fixture
def samples(example_dir: Path):
    return load(example_dir, language="en")


def test_normal_prompt_carries_the_protocol(samples):
    request = build_request(_sample(samples, "normal_single_turn_single_function"))
    system, user = request.messages[0]["content"], request.messages[1]["content"]
    assert "[ApiName(key1='value1', key2='value2')" in system
    assert "[ApiName()]" in system and "never make one up" in system
    assert "Current time: The current time is May 4, 2025" in system
    assert "'name': 'Weather_getForecast'" in system  # the Python repr of the spec list
    assert "tool:" in system and user.endswith(_sample(samples, "normal_single_turn_single_function").input["question"])
    assert request.tools is None


def test_preference_prompt_has_the_profile(samples):
    system = build_request(_sample(samples, "normal_preference")).messages[0]["content"]
    assert "Character profile:\n{'basic_features'" in system and "Current time" not in system


def test_special_prompt_lists_the_three_sentences_and_has_no_tool_role(samples):
    system = build_request(_sample(samples, "special_incomplete")).messages[0]["content"]
    assert "Missing necessary parameters (key1, key2, ...) for the api (ApiName)" in system
    assert "There is incorrect value (value) for the parameters (key)" in system
    assert "Due to the limitations of the function, I cannot solve this problem." in system
    assert "- tool:" not in system


def test_chinese_prompts_keep_the_english_sentences(samples):
    request = build_request(_sample(samples, "special_irrelevant"), language="zh")
    system = request.messages[0]["content"]
    assert "调用列表" in system and "Due to the limitations of the function" in system
    assert request.messages[1]["content"].startswith("以下是目前为止的对话")


def test_tools_mode_builds_valid_openai_tools(samples):
    sample = _sample(samples, "normal_atom_list")
    request = build_request(sample, mode="tools")
    assert request.tools and request.tool_choice == "auto"
    function = request.tools[0]["function"]
    assert function["name"] == "Trip_plan" and request.tool_names == {"Trip_plan": "Trip_plan"}
    Draft202012Validator.check_schema(function["parameters"])
    assert function["parameters"]["properties"]["stops"] == {"type": "array", "items": {"type": "string"}, "description": "Cities in order."}


def test_loose_types_map_to_json_schema():
    assert to_json_schema({"type": "float"}) == {"type": "number"}
    assert to_json_schema({"type": "dict"}) == {"type": "object", "properties": {}}
    assert to_json_schema({"type": "tuple"}) == {"type": "array", "items": {}}
    assert to_json_schema({"type": "objectArray"})["items"] == {"type": "object", "properties": {}}
    assert to_json_schema({"type": "list(string)"}) == {"type": "array", "items": {"type": "string"}}
    assert to_json_schema({"type": "any", "description": "x"}) == {"description": "x"}
    assert to_json_schema({"type": "enum", "enum": ["a"]}) == {"type": "string", "enum": ["a"]}
    nested = to_json_schema({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a", "ghost"]})
    assert nested["required"] == ["a"]


def test_tool_names_are_made_valid():
    assert tool_name("ai.assistantModelSelector") == "ai_assistantModelSelector"
    assert to_openai_tool({"name": "f", "parameters": None})["function"]["parameters"] == {"type": "object", "properties": {}}


def test_unknown_mode_and_agent_items_are_refused(samples):
    with pytest.raises(ValueError, match="unknown request mode"):
        build_request(samples[0], mode="chat")
    with pytest.raises(ValueError, match="agent items are multi-step rollouts"):
        build_request(_sample(samples, "agent_multi_turn"))


def test_every_real_spec_converts_to_a_valid_schema(real_acebench_dir: Path):
    checked: set[str] = set()
    for language in ("en", "zh"):
        for sample in load(real_acebench_dir, language=language):
            if sample.subset.startswith("agent"):
                continue
            assert build_request(sample).messages[1]["content"]
            request = build_request(sample, mode="tools")
            for tool in request.tools or []:
                key = json.dumps(tool, sort_keys=True)
                if key not in checked:
                    checked.add(key)
                    Draft202012Validator.check_schema(tool["function"]["parameters"])
