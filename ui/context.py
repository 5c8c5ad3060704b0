"""What every tab shares: the store, the background jobs, the optional hub sync and the app's limits."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from evaluators.core.errors import ToolboardError
from evaluators.core.paths import data_dir_from_env
from evaluators.engine.endpoint_guard import is_public_mode
from evaluators.engine.hub_sync import HubSync, from_env
from evaluators.engine.jobs import JobManager
from evaluators.engine.store import Store
from evaluators.submissions import DEFAULT_MAX_UPLOAD_BYTES

log = logging.getLogger(__name__)

EXAMPLE_DATA = Path(__file__).resolve().parents[1] / "evaluators" / "acebench" / "example"


@dataclass
class AppContext:
    store: Store
    public: bool = False
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES
    default_data_dir: str | None = None
    hub: HubSync | None = None
    jobs: JobManager = field(init=False)

    def __post_init__(self) -> None:
        self.jobs = JobManager(self.store, on_finished=self.after_run)

    def after_run(self, run_id: str) -> None:
        if self.hub is not None:
            self.hub.push_in_background(run_id)

    def close(self) -> None:
        self.jobs.shutdown()


def context_from_env(store: Store | None = None) -> AppContext:
    """The app's settings from the environment (TOOLBOARD_HOME, TOOLBOARD_PUBLIC, TOOLBOARD_HUB_REPO,
    TOOLBOARD_MAX_UPLOAD_MB, TOOLBOARD_DATA_DIR)."""
    store = store or Store()
    max_mb = float(os.environ.get("TOOLBOARD_MAX_UPLOAD_MB") or DEFAULT_MAX_UPLOAD_BYTES / 1024 / 1024)
    data_dir = data_dir_from_env()
    context = AppContext(store=store, public=is_public_mode(), max_upload_bytes=int(max_mb * 1024 * 1024),
                         default_data_dir=str(data_dir) if data_dir else None)
    context.hub = from_env(store)
    if context.hub is not None:
        try:
            pulled = context.hub.pull()
            log.info("pulled %d runs from the hub", pulled)
        except Exception as exc:  # noqa: BLE001 - the app works without the hub
            log.warning("could not pull results from the hub: %s", exc)
    return context


def resolve_data_dir(context: AppContext, source: str, folder: str) -> str | None:
    """The data source picked in a form: the built-in example, a local folder (not on a public
    deployment), or the default (TOOLBOARD_DATA_DIR, else the benchmark's download)."""
    if source == "built-in example":
        return str(EXAMPLE_DATA)
    if source == "local folder":
        if context.public:
            raise ToolboardError("local data folders are not available on a public deployment")
        if not (folder or "").strip():
            raise ToolboardError("give the local data folder, or pick another data source")
        return folder.strip()
    return context.default_data_dir
