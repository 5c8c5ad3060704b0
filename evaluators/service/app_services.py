"""The application's services as one object, built once per process by a front door (ui/context.py for the web
app): the store, the background jobs (embedded or over the queue), the visitors' identities, the cached board
views, the other results datasets shown beside this board's rows, the deployment's limits, and the push of a
finished run to the hub."""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar, cast

import pandas as pd

from evaluators.core.environment import check_switches, declared_number, read_number
from evaluators.core.errors import ToolboardError
from evaluators.core.paths import data_dir_from_env
from evaluators.core.registry import get_benchmark
from evaluators.core.selection import resolve_language
from evaluators.engine.endpoint_guard import guard_hub_requests
from evaluators.engine.job_manager import RunJobs
from evaluators.engine.jobs import JobManager
from evaluators.engine.queue_app import QueueSettings
from evaluators.engine.queue_app import settings_from_env as queue_settings_from_env
from evaluators.engine.redact import server_path_redactor, shown_as_is
from evaluators.engine.settings import RunRequest
from evaluators.engine.store import Store, open_app_store
from evaluators.publish.hub_reported import HubReported
from evaluators.publish.hub_reported import enabled as hub_reported_enabled
from evaluators.publish.hub_sync import HubSync, from_env
from evaluators.publish.other_results import LoadedResults, OtherResults, repos_from_env
from evaluators.service import run_request
from evaluators.service.aged_reload import AgedReload
from evaluators.service.board import board_rows, run_ids_of
from evaluators.service.data_sources import download_failure_message, run_failure_message
from evaluators.service.deployment import is_public_mode, unlisted_model_rule
from evaluators.service.ownership import Visitors
from evaluators.service.quota import (
    MAX_STORE_MB_SETTING,
    MAX_STORED_MB_PER_DAY_SETTING,
    MIN_FREE_DISK_MB_SETTING,
    RUNS_PER_DAY_SETTING,
    UPLOADS_PER_DAY_SETTING,
    Admission,
    limit_from_env,
    megabytes_from_env,
)
from evaluators.service.run_request import BUILT_IN_EXAMPLE, LOCAL_FOLDER, local_folder
from evaluators.service.submissions import DEFAULT_MAX_UPLOAD_BYTES

log = logging.getLogger(__name__)

# A public deployment must not be usable to flood an endpoint or starve other visitors.
PUBLIC_MAX_ACTIVE_JOBS = 4
PUBLIC_MAX_ACTIVE_JOBS_PER_VISITOR = 1
PUBLIC_MAX_RUN_SECONDS = 30 * 60
# Views of the board kept per distinct query (benchmark, filters, sort…) until the board changes.
MAX_CACHED_VIEWS = 256
# A page load reloads the other results datasets (in the background) when their last load is older than this.
OTHER_RESULTS_MAX_AGE = 15 * 60
# A page load rereads the Hub-reported rows (in the background) when their last read is older than this.
HUB_REPORTED_MAX_AGE = 30 * 60
View = TypeVar("View")
# What one visitor may add to the shared board in any 24 hours (rolling, counted from the store): runs started and
# uploads added. Settings TOOLBOARD_MAX_RUNS_PER_DAY / TOOLBOARD_MAX_UPLOADS_PER_DAY (a number, 0, or off); a
# private deployment has no quota unless they are set (then it counts the deployment as a whole).
PUBLIC_MAX_RUNS_PER_DAY = 20
PUBLIC_MAX_UPLOADS_PER_DAY = 10
# Room on disk (MB; settings TOOLBOARD_MAX_STORE_MB, TOOLBOARD_MAX_STORED_MB_PER_DAY, TOOLBOARD_MIN_FREE_DISK_MB): a
# public deployment's store stops taking runs and uploads at 5 GB (a Space's disk is shared with the app and its
# caches), one visitor stores at most 250 MB a day (five 50 MB uploads: an upload is stored at about its size, see
# README), and every deployment keeps 200 MB of its disk free, so SQLite always has room to finish a write.
PUBLIC_MAX_STORE_MB = 5_000
PUBLIC_MAX_STORED_MB_PER_DAY = 250
MIN_FREE_DISK_MB = declared_number("min_free_disk_mb")
PUBLIC_ADMISSION = Admission(max_active=PUBLIC_MAX_ACTIVE_JOBS, max_active_per_owner=PUBLIC_MAX_ACTIVE_JOBS_PER_VISITOR,
                             max_run_seconds=PUBLIC_MAX_RUN_SECONDS, max_runs_per_day=PUBLIC_MAX_RUNS_PER_DAY,
                             max_uploads_per_day=PUBLIC_MAX_UPLOADS_PER_DAY)


