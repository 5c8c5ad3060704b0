"""Types shared by every benchmark: what is asked, what the model said, how it scored."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Sample:
    """One item of a benchmark: its input, its gold answer and where it came from."""

    id: str
    subset: str
    input: dict[str, Any]
    gold: Any
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolCall:
    """A native function call returned by an endpoint (`tool_calls`)."""

    name: str
    arguments: dict[str, Any] | str


@dataclass
class Prediction:
    """What the model produced for one sample, from an endpoint or an uploaded file."""

    sample_id: str
    output: str | None = None
    tool_calls: list[ToolCall] | None = None
    error: str | None = None
    source_line: int | None = None
    latency: float | None = None
    usage: dict[str, int] | None = None
    # The benchmark's own evidence, by the keys its EvidenceKind declarations name (an agent's end state and
    # transcript, a judge's verdict): what its checker reads besides the output, and what Explore shows.
    extra: dict[str, Any] | None = None


@dataclass
class SampleScore:
    """The verdict on one sample, with the evidence behind it. Its generic shape (what a run document holds
    for any benchmark): `value` (1.0 right, 0.0 wrong), `answer` (what the checker read from the output:
    `decoded`), `explanation` (`detail`), `metadata` (the benchmark's own, shown as its evidence kinds
    declare), with the rule that decided, an error type and per-sample metric values."""

    sample_id: str
    subset: str
    correct: bool
    error_type: str | None = None
    rule: str | None = None
    detail: str = ""
    decoded: Any = None
    # Per-sample metric values, for benchmarks whose metrics are means over samples.
    metrics: dict[str, float] | None = None
    metadata: dict[str, Any] | None = None

    @property
    def value(self) -> float:
        return 1.0 if self.correct else 0.0

    @property
    def answer(self) -> Any:
        return self.decoded

    @property
    def explanation(self) -> str:
        return self.detail

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SubsetResult:
    n: int
    metrics: dict[str, float | None]


@dataclass
class Report:
    """A benchmark's scores in the JSON shape of DESIGN.md."""

    benchmark: str
    mode: str
    subsets: dict[str, SubsetResult]
    summary: dict[str, float | None]
    errors: dict[str, int]
    language: str | None = None
    missing: list[str] = field(default_factory=list)
    unavailable: list[str] = field(default_factory=list)
    # 95% intervals of figures that are not a plain share of items (core/intervals.py), in the report's own shape:
    # {"summary": {metric: [low, high]}, "subsets": {name: {metric: [low, high]}}}; empty when none is declared.
    intervals: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Report:
        """A report read back from its JSON (to_json). Only the number of missing predictions is kept there,
        so `missing` holds that many empty ids."""
        subsets = {name: SubsetResult(value["n"], dict(value["metrics"])) for name, value in data["subsets"].items()}
        return cls(data["benchmark"], data["mode"], subsets, dict(data["summary"]), dict(data.get("errors") or {}),
                   language=data.get("language"), missing=[""] * int(data.get("missing") or 0),
                   unavailable=list(data.get("unavailable") or []), intervals=dict(data.get("intervals") or {}))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"benchmark": self.benchmark}
        if self.language is not None:
            out["language"] = self.language
        out["mode"] = self.mode
        out["subsets"] = {
            name: {"n": sub.n, "metrics": dict(sub.metrics)} for name, sub in self.subsets.items()
        }
        out["summary"] = dict(self.summary)
        out["errors"] = dict(self.errors)
        out["missing"] = len(self.missing)
        if self.unavailable:
            out["unavailable"] = list(self.unavailable)
        if self.intervals:
            out["intervals"] = self.intervals
        return out


@dataclass(frozen=True)
class ChatRequest:
    """One chat-completions request body, without the model name. `sampling` holds the benchmark's
    sampling for this request (e.g. the reference harness's temperature); what the user set wins."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    # Tool names as sent -> the benchmark's own names (OpenAI names allow no dots).
    tool_names: dict[str, str] = field(default_factory=dict)
    sampling: dict[str, Any] = field(default_factory=dict)


# How requests carry the tools: described in the prompt text, or as native tool definitions.
REQUEST_MODES = ("prompt", "tools")
# `official`: what the reference harness sends; `toolboard`: our own wording (benchmarks with styles).
PROMPT_STYLES = ("official", "toolboard")


@dataclass(frozen=True)
class RequestProfile:
    """How a run's requests are built, recorded with the run: the prompt style (`official`: what the
    reference harness sends; `toolboard`: our own wording), where the prompts come from, the sampling
    sent for each kind of request, and where our requests knowingly differ from the reference."""

    prompt_style: str
    source: str
    sampling: dict[str, dict[str, Any]]
    differences: tuple[str, ...] = ()
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["differences"] = list(self.differences)
        return data
