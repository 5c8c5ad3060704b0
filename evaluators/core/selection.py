"""Which language and subsets a score, run or upload covers: resolved here for the CLI, the engine,
uploads and the Evaluate form alike, so every surface accepts the same names and refuses the same
ones with the same words (subset and group names themselves expand in `Benchmark.expand_subsets`)."""

from __future__ import annotations

from collections.abc import Sequence

from evaluators.core.errors import ToolboardError
from evaluators.core.registry import Benchmark


def language_names(benchmark: Benchmark) -> list[str]:
    """The languages one can choose for the benchmark; empty when it has none to choose."""
    return [language for language in benchmark.languages if language is not None]


def resolve_language(benchmark: Benchmark, language: str | None) -> str | None:
    """The language asked for, else the benchmark's first; None for a benchmark without languages
    (one given there is refused rather than ignored: it would label a report with a language its
    data does not have)."""
    known = language_names(benchmark)
    if not known:
        if language:
            raise ToolboardError(f"{benchmark.name} has no languages; give none (got {language!r})")
        return None
    if not language:
        return known[0]
    if language not in known:
        raise ToolboardError(f"unknown language {language!r} for {benchmark.name}; known: {', '.join(known)}")
    return language


def runnable_subsets(benchmark: Benchmark, names: Sequence[str] | None) -> list[str]:
    """The subsets a run against an endpoint covers: those named, else every one; a benchmark with
    no `solve` runs none."""
    if benchmark.solve is None:
        raise ToolboardError(f"{benchmark.name} cannot run against an endpoint yet")
    return benchmark.expand_subsets(names)
