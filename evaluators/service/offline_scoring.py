"""Scoring without an endpoint, as the command line asks it: a predictions file against a benchmark's data, and
a benchmark's built-in example. Both go through the one scoring path (evaluators.engine.scoring)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from evaluators.core.errors import ToolboardError
from evaluators.core.registry import Benchmark, Example, all_benchmarks, get_benchmark
from evaluators.core.selection import resolve_language
from evaluators.core.types import Report, Sample, SampleScore
from evaluators.engine.scoring import score_and_report
from evaluators.engine.settings import Endpoint


@dataclass(frozen=True)
class ScoredFile:
    """A predictions file scored in one mode: the samples read, their verdicts and the report."""

    benchmark: Benchmark
    samples: list[Sample]
    scores: list[SampleScore]
    report: Report


def score_predictions_file(benchmark: Benchmark, predictions_path: Path, data_dir: str | Path | None,
                           language: str | None, subsets: list[str] | None, mode: str,
                           roles: Mapping[str, Endpoint] | None = None) -> ScoredFile:
    """Read the benchmark's data and the predictions, let the companion models (`roles`) do their work before
    scoring (which stays pure), and score and report in `mode`."""
    language = resolve_language(benchmark, language)
    chosen = benchmark.expand_subsets(subsets)
    samples = benchmark.load(data_dir, language=language, subsets=chosen)
    predictions = benchmark.read_predictions(predictions_path, samples)
    if roles and benchmark.prepare_uploaded is not None:
        benchmark.prepare_uploaded(samples, predictions, dict(roles))
    scored = score_and_report(benchmark, samples, predictions, [mode], language=language, subsets=chosen)[mode]
    return ScoredFile(benchmark, samples, scored.scores, scored.report)


def benchmark_with_example(name: str | None) -> Benchmark:
    """The benchmark named (it must ship an example), else the first that ships one."""
    if name:
        benchmark = get_benchmark(name)
        if benchmark.example is None:
            raise ToolboardError(f"{benchmark.name} has no built-in example")
        return benchmark
    found = [benchmark for benchmark in all_benchmarks() if benchmark.example is not None]
    if not found:
        raise ToolboardError("no benchmark has a built-in example")
    return found[0]


def score_example(benchmark: Benchmark, mode: str) -> tuple[Example, ScoredFile]:
    """A benchmark's built-in example (its data and its predictions file) scored in `mode`."""
    example = benchmark.example
    if example is None:
        raise ToolboardError(f"{benchmark.name} has no built-in example")
    samples = benchmark.load(example.folder, language=example.language, subsets=None)
    predictions = benchmark.read_predictions(example.folder / "predictions.jsonl", samples)
    scored = score_and_report(benchmark, samples, predictions, [mode], language=example.language)[mode]
    return example, ScoredFile(benchmark, samples, scored.scores, scored.report)
