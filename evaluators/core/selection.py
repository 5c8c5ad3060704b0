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


def upload_only_asked(benchmark: Benchmark, names: Sequence[str] | None) -> list[str]:
    """The names given that ask for subsets a run cannot play (Benchmark.upload_only): such a subset, or a group
    made of them only. A group that also holds playable subsets (`all`) is not one: it runs those."""
    only = set(benchmark.upload_only)
    asked = []
    for name in names or ():
        members = benchmark.groups.get(name, (name,))
        if members and set(members) <= only:
            asked.append(name)
    return asked


def runnable_subsets(benchmark: Benchmark, names: Sequence[str] | None) -> list[str]:
    """The subsets a run against an endpoint covers: those named, else every one, less those scored from
    uploads only (and, for every one, less those the deployment cannot play now: Benchmark.unavailable_now); a
    benchmark with no `solve` runs none, and one asked for an upload-only subset refuses."""
    if benchmark.solve is None:
        raise ToolboardError(f"{benchmark.name} cannot run against an endpoint yet")
    asked = upload_only_asked(benchmark, names)
    if asked:
        raise ToolboardError(f"{benchmark.name}: {', '.join(asked)}: {benchmark.upload_only_why or 'scored from uploads only'}")
    subsets = [name for name in benchmark.expand_subsets(names) if name not in benchmark.upload_only]
    if benchmark.unavailable_now is not None and asks_every_subset(benchmark, names):
        unavailable = set(benchmark.unavailable_now())
        subsets = [name for name in subsets if name not in unavailable]
    return subsets


def asks_every_subset(benchmark: Benchmark, names: Sequence[str] | None) -> bool:
    """No subset named, or a group of every subset (`all`): what a run leaves out what it cannot play from."""
    every = set(benchmark.subsets)
    return not names or any(set(benchmark.groups.get(name, ())) >= every for name in names)
