"""Showing untrusted values in messages without failing or flooding them."""

from __future__ import annotations

from typing import Any

MAX_SHOWN = 300


def show(value: Any, limit: int = MAX_SHOWN) -> str:
    """repr(value), cut to `limit` characters; never raises (huge ints cannot be repr'd in 3.11)."""
    try:
        text = repr(value)
    except (ValueError, RecursionError):
        text = f"<{type(value).__name__} too large to show>"
    return text if len(text) <= limit else text[: limit - 1] + "…"
