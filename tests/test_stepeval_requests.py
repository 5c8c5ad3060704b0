"""StepEval requests: system prompt, offered tools, history mapping (spec §8) in text, prompt and audio mode."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from evaluators.benchmarks.stepeval_audio.prompts import DEFAULT_DATE, build_request, system_prompt
from evaluators.core.errors import DataError
from evaluators.core.registry import get_benchmark
from evaluators.core.types import Sample
from tests.stepeval_fixtures import write_stepeval, write_wavs


@pytest.fixture
def samples(tmp_path: Path) -> list[Sample]:
    return get_benchmark("stepeval_audio").load(write_stepeval(tmp_path / "stepeval"))


def _sample(samples: list[Sample], sample_id: str) -> Sample:
    return next(s for s in samples if s.id == sample_id)


def test_system_prompt_has_a_configurable_date_line():
    assert f"今天是{DEFAULT_DATE}。" in system_prompt()
    assert "今天是2030年1月1日。" in system_prompt("2030年1月1日") and "小跃" in system_prompt()


def test_tools_mode_offers_five_valid_schemas_and_maps_the_history(samples: list[Sample]):
    from jsonschema import Draft202012Validator

    request = build_request(_sample(samples, "timbre_positive_0"), mode="tools", date="2030年1月1日")
    names = [tool["function"]["name"] for tool in request.tools]
    assert names == ["timbre_rag", "get_date_time", "get_weather", "web_search", "calculate"]
    for tool in request.tools:
        Draft202012Validator.check_schema(tool["function"]["parameters"])
    assert request.tool_choice == "auto"
    system, *history = request.messages
    assert system["role"] == "system" and "2030年1月1日" in system["content"]
    assert history == [
        {"role": "user", "content": "小跃，换成一个温柔的女声吧。"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
            "name": "timbre_rag", "arguments": json.dumps({"query": "温柔的女声"}, ensure_ascii=False)}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "你的音色已经更新完成，请继续对话。"},
        {"role": "assistant", "content": "好的，现在是温柔的女声啦。"},
        {"role": "user", "content": "还是换回你原来的声音吧。"},
    ]  # the gold final turn is not sent


def test_prompt_mode_describes_the_tools_and_writes_calls_as_text(samples: list[Sample]):
    request = build_request(_sample(samples, "timbre_positive_0"), mode="prompt")
    assert request.tools is None
    assert '"name": "web_search"' in request.messages[0]["content"] and "<tool_call>function" in request.messages[0]["content"]
    assert request.messages[2] == {"role": "assistant", "content": '<tool_call>function\ntimbre_rag\n{"query": "温柔的女声"}</tool_call>'}
    assert request.messages[3] == {"role": "user", "content": "<tool_response>\n你的音色已经更新完成，请继续对话。\n</tool_response>"}


def test_audio_mode_sends_user_turns_as_base64_wav(tmp_path: Path):
    root = write_stepeval(tmp_path / "stepeval")
    write_wavs(root)
    sample = next(s for s in get_benchmark("stepeval_audio").load(root) if s.id == "get_weather_positive_1")
    request = build_request(sample, mode="tools", modality="audio", audio_root=root)
    users = [m for m in request.messages if m["role"] == "user"]
    assert len(users) == 2
    for message, turn in zip(users, (0, 2)):
        (part,) = message["content"]
        assert part["type"] == "input_audio" and part["input_audio"]["format"] == "wav"
        wav = root / "wav" / f"get_weather_positive.jsonl-1-{turn}.wav"
        assert base64.b64decode(part["input_audio"]["data"]) == wav.read_bytes()
    # assistant history stays text: OpenAI's schema has no assistant audio input
    assert request.messages[2] == {"role": "assistant", "content": "好主意，去哪座山呀？"}
    (root / "wav" / "get_weather_positive.jsonl-1-2.wav").unlink()
    with pytest.raises(DataError, match="wav file not found: wav/get_weather_positive.jsonl-1-2.wav"):
        build_request(sample, mode="tools", modality="audio", audio_root=root)


def test_unknown_modes_are_refused(samples: list[Sample]):
    with pytest.raises(ValueError, match="unknown modality 'video'"):
        build_request(samples[0], modality="video")
    with pytest.raises(ValueError, match="unknown request mode"):
        build_request(samples[0], mode="xml")
