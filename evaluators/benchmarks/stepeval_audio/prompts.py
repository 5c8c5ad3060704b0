"""Requests for StepEval dialogues: our system prompt, the offered tools and the history mapped to
chat messages (spec §8), with user turns as transcripts (text) or as base64 wav parts (audio)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from evaluators.benchmarks.stepeval_audio.audio import wav_path
from evaluators.benchmarks.stepeval_audio.tools import OFFERED_TOOLS, offered_schemas
from evaluators.core.types import ChatRequest, Sample

MODALITIES = ("text", "audio")
# [assumed] A fixed date keeps requests identical between runs (and so cacheable); change it here or
# pass `date=` to build_request.
DEFAULT_DATE = "2025年7月25日，星期五"

SYSTEM_PROMPT = (
    "你是小跃，由阶跃星辰（StepFun）训练的语音助手。\n"
    "你可以调用系统为你提供的工具。每次回复前，请结合用户的需求和对话上下文，自己判断是否需要调用工具："
    "需要时调用最合适的那个工具，不需要时直接回复用户。\n"
    "交流时请体贴、耐心，留意用户的情绪和真正的需要。\n"
    "{date_line}\n"
    "请使用你默认的声音回复。"
)
PROMPT_MODE_TOOLS = (
    "\n\n你可以使用的工具（JSON 格式）：\n{tools}\n"
    "需要调用工具时，只输出下面这种格式，不要输出其他内容：\n"
    "<tool_call>function\n工具名\n{{JSON 格式的参数}}</tool_call>"
)


def date_line(date: str = DEFAULT_DATE) -> str:
    return f"今天是{date}。"


def system_prompt(date: str = DEFAULT_DATE) -> str:
    return SYSTEM_PROMPT.format(date_line=date_line(date))


def call_text(name: str, arguments: dict[str, Any]) -> str:
    """A call in the Step-Audio text format the gold data uses."""
    return f"<tool_call>function\n{name}\n{json.dumps(arguments, ensure_ascii=False)}</tool_call>"


def audio_part(path: Path) -> dict[str, Any]:
    return {"type": "input_audio", "input_audio": {"data": base64.b64encode(path.read_bytes()).decode("ascii"), "format": "wav"}}


def _user_message(turn: dict[str, Any], modality: str, audio_root: Path | None) -> dict[str, Any]:
    if modality == "text":
        return {"role": "user", "content": turn["text"]}
    if audio_root is None:
        raise ValueError("audio mode needs the folder of the wav files (audio_root)")
    return {"role": "user", "content": [audio_part(wav_path(audio_root, turn["wav"]))]}


def history_messages(
    history: list[dict[str, Any]], mode: str, modality: str, audio_root: Path | None = None
) -> list[dict[str, Any]]:
    """Turns 0..n-2 as chat messages. Tools mode: calls as `tool_calls` and results as `tool` messages;
    prompt mode: calls as their text and results as user turns wrapped in <tool_response> ([assumed])."""
    messages: list[dict[str, Any]] = []
    last_call_id = ""
    for turn in history:
        kind = turn["kind"]
        if kind == "user":
            messages.append(_user_message(turn, modality, audio_root))
        elif kind == "assistant":
            # OpenAI's schema has no audio for assistant history: spoken replies go as their text.
            messages.append({"role": "assistant", "content": turn["text"]})
        elif kind == "call" and mode == "tools":
            last_call_id = f"call_{turn['turn_idx']}"
            arguments = json.dumps(turn["call"]["arguments"], ensure_ascii=False)
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": last_call_id, "type": "function", "function": {"name": turn["call"]["name"], "arguments": arguments}},
            ]})
        elif kind == "call":
            messages.append({"role": "assistant", "content": call_text(turn["call"]["name"], turn["call"]["arguments"])})
        elif kind == "tool_result" and mode == "tools":
            messages.append({"role": "tool", "tool_call_id": last_call_id, "content": turn["text"]})
        elif kind == "tool_result":
            messages.append({"role": "user", "content": f"<tool_response>\n{turn['text']}\n</tool_response>"})
    return messages


def build_request(
    sample: Sample,
    mode: str = "prompt",
    language: str | None = None,
    *,
    modality: str = "text",
    audio_root: Path | None = None,
    date: str = DEFAULT_DATE,
) -> ChatRequest:
    """mode `tools`: schemas in `tools=[…]` (tool_choice auto); mode `prompt`: schemas in the system
    prompt and calls asked for in the Step-Audio text format."""
    if modality not in MODALITIES:
        raise ValueError(f"unknown modality {modality!r}; expected one of {', '.join(MODALITIES)}")
    if mode not in ("prompt", "tools"):
        raise ValueError(f"unknown request mode {mode!r}; expected prompt or tools")
    system = system_prompt(date)
    if mode == "prompt":
        system += PROMPT_MODE_TOOLS.format(tools=json.dumps(offered_schemas(), ensure_ascii=False, indent=1))
    messages = [{"role": "system", "content": system}, *history_messages(sample.input["history"], mode, modality, audio_root)]
    if mode == "prompt":
        return ChatRequest(messages=messages)
    return ChatRequest(messages=messages, tools=offered_schemas(), tool_choice="auto", tool_names={n: n for n in OFFERED_TOOLS})
