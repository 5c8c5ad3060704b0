"""What a benchmark package declares about itself besides its functions: its metrics (display name,
direction), the other models it needs (roles), the options a run may set, and the facts the About
tab and the CLI show, and the evidence kinds it keeps with each verdict. Read by the board, the About tab,
the CLI, the Evaluate form, Explore and the exports, which carry no benchmark names of their own."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Metric:
    """A number a report or board column holds."""

    name: str
    label: str = ""
    description: str = ""
    higher_is_better: bool = True
    # "fraction" (shown as a percentage), "count" (an integer), or "text" (a label such as a method)
    kind: str = "fraction"
    # A fraction that is the share of the view's items right (so n items give its 95% interval); False for
    # a share of some other count (a precision, an accuracy over triggered items) or a mean score (F1,
    # ROUGE): the board shows no n and no interval rather than a wrong one.
    share_of_items: bool = True
    # A figure that is a weighted sum of others (a mean of category shares, an official weighting): its parts as
    # (column, weight). Its interval is the item bootstrap's (items resampled within each part), computed exactly.
    made_of: tuple[tuple[str, float], ...] = ()

    @property
    def shown_as(self) -> str:
        return self.label or self.name


@dataclass(frozen=True)
class Role:
    """Another model the benchmark needs besides the one under test (inspect_ai calls these model
    roles): a simulated user, a parameter judge. Given on the command line as
    `--role NAME=URL,MODEL[,KEY_ENV]` and in one box of the Evaluate form."""

    name: str
    label: str
    description: str
    # When none is given: True = the model under test plays it; False = the benchmark does without
    # (what it does then is `fallback`).
    played_by_tested_model: bool = False
    fallback: str = ""
    # None: as the model under test (sampling, timeout); else this value for the role's requests.
    temperature: float | None = None
    timeout: float | None = None
    # Also runs over uploaded predictions before they are scored (the `score` command's --role).
    used_when_scoring_files: bool = False


@dataclass(frozen=True)
class Option:
    """A choice a run makes that the benchmark reads (`--option NAME=VALUE`), e.g. text or audio input."""

    name: str
    choices: tuple[str, ...]
    default: str
    description: str
    # The option changes which samples a run has (e.g. a task split): it reaches the benchmark's `load`, and a
    # stored run's samples are loaded again with it.
    selects_samples: bool = False


@dataclass(frozen=True)
class About:
    """What the About tab and `list` say about a benchmark: Markdown, each part short."""

    measures: str
    paper: str = ""
    paper_url: str = ""
    source_url: str = ""
    data: str = ""
    licence: str = ""
    citation: str = ""
    strict_fixes: str = ""
    published: str = ""


@dataclass(frozen=True)
class Overview:
    """A benchmark's headline figures in the overview across benchmarks: the board view they are read
    from, the columns shown side by side with other benchmarks', and the one column that enters the
    aggregate (one per benchmark, so a benchmark with two figures does not weigh twice). A benchmark
    that declares none is left out of the overview."""

    view: str
    columns: tuple[str, ...]
    aggregate: str
    # Why this view (shown on the overview page), e.g. the one the published table fills for most models.
    why: str = ""

    def __post_init__(self) -> None:
        if self.aggregate not in self.columns:
            raise ValueError(f"the overview's aggregate column {self.aggregate!r} must be one of its columns")


@dataclass(frozen=True)
class HubTask:
    """One task of a benchmark dataset on the Hugging Face Hub (a task id of its eval.yaml) and the board figure a
    run's `.eval_results` entry for it holds: the view and column it is read from (a share, written as a percent)."""

    task_id: str
    view: str
    column: str


@dataclass(frozen=True)
class HubBenchmark:
    """Where a benchmark's figures go on the Hub: its benchmark dataset, the tasks a ranked run fills, the stem of
    the `.eval_results/<stem>[_<variant>].yaml` file, and what the run measured that the Hub task may not say
    (written into every entry's notes, e.g. the task split and its size, the trials)."""

    dataset_id: str
    tasks: tuple[HubTask, ...]
    file_stem: str
    setup: str = ""
    # Where the dataset's tasks were read (its eval.yaml), with the day: the ids are the Hub's, not ours.
    tasks_from: str = ""


