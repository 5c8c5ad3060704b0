"""The benchmark registry: every benchmark package declares one `Benchmark` in its `benchmark.py`,
and the registry finds the packages by that file (no list to keep up to date)."""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from evaluators.core.board_layout import BoardLayout, plain_layout
from evaluators.core.declarations import About, EvidenceKind, HubBenchmark, Metric, Option, Overview, Role
from evaluators.core.errors import ToolboardError, UnknownBenchmarkError
from evaluators.core.hooks import (
    BuildRequest,
    ExpectedRequests,
    LoadSamples,
    MatchPredictions,
    PrepareUploaded,
    ReadPredictions,
    ReplayCalls,
    RequestProfileOf,
    RunProblemOf,
    ScoreSample,
    ServerKeysOf,
    Solve,
    SubsetOfId,
    SummarizeScores,
    UnrankedReasonsOf,
)
from evaluators.core.types import PROMPT_STYLES, REQUEST_MODES, Prediction, Sample, SampleScore

MODES = ("official", "strict")
PACKAGES_DIR = Path(__file__).resolve().parents[1] / "benchmarks"
DECLARATION_MODULE = "benchmark"
_Declared = TypeVar("_Declared", Role, Option)


def readable(key: str) -> str:
    """A key no title is declared for, as a person reads it: underscores as spaces, the first letter capital."""
    text = key.replace("_", " ").strip()
    return text[:1].upper() + text[1:]


def unique_titles(titles: Mapping[str, str]) -> dict[str, str]:
    """Titles by key, a title two keys share followed by its key: a table's headers must differ (a column
    title may equal a subset's, e.g. a summary of one category)."""
    counts = Counter(titles.values())
    return {key: f"{title} ({key})" if counts[title] > 1 else title for key, title in titles.items()}


def subset_by_prefix(subsets: Sequence[str]) -> Callable[[str], str | None]:
    """The usual `subset_of_id`: an id starts with `<subset>_` (the longest such subset wins)."""
    by_length = sorted(subsets, key=len, reverse=True)

    def subset_of_id(sample_id: str) -> str | None:
        return next((name for name in by_length if sample_id.startswith(name + "_")), None)

    return subset_of_id


@dataclass(frozen=True)
class Example:
    """A few items and one model's answers shipped with the package: `demo`, and the app's
    "built-in example" data source (no download)."""

    folder: Path
    language: str | None
    note: str
    # What the app's one-click demo runs of it (subset or group names; empty: every item).
    demo_subsets: tuple[str, ...] = ()


@dataclass(frozen=True)
class Replay:
    """Run recorded agent calls through an item's environment, no model (`replay` command)."""

    subsets: tuple[str, ...]
    run: ReplayCalls


