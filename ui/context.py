"""What every tab shares: the store, the background jobs, the optional hub sync and the app's limits."""

from __future__ import annotations

import logging
import os
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from evaluators.board import board_rows
from evaluators.core.errors import ToolboardError
from evaluators.core.paths import data_dir_from_env, toolboard_home
from evaluators.core.registry import get_benchmark
from evaluators.core.selection import resolve_language
from evaluators.engine.endpoint_guard import is_public_mode
from evaluators.engine.hub_sync import HubSync, from_env
from evaluators.engine.jobs import Admission, JobManager
from evaluators.engine.store import Store, open_app_store
from evaluators.submissions import DEFAULT_MAX_UPLOAD_BYTES
from ui.format import PathRedactor, markdown_text, shown_as_is
from ui.visitor import Visitors

log = logging.getLogger(__name__)

APP_ROOT = Path(__file__).resolve().parents[1]
BUILT_IN_EXAMPLE = "built-in example"
# A public deployment must not be usable to flood an endpoint or starve other visitors.
PUBLIC_MAX_ACTIVE_JOBS = 4
PUBLIC_MAX_ACTIVE_JOBS_PER_VISITOR = 1
PUBLIC_MAX_RUN_SECONDS = 30 * 60
# Read-only events (board, charts, downloads, samples) run side by side instead of one at a time in the
# queue: each serves a cached view (AppContext.board_frame), so many visitors are answered at once.
READ_EVENT = {"concurrency_limit": None}
# Views of the board kept per distinct query (benchmark, filters, sort…) until the board changes.
MAX_CACHED_VIEWS = 256
View = TypeVar("View")
PUBLIC_ADMISSION = Admission(max_active=PUBLIC_MAX_ACTIVE_JOBS, max_active_per_owner=PUBLIC_MAX_ACTIVE_JOBS_PER_VISITOR,
                             max_run_seconds=PUBLIC_MAX_RUN_SECONDS)


@dataclass
class AppContext:
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
    jobs: JobManager = field(init=False)
    visitors: Visitors = field(init=False)
    redact_paths: Callable[[str], str] = field(init=False)
    # (benchmark, mode) -> (store's board version, every row of that board); see board_frame.
    _boards: dict[tuple[str, str], tuple[tuple, pd.DataFrame]] = field(init=False, default_factory=dict)
    _boards_lock: threading.Lock = field(init=False, default_factory=threading.Lock)
    # (what was asked, board version) -> the view built for it, least recently used first; see board_view.
    _views: OrderedDict[tuple[Any, ...], Any] = field(init=False, default_factory=OrderedDict)
    # Apart from the boards' lock: a board being rebuilt must not hold up visitors reading cached views.
    _views_lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        admission = self.admission or (PUBLIC_ADMISSION if self.public else Admission())
        self.jobs = JobManager(self.store, on_finished=self.after_run, admission=admission, clock=self.clock)
        self.visitors = Visitors(self.public, self.store.path.parent)
        self.redact_paths = server_path_redactor(self) if self.public else shown_as_is

    def board_frame(self, benchmark: str, mode: str) -> pd.DataFrame:
        """Every row of a benchmark's board (evaluators.board.board_rows), rebuilt only when the store's
        board version changed (a run finished or was deleted, an upload added, a report rewritten); the
        same frame is shared by every reader, so callers must not modify it."""
        key = (benchmark, mode)
        version = self.store.board_version()
        cached = self._boards.get(key)
        if cached is not None and cached[0] == version:
            return cached[1]
        with self._boards_lock:  # one rebuild at a time; visitors arriving meanwhile take its result
            cached = self._boards.get(key)
            version = self.store.board_version()
            if cached is None or cached[0] != version:
                cached = (version, board_rows(benchmark, self.store, mode))
                self._boards[key] = cached
        return cached[1]

    def board_view(self, query: tuple[Any, ...], build: Callable[[], View]) -> View:
        """What `build` makes of the board for `query` (hashable: the kind of view and every filter), kept
        until the board changes: visitors asking the same view (most ask the default one) share one build.
        Callers must not modify what is returned."""
        key = (query, self.store.board_version())
        with self._views_lock:
            if key in self._views:
                self._views.move_to_end(key)
                return self._views[key]
        view = build()
        with self._views_lock:
            self._views[key] = view
            while len(self._views) > MAX_CACHED_VIEWS:
                self._views.popitem(last=False)
        return view

    def after_run(self, run_id: str) -> None:
        if self.hub is not None:
            self.hub.push_in_background(run_id)

    def close(self) -> None:
        self.jobs.shutdown()


