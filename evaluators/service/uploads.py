"""Uploads as a front door takes them: check and score a predictions file against the data the visitor
picked (within the deployment's size limit), then add it to the board for its visitor (daily quota) and push
it to the hub."""

from __future__ import annotations

from pathlib import Path

from evaluators.service.app_services import AppServices, resolve_data_dir
from evaluators.service.submissions import Submission, check_submission, store_submission


def check_upload(services: AppServices, path: Path, benchmark: str, language: str | None, data_source: str,
                 data_folder: str) -> Submission:
    """The file checked and scored (nothing stored); `data_source` as a form offers it (see resolve_data_dir)."""
    data_dir = resolve_data_dir(services, data_source, data_folder, benchmark, language)
    return check_submission(path, benchmark, language=language, data_dir=data_dir, max_bytes=services.max_upload_bytes)


def add_upload(services: AppServices, submission: Submission, model: str, notes: str, owner: str | None) -> str:
    """Store a checked submission as a run under `model` (the visitor's daily quota allowing), and push it to
    the hub when one is configured: the new run's id."""
    run_id = store_submission(services.store, submission, model, notes, owner=owner, admission=services.jobs.admission)
    services.after_run(run_id)
    return run_id