@dataclass(frozen=True)
class Benchmark:
    """Everything about one benchmark, declared once in its package. What each hook takes and returns
    is in evaluators/core/hooks.py."""

    name: str
    title: str
    description: str
    about: About
    subsets: tuple[str, ...]
    groups: dict[str, tuple[str, ...]]
    metrics: tuple[Metric, ...]
    summary_metrics: tuple[Metric, ...]
    languages: tuple[str | None, ...]
    data_version: str
    load: LoadSamples
    read_predictions: ReadPredictions
    score: ScoreSample
    report: SummarizeScores
    match_predictions: MatchPredictions | None = None
    build_request: BuildRequest | None = None
    solve: Solve | None = None
    # How many sequential requests solve is expected to send for a sample (multi-turn rollouts): longest started first.
    expected_requests: ExpectedRequests | None = None
    # For benchmarks whose requests come in prompt styles (official / toolboard).
    request_profile: RequestProfileOf | None = None
    # What request_profile refuses, known from the settings alone (the form's line before Start).
    run_problem: RunProblemOf | None = None
    # The prompt styles request_profile accepts (--prompt-style), for benchmarks that have one.
    prompt_styles: tuple[str, ...] = PROMPT_STYLES
    # The request modes a run may choose ("prompt": tools described in the text; "tools": native tool calling); the
    # first is a run's default and the one the published rows used (another is not the published experiment).
    request_modes: tuple[str, ...] = REQUEST_MODES
    roles: tuple[Role, ...] = ()
    options: tuple[Option, ...] = ()
    # The roles' work on uploaded predictions, done before the pure scoring.
    prepare_uploaded: PrepareUploaded | None = None
    layout: BoardLayout | None = None
    subset_of_id: SubsetOfId | None = None
    # For uploads whose rows are whole documents without an "id" (an official harness's results file, one per
    # subset): the subset a row's parsed document is of, or None.
    subset_of_document: Callable[[Any], str | None] | None = None
    example: Example | None = None
    replay: Replay | None = None
    # The headline figures in the overview across benchmarks; None: not in the overview.
    overview: Overview | None = None
    # The Hub benchmark dataset a ranked run's headline figures are exported to (`export --eval-results`); None: none
    # registered on the Hub measures this benchmark's experiment.
    hub: HubBenchmark | None = None
    # The evidence kept with each verdict beyond the generic (output, calls, gold, request), as Explore shows
    # it; evidence a benchmark keeps but does not declare is still shown and exported, under its key.
    evidence: tuple[EvidenceKind, ...] = ()
    # What a person reads for a subset, group or view key (`non_live_ast` -> "Non-live AST", `en` -> "English");
    # a key not given is shown with its underscores as spaces (evaluators/core/display_names.py).
    titles: Mapping[str, str] = field(default_factory=dict)
    # Subsets that are scored from uploaded predictions but cannot be run against an endpoint yet, and why (the
    # words a refused run shows). A run of every subset leaves them out; a run naming one is refused.
    upload_only: tuple[str, ...] = ()
    upload_only_why: str = ""
    # Subsets this deployment cannot play right now (e.g. tools whose backend is not configured),
    # read when a run starts: a run of every subset leaves them out (as upload-only ones); a run naming one is
    # left to the benchmark's request_profile, which refuses it saying what to set.
    unavailable_now: Callable[[], tuple[str, ...]] | None = None
    # The server's environment variables holding keys that a run with these settings reads besides its endpoints'
    # (e.g. a search service's key), each with what needs it and what to choose instead. A public deployment
    # refuses such a run: a visitor's run never spends the operator's keys (evaluators/service/run_request.py).
    server_keys: ServerKeysOf | None = None
    # Why a run with these stored settings (RunConfig.to_json()) is not the published experiment for reasons only
    # the benchmark knows (e.g. fewer trials than the board asks, no judge for the items that need one), in plain
    # words; read by the board's ranking rule beside the common reasons (evaluators/publish/ranking_rule.py).
    unranked_reasons: UnrankedReasonsOf | None = None

    def __post_init__(self) -> None:
        unknown_styles = [style for style in self.prompt_styles if style not in PROMPT_STYLES]
        if unknown_styles or not self.prompt_styles:
            raise ToolboardError(f"{self.name}: prompt styles must be some of {', '.join(PROMPT_STYLES)}, "
                                 f"got {', '.join(self.prompt_styles) or 'none'}")
        unknown_modes = [mode for mode in self.request_modes if mode not in REQUEST_MODES]
        if unknown_modes or not self.request_modes:
            raise ToolboardError(f"{self.name}: request modes must be some of {', '.join(REQUEST_MODES)}, "
                                 f"got {', '.join(self.request_modes) or 'none'}")
        if self.overview is not None:
            self._check_overview(self.overview)
        if self.hub is not None:
            self._check_hub(self.hub)
        self._check_titles()

    def _check_hub(self, hub: HubBenchmark) -> None:
        """Each Hub task reads a share from a view and column of the board (a typo would export nothing)."""
        layout = self.layout or plain_layout(self.subsets, self.metric_names)
        for task in hub.tasks:
            if task.view not in layout.views or task.column not in (*layout.columns, *layout.detail_columns):
                raise ToolboardError(f"{self.name}: Hub task {task.task_id!r} reads {task.view}/{task.column}, which "
                                     "is not a view and column of its board")
            if self.metric(task.column).kind != "fraction":
                raise ToolboardError(f"{self.name}: Hub task {task.task_id!r} must read a share, not "
                                     f"{task.column!r}")

    def _check_titles(self) -> None:
        """Titles name known keys (a misspelt key would leave its subset untitled without a word)."""
        layout = self.layout or plain_layout(self.subsets, self.metric_names)
        known = {*self.subsets, *self.groups, *layout.views}
        unknown = sorted(key for key in self.titles if key not in known)
        if unknown:
            raise ToolboardError(f"{self.name}: titles for {', '.join(unknown)}, which are not its subsets, groups or "
                                 f"views ({', '.join(sorted(known))})")
        empty = sorted(key for key, title in self.titles.items() if not str(title).strip())
        if empty:
            raise ToolboardError(f"{self.name}: empty titles for {', '.join(empty)}")

    def _check_overview(self, overview: Overview) -> None:
        """The overview reads a view and columns of the board, and averages its aggregate column with
        other benchmarks': it must be a share where higher is better."""
        layout = self.board_layout()
        if overview.view not in layout.views:
            raise ToolboardError(f"{self.name}: overview view {overview.view!r} is not one of {', '.join(layout.views)}")
        unknown = [c for c in overview.columns if c not in (*layout.columns, *layout.detail_columns)]
        if unknown:
            raise ToolboardError(f"{self.name}: overview columns {', '.join(unknown)} are not board columns")
        aggregate = self.metric(overview.aggregate)
        if aggregate.kind != "fraction" or not aggregate.higher_is_better:
            raise ToolboardError(f"{self.name}: the overview's aggregate {overview.aggregate!r} must be a share, "
                                 "higher is better")

    @property
    def metric_names(self) -> tuple[str, ...]:
        return tuple(metric.name for metric in self.metrics)

    @property
    def summary_names(self) -> tuple[str, ...]:
        return tuple(metric.name for metric in self.summary_metrics)

    def metric(self, name: str) -> Metric:
        """The declared metric (per subset or summary) of that name; an undeclared one is shown as named."""
        for metric in (*self.summary_metrics, *self.metrics):
            if metric.name == name:
                return metric
        return Metric(name)

    def subset_title(self, key: str) -> str:
        """What a person reads for a subset, group or view: its declared title, else the key made readable."""
        return self.titles.get(key) or readable(key)

    def column_title(self, column: str) -> str:
        """What a person reads for a board or report column: the metric's label, else as a subset title (the
        board's detail columns are subsets)."""
        for metric in (*self.summary_metrics, *self.metrics):
            if metric.name == column and metric.label:
                return metric.label
        return self.subset_title(column)

    def board_layout(self) -> BoardLayout:
        """The declared table (or a plain per-subset one), with each column's direction and display name."""
        layout = self.layout or plain_layout(self.subsets, self.metric_names)
        declared = (*self.summary_metrics, *self.metrics)
        shown = dict.fromkeys((*layout.columns, *layout.detail_columns, *layout.text_columns, *(m.name for m in declared)))
        return replace(layout, lower_is_better=frozenset(m.name for m in declared if not m.higher_is_better),
                       labels=unique_titles({column: self.column_title(column) for column in shown}))

    def subset_of(self, sample_id: str) -> str | None:
        """The subset a sample id belongs to."""
        return (self.subset_of_id or subset_by_prefix(self.subsets))(sample_id)

    def role(self, name: str) -> Role:
        return self._declared(self.roles, "role", name)

    def option(self, name: str) -> Option:
        return self._declared(self.options, "option", name)

    def _declared(self, items: tuple[_Declared, ...], kind: str, name: str) -> _Declared:
        for item in items:
            if item.name == name:
                return item
        known = ", ".join(item.name for item in items) or "none"
        raise ToolboardError(f"{self.name} has no {kind} {name!r}; its {kind}s: {known}")

    def chosen_options(self, given: Mapping[str, str]) -> dict[str, str]:
        """Option values checked against the declarations, defaults left out (a run that sets an option to
        its default is the same run as one that does not)."""
        chosen = {}
        for name, value in given.items():
            option = self.option(name)
            if value not in option.choices:
                raise ToolboardError(f"option {name} of {self.name} takes {', '.join(option.choices)} (got {value!r})")
            if value != option.default:
                chosen[name] = value
        return chosen

    def sample_options(self, given: Mapping[str, str]) -> dict[str, str] | None:
        """The values of the options that select samples (`load`'s `options`), defaults filled in; None when the
        benchmark declares none."""
        selecting = [option for option in self.options if option.selects_samples]
        return {option.name: str(given.get(option.name, option.default)) for option in selecting} or None

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


