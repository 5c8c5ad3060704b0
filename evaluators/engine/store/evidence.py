"""A sample's evidence (its gold answer, the request as sent, its model calls), kept in its predictions row
(migration 5): bounded as it is written, read back so that the page and hub documents can always encode it."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, is_dataclass
from typing import Any

from evaluators.engine.store.values import json_text, parsed_json, storable_text

# A gold answer or request is kept up to this many bytes of JSON text; a bigger one is kept as a note saying so.
MAX_EVIDENCE_BYTES = 1 << 20
# Of a request, what a note kept instead of it still says.
REQUEST_NOTE_KEYS = ("requests", "not_sent")
# An uploaded prediction's request note (no body): the prompt this tool would send is the sample's and the
# benchmark's alone, so Explore builds it again when the sample is shown instead of every upload keeping a copy.
REBUILT_WHEN_SHOWN = "rebuilt_when_shown"
UPLOADED_PROMPT_NOTE = "uploaded predictions: the prompt this tool would send, not necessarily the one used"
UNWRITABLE_NOTE = '{"unstorable": true, "note": "could not be written as JSON"}'


@dataclass(frozen=True)
class JSONText:
    """Evidence already written as JSON (a request body exactly as sent): stored as it is, not parsed
    and written again (a run stores one per sample while its requests are in flight)."""

    text: str


@dataclass(frozen=True)
class Evidence:
    """What a sample's predictions row keeps beside the prediction. `gold`: the sample's gold answer
    (`Sample.gold`; dataclasses are kept as dicts). `request`: for a run, `{"requests": n, "body": ...}`,
    the last chat-completions body the tested model's client sent for the sample (for an agent rollout
    it holds the whole conversation) and how many it sent (see ChatClient.capture_requests); for an
    upload, `{"not_sent": true, "note": ..., "body": ...}`, the body this tool would send. `events`: every model
    call made for the sample (the tested model's, a judge's, a simulated user's: see client.EventLog), bounded."""

    gold: Any = None
    request: dict[str, Any] | JSONText | None = None
    events: list[dict[str, Any]] | JSONText | None = None


def _plain_json(value: Any) -> Any:
    """A value json cannot write: a dataclass as its dict, anything else as its repr."""
    return asdict(value) if is_dataclass(value) and not isinstance(value, type) else repr(value)


def oversized_note(what: str, size: int, kept: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a sample's row keeps instead of a gold answer or request over MAX_EVIDENCE_BYTES."""
    return {**(kept or {}), "truncated": True, "bytes": size,
            "note": f"the {what} was {size:,} bytes of JSON, over the {MAX_EVIDENCE_BYTES:,} kept per sample: not stored"}


def evidence_text(value: Any, what: str, keep: tuple[str, ...] = ()) -> str:
    """A gold answer or request as its row keeps it: JSON text of at most MAX_EVIDENCE_BYTES, else a note
    saying so, with the `keep` entries of the value (as is a value that cannot be written as JSON). Never
    raises: evidence never costs a row."""
    if isinstance(value, JSONText):
        # At most 4 bytes a character: most texts are known to fit without encoding them to count.
        size = len(value.text) if len(value.text) * 4 <= MAX_EVIDENCE_BYTES else len(value.text.encode())
        return value.text if size <= MAX_EVIDENCE_BYTES else json_text(oversized_note(what, size))
    kept = {key: value[key] for key in keep if key in value} if isinstance(value, dict) else {}
    try:
        text = json_text(value, default=_plain_json)
        size = len(text.encode())
        if size <= MAX_EVIDENCE_BYTES:
            return text
        return json_text(oversized_note(what, size, kept))
    except (ValueError, TypeError, RecursionError) as problem:  # an integer too long to write, nesting too deep
        try:
            return json_text({**kept, "unstorable": True, "note": f"the {what} could not be written as JSON:"
                                                                   f" {type(problem).__name__}: {str(problem)[:200]}"})
        except (ValueError, TypeError, RecursionError):
            return UNWRITABLE_NOTE


def evidence_texts(evidence: Evidence | None) -> tuple[str | None, str | None, str | None]:
    """The gold, request and events columns of a row (NULL where nothing was given)."""
    if evidence is None:
        return None, None, None
    request = None if evidence.request is None else evidence_text(evidence.request, "request body", REQUEST_NOTE_KEYS)
    events = None if evidence.events is None else evidence_text(evidence.events, "model calls")
    return evidence_text(evidence.gold, "gold answer"), request, events


# An event's request kept as this note is the row's own request body (its `request` column), not stored twice.
ROW_REQUEST = "in_request_column"


def row_request_note(size: int) -> dict[str, Any]:
    return {ROW_REQUEST: True, "bytes": size, "note": "the body of this sample's request, kept once"}


def with_row_request(events: Any, request: Any) -> Any:
    """The events as made: each ROW_REQUEST note replaced by the row's request body it stands for."""
    body = request.get("body") if isinstance(request, dict) else None
    if not isinstance(events, list) or not isinstance(body, dict):
        return events
    return [{**event, "request": body} if isinstance(event, dict) and isinstance(event.get("request"), dict)
            and event["request"].get(ROW_REQUEST) is True else event for event in events]


ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def evidence_loads(text: str | None) -> Any:
    """Evidence as read back: a request body sent with a lone surrogate (a model's earlier reply fed back)
    holds it as a JSON escape; it comes back as its `\\uXXXX` text, as stored text does (storable_text),
    so the page and hub documents can always encode it."""
    value = parsed_json(text)
    return _storable_strings(value) if text and ESCAPED_SURROGATE.search(text) else value


def _storable_strings(value: Any) -> Any:
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, list):
        return [_storable_strings(item) for item in value]
    if isinstance(value, dict):
        return {storable_text(key): _storable_strings(item) for key, item in value.items()}
    return value
