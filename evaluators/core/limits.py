"""Bounds on free text that a visitor, a file or an endpoint hands us, checked once wherever it comes in
(the CLI, the form, the API), and how much of an untrusted value a message may echo."""

from __future__ import annotations

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
