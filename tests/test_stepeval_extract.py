"""Reading the model's first tool call: native, Step-Audio text, Hermes JSON, else none; never eval."""

from __future__ import annotations

from evaluators.benchmarks.stepeval_audio.extract import arguments_object, extract_call, hermes_json_call, step_text_call
from evaluators.core.types import Prediction, ToolCall


def _text(output: str):
    return extract_call(Prediction("x", output=output))


def test_native_calls_come_first_and_only_the_first_counts():
    prediction = Prediction("x", output="<tool_call>function\nget_weather\n{\"location\": \"a\"}</tool_call>",
                            tool_calls=[ToolCall("web_search", '{"query": "q"}'), ToolCall("get_weather", {})])
    call = extract_call(prediction)
    assert (call.name, call.arguments, call.source) == ("web_search", {"query": "q"}, "native")


def test_step_text_format_with_padded_headers():
    call = _text("好的<tool_call>function  \nget_date_time  \n{}</tool_call>")
    assert (call.name, call.arguments, call.source) == ("get_date_time", {}, "step_text")
    assert step_text_call("<tool_call>function\ntimbre_rag\n{\"query\": \"{默认}\"}</tool_call>") == ("timbre_rag", {"query": "{默认}"})
    nested = step_text_call('<tool_call>function\nweb_search\n{"query": {"a": 1}}</tool_call>')
    assert nested == ("web_search", {"query": {"a": 1}})


def test_step_text_wins_over_hermes_and_hermes_is_read_after_it():
    both = '<tool_call>{"name": "calculate", "arguments": {}}</tool_call><tool_call>function\nget_weather\n{"location": "x"}</tool_call>'
    assert _text(both).name == "get_weather"
    call = _text('<tool_call>\n{"name": "search", "arguments": "{\\"query\\": \\"q\\"}"}\n</tool_call>')
    assert (call.name, call.raw_name, call.arguments, call.source) == ("web_search", "search", {"query": "q"}, "hermes_json")
    assert hermes_json_call('<tool_call>{bad}</tool_call><tool_call>{"name": "get_date_time"}</tool_call>') == ("get_date_time", {})


def test_no_call():
    for output in ("好的，我来帮你。", "", "<tool_call>{\"arguments\": {}}</tool_call>", "function\nget_weather\n{}", None):
        assert _text(output) is None
    assert extract_call(None) is None
    assert extract_call(Prediction("x", output="<tool_call>function\nx\n{}</tool_call>", error="HTTP 500")) is None


def test_arguments_are_parsed_as_json_never_evaluated():
    assert arguments_object("__import__('os').system('echo pwned')") is None
    assert arguments_object("{'location': 'x'}") is None  # Python literal, not JSON
    assert arguments_object("") == {} and arguments_object("[1]") is None and arguments_object(3) is None
    call = _text("<tool_call>function\nget_weather\n{\"location\": __import__('os')}</tool_call>")
    assert call.name == "get_weather" and call.arguments is None
