"""Score predictions and report them in each scoring mode: the one path a run, an upload and the command line's
`score` and `demo` share, so a score never depends on where the predictions came from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evaluators.core.errors import ToolboardError
from evaluators.core.registry import MODES, Benchmark
from evaluators.core.types import Prediction, Report, Sample, SampleScore


@dataclass(frozen=True)
class Scored:
    """Every sample's verdict in one scoring mode, and the report they make."""

    scores: list[SampleScore]
    report: Report


def score_and_report(benchmark: Benchmark, samples: list[Sample], predictions: Mapping[str, Prediction],
                     modes: Sequence[str] = MODES, *, language: str | None = None, subsets: list[str] | None = None,
                     known: Mapping[str, Mapping[str, SampleScore]] | None = None) -> dict[str, Scored]:
    """Each mode's verdicts (a sample without a prediction is scored as unanswered) and report, by mode.
    `known`: verdicts already computed from the same predictions, by mode and sample id (kept as they are);
    `subsets`: the subsets the report covers (None: those of the samples)."""
    unknown = [mode for mode in modes if mode not in MODES]
    if unknown:
        raise ToolboardError(f"unknown mode {unknown[0]!r}; expected one of {', '.join(MODES)}")
    scored: dict[str, Scored] = {}
    for mode in modes:
        kept = (known or {}).get(mode, {})
        scores = [kept.get(s.id) or benchmark.score(s, predictions.get(s.id), mode) for s in samples]
        scored[mode] = Scored(scores, benchmark.report(samples, scores, mode=mode, language=language, subsets=subsets))
    return scored
