"""Reading the model's first tool call, in the spec's order: native `tool_calls`, then the
Step-Audio text format, then a Hermes-style JSON call; else no call. JSON is parsed, never eval'd.

The two text formats are read by hand rather than by one regex: with a lazy `{.*?}` body, every
unclosed `<tool_call>` made the regex scan to the end of the text again (an answer of 100 KB took
seconds, one of 1 MB minutes). Here each part of the text is looked at a bounded number of times."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from evaluators.benchmarks.stepeval_audio.tools import canonical_name
from evaluators.core.types import Prediction

TAG = "<tool_call>"
_SPACES = re.compile(r"\s*")
# Where a call body ends: the first `}` followed by `</tool_call>` (spaces between allowed).
_BODY_END = re.compile(r"\}\s*</tool_call>")


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
        except (ValueError, RecursionError):  # bad JSON, a number over 4,300 digits, deep nesting
            return None
        return decoded if isinstance(decoded, dict) else None
    return None


def _after_spaces(text: str, position: int) -> int:
    """The index of the first non-space at or after `position` (the text's length when there is none)."""
    spaces = _SPACES.match(text, position)
    # `\s*` matches the empty string, so a match is always found; the fallback only satisfies the type
    return spaces.end() if spaces is not None else min(position, len(text))


def _body_after(text: str, brace: int) -> str | None:
    """`{…}` from the brace at `brace` to the first `}` followed by `</tool_call>`, else None."""
    end = _BODY_END.search(text, brace + 1)
    return None if end is None else text[brace : end.start() + 1]


def _step_header(text: str, position: int) -> tuple[str, int] | None:
    """(NAME, index of the body's `{`) for `\\s*function\\s*\\n\\s*NAME\\s*\\n\\s*{` at position: the
    name is the first non-blank line after `function`, its trailing spaces dropped."""
    position = _after_spaces(text, position)
    if not text.startswith("function", position):
        return None
    position += len("function")
    name_start = _after_spaces(text, position)
    if text.find("\n", position, name_start) == -1:
        return None
    name_end = text.find("\n", name_start)
    if name_end == -1:
        return None
    brace = _after_spaces(text, name_end)
    if not text.startswith("{", brace):
        return None
    return text[name_start:name_end].rstrip(), brace


def step_text_call(text: str) -> tuple[str, dict[str, Any] | None] | None:
    """(name, arguments) of the first `<tool_call>function\\nNAME\\n{…}</tool_call>` in text."""
    position = 0
    while (start := text.find(TAG, position)) != -1:
        position = start + 1
        header = _step_header(text, start + len(TAG))
        if header is None:
            continue
        body = _body_after(text, header[1])
        # no closed body after this one means none after any later tag either
        return None if body is None else (header[0], arguments_object(body))
    return None


def _hermes_bodies(text: str) -> Iterator[str]:
    """Each `{…}` of `<tool_call>{…}</tool_call>` in order, as non-overlapping matches."""
    position = 0
    while (start := text.find(TAG, position)) != -1:
        brace = _after_spaces(text, start + len(TAG))
        if not text.startswith("{", brace):
            position = start + 1
            continue
        body = _body_after(text, brace)
        if body is None:
            return
        yield body
        position = brace + len(body)


def hermes_json_call(text: str) -> tuple[str, dict[str, Any] | None] | None:
    """(name, arguments) of the first `<tool_call>{"name", "arguments"}</tool_call>` that parses."""
    for body in _hermes_bodies(text):
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):  # bad JSON, a number over 4,300 digits, deep nesting
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