def plain_error(exc: Exception, redact: Callable[[str], str] = shown_as_is) -> str:
    """ui.format.user_error as plain text, for API callers: the same words, no Markdown escapes."""
    text = str(exc) if isinstance(exc, ToolboardError) else f"{type(exc).__name__}: {exc}"
    return f"⚠️ {redact(text)}"


def as_markdown(text: str) -> str:
    """Plain text (a message also returned to API callers) for a Markdown component: shown as written,
    every line escaped; lines starting with "- " stay list items."""
    return "\n".join("- " + markdown_text(line[2:]) if line.startswith("- ") else markdown_text(line)
                      for line in text.split("\n"))


def server_path_redactor(context: AppContext) -> PathRedactor:
    """Short names for the server's folders in what visitors read (errors, run messages)."""
    folders: dict[str | Path, str] = {
        tempfile.gettempdir(): "<temp>",
        APP_ROOT: "<app>",
        toolboard_home(): "<toolboard home>",
        context.store.path.parent: "<toolboard home>",
        Path.home(): "~",
    }
    if context.default_data_dir:
        folders[context.default_data_dir] = "<data folder>"
    return PathRedactor(folders)


def context_from_env(store: Store | None = None) -> AppContext:
    """The app's settings from the environment (TOOLBOARD_HOME, TOOLBOARD_PUBLIC, TOOLBOARD_HUB_REPO,
    TOOLBOARD_MAX_UPLOAD_MB, TOOLBOARD_DATA_DIR). A damaged store is set aside and a new one started;
    the page says so."""
    notice = None
    if store is None:
        store, notice = open_app_store()
    max_mb = float(os.environ.get("TOOLBOARD_MAX_UPLOAD_MB") or DEFAULT_MAX_UPLOAD_BYTES / 1024 / 1024)
    data_dir = data_dir_from_env()
    context = AppContext(store=store, public=is_public_mode(), max_upload_bytes=int(max_mb * 1024 * 1024),
                         default_data_dir=str(data_dir) if data_dir else None, notice=notice)
    if notice:
        log.warning("%s", notice)
    context.hub = from_env(store)
    if context.hub is not None:
        try:
            pulled = context.hub.pull()
            log.info("pulled %d runs from the hub", pulled)
        except Exception as exc:  # noqa: BLE001 - the app works without the hub
            log.warning("could not pull results from the hub: %s", exc)
    return context


def example_folder(benchmark_name: str, language: str | None = None) -> Path:
    """The folder of a benchmark's built-in example (see registry.Example), in the example's language
    only; a benchmark without one is a clear error."""
    benchmark = get_benchmark(benchmark_name)
    example = benchmark.example
    if example is None:
        raise ToolboardError(f"{benchmark.title} has no built-in example: pick another data source")
    if example.language is not None and resolve_language(benchmark, language or None) != example.language:
        raise ToolboardError(f"the built-in example of {benchmark.title} is in {example.language}: "
                             f"choose language {example.language}")
    return example.folder


def resolve_data_dir(context: AppContext, source: str, folder: str, benchmark: str,
                     language: str | None = None) -> str | None:
    """The data source picked in a form for `benchmark`: its built-in example, a local folder (not on a
    public deployment), or the default (TOOLBOARD_DATA_DIR, else the benchmark's download)."""
    if source == BUILT_IN_EXAMPLE:
        return str(example_folder(benchmark, language))
    if source == "local folder":
        if context.public:
            raise ToolboardError("local data folders are not available on a public deployment")
        if not (folder or "").strip():
            raise ToolboardError("give the local data folder, or pick another data source")
        return folder.strip()
    return context.default_data_dir
