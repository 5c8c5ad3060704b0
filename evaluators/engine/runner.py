"""Runs: solve samples concurrently through the engine's client, store each prediction as it
completes, then score and report. Resumable after any interruption, cancellable, re-runnable."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import math
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from evaluators import __version__
from evaluators.core import phase_log
from evaluators.core.environment import check_switches
from evaluators.core.errors import ToolboardError
from evaluators.core.registry import MODES as SCORING_MODES
from evaluators.core.registry import Benchmark, get_benchmark
from evaluators.core.selection import runnable_subsets
from evaluators.core.types import Prediction, Report, Sample, SampleScore
from evaluators.engine.background_scoring import BackgroundScoring
from evaluators.engine.client import (
    ChatClient,
    PlayingRole,
    RequestFailed,
    RequestLimit,
    RetryPolicy,
    global_request_limit,
    record_events,
    start_request_count,
)
from evaluators.engine.endpoint_guard import check_endpoint_allowed, check_run_keys, key_from_environment
from evaluators.engine.parsed_data import fresh_samples, kept_samples, load_samples
from evaluators.engine.preflight import UNLISTED_REFUSED, UnlistedModelRule, check_endpoint
from evaluators.engine.redact import redact
from evaluators.engine.scoring import score_and_report
from evaluators.engine.settings import (
    TESTED_ROLE,
    RunConfig,
    RunRequest,
    fingerprint,
    require_run_request,
    role_settings,
)
from evaluators.engine.store import Store, lease_holder_name, sample_score_row
from evaluators.engine.write_behind import WriteBehind


@dataclass
class Progress:
    """Live counts of a run, for progress bars and the jobs panel."""

    run_id: str
    total: dict[str, int]
    done: dict[str, int] = field(default_factory=dict)
    errors: int = 0
    requests: int = 0
    started: float = field(default_factory=time.monotonic)
    finished_before: int = 0
    # Samples scored by this execution (official mode) and how many of them were correct: the score so far.
    scored: int = 0
    correct: int = 0

    @property
    def total_count(self) -> int:
        return sum(self.total.values())

    @property
    def done_count(self) -> int:
        return sum(self.done.values())

    def snapshot(self) -> dict[str, Any]:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        new = self.done_count - self.finished_before
        remaining = self.total_count - self.done_count
        rate = new / elapsed
        return {
            "run_id": self.run_id,
            "done": self.done_count,
            "total": self.total_count,
            "errors": self.errors,
            "per_subset": {name: {"done": self.done.get(name, 0), "total": count} for name, count in self.total.items()},
            "requests_per_s": self.requests / elapsed,
            "requests": self.requests,
            "done_now": new,
            "eta_s": remaining / rate if rate > 0 else None,
            "elapsed_s": elapsed,
            "scored": self.scored,
            "correct": self.correct,
        }


@dataclass
class RunOutcome:
    run_id: str
    status: str
    report: Report | None
    progress: Progress


def _load_samples(benchmark: Benchmark, config: RunConfig) -> list[Sample]:
    subsets = runnable_subsets(benchmark, config.subsets)
    return load_samples(benchmark, config.data_dir, config.language, subsets, config.limit, config.options)


def _api_key(config: RunConfig, given: str | None = None) -> str | None:
    """A key handed in for this run only (the app's password field), else the configured variable's value."""
    if given:
        return given
    return key_from_environment(config.model.api_key_env)


def _run_context(store: Store, run_id: str, samples: list[Sample] | None) -> tuple[RunConfig, Benchmark, list[Sample]]:
    """A stored run's settings, its benchmark and its samples (loaded again unless given)."""
    config = RunConfig.from_json(store.get_run(run_id).config)
    benchmark = get_benchmark(config.benchmark)
    return config, benchmark, samples if samples is not None else _load_samples(benchmark, config)


def with_request_profile(config: RunConfig, benchmark: Benchmark) -> RunConfig:
    """The config with its prompt style resolved and its request profile recorded (benchmarks with
    prompt styles)."""
    if benchmark.request_profile is None:
        return config
    profile = benchmark.request_profile(config)
    model = replace(config.model, prompt_style=profile.prompt_style)
    return replace(config, model=model, request_profile=profile.to_json())


def _check_endpoints(config: RunConfig, benchmark: Benchmark, api_key: str | None, unlisted: UnlistedModelRule) -> None:
    """The tested model's endpoint and each role's, looked at before the run exists (a dead endpoint, a
    refused key or an unknown model is refused with its cause, and no run is created)."""
    check_endpoint(config.model.base_url, config.model.model, _api_key(config, api_key), unlisted=unlisted)
    for name, endpoint in config.roles.items():
        check_endpoint(endpoint.base_url, endpoint.model, key_from_environment(endpoint.api_key_env),
                       what=f"the {benchmark.role(name).label.lower()}'s endpoint", unlisted=unlisted)


def _samples_once_endpoints_pass(config: RunConfig, benchmark: Benchmark, api_key: str | None,
                                 unlisted: UnlistedModelRule) -> list[Sample]:
    """The run's samples, once its endpoints passed their check (_check_endpoints). A kept parsed copy of the
    samples is read while the endpoints are looked at, in the time the check waits for the endpoint's answer
    (tens to hundreds of ms for a remote one; on loopback, the check mostly imports the SDK, which holds the
    interpreter's lock, and ~10 ms of the read are saved). Samples read anew are read only after the check has
    passed, so a dead endpoint is told at once, before a long read or a download."""
    subsets = runnable_subsets(benchmark, config.subsets)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        checked = pool.submit(_check_endpoints, config, benchmark, api_key, unlisted)
        try:
            kept = kept_samples(benchmark, config.data_dir, config.language, subsets, config.limit, config.options)
        finally:
            checked.result()  # an endpoint's failure is told first, even over the read's
    phase_log.mark("endpoint checked")
    return kept if kept is not None else fresh_samples(benchmark, config.data_dir, config.language, subsets,
                                                       config.limit, config.options)


def stop_cause(stopped: BaseException) -> str:
    """Why a run stopped before it finished, in a few words for its message."""
    if isinstance(stopped, KeyboardInterrupt | SystemExit | asyncio.CancelledError):
        return "stopped because its process was interrupted or shut down (Ctrl-C, a signal, the app stopping)"
    return f"stopped by an internal error ({type(stopped).__name__})"


def start_run(request: RunRequest, store: Store, owner: str | None = None,
              unlisted: UnlistedModelRule = UNLISTED_REFUSED) -> tuple[str, list[Sample]]:
    """Create a run from a checked request (see evaluators.service.run_request; nothing is checked again
    here but what only the endpoints and the data can tell: the endpoints answer, the samples load) and
    return it with its samples; no sample is sent yet. `owner`: the visitor who may act on it on a public
    deployment (see Store.create_run); `unlisted`: the deployment's rule for a model its endpoint does not list."""
    config = require_run_request(request).config
    # An operator's bad TOOLBOARD_GLOBAL_CONCURRENCY or on/off switch refuses the run before anything is sent.
    global_request_limit()
    check_switches()
    benchmark = get_benchmark(config.benchmark)
    samples = _samples_once_endpoints_pass(config, benchmark, request.api_key, unlisted)
    if not samples:
        raise ToolboardError("no samples selected")
    phase_log.mark("data loaded")
    config = with_request_profile(config, benchmark)
    run_id = store.create_run(
        config.benchmark, config.language, config.model.model, config.model.base_url, config.to_json(),
        fingerprint(config, benchmark.data_version, __version__), len(samples), owner=owner,
    )
    phase_log.mark("run created")
    return run_id, samples


# A run's lease: renewed every third of this while the run goes, so a process that died (kill -9)
# frees its runs within this many seconds, and a live one is never run twice.
LEASE_SECONDS = 30.0


class RunIsLiveError(ToolboardError):
    """Another process is executing this run right now."""


def _claim(store: Store, run_id: str, holder: str) -> None:
    if not store.claim_lease(run_id, holder, LEASE_SECONDS):
        other = store.live_holder(run_id) or "another process"
        raise RunIsLiveError(f"run {run_id} is being executed right now by {other}; wait for it to end, or stop it"
                             " there, before resuming it here")


async def _keep_lease(store: Store, run_id: str, holder: str, lost: asyncio.Event, cancel: asyncio.Event) -> None:
    """Renew the lease while the run goes; if another process took it (this one stalled past the
    lease), stop at once: two processes must never send the same run's requests."""
    while True:
        await asyncio.sleep(LEASE_SECONDS / 3)
        try:
            kept = store.claim_lease(run_id, holder, LEASE_SECONDS)
        except sqlite3.Error:
            continue  # tried again next time; the run's own writes report the store
        if not kept:
            lost.set()
            cancel.set()
            return


@contextlib.asynccontextmanager
async def _held_lease(store: Store, run_id: str, cancel: asyncio.Event) -> AsyncIterator[asyncio.Event]:
    """Hold the run's lease while the block runs (refused while another live process holds it). If
    another process takes it meanwhile, `cancel` and the yielded event are set (the block then writes
    nothing more to the run: it is the other process's) and, once the block ends, RunIsLiveError says so."""
    holder = lease_holder_name()
    _claim(store, run_id, holder)
    lost = asyncio.Event()
    keeper = asyncio.create_task(_keep_lease(store, run_id, holder, lost, cancel))
    try:
        yield lost
        if lost.is_set():
            other = store.live_holder(run_id) or "another process"
            raise RunIsLiveError(f"run {run_id} was taken over by {other} (this process stalled past its lease);"
                                 " stopped here")
    finally:
        keeper.cancel()
        with contextlib.suppress(sqlite3.Error):  # a store refusing writes: the lease expires by itself
            store.release_lease(run_id, holder)


async def execute(
    store: Store,
    run_id: str,
    samples: list[Sample] | None = None,
    *,
    rerun_errors: bool = False,
    on_progress: Callable[[Progress], None] | None = None,
    cancel: asyncio.Event | None = None,
    retry: RetryPolicy | None = None,
    api_key: str | None = None,
) -> RunOutcome:
    """Solve every sample of the run that has no prediction yet (with rerun_errors, also those that
    ended in a request error), then score and report unless cancelled. Refused while another process
    executes the same run (it holds the run's lease)."""
    cancel = cancel or asyncio.Event()
    async with _held_lease(store, run_id, cancel) as lease_lost:
        # A run just created here from a checked request comes with its samples; one read back from the store
        # (a resume, a re-run, a queue worker) is checked again: what may have changed since it was stored.
        stored = samples is None
        config, benchmark, samples = _run_context(store, run_id, samples)
        if stored:
            _check_stored_run_can_run(config, benchmark, api_key)
        todo, progress = _todo_and_progress(run_id, samples, store.prediction_states(run_id), rerun_errors)
        todo = longest_first(todo, benchmark)
        store.set_status(run_id, "running")

        def on_scored(sample: Sample, prediction: Prediction, verdict: SampleScore) -> None:
            progress.scored += 1
            progress.correct += bool(verdict.correct)
            progress.done[sample.subset] = progress.done.get(sample.subset, 0) + 1
            progress.errors += prediction.error is not None
            if on_progress:
                on_progress(progress)

        # Scoring is pure: done while other requests are in flight, not at the end (its rows too), on a thread of
        # its own so the event loop keeps sending (a multi-turn item is replayed in an environment worker).
        scoring = BackgroundScoring(benchmark, run_id, on_scored)
        writer = WriteBehind(store, run_id, scoring.submit)
        clients = _RunClients.for_run(config, benchmark, store, writer, retry, _api_key(config, api_key))
        options = solve_options(config, benchmark)
        solve = benchmark.solve
        if solve is None:  # start_run refuses such a benchmark; a stored run is checked again here
            raise ToolboardError(f"{benchmark.name} cannot run against an endpoint yet")

        async def solve_one(sample: Sample) -> None:
            counter = start_request_count()
            sent = clients.tested.capture_requests()  # the request as sent, kept with the sample
            calls = record_events()  # every model call of the sample (tested model, judge, simulated user)
            try:
                prediction = await solve(sample, clients.by_role, options)
            except RequestFailed as exc:
                prediction = Prediction(sample.id, error=str(exc))
            except Exception as exc:  # noqa: BLE001 - one bad sample must not stop the run
                prediction = Prediction(sample.id, error=redact(f"internal error: {type(exc).__name__}: {exc}",
                                                                (clients.tested.api_key,)))
            progress.requests = clients.requests_sent
            writer.add_prediction(sample, prediction, counter[0], sent.evidence(), calls.events_json(row_body=sent.last))

        try:
            await _solve_all(todo, solve_one, samples_at_once(benchmark, config.concurrency), cancel, writer)
            if not lease_lost.is_set():
                writer.flush()
            await scoring.wait()
        except BaseException as stopped:
            if not lease_lost.is_set():
                done = progress.done_count + scoring.unscored  # stored, some not scored yet
                store.set_status(run_id, "interrupted", f"{stop_cause(stopped)}: {done}/"
                                                        f"{progress.total_count} done; resume to finish")
            raise
        finally:
            if not lease_lost.is_set():
                writer.flush()
            scoring.close()
            await clients.close()
        if lease_lost.is_set():
            return RunOutcome(run_id, "cancelled", None, progress)  # _held_lease raises with the reason
        if writer.unsaved:
            writer.flush()  # a last try for what the store refused while the run went (scored by score_run)
        if cancel.is_set():
            store.set_status(run_id, "cancelled", f"{progress.done_count}/{progress.total_count} done; resume to finish")
            return RunOutcome(run_id, "cancelled", None, progress)
        phase_log.mark("requests done")
        _check_all_stored(store, run_id, samples, writer)
        report = score_run(store, run_id, samples, scoring.scored, scoring.rows)
        phase_log.mark("scored and stored")
        run = store.get_run(run_id)
        if todo and clients.requests_sent == 0 and run.status == "finished":
            store.set_status(run_id, "finished", f"{run.message}; every answer came from the cache (these requests"
                                                 " were answered before: nothing was sent)")
        return RunOutcome(run_id, run.status, report, progress)


def _check_stored_run_can_run(config: RunConfig, benchmark: Benchmark, api_key: str | None) -> None:
    """A stored run, before anything is sent, refused once for what would fail every sample alike or what
    may have changed since it was stored: its endpoints under today's policy (public mode switched on), the
    keys this process holds, the official files still there."""
    check_endpoint_allowed(config.model.base_url)
    for endpoint in config.roles.values():
        check_endpoint_allowed(endpoint.base_url)
    check_run_keys(config, api_key)
    if benchmark.request_profile is not None and config.model.prompt_style == "official":
        benchmark.request_profile(config)  # the official files must still be there: one clear error, not one per sample


def _todo_and_progress(run_id: str, samples: list[Sample], states: dict[str, bool],
                       rerun_errors: bool) -> tuple[list[Sample], Progress]:
    """The samples this execution sends (those without a row; with rerun_errors also those that ended
    in a request error), and the progress so far (what is stored and stays)."""
    if rerun_errors:  # and the samples never sent (an interrupted run): a finished run has them all
        todo = [s for s in samples if states.get(s.id, True) is True]
    else:
        todo = [s for s in samples if s.id not in states]
    todo_ids = {s.id for s in todo}
    progress = Progress(run_id=run_id, total={})
    for sample in samples:
        progress.total[sample.subset] = progress.total.get(sample.subset, 0) + 1
        if sample.id in states and sample.id not in todo_ids:
            progress.done[sample.subset] = progress.done.get(sample.subset, 0) + 1
            progress.errors += states[sample.id]
    progress.finished_before = progress.done_count
    return todo, progress


@dataclass
class _RunClients:
    """The run's clients: the tested model's ("model") and one per role in use; a role nobody was given
    is played by the tested model's client when the benchmark says so, else left out."""

    tested: ChatClient
    by_role: dict[str, ChatClient | PlayingRole]

    @classmethod
    def for_run(cls, config: RunConfig, benchmark: Benchmark, store: Store, writer: WriteBehind,
                retry: RetryPolicy | None, api_key: str | None) -> _RunClients:
        # One limit of `concurrency` requests in flight per endpoint: a role on the tested model's server (a
        # simulated user, a judge) shares the tested model's, so the server never sees more than asked.
        limits: dict[str, RequestLimit] = {}

        def limit_of(base_url: str) -> RequestLimit:
            return limits.setdefault(base_url.rstrip("/"), RequestLimit(config.concurrency))

        tested = ChatClient(
            config.model, api_key=api_key, store=store, use_cache=config.use_cache,
            retry=retry or RetryPolicy(max_attempts=config.max_attempts), concurrency=config.concurrency,
            on_response=writer.add_response, request_limit=limit_of(config.model.base_url),
        )
        clients: dict[str, ChatClient | PlayingRole] = {TESTED_ROLE: tested}
        for role in benchmark.roles:
            endpoint = config.roles.get(role.name)
            if endpoint is not None:
                # Made once per run (a client is costly to create), sharing the tested one's cache and retries.
                clients[role.name] = ChatClient(
                    role_settings(role, endpoint, config.model), api_key=key_from_environment(endpoint.api_key_env),
                    store=store, use_cache=tested.use_cache, retry=tested.retry, concurrency=tested.concurrency,
                    on_response=tested.on_response, role=role.name, request_limit=limit_of(endpoint.base_url),
                )
            elif role.played_by_tested_model:
                clients[role.name] = PlayingRole(tested, role.name)
        return cls(tested, clients)

    @property
    def requests_sent(self) -> int:
        return sum(client.requests_sent for client in self._distinct())

    def _distinct(self) -> list[ChatClient]:
        clients = [client.client if isinstance(client, PlayingRole) else client for client in self.by_role.values()]
        return list({id(client): client for client in clients}.values())

    async def close(self) -> None:
        for client in self._distinct():
            await client.close()


def solve_options(config: RunConfig, benchmark: Benchmark) -> dict[str, Any]:
    """What `solve` is told besides the sample: the request mode, the prompt style (benchmarks with a
    request profile; runs from before prompt styles used our own wording) and every declared option."""
    options: dict[str, Any] = {"request_mode": config.model.request_mode}
    if benchmark.request_profile is not None:
        options["prompt_style"] = config.model.prompt_style or "toolboard"
    for option in benchmark.options:
        options[option.name] = config.options.get(option.name, option.default)
    return options


# Samples of several dependent requests each (benchmark.expected_requests) are solved this many times
# `--concurrency` at once. Requests stay capped at `--concurrency` per endpoint (RequestLimit), so the endpoint sees no
# more; the extra samples take a request slot the moment one frees while another sample runs its tools, opens its
# environment or waits on its judge, instead of the slot sitting idle until that sample's next request. Four times: with
# two, a run ends on a tail of rollouts begun late, each waiting its turn for a slot at every step (the README's rollout
# throughput figures: a search-and-fetch rollout went from 0.84-0.85 of whole rounds to 0.89-0.91). Letting the
# rollouts with more requests still to send go first did as well there, but slowed the conversations of a benchmark
# with a simulated user (1.04x -> 1.08x of their floor), so requests wait first come, first served.
ROLLOUT_SAMPLES_PER_SLOT = 4.0


def samples_at_once(benchmark: Benchmark, concurrency: int) -> int:
    """How many samples are solved at once: `concurrency` for samples of one request each, more for rollouts."""
    if benchmark.expected_requests is None:
        return concurrency
    return math.ceil(concurrency * ROLLOUT_SAMPLES_PER_SLOT)


def longest_first(todo: list[Sample], benchmark: Benchmark) -> list[Sample]:
    """The samples in the order they are started: those the benchmark expects to send the most requests one after
    the other first (a stable sort: alike ones keep their order), so the run does not end on one long rollout
    begun last while the other slots sit idle. Samples of one request each keep their order."""
    if benchmark.expected_requests is None:
        return todo
    expected = benchmark.expected_requests
    return sorted(todo, key=lambda sample: -expected(sample))


async def _solve_all(todo: list[Sample], solve_one: Callable[[Sample], Awaitable[None]], concurrency: int,
                     cancel: asyncio.Event, writer: WriteBehind) -> None:
    """Solve the samples, `concurrency` at a time, until done, cancelled, or the store refuses writes
    (then no more is sent). A worker's unexpected error ends them all and is raised."""
    queue: asyncio.Queue[Sample] = asyncio.Queue()
    for sample in todo:
        queue.put_nowait(sample)

    async def worker() -> None:
        while not cancel.is_set() and writer.failure is None:
            try:
                sample = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            await solve_one(sample)

    workers = [asyncio.create_task(worker()) for _ in range(max(1, min(concurrency, len(todo))))]
    cancel_watch = asyncio.create_task(cancel.wait())
    try:
        pending: set[asyncio.Task[Any]] = set(workers)
        while pending:
            done, pending = await asyncio.wait(pending | {cancel_watch}, return_when=asyncio.FIRST_COMPLETED)
            pending.discard(cancel_watch)
            for task in done:
                if task is not cancel_watch and (error := task.exception()) is not None:
                    raise error
            if cancel.is_set():
                for task in pending:
                    task.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
                pending = set()
    except BaseException:
        for task in workers:
            task.cancel()
        raise
    finally:
        cancel_watch.cancel()


def _check_all_stored(store: Store, run_id: str, samples: list[Sample], writer: WriteBehind) -> None:
    """A run with any sample unstored is never finished: it fails, saying how many and why."""
    unstored = _unstored(store, run_id, samples)
    if not unstored:
        return
    problem = f"; the store said: {writer.failure}" if writer.failure is not None else ""
    message = (f"{unstored} of {len(samples)} samples could not be stored{problem}. Nothing stored was lost: resume"
               " the run once the store can be written")
    with contextlib.suppress(sqlite3.Error):  # the store may refuse this too; the error below says it all
        store.set_status(run_id, "failed", message)
    raise ToolboardError(f"run {run_id}: {message}")


def _unstored(store: Store, run_id: str, samples: list[Sample]) -> int:
    """How many of the run's samples have no stored row: a run with any is not finished."""
    states = store.prediction_states(run_id)
    return sum(sample.id not in states for sample in samples)


def score_run(
    store: Store,
    run_id: str,
    samples: list[Sample] | None = None,
    scored: dict[str, dict[str, SampleScore]] | None = None,
    score_rows: dict[str, dict[str, tuple[Any, ...]]] | None = None,
) -> Report:
    """Score the stored predictions (pure, re-computable at any time) and store scores and reports.
    `scored` holds verdicts already computed from the same predictions, by mode and sample id; `score_rows`
    the rows made of them (store.sample_score_row)."""
    config, benchmark, samples = _run_context(store, run_id, samples)
    scored = scored or {}
    # Predictions are read back only for samples not scored while the run went (e.g. a resumed run's).
    all_known = all(s.id in scored.get(mode, {}) for mode in SCORING_MODES for s in samples)
    predictions = {} if all_known else store.load_predictions(run_id)
    results = score_and_report(benchmark, samples, predictions, SCORING_MODES, language=config.language,
                               subsets=benchmark.expand_subsets(list(config.subsets) or None), known=scored)
    for mode, result in results.items():
        # A verdict made while the run went is kept as it was (score_and_report's `known`), and so is its row.
        made = (score_rows or {}).get(mode, {})
        rows = [made.get(score.sample_id) or sample_score_row(run_id, mode, score) for score in result.scores]
        store.save_scores(run_id, mode, result.scores, result.report, rows)
    store.set_status(run_id, *ending(store.run_totals(run_id)))
    return results[SCORING_MODES[0]].report


def ending(totals: dict[str, int]) -> tuple[str, str]:
    """How a scored run ends: `failed` when every request failed (nothing was measured: it must never sit
    on the board as a row of zeros), else `finished`; with the message shown for it."""
    done, errors = totals["done"], totals["errors"]
    if done and errors == done:
        return "failed", (f"every request failed ({errors} of {done}): nothing was measured. Fix the endpoint, then"
                          " re-send them (re-run errors)")
    return "finished", f"{done} samples, {errors} request errors"
