"""A small ToolBench-Static dataset written for these tests, in the record schema."""

from __future__ import annotations

import json
from pathlib import Path

TOOLS = [
    {"name": "get_weather_for_weatherapi", "description": "Weather for a city.",
     "parameters": "{'type': 'object', 'properties': {'city': {'type': 'string'}, 'days': {'type': 'integer'}}, 'required': ['city'], 'optional': ['days']}"},
    {"name": "list_cities_for_weatherapi", "description": "All cities.",
     "parameters": "{'type': 'object', 'properties': {}, 'required': [], 'optional': []}"},
    {"name": "Finish", "description": "Finish the task.",
     "parameters": "{'type': 'object', 'properties': {'return_type': {'type': 'string', 'enum': ['give_answer', 'give_up_and_restart']}, 'final_answer': {'type': 'string'}}, 'required': ['return_type']}"},
]
SYSTEM = {"role": "system", "content": "You are AutoGPT, you can use many tools(functions) to do the following task."}
USER = {"role": "user", "content": "What is the weather in Oslo for 3 days?\nBegin!\n"}
CALL = "Thought: I need the forecast.\nAction: get_weather_for_weatherapi\nAction Input: {\"city\": \"Oslo\", \"days\": 3}"
OBSERVATION = {"role": "function", "name": "get_weather_for_weatherapi", "content": "{\"error\": \"\", \"response\": \"Sunny\"}"}
FINISH = "Thought: done\nAction: Finish\nAction Input: {\"return_type\": \"give_answer\", \"final_answer\": \"It will be sunny in Oslo\"}"
GIVE_UP = "Thought: stuck\nAction: Finish\nAction Input: {\"return_type\": \"give_up_and_restart\"}"
LIST = "Thought: list first\nAction: list_cities_for_weatherapi\nAction Input: {}"
UNKNOWN = "Thought: x\nAction: spott\nAction Input: {\"is_id\": \"city center\"}"

STEPS = [
    {"messages": [SYSTEM, USER], "target": CALL},
    {"messages": [SYSTEM, USER, {"role": "assistant", "content": CALL, "name": None}, OBSERVATION], "target": FINISH},
    {"messages": [SYSTEM, USER], "target": GIVE_UP},
    {"messages": [SYSTEM, USER], "target": LIST},
    {"messages": [SYSTEM, USER], "target": UNKNOWN},
]


def write_toolbench(root: Path, subsets: tuple[str, ...] = ("out_of_domain",)) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for subset in subsets:
        with (root / f"{subset}.jsonl").open("w") as out:
            for step in STEPS:
                out.write(json.dumps({**step, "tools": TOOLS}) + "\n")
    return root
