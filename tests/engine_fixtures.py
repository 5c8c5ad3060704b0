"""A synthetic ACEBench-layout dataset of N distinct items, for engine tests and benchmarks."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from evaluators.engine.client import RetryPolicy
from evaluators.engine.runner import execute, start_run
from evaluators.engine.settings import ModelSettings, RunConfig, RunRequest
from evaluators.engine.store import Store
from tests.scripted_server import ScriptedServer

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


# ---- runs against the scripted server ----------------------------------------------------------

FAST_RETRY = RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05)


def scripted_run_config(server: ScriptedServer, data: Path, **kwargs) -> RunConfig:
    model = ModelSettings(base_url=server.base_url, model="scripted", timeout=kwargs.pop("timeout", 5.0),
                          request_mode=kwargs.pop("request_mode", "prompt"), api_key_env="TOOLBOARD_TEST_KEY")
    return RunConfig("acebench", model, language="en", subsets=("normal_atom_bool",), data_dir=str(data),
                     concurrency=kwargs.pop("concurrency", 4), **kwargs)


def run_to_end(store: Store, config: RunConfig, **kwargs):
    """Start and execute a run of `scripted_run_config`."""
    run_id, samples = start_run(RunRequest(config), store)
    return asyncio.run(execute(store, run_id, samples, retry=kwargs.pop("retry", FAST_RETRY), **kwargs))


def stored_predictions(home: Path, run_id: str) -> dict[str, Any]:
    """The predictions a run stored in the store of TOOLBOARD_HOME `home` (a CLI run's, read after it ended)."""
    store = Store(home / "toolboard.db")
    try:
        return store.load_predictions(run_id)
    finally:
        store.close()
