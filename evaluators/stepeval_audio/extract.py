"""Reading the model's first tool call, in the spec's order: native `tool_calls`, then the
Step-Audio text format, then a Hermes-style JSON call; else no call. JSON is parsed, never eval'd."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from evaluators.core.types import Prediction
from evaluators.stepeval_audio.tools import canonical_name

# `<tool_call>function\nNAME\n{json}</tool_call>`; header lines may carry trailing spaces (gold data does).
STEP_CALL = re.compile(r"<tool_call>\s*function\s*\n\s*([^\n]+?)\s*\n\s*(\{.*?\})\s*</tool_call>", re.S)
# `<tool_call>{"name": …, "arguments": …}</tool_call>` (Hermes / Qwen chat templates).
HERMES_CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.S)


@dataclass(frozen=True)
class ExtractedCall:
    """The call that counts. `arguments` is None when they are not a JSON object."""

    name: str
    raw_name: str
    arguments: dict[str, Any] | None
    source: str  # native | step_text | hermes_json

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "raw_name": self.raw_name, "arguments": self.arguments, "source": self.source}


def arguments_object(value: Any) -> dict[str, Any] | None:
    """Arguments as a dict: an object as is, a JSON string decoded; an empty string is no arguments."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        if not value.strip():
            return {}
        try:
            decoded = json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            return None
        return decoded if isinstance(decoded, dict) else None
    return None


def step_text_call(text: str) -> tuple[str, dict[str, Any] | None] | None:
    """(name, arguments) of the first `<tool_call>function\\nNAME\\n{…}</tool_call>` in text."""
    found = STEP_CALL.search(text)
    if found is None:
        return None
    return found.group(1), arguments_object(found.group(2))


def hermes_json_call(text: str) -> tuple[str, dict[str, Any] | None] | None:
    """(name, arguments) of the first `<tool_call>{"name", "arguments"}</tool_call>` that parses."""
    for found in HERMES_CALL.finditer(text):
        try:
            data = json.loads(found.group(1))
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(data, dict) and isinstance(data.get("name"), str) and data["name"].strip():
            return data["name"], arguments_object(data.get("arguments", {}))
    return None


def extract_call(prediction: Prediction | None) -> ExtractedCall | None:
    """The first tool call of a prediction, or None when it made no call (or there is no prediction)."""
    if prediction is None or prediction.error is not None:
        return None
    if prediction.tool_calls:
        first = prediction.tool_calls[0]
        return ExtractedCall(canonical_name(first.name), first.name, arguments_object(first.arguments), "native")
    text = prediction.output or ""
    for source, reader in (("step_text", step_text_call), ("hermes_json", hermes_json_call)):
        found = reader(text)
        if found is not None:
            return ExtractedCall(canonical_name(found[0]), found[0], found[1], source)
    return None
