"""The evidence a multi-turn item keeps (the issue 30 contract): in the prediction, the model's text per turn and
step (`turns`, the one thing scored, as the official result file's `result`), the rollout's transcript (each
turn's query, steps with their calls and results, and the environments' state after it), the state before the
first turn and why the rollout stopped; in the score, the first failed turn and what failed there. Explore shows
the transcript as a rollout: per turn what changed in the state, the failed turn marked."""

from __future__ import annotations

from evaluators.core.declarations import (
    ROLLOUT_DIFFERENCES,
    ROLLOUT_FAILED_TURN,
    ROLLOUT_INITIAL_STATE,
    ROLLOUT_MISSING_ITEMS,
    ROLLOUT_TURN_STATES,
    EvidenceKind,
)

TURNS = "turns"
TRANSCRIPT = "transcript"
INITIAL_STATE = ROLLOUT_INITIAL_STATE
STOP = "stop"
# Why a rollout stopped: every turn run; the official step limit reached (the item then has fewer turns than its
# ground truth); an environment worker over its memory or time; a request that failed after its retries.
COMPLETED = "completed"
FORCE_TERMINATED = "force_terminated"
ENVIRONMENT_LIMIT = "environment_limit"
REQUEST_FAILED = "request_failed"
STOPS = (COMPLETED, FORCE_TERMINATED, ENVIRONMENT_LIMIT, REQUEST_FAILED)
FAILED_TURN = ROLLOUT_FAILED_TURN
DIFFERENCES = ROLLOUT_DIFFERENCES
MISSING_ITEMS = ROLLOUT_MISSING_ITEMS
TURN_STATES = ROLLOUT_TURN_STATES

MULTI_TURN_EVIDENCE: tuple[EvidenceKind, ...] = (
    EvidenceKind(TRANSCRIPT, "Transcript: turns, steps, calls and state changes", "rollout",
                 description="per turn: the user's query, each step's text, calls and their results, and what changed "
                             "in the environments' state; the turn of the first failed check marked"),
    # An upload of the official result file has only this: Explore then shows it as the rollout.
    EvidenceKind(TURNS, "Model text per turn and step (what is scored)", "rollout",
                 description="the official result file's `result`: per turn, per step, the raw model text"),
    EvidenceKind(STOP, "Why the rollout stopped", "text",
                 description="completed, force_terminated (the official step limit), environment_limit or "
                             "request_failed"),
    EvidenceKind(INITIAL_STATE, "Environment state before the first turn", "json", description="the initial config "
                 "as the environments hold it: each class's public attributes"),
    EvidenceKind(FAILED_TURN, "First failed turn (0-based)", "json", source="score",
                 description="the turn whose state or execution-result check failed first"),
    EvidenceKind(DIFFERENCES, "State differences at the failed turn", "json", source="score",
                 description="attribute -> the model's and the ground truth's value"),
    EvidenceKind(MISSING_ITEMS, "Execution results missing at the failed turn", "json", source="score",
                 description="results of the ground truth's calls that none of the model's calls so far gave"),
    EvidenceKind(TURN_STATES, "Per-turn states, model vs ground truth", "json", source="score",
                 description="what the checker compared after each turn: a list of {model, ground_truth} states"),
)