# How Explore shows a piece of evidence: a JSON value, plain text, chat turns ({"role", "content"}), code, a
# rollout against stateful environments (see ROLLOUT_* below), or dialogues between an agent, a user and tools
# (see DIALOGUE_CHECKS below).
EVIDENCE_RENDERS = ("json", "text", "transcript", "code", "rollout", "dialogues")
# A "rollout" is a list of turns, each {"query": [{"role", "content"}], "steps": [{"text", "calls": [str] | None,
# "decode_error": str | None, "results": [str]}], "state": {name: {attribute: value}}} (the state after the turn),
# or, without that evidence, a list of turns each a list of the model's step texts. Explore shows each turn's
# state as what changed since the turn before (the first turn: since the prediction's ROLLOUT_INITIAL_STATE), and
# marks the turn the score's ROLLOUT_FAILED_TURN names (0-based) with its ROLLOUT_DIFFERENCES (attribute ->
# {"model", "ground_truth"}) and ROLLOUT_MISSING_ITEMS (expected results the model's lack). The score's
# ROLLOUT_TURN_STATES, per turn {"model": state, "ground_truth": state} (what the checker compared), is shown folded
# in each turn, and its model state stands in for a turn that kept none. Only the first rollout a sample has is
# shown so; any other rollout-rendered kind is shown as JSON.
ROLLOUT_INITIAL_STATE = "initial_state"
ROLLOUT_FAILED_TURN = "failed_turn"
ROLLOUT_DIFFERENCES = "differences"
ROLLOUT_MISSING_ITEMS = "missing_items"
ROLLOUT_TURN_STATES = "turn_states"
# A "dialogues" value is a list of conversations (e.g. one per trial of a task), each {"messages": [...], and
# optionally "label", "trial" (0-based), "outcome" or "termination_reason", "error"}; a message is {"role":
# "assistant"|"user"|"tool"|"system", "content", "tool_calls": [{"name", "arguments", "requestor"}] | None} and a
# tool result also {"requestor" (whose call it answers), "error": bool}. The score's DIALOGUE_CHECKS, a list in the
# same order, is shown inside each: {"reward": float | None, "checks": [{"rule", "met": bool | None, "detail"}],
# "state_changes" (what the conversation changed) and "state_differences" (the end state against the expected one,
# `before` expected and `after` reached): lists of {"kind", "path", "before", "after"} as core/state_diff gives them}.
DIALOGUE_CHECKS = "dialogue_checks"
# Where it is read: the prediction's evidence (`Prediction.extra[key]`, kept when the model answered) or the
# score's metadata (`SampleScore.metadata[key]`, made by the pure checker).
EVIDENCE_SOURCES = ("prediction", "score")


@dataclass(frozen=True)
class EvidenceKind:
    """One kind of evidence a benchmark keeps with its verdicts (an agent's end state, a judge's rationale):
    where it is read (`source`, under `key`), the title Explore gives it and how it is shown (`render`).
    Explore and the details export show every declared kind a sample has, in the declared order."""

    key: str
    title: str
    render: str = "json"
    source: str = "prediction"
    description: str = ""

    def __post_init__(self) -> None:
        if self.render not in EVIDENCE_RENDERS:
            raise ValueError(f"evidence {self.key!r}: render must be one of {', '.join(EVIDENCE_RENDERS)}, got {self.render!r}")
        if self.source not in EVIDENCE_SOURCES:
            raise ValueError(f"evidence {self.key!r}: source must be one of {', '.join(EVIDENCE_SOURCES)}, got {self.source!r}")

    def value_in(self, prediction_evidence: Mapping[str, Any] | None, score_metadata: Mapping[str, Any] | None) -> Any:
        """This kind's value in a sample's evidence and score metadata (None when the sample has none)."""
        found = prediction_evidence if self.source == "prediction" else score_metadata
        return found.get(self.key) if isinstance(found, Mapping) else None
