"""What the store holds, read back without running anything (the command line's `runs` and `export`): the runs
with their status and summary, one run's predictions and report, the results dataset written and pushed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evaluators.core.environment import read_setting
from evaluators.core.errors import ToolboardError
from evaluators.engine.jobs import shown_message, status_without_a_job
from evaluators.engine.queue_app import settings_from_env
from evaluators.engine.store import LONE_SURROGATE, RunRow, Store
from evaluators.publish.dataset_rows import chosen_runs
from evaluators.publish.eval_results import open_pull_request, write_eval_results
from evaluators.publish.hub_sync import TOKEN_ENV, check_repo_id, endpoint_from_env, push_dataset_folder, token_from_env
from evaluators.publish.results_dataset import WrittenDataset, write_dataset


def catch_up_with_the_queue(store: Store) -> tuple[bool, str | None]:
    """In queue mode, bring runs queued from here (`run --queue --detach`) up to date once: a finished one's
    record is stored, a cancelled or failed one says so. (queue mode?, a warning when the queue could not be
    asked: the stored runs are listed either way)."""
    settings = settings_from_env()
    if settings is None:
        return False, None
    if not any(run.status in ("queued", "running", "cancelling") for run in store.list_runs()):
        return True, None
    from evaluators.engine.queue_jobs import QueueJobs  # Celery is loaded in queue mode only

    try:
        jobs = QueueJobs(store, settings, poll_seconds=3600)
        try:
            jobs.poll()
        finally:
            jobs.shutdown()
    except Exception as error:  # noqa: BLE001 - the stored runs are listed either way
        return True, f"could not ask the queue about queued runs ({type(error).__name__}); listed as stored"
    return True, None


def run_listing(store: Store, queued: bool) -> list[dict[str, Any]]:
    """Every stored run with its status as users should read it, its progress and its summary. `queued`: queue
    mode, where a run a worker executes holds its lease in the worker's store, not here."""
    rows = []
    runs = store.list_runs()
    all_totals = store.all_run_totals([run.id for run in runs])
    for run in runs:
        totals = all_totals[run.id]
        report = store.load_report(run.id) or {}
        status = run.status if queued else status_without_a_job(store, run.id, run.status)
        rows.append({
            "id": run.id, "benchmark": run.benchmark, "language": run.language, "model": run.model,
            "base_url": run.base_url, "status": status, "done": totals["done"], "total": run.total,
            "errors": totals["errors"], "fingerprint": run.fingerprint, "summary": report.get("summary"),
            "message": shown_message(run.status, status, run.message),
        })
    return rows


def run_with_report(store: Store, run_id: str, mode: str) -> tuple[RunRow, dict[str, Any] | None]:
    """A run and its report in `mode` (None until it has one)."""
    run = store.get_run(run_id)
    return run, store.load_report(run.id, mode)


def prediction_lines(store: Store, run_id: str) -> Iterator[str]:
    """A run's predictions as JSON Lines, each with its evidence as stored (gold answer, request as sent): the
    dataset is never reloaded."""
    for stored in store.iter_stored_samples(run_id):
        prediction = stored.prediction
        assert prediction is not None  # a predictions row always holds one
        row: dict[str, Any] = {"id": prediction.sample_id, "output": prediction.output}
        if prediction.tool_calls is not None:
            row["tool_calls"] = [{"name": c.name, "arguments": c.arguments} for c in prediction.tool_calls]
        # The benchmark's evidence as fields of their own (an agent item's `result` and `process` are what its
        # predictions file holds); never over the fields above.
        row.update({key: value for key, value in (prediction.extra or {}).items() if key not in row})
        if prediction.error is not None:
            row["error"] = prediction.error
        if stored.gold_kept:
            row["gold"] = stored.gold
        if stored.request_kept:
            row["request"] = stored.request
        text = json.dumps(row, ensure_ascii=False)
        # A lone surrogate (kept in a stored request or answer) can only be written as its \u escape.
        yield json.dumps(row) if LONE_SURROGATE.search(text) else text


def check_dataset_runs(store: Store, run_ids: list[str]) -> None:
    """Refuse an unknown or unfinished run before anything is written."""
    chosen_runs(store, run_ids)


def hub_token(repo_id: str, refusal: str) -> str:
    """The Hub token (HF_TOKEN, from the environment only) an action on `repo_id` needs; without one, `refusal`
    (naming the flag and what was not done) is raised."""
    check_repo_id(repo_id)
    token = token_from_env()
    if not token:
        raise ToolboardError(refusal)
    return token


def push_token(repo_id: str) -> str:
    """The token a push to `repo_id` needs; refused without one."""
    return hub_token(repo_id, f"--push needs a Hugging Face token with write access to {repo_id} in {TOKEN_ENV} "
                              "(read from the environment only); nothing was written")


def write_results_dataset(folder: Path, store: Store, run_ids: list[str] | None) -> WrittenDataset:
    """The results dataset folder of the runs named (None: every finished run)."""
    return write_dataset(folder, store, run_ids)


def results_dataset_repo() -> str | None:
    """The results dataset runs are pushed to (TOOLBOARD_HUB_REPO), linked as the source of exported eval results."""
    return read_setting("hub_repo") or None


def export_eval_results(store: Store, run_id: str, folder: Path) -> Path:
    """The run's `.eval_results/<stem>.yaml` written under `folder` (a model repo's clone); refused with the reason
    for a run that is not the board's ranked experiment (publish/eval_results.py)."""
    return write_eval_results(store, run_id, folder, results_dataset_repo())


def eval_results_pr_token(model_repo: str) -> str:
    """The operator's token a pull request on `model_repo` needs; refused without one."""
    return hub_token(model_repo, f"--open-pr needs a Hugging Face token in {TOKEN_ENV} (read from the environment "
                                 f"only) that may open pull requests on {model_repo}; nothing was sent")


def open_eval_results_pr(store: Store, run_id: str, model_repo: str, token: str) -> str:
    """One pull request on the model repo adding the run's eval results file; its URL."""
    return open_pull_request(store, run_id, model_repo, token, results_dataset_repo(),
                             endpoint=endpoint_from_env())


def push_results_dataset(folder: Path, repo_id: str, token: str | None, public: bool) -> str:
    """Push a written results dataset folder to the Hub (created private unless `public`): the repo's URL."""
    return push_dataset_folder(folder, repo_id, token=token, endpoint=None, private=not public)
