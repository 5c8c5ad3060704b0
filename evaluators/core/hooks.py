"""What a benchmark package's hooks take and return: the contract between a `Benchmark` declaration
and the engine, the CLI and the app that call it (mypy checks each package's functions against it).

The core names no engine type: where a hook receives something the engine built (the run's settings,
its chat clients), the Protocols here say which parts of it the hook may use."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TextIO

from evaluators.core.predictions import MatchSummary, ParsedPredictions
from evaluators.core.types import ChatRequest, Prediction, Report, RequestProfile, Sample, SampleScore


class LoadSamples(Protocol):
    """load(data_dir, language, subsets, limit, options) -> the samples of those subsets, in the benchmark's order.
    `data_dir` None: the benchmark's own source (download or environment); `limit` caps each subset; `options`
    the values of the run's options that select samples (Option.selects_samples, e.g. a task split; defaults
    filled in), None for a benchmark that declares none."""

    def __call__(self, data_dir: str | Path | None = ..., language: str | None = ...,
                 subsets: list[str] | None = ..., limit: int | None = ...,
                 options: Mapping[str, str] | None = ...) -> list[Sample]: ...


class ReadPredictions(Protocol):
    """read_predictions(path, samples) -> {sample id: Prediction}, validated against the samples."""

    def __call__(self, path: Path, samples: list[Sample], /) -> dict[str, Prediction]: ...


class MatchPredictions(Protocol):
    """match_predictions(path or a file parsed before, samples) -> (predictions, summary): the upload check,
    every problem of the file (unreadable lines too) collected in the summary instead of raised."""

    def __call__(self, source: Path | ParsedPredictions, samples: list[Sample], /
                 ) -> tuple[dict[str, Prediction], MatchSummary]: ...


class ScoreSample(Protocol):
    """score(sample, prediction or None, mode) -> SampleScore; pure (no I/O, no model)."""

    def __call__(self, sample: Sample, prediction: Prediction | None, mode: str = ..., /) -> SampleScore: ...


class SummarizeScores(Protocol):
    """report(samples, scores, mode, language, subsets) -> Report; pure."""

    def __call__(self, samples: list[Sample], scores: list[SampleScore], mode: str = ..., language: str | None = ...,
                 subsets: list[str] | None = ...) -> Report: ...


class BuildRequest(Protocol):
    """build_request(sample, mode, language, **declared options) -> the chat request sent for the sample.
    `mode`: "prompt" (tools described in the prompt) or "tools" (native tool calling). A benchmark with
    prompt styles or declared options takes them as further keyword arguments with defaults."""

    def __call__(self, sample: Sample, mode: str = ..., language: str | None = ...) -> ChatRequest: ...


class ChatModel(Protocol):
    """A chat client as a hook sees it: the model under test, or a role's model."""

    # The reply is the engine's ChatResult (text, tool calls, latency, usage): the core cannot name it.
    async def complete(self, request: ChatRequest) -> Any: ...


class Solve(Protocol):
    """async solve(sample, clients, options) -> Prediction: `clients` maps "model" (the model under test)
    and each role in use to a chat client; `options` holds `request_mode`, `prompt_style` (benchmarks
    with a request profile) and every declared option's value."""

    async def __call__(self, sample: Sample, clients: Mapping[str, ChatModel],
                       options: Mapping[str, Any]) -> Prediction: ...


class ExpectedRequests(Protocol):
    """expected_requests(sample) -> about how many requests `solve` sends for it, one after the other (read from
    the item alone, before any is sent). A run starts the longest first, so its last slots do not wait on one
    long conversation begun late; only the order of starting changes, never a request."""

    def __call__(self, sample: Sample, /) -> int: ...


class ModelRequestSettings(Protocol):
    """The parts of a run's model settings a request profile reads."""

    @property
    def model(self) -> str: ...

    @property
    def request_mode(self) -> str: ...

    @property
    def prompt_style(self) -> str | None: ...

    def sampling_for(self, benchmark_sampling: dict[str, Any]) -> dict[str, Any]: ...


class RoleModel(Protocol):
    """A role's endpoint as a request profile reads it: which model plays the role."""

    @property
    def model(self) -> str: ...


class RunSettings(Protocol):
    """The parts of a run's settings a request profile reads."""

    @property
    def model(self) -> ModelRequestSettings: ...

    @property
    def language(self) -> str | None: ...

    @property
    def data_dir(self) -> str | None: ...

    @property
    def subsets(self) -> Sequence[str]: ...

    @property
    def roles(self) -> Mapping[str, RoleModel]: ...

    @property
    def options(self) -> Mapping[str, str]: ...


class RequestProfileOf(Protocol):
    """request_profile(run settings) -> RequestProfile: for benchmarks whose requests come in prompt styles;
    it resolves the run's style and the sampling sent, and raises on a style or source it cannot serve."""

    def __call__(self, config: RunSettings, /) -> RequestProfile: ...


class RunProblemOf(Protocol):
    """run_problem(run settings) -> why the run would be refused, or None: what request_profile refuses,
    decided from the settings alone (no download, no endpoint), so the form can say it before Start."""

    def __call__(self, config: RunSettings, /) -> str | None: ...


class ServerKeysOf(Protocol):
    """server_keys(run settings) -> ((variable, what needs it and what to choose instead), ...): the server's
    environment variables holding keys that such a run reads besides its endpoints' key variables."""

    def __call__(self, config: RunSettings, /) -> tuple[tuple[str, str], ...]: ...


class PrepareUploaded(Protocol):
    """prepare_uploaded(samples, predictions, {role name: endpoint}) -> how many predictions the roles worked
    on: the roles' work on uploaded predictions, done before the pure scoring (e.g. a judge's verdicts kept in
    Prediction.extra). The endpoints are the engine's (the core cannot name their type)."""

    def __call__(self, samples: list[Sample], predictions: dict[str, Prediction], roles: dict[str, Any], /) -> int: ...


class SubsetOfId(Protocol):
    """subset_of_id(sample id) -> the subset it belongs to, or None."""

    def __call__(self, sample_id: str, /) -> str | None: ...


class ReplayCalls(Protocol):
    """run(samples, JSON Lines file of recorded calls, output stream) -> how many lines were replayed."""

    def __call__(self, samples: list[Sample], path: Path, out: TextIO, /) -> int: ...


class UnrankedReasonsOf(Protocol):
    """unranked_reasons(stored run settings, as RunConfig.to_json() gives them) -> why such a run is not the
    published experiment, for reasons only the benchmark knows (plain words; empty: none)."""

    def __call__(self, config: Mapping[str, Any], /) -> list[str]: ...
