"""ACEBench's own evidence: an agent item's end state and process (the predictions file's `result` and
`process` fields, kept under those keys in Prediction.extra), the rollout's transcript and why it stopped;
and the per-item process score the agent checker computes (a per-sample metric)."""

from __future__ import annotations

from typing import Any

from evaluators.core.declarations import EvidenceKind
from evaluators.core.types import Prediction

END_STATE = "result"
PROCESS = "process"
TRANSCRIPT = "transcript"
STOP = "stop"
# The per-sample metric an agent item's process accuracy is the mean of.
PROCESS_SCORE = "process_score"

EVIDENCE = (
    EvidenceKind(TRANSCRIPT, "Transcript", "transcript", description="an agent rollout: agent, user and execution turns"),
    EvidenceKind(END_STATE, "End state (agent)", "json", description="the world's state when the rollout ended"),
    EvidenceKind(PROCESS, "Process (agent)", "json", description="the agent replies sent to execution, in order"),
    EvidenceKind(STOP, "Why the rollout stopped", "text", description="finish, or the message limit"),
)


def agent_prediction(sample_id: str, end_state: Any, process: list[str], **fields: Any) -> Prediction:
    """An agent item's prediction: its end state and process kept as its evidence (with any `extra` given)."""
    extra = {**(fields.pop("extra", None) or {}), END_STATE: end_state, PROCESS: process}
    return Prediction(sample_id, extra=extra, **fields)


def end_state_of(prediction: Prediction) -> Any:
    return (prediction.extra or {}).get(END_STATE)


def process_of(prediction: Prediction) -> list[str]:
    return (prediction.extra or {}).get(PROCESS) or []


def process_score_of(metrics: dict[str, float] | None) -> float:
    return (metrics or {}).get(PROCESS_SCORE) or 0.0
