"""Bounds on free text that a visitor, a file or an endpoint hands us, checked once wherever it comes in
(the CLI, the form, the API), and how much of an untrusted value a message may echo."""

from __future__ import annotations

import re

from evaluators.core.errors import ToolboardError

# A model id is a short name (the longest real ones, with an org prefix and a date, are ~100 characters).
MAX_MODEL_NAME_CHARS = 200
# Notes beside an upload: a paragraph or two, never a document.
MAX_NOTES_CHARS = 2000
# A file name as shown in messages and stored with an upload.
MAX_FILE_NAME_CHARS = 200
# How much of an untrusted value (an id, a name) an error message repeats.
MAX_ECHOED_CHARS = 80


class TextTooLongError(ToolboardError):
    """A free-text field over its limit."""


def echoed(value: object, limit: int = MAX_ECHOED_CHARS) -> str:
    """`value` as text to repeat in a message: cut to `limit` characters, saying how long it was."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


def check_text_length(value: str | None, field: str, limit: int) -> str | None:
    """`value` unchanged when it is at most `limit` characters, else TextTooLongError naming the field."""
    if value is not None and len(value) > limit:
        raise TextTooLongError(f"{field} is {len(value):,} characters long; at most {limit:,} are accepted")
    return value


def cut_text(value: object, limit: int) -> object:
    """A text of more than `limit` characters cut to `limit`, its last one an ellipsis (what a page or table shows
    of a value stored before the limits existed); anything else as it is."""
    if isinstance(value, str) and len(value) > limit:
        return value[:max(limit - 1, 0)] + "…"
    return value


# A run of this many characters without a space in a message is an echoed value, not words.
_ECHOED_VALUE = re.compile(rf"\S{{{MAX_ECHOED_CHARS * 2},}}")
# The most a message shown to a person (or an API caller) holds, whatever it echoes.
MAX_MESSAGE_CHARS = 4000


def message_of(error: BaseException) -> str:
    """What an error says to a person: our own errors as they are, anything else with its type; every long
    echoed value (an id, a name, a token) cut as `echoed` cuts it, the whole at most MAX_MESSAGE_CHARS."""
    text = str(error) if isinstance(error, ToolboardError) else f"{type(error).__name__}: {error}"
    text = _ECHOED_VALUE.sub(lambda match: echoed(match.group(0)), text)
    return echoed(text, MAX_MESSAGE_CHARS)