_FOUND: dict[str, Benchmark] = {}


def benchmark_packages(folder: Path = PACKAGES_DIR) -> list[str]:
    """The packages under `benchmarks/` that declare a benchmark (they hold a `benchmark.py`), by name."""
    return sorted(path.parent.name for path in folder.glob(f"*/{DECLARATION_MODULE}.py")
                  if (path.parent / "__init__.py").is_file())


_ALL_FOUND: list[bool] = []


def _declared(package: str) -> Benchmark:
    module = importlib.import_module(f"{__package__.rsplit('.', 1)[0]}.benchmarks.{package}.{DECLARATION_MODULE}")
    declared = getattr(module, "BENCHMARK", None)
    if not isinstance(declared, Benchmark):
        raise ToolboardError(f"{module.__file__} must define BENCHMARK = Benchmark(...)")
    return declared


def _load_all() -> None:
    if _ALL_FOUND:
        return
    found = [_FOUND.get(package) or _declared(package) for package in benchmark_packages()]
    # In the packages' order, as when all are loaded at once; one found alone before keeps its entry.
    ordered = {declared.name: declared for declared in found}
    ordered.update({name: declared for name, declared in _FOUND.items() if name not in ordered})
    _FOUND.clear()
    _FOUND.update(ordered)
    _ALL_FOUND.append(True)


def _load_named(name: str) -> None:
    """The benchmark whose package has its name, alone: a command about one benchmark (a run) does not pay
    for importing the others (~50 ms each). Any other name looks through them all."""
    if name in _FOUND or _ALL_FOUND:
        return
    if name in benchmark_packages():
        declared = _declared(name)
        _FOUND[declared.name] = declared
        if declared.name == name:
            return
    _load_all()


def all_benchmarks() -> list[Benchmark]:
    _load_all()
    return list(_FOUND.values())


def benchmark_names() -> list[str]:
    return [benchmark.name for benchmark in all_benchmarks()]


def get_benchmark(name: str) -> Benchmark:
    _load_named(name)
    try:
        return _FOUND[name]
    except KeyError:
        known = ", ".join(sorted(_FOUND))
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
