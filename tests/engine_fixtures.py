"""A synthetic ACEBench-layout dataset of N distinct items, for engine tests and benchmarks."""

from __future__ import annotations

import json
from pathlib import Path

ALARM = {
    "name": "Clock.setAlarm",
    "description": "Set an alarm.",
    "parameters": {
        "type": "object",
        "properties": {"time": {"type": "string"}, "label": {"type": "string"}},
        "required": ["time"],
    },
}


def write_dataset(root: Path, count: int, category: str = "normal_atom_bool") -> Path:
    folder = root / "data_en"
    (folder / "possible_answer").mkdir(parents=True, exist_ok=True)
    with (folder / f"data_{category}.json").open("w") as questions, (folder / "possible_answer" / f"data_{category}.json").open("w") as answers:
        for index in range(count):
            sample_id = f"{category}_{index}"
            time = f"{index % 24:02d}:{index % 60:02d}"
            questions.write(json.dumps({"id": sample_id, "question": f"user: Set alarm number {index} at {time}.\n", "function": [ALARM], "time": ""}) + "\n")
            answers.write(json.dumps({"id": sample_id, "ground_truth": {"Clock.setAlarm": {"time": time}}}) + "\n")
    return root


def correct_reply(body: dict) -> dict:
    """Answers every synthetic item correctly, as text (or as a native call when tools are offered)."""
    text = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
    if " at " not in text:
        return {"content": "[]"}  # not one of the synthetic items
    time = text.rsplit(" at ", 1)[1].split(".")[0]
    if body.get("tools"):
        name = body["tools"][0]["function"]["name"]
        return {"tool_calls": [{"id": "c1", "type": "function", "function": {"name": name, "arguments": json.dumps({"time": time})}}]}
    return {"content": f"[Clock.setAlarm(time='{time}')]"}