def admission_for(public: bool, environ: Mapping[str, str] | None = None) -> Admission:
    """The limits on runs and uploads: the public ones on a public deployment, none on a private one but the
    free-disk floor; the daily quotas (TOOLBOARD_MAX_RUNS_PER_DAY, TOOLBOARD_MAX_UPLOADS_PER_DAY) and the room on
    disk (TOOLBOARD_MAX_STORE_MB, TOOLBOARD_MAX_STORED_MB_PER_DAY, TOOLBOARD_MIN_FREE_DISK_MB) when set (a bad
    value stops the app)."""
    base = PUBLIC_ADMISSION if public else Admission()
    return replace(base, max_runs_per_day=limit_from_env(RUNS_PER_DAY_SETTING, base.max_runs_per_day, environ),
                   max_uploads_per_day=limit_from_env(UPLOADS_PER_DAY_SETTING, base.max_uploads_per_day, environ),
                   max_store_bytes=megabytes_from_env(MAX_STORE_MB_SETTING, PUBLIC_MAX_STORE_MB if public else None,
                                                      environ),
                   max_stored_bytes_per_day=megabytes_from_env(
                       MAX_STORED_MB_PER_DAY_SETTING, PUBLIC_MAX_STORED_MB_PER_DAY if public else None, environ),
                   min_free_disk_bytes=megabytes_from_env(MIN_FREE_DISK_MB_SETTING, MIN_FREE_DISK_MB, environ))


