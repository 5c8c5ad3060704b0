"""Bounds on free text that a visitor, a file or an endpoint hands us, checked once wherever it comes in
(the CLI, the form, the API), and how much of an untrusted value a message may echo."""

from __future__ import annotations

import re
import unicodedata

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


class UnprintableTextError(ToolboardError):
    """A free-text field holding a control, bidi, zero-width or other invisible character."""


# What a multi-line field (notes) may hold besides printable characters.
LINE_BREAKS = frozenset("\n\t")


def _hidden_character(text: str, allowed: frozenset[str]) -> tuple[int, str] | None:
    """The first character of `text` a reader would not see as itself, and where: controls (ESC, NUL), format
    characters (bidi overrides such as U+202E, zero-width joiners), line and paragraph separators, spaces other than
    U+0020, private-use, unassigned and surrogate code points. `str.isprintable` is exactly that rule."""
    for index, character in enumerate(text):
        if not character.isprintable() and character not in allowed:
            return index, character
    return None


def character_name(character: str) -> str:
    """U+202E RIGHT-TO-LEFT OVERRIDE; U+001B (a control character) where Unicode gives no name."""
    name = unicodedata.name(character, "")
    return f"U+{ord(character):04X} {name}" if name else f"U+{ord(character):04X} (a control character)"


def visitor_text(value: str | None, field: str, limit: int, *, lines: bool = False, fix: str = "") -> str:
    """The one rule for text a visitor gives that others will read (a model name, an upload's notes and file name,
    a base URL): at most `limit` characters, and every character printable (`lines`: line breaks and tabs too, a
    Windows line end read as one break). Returns the text stripped; else TextTooLongError or UnprintableTextError
    naming the field, the character and where it is, followed by `fix` (what to do)."""
    text = (value or "").replace("\r\n", "\n").strip() if lines else (value or "").strip()
    suffix = f": {fix}" if fix else ""
    if len(text) > limit:
        raise TextTooLongError(f"{field} is {len(text):,} characters long; at most {limit:,} are accepted{suffix}")
    hidden = _hidden_character(text, LINE_BREAKS if lines else frozenset())
    if hidden is not None:
        index, character = hidden
        raise UnprintableTextError(f"{field} holds a control or invisible character ({character_name(character)}, "
                                   f"character {index + 1}), which would show differently from what it says"
                                   f"{suffix or ': type it again without it'}")
    return text


def shown_text(value: object, limit: int, *, lines: bool = False) -> object:
    """A stored text as pages, downloads and APIs show it: cut as `cut_text` cuts it, and each character
    `visitor_text` refuses written out as its escape (\\u202e), so a row stored before the rule (or read from
    another results dataset) can never pass for another name. Anything else as it is."""
    if not isinstance(value, str):
        return value
    allowed = LINE_BREAKS if lines else frozenset()
    if _hidden_character(value, allowed) is not None:
        value = "".join(character if character.isprintable() or character in allowed
                        else character.encode("unicode_escape").decode("ascii") for character in value)
    return cut_text(value, limit)


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
