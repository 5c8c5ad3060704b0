"""The benchmark registry: every benchmark offers the same small surface, found by name."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluators.core.errors import ToolboardError, UnknownBenchmarkError
from evaluators.core.types import Prediction, Report, RequestProfile, Sample, SampleScore

MODES = ("official", "strict")


@dataclass(frozen=True)
class Benchmark:
    """What a benchmark package registers.

    load(data_dir, language, subsets, limit) -> samples
    read_predictions(path, samples) -> {sample id: Prediction} (validated against the samples)
    score(sample, prediction or None, mode) -> SampleScore   (pure)
    report(samples, scores, mode, language) -> Report        (pure)
    """

    name: str
    title: str
    subsets: tuple[str, ...]
    groups: dict[str, tuple[str, ...]]
    metrics: tuple[str, ...]
    summary_metrics: tuple[str, ...]
    languages: tuple[str | None, ...]
    load: Callable[..., list[Sample]]
    read_predictions: Callable[[Path, list[Sample]], dict[str, Prediction]]
    score: Callable[[Sample, Prediction | None, str], SampleScore]
    report: Callable[..., Report]
    # match_predictions(path, samples) -> (predictions, MatchSummary): the upload check, errors collected not raised
    match_predictions: Callable[[Path, list[Sample]], tuple[dict[str, Prediction], Any]] | None = None
    build_request: Callable[..., Any] | None = None
    # async solve(sample, chat, request_mode) -> Prediction; can_solve(subset) says which subsets it runs
    solve: Callable[..., Any] | None = None
    can_solve: Callable[[str], bool] = lambda subset: True
    # request_profile(run config) -> RequestProfile: for benchmarks whose requests come in prompt
    # styles (official / toolboard); it resolves the run's style and the sampling sent. solve() then
    # takes `prompt_style=`.
    request_profile: Callable[[Any], RequestProfile] | None = None
    description: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def expand_subsets(self, names: Sequence[str] | None) -> list[str]:
        """Subset and group names -> subset names, in the benchmark's order."""
        if not names:
            return list(self.subsets)
        chosen: set[str] = set()
        for name in names:
            if name in self.groups:
                chosen.update(self.groups[name])
            elif name in self.subsets:
                chosen.add(name)
            else:
                known = ", ".join(list(self.groups) + list(self.subsets))
                raise ToolboardError(f"unknown subset {name!r} for {self.name}; known: {known}")
        return [s for s in self.subsets if s in chosen]


_BENCHMARK_MODULES = ("evaluators.acebench", "evaluators.toolbench_static", "evaluators.stepeval_audio")
_REGISTRY: dict[str, Benchmark] = {}


def register(benchmark: Benchmark) -> Benchmark:
    _REGISTRY[benchmark.name] = benchmark
    return benchmark


def _load_all() -> None:
    for module in _BENCHMARK_MODULES:
        importlib.import_module(module)


def all_benchmarks() -> list[Benchmark]:
    _load_all()
    return list(_REGISTRY.values())


def get_benchmark(name: str) -> Benchmark:
    _load_all()
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise UnknownBenchmarkError(f"unknown benchmark {name!r}; known: {known}") from None


def score_all(
    benchmark: Benchmark,
    samples: list[Sample],
    predictions: dict[str, Prediction],
    mode: str = "official",
) -> list[SampleScore]:
    if mode not in MODES:
        raise ToolboardError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    return [benchmark.score(s, predictions.get(s.id), mode) for s in samples]
