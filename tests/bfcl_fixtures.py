"""Small BFCL-schema items written for these tests (one or two per category, none taken from the real data),
a folder laid out like the wheel's `bfcl_eval/data/`, and a stand-in wheel zip built from them with stand-in
source files of the same shape as the official ones (texts of our own, so a test can tell where they came from)."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

from evaluators.benchmarks.bfcl.categories import NO_ANSWER, SINGLE_TURN


def _doc(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"name": name, "description": description,
            "parameters": {"type": "dict", "properties": properties, "required": required}}


def _user(text: str) -> list[list[dict[str, str]]]:
    return [[{"role": "user", "content": text}]]


KETTLE = _doc("kitchen.kettle.boil", "Boil water in the kettle.", {
    "litres": {"type": "float", "description": "How much water."},
    "whistle": {"type": "boolean", "description": "Whistle when done.", "default": True},
}, ["litres"])
LAMP = _doc("set_lamp", "Turn the desk lamp on or off — at a brightness in per cent.", {
    "on": {"type": "boolean", "description": "On or off."},
    "brightness": {"type": "integer", "description": "Brightness, 0 to 100."},
    "colours": {"type": "array", "items": {"type": "string"}, "description": "Colours to cycle through."},
}, ["on"])
GARDEN = _doc("water_garden", "Water the garden beds.", {
    "beds": {"type": "array", "items": {"type": "dict", "properties": {
        "name": {"type": "string", "description": "Bed name."},
        "minutes": {"type": "float", "description": "Minutes of water."}}}, "description": "Beds to water."},
    "schedule": {"type": "dict", "description": "When.", "properties": {
        "day": {"type": "string", "description": "Day of the week."}}},
    "zones": {"type": "tuple", "items": {"type": "integer"}, "description": "Zone numbers."},
}, ["beds"])
JAVA_DOC = _doc("LibraryShelf.reserve", "Reserves a book on a library shelf.", {
    "isbn": {"type": "String", "description": "The book's ISBN."},
    "days": {"type": "long", "description": "Loan length in days."},
    "readers": {"type": "ArrayList", "items": {"type": "String"}, "description": "Reader names."},
    "note": {"type": "any", "description": "Anything to attach."},
}, ["isbn", "days"])
JS_DOC = _doc("paintCanvas", "Paints a region of the canvas.", {
    "colour": {"type": "String", "description": "Colour name."},
    "points": {"type": "array", "items": {"type": "integer"}, "description": "Corner coordinates."},
    "brush": {"type": "dict", "description": "Brush settings.", "properties": {
        "size": {"type": "integer", "description": "Größe in px."}}},
    "extra": {"type": "any", "description": "Anything else."},
}, ["colour"])

ITEMS: dict[str, list[dict[str, Any]]] = {
    "simple_python": [
        {"id": "simple_python_0", "question": _user("Boil 1.5 litres of water."), "function": [KETTLE]},
        {"id": "simple_python_1", "question": _user("Lamp on, 40 % please — merci."), "function": [LAMP]},
        {"id": "simple_python_2", "question": _user("Boil 2 litres, no whistle."), "function": [KETTLE]},
    ],
    "simple_java": [{"id": "simple_java_0", "question": _user("Reserve ISBN 978-0 for 14 days for Ann."),
                     "function": [JAVA_DOC]}],
    "simple_javascript": [{"id": "simple_javascript_0", "question": _user("Paint it teal with brush size 3."),
                           "function": [JS_DOC]}],
    "multiple": [{"id": "multiple_0", "question": _user("Turn the lamp off."), "function": [KETTLE, LAMP]}],
    "parallel": [{"id": "parallel_0", "question": _user("Boil 1 litre, then 2 litres."), "function": [KETTLE]}],
    "parallel_multiple": [{"id": "parallel_multiple_0", "question": _user("Lamp on and boil 1 litre."),
                           "function": [KETTLE, LAMP]}],
    "irrelevance": [{"id": "irrelevance_0", "question": _user("What is the capital of Peru?"), "function": [LAMP]}],
    "live_simple": [{"id": "live_simple_0-0-0", "question": [[
        {"role": "system", "content": "You are the house assistant."},
        {"role": "user", "content": "Water the roses for 5 minutes."}]], "function": [GARDEN]}],
    "live_multiple": [{"id": "live_multiple_0-0-0", "question": _user("Lamp at 10."), "function": [LAMP, GARDEN]}],
    "live_parallel": [{"id": "live_parallel_0-0-0", "question": _user("Water roses and tulips."),
                       "function": [GARDEN]}],
    "live_parallel_multiple": [{"id": "live_parallel_multiple_0-0-0", "question": _user("Lamp on; water roses."),
                                "function": [LAMP, GARDEN]}],
    "live_irrelevance": [
        {"id": "live_irrelevance_0-0-0", "question": _user("Tell me a joke."), "function": []},
        {"id": "live_irrelevance_1-0-1", "question": [[
            {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"},
            {"role": "user", "content": "How tall is Everest?"}]], "function": [KETTLE]},
    ],
    "live_relevance": [{"id": "live_relevance_0-0-0", "question": _user("Boil some water."), "function": [KETTLE]}],
}

ANSWERS: dict[str, list[list[dict[str, Any]]]] = {
    "simple_python": [[{"kitchen.kettle.boil": {"litres": [1.5], "whistle": ["", True]}}],
                      [{"set_lamp": {"on": [True], "brightness": [40], "colours": ["", []]}}],
                      [{"kitchen.kettle.boil": {"litres": [2.0], "whistle": [False]}}]],
    "simple_java": [[{"LibraryShelf.reserve": {"isbn": ["978-0"], "days": [14], "readers": [["Ann"]], "note": [""]}}]],
    "simple_javascript": [[{"paintCanvas": {"colour": ["teal"], "brush": [{"size": [3]}], "points": [""],
                                            "extra": [""]}}]],
    "multiple": [[{"set_lamp": {"on": [False], "brightness": [""], "colours": [""]}}]],
    "parallel": [[{"kitchen.kettle.boil": {"litres": [1.0]}}, {"kitchen.kettle.boil": {"litres": [2.0]}}]],
    "parallel_multiple": [[{"set_lamp": {"on": [True]}}, {"kitchen.kettle.boil": {"litres": [1.0]}}]],
    "live_simple": [[{"water_garden": {"beds": [[{"name": ["roses"], "minutes": [5.0]}]]}}]],
    "live_multiple": [[{"set_lamp": {"on": [True], "brightness": [10]}}]],
    "live_parallel": [[{"water_garden": {"beds": [[{"name": ["roses"]}]]}},
                       {"water_garden": {"beds": [[{"name": ["tulips"]}]]}}]],
    "live_parallel_multiple": [[{"set_lamp": {"on": [True]}}, {"water_garden": {"beds": [[{"name": ["roses"]}]]}}]],
}

# Stand-ins for the wheel's source files: the official files' shape (names, branches, f-strings), our texts.
PROMPTS_SOURCE = '''
OUTPUT_FORMAT_MAPPING = {"python": "[f(a=1), g(b=2)]", "json": "[{...}]"}
PARAM_TYPE_MAPPING = {"python": "", "json": ""}
PROMPT_STYLE_TEMPLATES = {
    "classic": {
        "persona": "[persona]",
        "task": "[task]",
        "tool_call_no_tag": "[calls as {output_format}.] {param_types} [nothing else]",
        "tool_call_with_tag": "[tagged {output_format}] {param_types}",
        "multiturn_behavior": "[keep going]",
        "available_tools": "[tools in {format}:]\\n{functions}\\n",
    },
}
_PLAINTEXT_SYSTEM_PROMPT_TEMPLATE = (
    "{persona}{task}\\n\\n{tool_call_format}\\n\\n{multiturn_behavior}\\n\\n{available_tools}"
)
_MARKDOWN_SYSTEM_PROMPT_TEMPLATE = "# {persona}"
PROMPT_TEMPLATE_MAPPING = {
    "plaintext": _PLAINTEXT_SYSTEM_PROMPT_TEMPLATE,
    "markdown": _MARKDOWN_SYSTEM_PROMPT_TEMPLATE,
}
DEFAULT_SYSTEM_PROMPT_FORMAT = "ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=plaintext&style=classic"
_DEFAULT_SYSTEM_PROMPT = "[not used]"
'''
UTILS_SOURCE = '''
import json


def _get_language_specific_hint(test_category):
    if is_java(test_category):
        return " [java doc]"
    elif is_js(test_category):
        return " [js doc]"
    else:
        return " [python doc]"


def _func_doc_language_specific_pre_processing(function, test_category):
    if len(function) == 0:
        return function
    for item in function:
        item["description"] = item["description"] + _get_language_specific_hint(test_category)
        properties = item["parameters"]["properties"]
        if is_java(test_category):
            for key, value in properties.items():
                if value["type"] == "any":
                    properties[key]["description"] += " [java any]"
                else:
                    value["description"] += f" [java {value['type']}]"
                if value["type"] == "ArrayList" or value["type"] == "Array":
                    value["description"] += f" [java of {value['items']['type']}]"
                    del value["items"]
                value["type"] = "string"
        elif is_js(test_category):
            for key, value in properties.items():
                if value["type"] == "any":
                    properties[key]["description"] += " [js any]"
                else:
                    value["description"] += f" [js {value['type']}]"
                if value["type"] == "array":
                    value["description"] += f" [js of {value['items']['type']}]"
                    del value["items"]
                if value["type"] == "dict":
                    if "properties" in value:
                        value["description"] += f" [js schema] {json.dumps(value['properties'])}"
                        del value["properties"]
                value["type"] = "string"
    return function
'''
HANDLER_UTILS_SOURCE = '''
def _cast_to_openai_type(properties, mapping):
    for key, value in properties.items():
        if mapping == GORILLA_TO_OPENAPI and value["type"] == "float":
            properties[key]["format"] = "float"
            properties[key]["description"] += " [a float]"
    return properties
'''
TYPE_MAPPINGS_SOURCE = '''
GORILLA_TO_OPENAPI = {"integer": "integer", "float": "number", "string": "string", "boolean": "boolean",
                      "array": "array", "dict": "object", "tuple": "array", "any": "string", "String": "string",
                      "long": "integer", "ArrayList": "array"}
'''
SOURCES = {
    "bfcl_eval/constants/default_prompts.py": PROMPTS_SOURCE,
    "bfcl_eval/utils.py": UTILS_SOURCE,
    "bfcl_eval/model_handler/utils.py": HANDLER_UTILS_SOURCE,
    "bfcl_eval/constants/type_mappings.py": TYPE_MAPPINGS_SOURCE,
}


def _lines(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def data_files() -> dict[str, str]:
    """Relative path under bfcl_eval/data/ -> JSON Lines text."""
    files = {}
    for category in SINGLE_TURN:
        files[f"BFCL_v4_{category}.json"] = _lines(ITEMS[category])
        if category not in NO_ANSWER:
            answers = [{"id": item["id"], "ground_truth": truth} for item, truth in zip(ITEMS[category], ANSWERS[category])]
            files[f"possible_answer/BFCL_v4_{category}.json"] = _lines(answers)
    return files


def write_bfcl_folder(root: Path) -> Path:
    """The fixture items laid out like the wheel's bfcl_eval/data/."""
    for relative, text in data_files().items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def build_fake_wheel(path: Path, sources: dict[str, str] | None = None) -> str:
    """A stand-in wheel zip (data files and stand-in sources); returns its sha256."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as bundle:
        for relative, text in data_files().items():
            bundle.writestr("bfcl_eval/data/" + relative, text)
        for name, text in (SOURCES if sources is None else sources).items():
            bundle.writestr(name, text)
    return hashlib.sha256(path.read_bytes()).hexdigest()
