"""Untrusted text: showing values in messages without failing or flooding them, and dropping
reasoning blocks from model answers in linear time."""

from __future__ import annotations

import re
from typing import Any

THINK_END = "</think>"
_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL)

MAX_SHOWN = 300


def show(value: Any, limit: int = MAX_SHOWN) -> str:
    """repr(value), cut to `limit` characters; never raises (huge ints cannot be repr'd in 3.11)."""
    try:
        text = repr(value)
    except (ValueError, RecursionError):
        text = f"<{type(value).__name__} too large to show>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def without_think_blocks(text: str) -> str:
    """The answer without its <think>…</think> reasoning (and anything before a stray closing tag)."""
    # Blocks can only close up to the last </think>: the pattern runs on that part alone, else every
    # unclosed <think> after it would scan to the end of the text again (quadratic time).
    end = text.rfind(THINK_END)
    if end != -1:
        end += len(THINK_END)
        text = _THINK_BLOCK.sub("", text[:end]) + text[end:]
    return text.split(THINK_END, 1)[1] if THINK_END in text else text


def plural(noun: str, count: int) -> str:
    """`noun` as a count of `count` takes it: "row" for 1, "rows" otherwise (regular nouns only)."""
    return noun if count == 1 else f"{noun}s"
