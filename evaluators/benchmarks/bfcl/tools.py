"""Native tools mode: function docs as the official OpenAI-style FC handler sends them (`convert_to_tool`
with GORILLA_TO_OPENAPI): BFCL type names mapped to JSON-Schema types, a `float` given `format: float` and
a sentence in its description, and names with `.` sent with `_` (OpenAI names allow no dots)."""

from __future__ import annotations

import copy
import re
from typing import Any

# OpenAI-style APIs refuse "." in a function name: the official handler sends "_" instead.
_DOT = re.compile(r"\.")
FALLBACK_TYPE = "string"  # the official conversion's type for a missing or unknown type


def official_tool_name(name: str) -> str:
    return _DOT.sub("_", name)


def _item_type(items: dict[str, Any], mapping: dict[str, str]) -> None:
    if "type" in items:
        items["type"] = mapping.get(items["type"], FALLBACK_TYPE)


def official_cast_types(properties: dict[str, Any], mapping: dict[str, str], float_sentence: str) -> dict[str, Any]:
    """`_cast_to_openai_type`: each property's type mapped (missing or unknown: string); a `float` also
    gets `format: float` and the sentence; object/array properties have their `properties` cast in turn,
    else their `items` type (and one level further: an array's items' items, or an object's properties)."""
    for value in properties.values():
        if not isinstance(value, dict):
            continue
        declared = value.get("type")
        if declared is None:
            value["type"] = FALLBACK_TYPE
        else:
            if declared == "float":
                value["format"] = "float"
                value["description"] = value.get("description", "") + float_sentence
            value["type"] = mapping.get(declared, FALLBACK_TYPE) if isinstance(declared, str) else FALLBACK_TYPE
        if value["type"] in ("array", "object"):
            if isinstance(value.get("properties"), dict):
                value["properties"] = official_cast_types(value["properties"], mapping, float_sentence)
            elif isinstance(value.get("items"), dict):
                items = value["items"]
                _item_type(items, mapping)
                if items.get("type") == "array" and isinstance(items.get("items"), dict):
                    _item_type(items["items"], mapping)
                elif items.get("type") == "object" and isinstance(items.get("properties"), dict):
                    items["properties"] = official_cast_types(items["properties"], mapping, float_sentence)
    return properties


def official_tools(functions: list[dict[str, Any]], mapping: dict[str, str],
                   float_sentence: str) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """(tools as sent, {name as sent: the doc's own name}) for already hint-processed docs."""
    tools, names = [], {}
    for doc in copy.deepcopy(functions):
        original = doc["name"]
        doc["name"] = official_tool_name(original)
        parameters = doc.setdefault("parameters", {})
        parameters["type"] = "object"
        parameters["properties"] = official_cast_types(parameters.get("properties") or {}, mapping, float_sentence)
        tools.append({"type": "function", "function": doc})
        names[doc["name"]] = original
    return tools, names
