"""The real app on 127.0.0.1 for tests: its own store, a scripted endpoint, helpers to wait for jobs."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluators.engine.store import Store
from evaluators.service.submissions import check_submission, store_submission
from tests.acebench_fixtures import EXAMPLE_DIR
from tests.engine_fixtures import correct_reply, write_dataset
from tests.scripted_server import ScriptedServer
from ui.app import build_app, launch_options, launch_patiently
from ui.context import AppContext

SECRET_KEY = "sk-test-9f8e7d6c5b4a-never-stored"


@dataclass
class RunningApp:
    url: str
    context: AppContext
    server: ScriptedServer
    data: Path
    db_path: Path


@contextmanager
def running_app(root: Path, latency: float = 0.0, public: bool = False, samples: int = 30,
                data_is_default: bool = False, **options: Any) -> Iterator[RunningApp]:
    """`data_is_default`: the synthetic data is the operator's data folder (what "download" reads); `options`
    go to the AppContext (e.g. admission limits)."""
    data = write_dataset(root / "data", samples)
    db_path = root / "home" / "toolboard.db"
    context = AppContext(store=Store(db_path), public=public, max_upload_bytes=200_000,
                         default_data_dir=str(data) if data_is_default else None, **options)
    with ScriptedServer(reply=correct_reply, latency=latency) as server:
        demo = build_app(context)
        # the page's CSS and limits as the real launch gives them
        launch_patiently(demo, **{**launch_options(context), "max_file_size": None}, server_name="127.0.0.1",
                         prevent_thread_lock=True, quiet=True)
        try:
            yield RunningApp(demo.local_url, context, server, data, db_path)
        finally:
            demo.close()
            context.close()


def form(server_url: str, model: str, data: Path, **overrides: Any) -> dict[str, Any]:
    """Arguments of the /start_run endpoint for a small ACEBench run on the synthetic data."""
    values = {
        "base_url": server_url, "model": model, "benchmark": "acebench", "language": "en", "subsets": ["normal_atom_bool"],
        "data_source": "local folder", "data_folder": str(data), "limit": 6, "concurrency": 4,
    }
    values.update(overrides)
    return values


def wait_for_status(context: AppContext, run_id: str, statuses: tuple[str, ...], timeout: float = 120) -> str:
    """Until the run's status is one of `statuses` (generous: a run of the example on a busy 2-core machine can take
    most of a minute; the wait ends as soon as the status is there)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = context.jobs.status_of(run_id, context.store.get_run(run_id).status)
        if status in statuses:
            return status
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} did not reach {statuses}; last status {status}")


def table_rows(value: dict[str, Any]) -> list[dict[str, Any]]:
    """A Dataframe value as the client receives it -> row dicts."""
    return [dict(zip(value["headers"], row)) for row in value["data"]]


def write_predictions(path: Path, rows: list[dict[str, Any]] | list[str]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def upload(store: Store, model: str, predictions: Path = EXAMPLE_DIR / "predictions.jsonl", data: Path | None = None,
           language: str = "en") -> str:
    """An upload stored as a board row: by default the example's predictions scored on a copy of its items in a
    folder beside the store (rows scored on the built-in example itself never join the board)."""
    submission = check_submission(predictions, "acebench", language=language, data_dir=data or items_copy(store))
    return store_submission(store, submission, model)


def items_copy(store: Store) -> Path:
    """The built-in example's items copied to a data folder of the store's own (made once)."""
    folder = store.path.parent / "acebench-items"
    if not folder.exists():
        shutil.copytree(EXAMPLE_DIR, folder)
    return folder


def finished_acebench_run(store: Store, name: str, overall: float, language: str = "en", fingerprint: str | None = None,
                          **config: Any) -> str:
    """A finished ACEBench run of `name` with `overall` (one subset's item), the official experiment unless `config`
    says otherwise (`model` overrides the endpoint settings); its run id."""
    from evaluators.core.types import Report, SubsetResult

    settings = {"base_url": "http://127.0.0.1:9/v1", "model": name, "request_mode": "prompt",
                "prompt_style": "official", **config.pop("model", {})}
    run_config = {"benchmark": "acebench", "model": settings, "language": language, "subsets": [], "limit": None, **config}
    run_id = store.create_run("acebench", language, name, settings["base_url"], run_config, fingerprint or f"fp-{name}", 1)
    report = Report("acebench", "official", {"normal_atom_bool": SubsetResult(1, {"accuracy": overall})},
                    {"overall": overall, "normal": overall}, {}, language=language)
    store.save_scores(run_id, "official", [], report)
    store.set_status(run_id, "finished")
    return run_id


__all__ = ["SECRET_KEY", "RunningApp", "correct_reply", "finished_acebench_run", "form", "running_app", "table_rows", "upload", "wait_for_status",
           "write_predictions"]
