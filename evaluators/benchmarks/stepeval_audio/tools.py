"""The benchmark's tools: their names, data files and the OpenAI schemas offered to the model."""

from __future__ import annotations

import json
from typing import Any

# Subset = tool, in the published table's order. Each tool is scored on its positive + negative file.
TOOLS = ("timbre_rag", "get_date_time", "get_weather", "web_search")
FILE_PREFIX = {"timbre_rag": "timbre", "get_date_time": "get_date_time", "get_weather": "get_weather", "web_search": "web_search"}
POLARITIES = ("positive", "negative")

# [assumed] The upstream schema names the web tool `search` while the gold data says `web_search`:
# both count as web_search.
ALIASES = {"search": "web_search"}

# Tools whose calls carry no arguments: parameter accuracy is N/A (null) for them.
NO_PARAMETER_TOOLS = frozenset({"get_date_time"})


def file_stem(tool: str, polarity: str) -> str:
    return f"{FILE_PREFIX[tool]}_{polarity}"


def all_file_stems() -> list[str]:
    return [file_stem(tool, polarity) for tool in TOOLS for polarity in POLARITIES]


def canonical_name(name: str) -> str:
    """A called tool's name as the scorer compares it: stripped, aliases resolved."""
    name = name.strip()
    return ALIASES.get(name, name)


def _function(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


# The upstream judge script's tool definitions (descriptions kept, as they define the tools), with
# `required` moved to the schema's top level where upstream misplaced it, and the web tool named as
# the gold data names it. [assumed] `calculate` has no upstream schema: it is offered so that the
# negatives whose gold answer calls it are answerable.
TOOL_SCHEMAS: dict[str, dict[str, Any]] = {
    "timbre_rag": _function(
        "timbre_rag",
        "通过给定一个中文的音色描述,改变模型输出的音色,例如'一个正宗北京大爷的口音', 注意无法进行情感、语速、音量等韵律的调整",
        {"query": {"type": "string", "description": "人物音色描述(中文)"}},
        ["query"],
    ),
    "get_date_time": _function("get_date_time", "Get the current date and time in Beijing / Shanghai / China", {}, []),
    "get_weather": _function(
        "get_weather",
        "获取给定地区的天气情况",
        {"location": {"type": "string", "description": "地点的英文名称,例如:beijing, shanghai, new york 等,注意必须是英文."}},
        ["location"],
    ),
    "web_search": _function(
        "web_search", "搜索工具", {"query": {"type": "string", "description": "搜索关键词"}}, ["query"]
    ),
    "calculate": _function(
        "calculate",
        "计算一个数学表达式的值",
        {"expression": {"type": "string", "description": "要计算的数学表达式,例如 (3+5)*2"}},
        ["expression"],
    ),
}
OFFERED_TOOLS = ("timbre_rag", "get_date_time", "get_weather", "web_search", "calculate")


def offered_schemas() -> list[dict[str, Any]]:
    """[assumed] Every sample is offered all four tools plus `calculate`."""
    return [TOOL_SCHEMAS[name] for name in OFFERED_TOOLS]


def schema_text(tool: str) -> str:
    """One tool's schema as compact JSON text (what the judge is shown)."""
    return json.dumps(TOOL_SCHEMAS[tool], ensure_ascii=False)
