"""Requests for ToolBench-Static steps: the reference's plain chat (text mode) and native tools."""

from __future__ import annotations

import json
from typing import Any

from evaluators.core.types import ChatRequest, Sample

_SCHEMA_KEYS = ("type", "description", "enum", "items", "properties", "required", "default", "format",
                "minimum", "maximum", "minItems", "maxItems", "pattern", "example")


def reference_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """As the reference sends them: `name` dropped; a `function` turn becomes a user turn whose
    content is the JSON of the remaining message (role and content)."""
    out = []
    for message in messages:
        copy = {k: v for k, v in message.items() if k != "name"}
        if copy.get("role") == "function":
            copy = {"role": "user", "content": json.dumps(copy, ensure_ascii=False)}
        out.append({"role": copy.get("role"), "content": copy.get("content")})
    return out


def _clean_schema(schema: Any) -> Any:
    """Keep JSON-Schema keywords only (the records carry ToolBench's own `optional` list)."""
    if not isinstance(schema, dict):
        return {}
    cleaned = {k: schema[k] for k in _SCHEMA_KEYS if k in schema}
    if isinstance(cleaned.get("properties"), dict):
        cleaned["properties"] = {name: _clean_schema(sub) for name, sub in cleaned["properties"].items()}
    if isinstance(cleaned.get("items"), dict):
        cleaned["items"] = _clean_schema(cleaned["items"])
    if "required" in cleaned and not isinstance(cleaned["required"], list):
        del cleaned["required"]
    if isinstance(cleaned.get("type"), str) and cleaned["type"] not in (
        "object", "array", "string", "number", "integer", "boolean", "null",
    ):
        del cleaned["type"]
    return cleaned


def to_openai_tool(tool: dict[str, Any]) -> dict[str, Any]:
    parameters = _clean_schema(tool.get("parameters"))
    parameters["type"] = "object"
    parameters.setdefault("properties", {})
    return {
        "type": "function",
        "function": {"name": tool["name"][:64], "description": str(tool.get("description", "")), "parameters": parameters},
    }


def build_request(sample: Sample, mode: str = "prompt", language: str | None = None) -> ChatRequest:
    messages = reference_messages(sample.input["messages"])
    if mode == "prompt":
        return ChatRequest(messages=messages)
    if mode == "tools":
        tools = [to_openai_tool(tool) for tool in sample.input["tools"]]
        names = {tool["function"]["name"]: original["name"] for tool, original in zip(tools, sample.input["tools"])}
        return ChatRequest(messages=messages, tools=tools, tool_choice="auto", tool_names=names)
    raise ValueError(f"unknown request mode {mode!r}; expected prompt or tools")
