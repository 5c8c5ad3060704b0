"""Requests for BFCL items, built as the official handlers build them: prompt mode as the prompting
handlers (`system_prompt_pre_processing_chat_model` + `formulate_system_prompt`), native tools mode as
the OpenAI-compatible FC handler. Texts are read at run time from the pinned wheel (official_source)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from evaluators.benchmarks.bfcl.categories import language_of
from evaluators.benchmarks.bfcl.official_source import (
    LanguageHints,
    fill,
    float_sentence,
    gorilla_to_openapi,
    language_hints,
    official_prompt,
)
from evaluators.benchmarks.bfcl.tools import official_tools
from evaluators.core.types import ChatRequest, Sample

# The generation CLI's default temperature (`bfcl generate --temperature`), sent unless the user sets one.
OFFICIAL_TEMPERATURE = 0.001
# What the official handler sends besides model and messages (OpenAICompletionsHandler._query_prompting and
# _query_FC): the generation CLI's temperature and `store=False`.
OFFICIAL_SAMPLING: dict[str, Any] = {"temperature": OFFICIAL_TEMPERATURE, "store": False}
REQUEST_MODES = ("prompt", "tools")
# Java / JavaScript parameter types whose element type is stated in the description, and `items` dropped.
_JAVA_LISTS = ("ArrayList", "Array")
_JS_LIST = "array"
_JS_DICT = "dict"
_ANY = "any"


def _append(value: dict[str, Any], text: str) -> None:
    value["description"] = value.get("description", "") + text


def _java_parameter(value: dict[str, Any], hints: LanguageHints) -> None:
    any_type, declared, elements = hints.java
    _append(value, fill(any_type) if value.get("type") == _ANY else fill(declared, str(value.get("type"))))
    if value.get("type") in _JAVA_LISTS:
        _append(value, fill(elements, str((value.get("items") or {}).get("type"))))
        value.pop("items", None)
    value["type"] = "string"


def _javascript_parameter(value: dict[str, Any], hints: LanguageHints) -> None:
    any_type, declared, elements, entries = hints.javascript
    _append(value, fill(any_type) if value.get("type") == _ANY else fill(declared, str(value.get("type"))))
    if value.get("type") == _JS_LIST:
        _append(value, fill(elements, str((value.get("items") or {}).get("type"))))
        value.pop("items", None)
    if value.get("type") == _JS_DICT and "properties" in value:
        # official_js_dict_schema_in_description: json.dumps with its defaults (ASCII escapes, ", " and ": ").
        _append(value, fill(entries, json.dumps(value["properties"])))
        del value["properties"]
    value["type"] = "string"


def official_hinted_functions(functions: list[dict[str, Any]], category: str,
                              hints: LanguageHints | None = None) -> list[dict[str, Any]]:
    """official_language_hints: the docs as `add_language_specific_hint_to_function_doc` leaves them (a copy):
    every description gets the category's language sentence; Java and JavaScript parameters also get a
    sentence naming their declared type (and element type, for lists; the schema, for JS dicts) and
    become `string`."""
    hints = hints or language_hints()
    language = language_of(category)
    docs = copy.deepcopy(functions)
    for doc in docs:
        _append(doc, hints.function[language])
        if language == "python":
            continue
        for value in doc["parameters"]["properties"].values():
            if isinstance(value, dict):
                (_java_parameter if language == "java" else _javascript_parameter)(value, hints)
    return docs


def official_functions_text(functions: list[dict[str, Any]]) -> str:
    """official_json_doc_ascii_escaped: `json.dumps(functions, indent=4)` with Python's default
    ensure_ascii, so non-ASCII text reaches the model as \\uXXXX escapes."""
    return json.dumps(functions, indent=4)


def official_system_prompt(functions: list[dict[str, Any]], wheel: Path | None = None) -> str:
    """`formulate_system_prompt` with the default configuration, for hint-processed docs."""
    return official_prompt(wheel).system_prompt(official_functions_text(functions))


def official_prompt_messages(question: list[list[dict[str, Any]]], system_prompt: str) -> list[dict[str, Any]]:
    """`system_prompt_pre_processing_chat_model`: an item's own system message is kept after the BFCL
    prompt and a blank line (official_prepends_to_item_system_message); otherwise the prompt comes first."""
    messages = copy.deepcopy(question[0]) if question else []
    if messages and messages[0].get("role") == "system":
        messages[0]["content"] = system_prompt + "\n\n" + messages[0]["content"]
    else:
        messages.insert(0, {"role": "system", "content": system_prompt})
    return messages


def build_request(sample: Sample, mode: str = "prompt", language: str | None = None,
                  prompt_style: str | None = None) -> ChatRequest:
    """`prompt`: the official prompting request (system prompt + the item's messages, no tools);
    `tools`: the official FC request (the item's messages as they are, the docs as tools). Both with
    the official temperature unless the run sets one. BFCL has one prompt style, the official one:
    `prompt_style` is accepted for the common signature and changes nothing."""
    category = sample.subset
    functions = official_hinted_functions(sample.input["function"], category)
    if mode == "prompt":
        messages = official_prompt_messages(sample.input["question"], official_system_prompt(functions))
        return ChatRequest(messages=messages, sampling=dict(OFFICIAL_SAMPLING))
    if mode == "tools":
        messages = copy.deepcopy(sample.input["question"][0]) if sample.input["question"] else []
        tools, names = official_tools(functions, gorilla_to_openapi(), float_sentence())
        # The official FC handler leaves `tools` out when an item offers no function.
        return ChatRequest(messages=messages, tools=tools or None, tool_names=names, sampling=dict(OFFICIAL_SAMPLING))
    raise ValueError(f"unknown request mode {mode!r}; expected one of {', '.join(REQUEST_MODES)}")