@dataclass
class AppServices:
    """What every front door shares: the store, the runs (embedded or queued), the visitors' identities, the
    cached board views, the other results datasets, and the push of a finished run to the hub."""

    store: Store
    public: bool = False
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES
    default_data_dir: str | None = None
    hub: HubSync | None = None
    # Limits on runs; None: the public limits on a public deployment, none on a private one.
    admission: Admission | None = None
    # Measures how long runs take (the time limit); tests pass a clock they move by hand.
    clock: Callable[[], float] = time.monotonic
    # Shown at the top of the page (e.g. the store was damaged and set aside).
    notice: str | None = None
    # Other results datasets (TOOLBOARD_RESULTS) whose rows join the board, labelled with their repo.
    other_results: OtherResults = field(default_factory=OtherResults)
    # What the Hub reports for the board's benchmarks (TOOLBOARD_HUB_REPORTED), read in the background: never ranked.
    hub_reported: HubReported = field(default_factory=HubReported)
    # Queue mode's settings (TOOLBOARD_BROKER_URL); None: runs execute in this process.
    queue: QueueSettings | None = None
    jobs: RunJobs = field(init=False)
    # The limits in force: `admission`, else the deployment's own (admission_for); the job managers are handed them.
    limits: Admission = field(init=False)
    visitors: Visitors = field(init=False)
    redact_paths: Callable[[str], str] = field(init=False)
    # (benchmark, mode) -> (board version, every row of that board); see board_frame.
    _boards: dict[tuple[str, str], tuple[tuple, pd.DataFrame]] = field(init=False, default_factory=dict)
    _boards_lock: threading.Lock = field(init=False, default_factory=threading.Lock)
    # (what was asked, board version) -> the view built for it, least recently used first; see board_view.
    _views: OrderedDict[tuple[Any, ...], Any] = field(init=False, default_factory=OrderedDict)
    # Apart from the boards' lock: a board being rebuilt must not hold up visitors reading cached views.
    _views_lock: threading.Lock = field(init=False, default_factory=threading.Lock)
    # When (self.clock) the other results and the Hub-reported rows were last read, and their background reloads.
    _others_age: AgedReload = field(init=False)
    _hub_reported_age: AgedReload = field(init=False)
    # What was left half-made by a process that died, settled when these services started (Store.reconcile_half_made).
    settled_at_start: list[str] = field(init=False, default_factory=list)
    # The references a public board shows for unshared runs, and the runs they stand for (board_run_id).
    _private_refs: dict[str, str] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.limits = admission = self.admission or admission_for(self.public)
        unlisted = unlisted_model_rule(self.public)
        self.settled_at_start = [] if self.store.read_only else self.store.reconcile_half_made()
        for line in self.settled_at_start:
            log.warning("settled at start: %s", line)
        if self.queue is not None:  # queue mode: Celery workers execute the runs (evaluators/engine/queue_jobs.py)
            from evaluators.engine.queue_jobs import QueueJobs

            self.jobs = QueueJobs(self.store, self.queue, on_finished=self.after_run, admission=admission,
                                  public=self.public, explain_failure=self.explain_failure, unlisted=unlisted)
        else:
            self.jobs = JobManager(self.store, on_finished=self.after_run, admission=admission, clock=self.clock,
                                   explain_failure=self.explain_failure, unlisted=unlisted)
        self.visitors = Visitors(self.public, self.store.path.parent)
        self._others_age = AgedReload("other results datasets", OTHER_RESULTS_MAX_AGE, self._reload_other_results,
                                      self.clock)
        self._hub_reported_age = AgedReload("Hub-reported results", HUB_REPORTED_MAX_AGE, self.hub_reported.load,
                                            self.clock)
        self.redact_paths = (server_path_redactor(self.store.path.parent, self.default_data_dir) if self.public
                             else shown_as_is)

    def board_version(self) -> tuple[Any, ...]:
        """Changes whenever a board may have changed: the store's board version, and the other results' load."""
        return (self.store.board_version(), self.other_results.version, self.hub_reported.version)

    def board_frame(self, benchmark: str, mode: str) -> pd.DataFrame:
        """Every row of a benchmark's board (evaluators.service.board.board_rows, with the other results datasets' rows),
        rebuilt only when the board version changed (a run finished or was deleted, an upload added, a report
        rewritten, the other results reloaded); the same frame is shared by every reader, so callers must not
        modify it."""
        key = (benchmark, mode)
        version = self.board_version()
        cached = self._boards.get(key)
        if cached is not None and cached[0] == version:
            return cached[1]
        with self._boards_lock:  # one rebuild at a time; visitors arriving meanwhile take its result
            cached = self._boards.get(key)
            loaded = self.other_results.current  # one load, its version and rows together
            reported = self.hub_reported.current
            version = (self.store.board_version(), loaded.version, reported.version)
            if cached is None or cached[0] != version:
                hub_rows = reported.rows_for(benchmark) if mode == "official" else []  # official figures only
                frame = board_rows(benchmark, self.store, mode, others=loaded.rows_for(benchmark, mode) + hub_rows)
                cached = (version, self._private_run_ids_replaced(frame) if self.public else frame)
                self._boards[key] = cached
        return cached[1]

    def _private_run_ids_replaced(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The board as a public deployment shows it: a visitor's run whose outputs they have not shared is named
        by a reference (Visitors.run_ref), never by its id, on the board, its downloads, model pages and
        comparisons alike (its scores are there as any finished run's); board_run_id turns it back."""
        private = {run.id for run in self.store.list_runs() if run.owner is not None and not run.shared}
        if frame.empty or not private.intersection(part for value in frame["run_id"]
                                                   for part in run_ids_of({"run_id": value})):
            return frame
        refs = {run_id: self.visitors.run_ref(run_id) for run_id in private}
        self._private_refs.update({ref: run_id for run_id, ref in refs.items()})

        def replaced(value: Any) -> Any:
            parts = run_ids_of({"run_id": value})
            return " + ".join(refs.get(part, part) for part in parts) if private.intersection(parts) else value

        return frame.assign(run_id=frame["run_id"].map(replaced))

    def board_run_id(self, shown: str) -> str:
        """The run a board row names (its id, or on a public deployment the reference of an unshared run), for the
        server's own reads of it (a chart's latency, a run's error types); never shown."""
        return self._private_refs.get(shown, shown)

    def board_view(self, query: tuple[Any, ...], build: Callable[[], View]) -> View:
        """What `build` makes of the board for `query` (hashable: the kind of view and every filter), kept
        until the board changes: visitors asking the same view (most ask the default one) share one build.
        Callers must not modify what is returned."""
        key = (query, self.board_version())
        with self._views_lock:
            if key in self._views:
                self._views.move_to_end(key)
                # The cache holds every kind of view; each query names its kind first, so what it finds is what
                # this `build` made.
                return cast(View, self._views[key])
        view = build()
        with self._views_lock:
            self._views[key] = view
            while len(self._views) > MAX_CACHED_VIEWS:
                self._views.popitem(last=False)
        return view

    def load_other_results(self, repos: str | list[str]) -> LoadedResults:
        """(Re)load the other results datasets `repos` (comma-separated repo ids, or a list); their rows replace
        the previous load's on every board. Never raises for a repo: each problem is in the result."""
        local = [run.id for run in self.store.list_runs()]
        loaded = self.other_results.load(repos, local)
        self._others_age.mark_loaded()
        for problem in loaded.problems:
            log.warning("other results: %s", problem)
        return loaded

    def refresh_other_results(self) -> threading.Thread | None:
        """On a page load: reload the repos of the last load, in the background, when that load is older than
        OTHER_RESULTS_MAX_AGE (aged_reload.AgedReload). Returns the reload's thread, if one was started. Only the
        operator's list (or the one loaded from a private About tab) is reloaded; nothing when none is listed."""
        if not self.other_results.current.repos:
            return None
        return self._others_age.start_if_stale()

    def _reload_other_results(self) -> None:
        self.load_other_results(list(self.other_results.current.repos))

    def read_hub_reported_in_background(self) -> threading.Thread:
        """Read the Hub-reported rows on a thread of their own (the board shows what it has meanwhile); from then on
        a page load rereads them once they are older than HUB_REPORTED_MAX_AGE (refresh_hub_reported)."""
        self._hub_reported_age.mark_loaded()
        return self.hub_reported.load_in_background()

    def refresh_hub_reported(self) -> threading.Thread | None:
        """On a page load: reread the Hub-reported rows in the background when the last read is older than
        HUB_REPORTED_MAX_AGE; its thread, if one was started. Nothing unless they were read at start."""
        return self._hub_reported_age.start_if_stale()

    def start_run(self, request: RunRequest, owner: str | None = None) -> str:
        """Create the run a checked request describes and have it executed (self.jobs.start); its id. A start
        whose data could not be downloaded is refused in the app's words, naming the other Data sources this
        benchmark and deployment offer (service/data_sources.py)."""
        try:
            return self.jobs.start(request, owner=owner)
        except Exception as error:
            explained = download_failure_message(error, request.config.benchmark, request.config.data_dir, self.public)
            if explained is None:
                raise
            raise ToolboardError(explained) from None

    def explain_failure(self, run_id: str, error: BaseException) -> str | None:
        """A run that failed after it was created (a resume, a queue worker) whose data could not be downloaded:
        the same words as at its start; None for any other failure (the engine's words stay)."""
        return run_failure_message(self.store, run_id, error, self.public)

    def after_run(self, run_id: str) -> None:
        if self.hub is not None:
            self.hub.push_in_background(run_id)

    def close(self) -> None:
        self.jobs.shutdown()


def services_from_env(store: Store | None = None) -> AppServices:
    """The app's settings from the environment (TOOLBOARD_HOME, TOOLBOARD_PUBLIC, TOOLBOARD_HUB_REPO,
    TOOLBOARD_RESULTS, TOOLBOARD_MAX_UPLOAD_MB, TOOLBOARD_DATA_DIR). A damaged store is set aside and a new one
    started; the page says so. The other results datasets are loaded after the hub pull (so a run pulled from
    our own repo wins over the same run in theirs); a failure there never stops the app."""
    check_switches()  # a typo in TOOLBOARD_PUBLIC or another switch stops the app at start, saying which
    guard_hub_requests()
    notice = None
    if store is None:
        store, notice = open_app_store()
    if store.read_only:
        notice = (f"The store can only be read ({store.read_only}): the board shows what it holds, but runs and uploads "
                  "cannot be stored until TOOLBOARD_HOME is writable.")
    max_mb = read_number("max_upload_mb", unit="MB")
    data_dir = data_dir_from_env()
    context = AppServices(store=store, public=is_public_mode(), max_upload_bytes=int(max_mb * 1024 * 1024),
                          default_data_dir=str(data_dir) if data_dir else None, notice=notice,
                          queue=queue_settings_from_env())
    if notice:
        log.warning("%s", notice)
    context.hub = from_env(store)
    if context.hub is not None:
        try:
            pulled = context.hub.pull()
            log.info("pulled %d runs from the hub", pulled)
        except Exception as exc:  # noqa: BLE001 - the app works without the hub
            log.warning("could not pull results from the hub: %s", exc)
    if hub_reported_enabled():
        context.read_hub_reported_in_background()
    repos = repos_from_env()
    if repos:
        try:
            loaded = context.load_other_results(repos)
            log.info("other results: %s", loaded.summary().replace("\n", " "))
        except Exception as exc:  # noqa: BLE001 - the app works without others' results
            log.warning("could not load other results datasets: %s", exc)
    return context


def example_folder(benchmark_name: str, language: str | None = None) -> Path:
    """The folder of a benchmark's built-in example, for a form's language choice (run_request.example_folder)."""
    benchmark = get_benchmark(benchmark_name)
    return run_request.example_folder(benchmark, resolve_language(benchmark, language or None))


def resolve_data_dir(context: AppServices, source: str, folder: str, benchmark: str,
                     language: str | None = None) -> str | None:
    """The data source picked in a form for `benchmark`: its built-in example, a local folder (not on a
    public deployment), or the default (TOOLBOARD_DATA_DIR, else the benchmark's download)."""
    if source == BUILT_IN_EXAMPLE:
        return str(example_folder(benchmark, language))
    if source == LOCAL_FOLDER:
        return local_folder(folder, context.public)
    return context.default_data_dir


def load_other_results_report(services: AppServices, repos: str) -> str:
    """(Re)load the other results datasets `repos` and say, per repo, what joined and what was skipped; refused
    on a public deployment (visitors must not make the server fetch repos of their choice)."""
    if services.public:
        return "⚠️ Loading other results datasets is not available on a public deployment."
    return services.load_other_results(repos).summary()
