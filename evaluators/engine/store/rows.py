"""The store's rows as the project's objects and back: a run's row, a prediction's and a verdict's, and a
sample's row with its evidence (StoredSample)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from evaluators.core.types import Prediction, SampleScore, ToolCall
from evaluators.engine.store.evidence import evidence_loads, with_row_request
from evaluators.engine.store.values import json_or_null, parsed_json, storable_text, token_count


@dataclass
class RunRow:
    id: str
    benchmark: str
    language: str | None
    model: str
    base_url: str
    config: dict[str, Any]
    fingerprint: str
    status: str
    created_at: float
    started_at: float | None
    finished_at: float | None
    total: int
    message: str | None
    source: str = "endpoint"
    notes: str | None = None
    owner: str | None = None
    shared: int = 0
    lease_holder: str | None = None
    lease_expires: float | None = None
    stored_bytes: int = 0


TOTAL_KEYS = ("done", "errors", "latency", "prompt_tokens", "completion_tokens")


def run_of_row(row: sqlite3.Row) -> RunRow:
    data = dict(row)
    data["config"] = json.loads(data["config"])
    return RunRow(**data)


@dataclass
class StoredSample:
    """One sample's row as Explore and exports read it: its prediction, its verdict in one mode (None where
    not asked or not scored), and its evidence. `gold_kept` / `request_kept` are False for rows stored
    without them (before migration 5): their callers rebuild what they need from the dataset."""

    sample_id: str
    subset: str | None
    prediction: Prediction | None
    score: SampleScore | None = None
    gold: Any = None
    request: Any = None
    gold_kept: bool = False
    request_kept: bool = False
    # The sample's model calls (see Evidence.events); None when none were recorded (uploads, older rows).
    events: Any = None

    @property
    def evidence_kept(self) -> bool:
        return self.gold_kept and self.request_kept


# A prediction's own columns (not the evidence, which can be large: read only where it is shown).
PREDICTION_COLUMNS = ("sample_id", "subset", "output", "tool_calls", "error", "latency", "prompt_tokens",
                      "completion_tokens", "extra")
# A sample's evidence columns, read only where it is shown or exported.
EVIDENCE_COLUMNS = ("gold", "request", "events")
SCORE_COLUMNS = ("sample_id", "subset", "correct", "error_type", "rule", "detail", "decoded", "metrics", "metadata")


def prediction_of_row(row: sqlite3.Row, prefix: str = "") -> Prediction:
    tool_calls = parsed_json(row[prefix + "tool_calls"])
    return Prediction(
        sample_id=row[prefix + "sample_id"],
        output=row[prefix + "output"],
        tool_calls=[ToolCall(c["name"], c["arguments"]) for c in tool_calls] if tool_calls is not None else None,
        error=row[prefix + "error"],
        latency=row[prefix + "latency"],
        usage={"prompt_tokens": row[prefix + "prompt_tokens"] or 0, "completion_tokens": row[prefix + "completion_tokens"] or 0},
        extra=parsed_json(row[prefix + "extra"]),
    )


def score_of_row(row: sqlite3.Row, prefix: str = "") -> SampleScore:
    return SampleScore(
        sample_id=row[prefix + "sample_id"], subset=row[prefix + "subset"], correct=bool(row[prefix + "correct"]),
        error_type=row[prefix + "error_type"], rule=row[prefix + "rule"], detail=row[prefix + "detail"] or "",
        decoded=parsed_json(row[prefix + "decoded"]), metrics=parsed_json(row[prefix + "metrics"]),
        metadata=parsed_json(row[prefix + "metadata"]),
    )


def with_evidence(sample: StoredSample, gold: str | None, request: str | None, events: str | None = None) -> StoredSample:
    sample.gold_kept, sample.request_kept = gold is not None, request is not None
    sample.gold, sample.request = evidence_loads(gold), evidence_loads(request)
    sample.events = with_row_request(evidence_loads(events), sample.request)
    return sample


def prediction_row(run_id: str, subset: str, prediction: Prediction, attempts: int, now: float,
                   evidence: tuple[str | None, str | None, str | None] = (None, None, None)
                   ) -> tuple[Any, ...] | BaseException:
    """The predictions row of one prediction (with its gold, request and events JSON texts), or why it cannot
    be made."""
    usage = prediction.usage if isinstance(prediction.usage, dict) else {}
    calls = prediction.tool_calls
    try:
        return (
            run_id, prediction.sample_id, subset, prediction.output,
            json_or_null([{"name": c.name, "arguments": c.arguments} for c in calls]) if calls is not None else None,
            prediction.error, prediction.latency,
            token_count(usage.get("prompt_tokens")), token_count(usage.get("completion_tokens")), attempts, now,
            json_or_null(prediction.extra), *evidence,
        )
    except (ValueError, TypeError, RecursionError) as problem:  # e.g. an integer too long to write
        return problem


def sample_score_row(run_id: str, mode: str, score: SampleScore) -> tuple[Any, ...]:
    """A verdict's sample_scores row, its JSON texts made (a run makes them as its verdicts come, not at its end)."""
    return (run_id, mode, score.sample_id, score.subset, int(score.correct), storable_text(score.error_type),
            storable_text(score.rule), storable_text(score.detail), _safe_dumps(score.decoded),
            _safe_dumps(score.metrics), _safe_dumps(score.metadata))


def _safe_dumps(value: Any) -> str | None:
    try:
        return json_or_null(value)
    except (ValueError, TypeError, RecursionError):  # ints too long to print, tuple keys, nesting too deep
        return json.dumps(repr(type(value)))
