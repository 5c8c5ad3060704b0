"""The `runs` and `export` commands: what the store holds, read back without running anything
(`export --dataset` writes it as a Hugging Face dataset folder, `--push` sends that folder to the Hub)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from evaluators.core.errors import ToolboardError
from evaluators.engine.jobs import shown_message, status_without_a_job
from evaluators.engine.store import LONE_SURROGATE, Store


def runs_command(args: argparse.Namespace) -> int:
    store = Store()
    queued = _catch_up_with_the_queue(store)
    rows = []
    runs = store.list_runs()
    all_totals = store.all_run_totals([run.id for run in runs])
    for run in runs:
        totals = all_totals[run.id]
        report = store.load_report(run.id) or {}
        # A run a queue worker executes holds its lease in the worker's store, not here.
        status = run.status if queued else status_without_a_job(store, run.id, run.status)
        rows.append({
            "id": run.id, "benchmark": run.benchmark, "language": run.language, "model": run.model,
            "base_url": run.base_url, "status": status, "done": totals["done"], "total": run.total,
            "errors": totals["errors"], "fingerprint": run.fingerprint, "summary": report.get("summary"),
            "message": shown_message(run.status, status, run.message),
        })
    if args.json:
        print(json.dumps(rows, ensure_ascii=False))
        return 0
    for row in rows:
        print(f"{row['id']}  {row['benchmark']:<10} {row['model']:<24} {row['status']:<11} {row['done']}/{row['total']}"
              f"  errors={row['errors']}  fingerprint={row['fingerprint']}")
        if row["status"] == "interrupted":
            print(f"    {row['message']} (python -m evaluators run --resume {row['id']})")
    return 0


def _catch_up_with_the_queue(store: Store) -> bool:
    """In queue mode, bring runs queued from here (`run --queue --detach`) up to date once: a finished one's
    record is stored, a cancelled or failed one says so. False outside queue mode."""
    from evaluators.engine.queue_app import settings_from_env

    settings = settings_from_env()
    if settings is None:
        return False
    if not any(run.status in ("queued", "running", "cancelling") for run in store.list_runs()):
        return True
    from evaluators.engine.queue_jobs import QueueJobs

    try:
        jobs = QueueJobs(store, settings, poll_seconds=3600)
        try:
            jobs.poll()
        finally:
            jobs.shutdown()
    except Exception as error:  # noqa: BLE001 - the stored runs are listed either way
        print(f"warning: could not ask the queue about queued runs ({type(error).__name__}); listed as stored",
              file=sys.stderr)
    return True


def export_command(args: argparse.Namespace) -> int:
    token = _check_export_flags(args)
    store = Store()
    run_ids = _dataset_run_ids(args)
    if args.dataset is not None and run_ids is not None:
        from evaluators.publish.results_dataset import chosen_runs

        chosen_runs(store, run_ids)  # an unknown or unfinished run is refused before anything is written
    if args.run_id is not None and (args.predictions or args.report or args.dataset is None):
        _export_run(store, args)
    if args.dataset is not None:
        _export_dataset(store, args.dataset, run_ids, args.push, token, public=args.public)
    return 0


def _check_export_flags(args: argparse.Namespace) -> str | None:
    """Refuse a combination of flags that cannot work before the store is read; returns the Hub token
    (HF_TOKEN) when --push needs one, refusing without it (nothing is written then, here or on the Hub)."""
    if args.dataset is None:
        given = [flag for flag, value in (("--run", args.runs), ("--push", args.push), ("--public", args.public)) if value]
        if given:
            raise ToolboardError(f"{' and '.join(given)} {'needs' if len(given) == 1 else 'need'} --dataset DIR: "
                                 "the folder the results dataset is written to")
        if args.run_id is None:
            raise ToolboardError("export needs RUN_ID (a run's predictions and report) or --dataset DIR (the results "
                                 "as a dataset); see `python -m evaluators runs` for run ids")
    if (args.predictions or args.report) and args.run_id is None:
        raise ToolboardError("--predictions and --report need RUN_ID: the run whose predictions and report to write")
    if args.public and not args.push:
        raise ToolboardError("--public only works with --push ORG/NAME")
    if not args.push:
        return None
    from evaluators.publish.hub_sync import TOKEN_ENV, check_repo_id

    check_repo_id(args.push)
    token = os.environ.get(TOKEN_ENV, "").strip()
    if not token:
        raise ToolboardError(f"--push needs a Hugging Face token with write access to {args.push} in {TOKEN_ENV} "
                             "(read from the environment only); nothing was written")
    return token


def _dataset_run_ids(args: argparse.Namespace) -> list[str] | None:
    """The runs named (RUN_ID and each --run, in order, once each), or None: every finished run."""
    named = list(dict.fromkeys([*([args.run_id] if args.run_id else []), *args.runs]))
    return named or None


def _export_dataset(store: Store, folder: Path, run_ids: list[str] | None, repo_id: str | None, token: str | None,
                    public: bool) -> None:
    """Write the results dataset folder, say what it holds; then push it when asked."""
    from evaluators.publish.results_dataset import CARD_FILE, DATA_FILE, SPLIT, write_dataset

    written = write_dataset(folder, store, run_ids)
    print(f"wrote the results dataset to {written.folder}")
    for config, rows in (("contents", written.contents_rows), ("details", written.details_rows),
                         ("runs", written.runs_rows)):
        where = f"{config}/{DATA_FILE}" if rows else "no file (no rows)"
        print(f"  {config:<8} {rows:>7} rows  {where}")
    print(f"  {'card':<8} {'':>7}       {CARD_FILE}")
    print(f'load it with: datasets.load_dataset({json.dumps(str(written.folder))}, "contents", split="{SPLIT}")')
    if repo_id is None:
        return
    from evaluators.publish.hub_sync import push_dataset_folder

    visibility = "public" if public else "private"
    print(f"pushing to dataset {repo_id} (created {visibility} if new; an existing repo keeps its visibility)...",
          file=sys.stderr)
    url = push_dataset_folder(written.folder, repo_id, token=token, endpoint=None, private=not public)
    print(f"pushed to dataset {repo_id}: {url}")
    print(f'load it with: datasets.load_dataset("{repo_id}", "contents", split="{SPLIT}")'
          "  (a private repo needs a token that can read it)")


def _export_run(store: Store, args: argparse.Namespace) -> None:
    """One run's predictions (--predictions) and report (--report), or, with neither, its record as JSON."""
    run = store.get_run(args.run_id)
    if args.predictions:
        with args.predictions.open("w", encoding="utf-8") as out:
            # Each row with its evidence as stored (gold answer, request as sent): the dataset is never reloaded.
            for stored in store.iter_stored_samples(run.id):
                prediction = stored.prediction
                assert prediction is not None  # a predictions row always holds one
                row = {"id": prediction.sample_id, "output": prediction.output}
                if prediction.tool_calls is not None:
                    row["tool_calls"] = [{"name": c.name, "arguments": c.arguments} for c in prediction.tool_calls]
                # The benchmark's evidence as fields of their own (an agent item's `result` and `process` are
                # what its predictions file holds); never over the fields above.
                row.update({key: value for key, value in (prediction.extra or {}).items() if key not in row})
                if prediction.error is not None:
                    row["error"] = prediction.error
                if stored.gold_kept:
                    row["gold"] = stored.gold
                if stored.request_kept:
                    row["request"] = stored.request
                text = json.dumps(row, ensure_ascii=False)
                # A lone surrogate (kept in a stored request or answer) can only be written as its \u escape.
                out.write((json.dumps(row) if LONE_SURROGATE.search(text) else text) + "\n")
    report = store.load_report(run.id, args.mode)
    if args.report:
        if report is None:
            raise ToolboardError(f"run {run.id} has no {args.mode} report yet (status {run.status})")
        args.report.write_text(json.dumps({**report, "run_id": run.id, "config": run.config}, ensure_ascii=False, indent=1))
    if not args.predictions and not args.report:
        print(json.dumps({"run_id": run.id, "status": run.status, "config": run.config, "report": report}, ensure_ascii=False))

