"""A small StepEval-Audio-Toolcall dataset written for these tests, in the record schema: 8 files of
two dialogues each (a history tool call with its result, padded call headers, a negative ending in
another tool's call, negatives ending in plain replies), and tiny wavs written with `wave`."""

from __future__ import annotations

import json
import wave
from pathlib import Path
from typing import Any

import pytest

from evaluators.benchmarks.stepeval_audio.tools import TOOLS
from evaluators.core.types import Sample
from tests.conftest import real_data


@pytest.fixture(scope="session")
def real_stepeval_dir() -> Path:
    """The real slices (`head/`, `samples/`) under ../shared/data or TOOLBOARD_DATA_DIR; skipped when absent."""
    return real_data("stepeval_audio_toolcall", "StepEval data", "samples", "head")


def _call(name: str, arguments: dict[str, Any], padded: bool = False) -> str:
    pad = "  " if padded else ""
    return f"<tool_call>function{pad}\n{name}{pad}\n{json.dumps(arguments, ensure_ascii=False)}</tool_call>"


def _dialogue(stem: str, line: int, turns: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """turns: (speaker, text); `call:` texts are Assistant tool calls, `Input` turns tool results."""
    out = []
    for index, (speaker, text) in enumerate(turns):
        spoken = speaker == "Human" or (speaker == "Assistant" and not text.startswith("<tool_call>"))
        value: Any = {"type": "wav", "value": f"wav/{stem}.jsonl-{line}-{index}.wav"} if spoken else text
        out.append({"session_id": str(100 + line), "turn_idx": index, "from": speaker, "text": text, "value": value})
    return out


DIALOGUES: dict[str, list[list[tuple[str, str]]]] = {
    "get_weather_positive": [
        [("Human", "小跃，明天要去杭州出差，帮我看看那边的天气。"), ("Assistant", _call("get_weather", {"location": "hangzhou"}))],
        [("Human", "周末想去爬山。"), ("Assistant", "好主意，去哪座山呀？"), ("Human", "香山。帮我查下北京的天气。"),
         ("Assistant", _call("get_weather", {"location": "beijing"}, padded=True))],
    ],
    "get_weather_negative": [
        [("Human", "小跃，帮我算一下十二乘以八。"), ("Assistant", _call("calculate", {"expression": "12*8"}))],
        [("Human", "给我讲个笑话吧。"), ("Assistant", "好呀，有一只企鹅走进了冰箱……")],
    ],
    "get_date_time_positive": [
        [("Human", "小跃，现在几点了？"), ("Assistant", _call("get_date_time", {}, padded=True))],
        [("Human", "我有点困。"), ("Assistant", "要不要休息一会儿？"), ("Human", "今天是几号来着？"),
         ("Assistant", _call("get_date_time", {}))],
    ],
    "get_date_time_negative": [
        [("Human", "小跃，帮我搜一下番茄炒蛋的做法。"), ("Assistant", _call("web_search", {"query": "番茄炒蛋 做法"}))],
        [("Human", "谢谢你陪我聊天。"), ("Assistant", "不客气，随时找我聊！")],
    ],
    "timbre_positive": [
        [("Human", "小跃，换成一个温柔的女声吧。"), ("Assistant", _call("timbre_rag", {"query": "温柔的女声"}, padded=True)),
         ("Input", "你的音色已经更新完成，请继续对话。"), ("Assistant", "好的，现在是温柔的女声啦。"),
         ("Human", "还是换回你原来的声音吧。"), ("Assistant", _call("timbre_rag", {"query": "默认男音色"}, padded=True))],
        [("Human", "用老爷爷的声音给我讲故事。"), ("Assistant", _call("timbre_rag", {"query": "慈祥的老爷爷的声音"}))],
    ],
    "timbre_negative": [
        [("Human", "小跃，声音小一点。"), ("Assistant", "好的，已经调小音量了。")],
        [("Human", "说话慢一点好吗？"), ("Assistant", "好的，我会放慢语速。")],
    ],
    "web_search_positive": [
        [("Human", "小跃，查一下最近的电影排行榜。"), ("Assistant", _call("web_search", {"query": "最近 电影 排行榜"}))],
        [("Human", "长城有多长？"), ("Assistant", _call("web_search", {"query": "长城 长度"}))],
    ],
    "web_search_negative": [
        [("Human", "早上好呀小跃。"), ("Assistant", "早上好！今天也要开心哦。")],
        [("Human", "三百五十除以七等于多少？"), ("Assistant", _call("calculate", {"expression": "350/7"}))],
    ],
}


def write_stepeval(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for stem, dialogues in DIALOGUES.items():
        lines = [json.dumps(_dialogue(stem, line, turns), ensure_ascii=False) for line, turns in enumerate(dialogues)]
        (root / f"{stem}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def write_wav(path: Path, seed: int = 0, frames: int = 160) -> Path:
    """A short 16 kHz mono 16-bit wav whose samples depend on `seed` (so files differ)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16000)
        out.writeframes(bytes((seed + i) % 256 for i in range(frames * 2)))
    return path


def write_wavs(root: Path) -> list[Path]:
    """A wav for every spoken turn of the dataset in `root`, at `root/wav/…` as the records name it."""
    written = []
    for file in sorted(root.glob("*.jsonl")):
        for line in file.read_text(encoding="utf-8").splitlines():
            for turn in json.loads(line):
                if isinstance(turn["value"], dict):
                    written.append(write_wav(root / turn["value"]["value"], seed=len(written)))
    return written


def judge_reply(body: dict) -> dict:
    """Says no to any call mentioning shanghai, yes otherwise."""
    text = body["messages"][1]["content"].split("Assistant's call:")[1]
    label = "no" if "shanghai" in text else "yes"
    return {"content": f'<think>checking</think>{{"reason": "scripted", "label": "{label}"}}'}


def spec_formulas(samples: list[Sample], meaning: dict[str, tuple[str | None, bool]]) -> dict[str, dict[str, Any]]:
    """The spec §7 reconstruction, written out again from the meanings alone."""
    out = {}
    for tool in TOOLS:
        positives = [s for s in samples if s.subset == tool and s.input["polarity"] == "positive"]
        negatives = [s for s in samples if s.subset == tool and s.input["polarity"] == "negative"]
        if not positives and not negatives:
            continue
        tp = sum(1 for s in positives if meaning[s.id][0] is not None)
        fp = sum(1 for s in negatives if meaning[s.id][0] == tool)
        fp_any = sum(1 for s in negatives if meaning[s.id][0] is not None)
        right = [s for s in positives if meaning[s.id][0] == tool]
        reasonable = sum(1 for s in right if meaning[s.id][1])
        out[tool] = {
            "precision": tp / (tp + fp) if tp + fp else None,
            "recall": tp / len(positives) if positives else None,
            "type_accuracy": len(right) / tp if tp else None,
            "param_accuracy": None if tool == "get_date_time" else (reasonable / len(right) if right else None),
            "TP": tp, "FN": len(positives) - tp, "FP": fp, "FP_any": fp_any,
        }
    return out
