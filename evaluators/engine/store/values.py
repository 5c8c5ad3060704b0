"""Values made storable: texts SQLite can hold, JSON that round-trips, token counts in range, and what a
sample's row holds when the store cannot take its prediction."""

from __future__ import annotations

import json
import math
import re
import sqlite3
from dataclasses import replace
from typing import Any

from evaluators.core.types import Prediction

# A lone surrogate is valid in a JSON string (`"\\ud800"`) but not in UTF-8, the only text SQLite takes.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# Token counts beyond this are not counts (and SQLite's SUM would overflow on them).
MAX_TOKEN_COUNT = 1 << 48


# What binding a value SQLite cannot hold raises (e.g. an int beyond 64 bits, a str with a lone surrogate).
REFUSED_VALUE = (sqlite3.InterfaceError, sqlite3.IntegrityError, sqlite3.DataError, OverflowError, ValueError)


def storable_text(text: Any) -> Any:
    """Text SQLite can hold: lone surrogates kept as their `\\uXXXX` escape, never dropped."""
    if not isinstance(text, str) or not LONE_SURROGATE.search(text):
        return text
    return LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def json_text(value: Any, default: Any = repr) -> str:
    """JSON text that round-trips exactly: non-ASCII kept readable unless a lone surrogate needs escaping."""
    text = json.dumps(value, ensure_ascii=False, default=default)
    return json.dumps(value, default=default) if LONE_SURROGATE.search(text) else text


def json_or_null(value: Any) -> str | None:
    """`value` as JSON text for a column that may be NULL (None stays None)."""
    if value is None:
        return None
    if not value and isinstance(value, dict | list):  # most verdicts' metadata: not worth an encoder
        return "{}" if isinstance(value, dict) else "[]"
    return json_text(value)


def token_count(value: Any) -> int | None:
    """A usage figure as the store keeps it: a whole number in range, else unknown (None)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    return int(value) if 0 <= value <= MAX_TOKEN_COUNT else None


def storable_prediction(prediction: Prediction) -> Prediction:
    """The prediction as the store will give it back (texts made storable), so what is scored now is
    what a re-score reads later."""
    output, error = storable_text(prediction.output), storable_text(prediction.error)
    if output is prediction.output and error is prediction.error:
        return prediction
    return replace(prediction, output=output, error=error)


def unstorable(prediction: Prediction, problem: BaseException) -> Prediction:
    """What is stored for a sample whose prediction the store cannot take: its failure, as a request error
    (so it is counted, shown and re-sent by --rerun-errors), never silence."""
    return Prediction(prediction.sample_id, error=f"could not store this prediction: {type(problem).__name__}: "
                                                 f"{storable_text(str(problem))[:300]}")


def parsed_json(text: str | None) -> Any:
    """A JSON column's value as read back (NULL, or an empty text, is None)."""
    return json.loads(text) if text else None
