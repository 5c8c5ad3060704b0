"""The `runs` and `export` commands: what the store holds, read back without running anything
(`export --dataset` writes it as a Hugging Face dataset folder, `--push` sends that folder to the Hub)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from evaluators.core.errors import ToolboardError
from evaluators.engine.store import Store
from evaluators.publish.dataset_schema import CARD_FILE, DATA_FILE, SPLIT
from evaluators.publish.inspect_log import check_inspect_installed, write_inspect_log
from evaluators.service.run_records import (
    catch_up_with_the_queue,
    check_dataset_runs,
    eval_results_pr_token,
    export_eval_results,
    open_eval_results_pr,
    prediction_lines,
    push_results_dataset,
    push_token,
    run_listing,
    run_with_report,
    write_results_dataset,
)


def runs_command(args: argparse.Namespace) -> int:
    store = Store()
    queued, warning = catch_up_with_the_queue(store)
    if warning:
        print(f"warning: {warning}", file=sys.stderr)
    rows = run_listing(store, queued)
    if args.json:
        print(json.dumps(rows, ensure_ascii=False))
        return 0
    for row in rows:
        print(f"{row['id']}  {row['benchmark']:<10} {row['model']:<24} {row['status']:<11} {row['done']}/{row['total']}"
              f"  errors={row['errors']}  fingerprint={row['fingerprint']}")
        if row["status"] == "interrupted":
            print(f"    {row['message']} (python -m evaluators run --resume {row['id']})")
    return 0


def export_command(args: argparse.Namespace) -> int:
    token = _check_export_flags(args)
    store = Store()
    run_ids = _dataset_run_ids(args)
    if args.dataset is not None and run_ids is not None:
        check_dataset_runs(store, run_ids)
    if args.eval_results is not None or args.open_pr is not None:
        _export_eval_results(store, args)
    if args.run_id is not None and (args.predictions or args.report or args.inspect_log or (
            args.dataset is None and args.eval_results is None and args.open_pr is None)):
        _export_run(store, args)
    if args.dataset is not None:
        _export_dataset(store, args.dataset, run_ids, args.push, token, public=args.public)
    return 0


def _check_export_flags(args: argparse.Namespace) -> str | None:
    """Refuse a combination of flags that cannot work before the store is read; returns the Hub token
    (HF_TOKEN) when --push needs one, refusing without it (nothing is written then, here or on the Hub).
    --inspect-log without inspect-ai (the optional extra) is refused here too, with the pip command that fixes it."""
    if (args.eval_results is not None or args.open_pr) and args.run_id is None:
        raise ToolboardError("--eval-results and --open-pr need RUN_ID: the run whose figures to write")
    if args.inspect_log:
        if args.run_id is None:
            raise ToolboardError("--inspect-log needs RUN_ID: the run to write as an Inspect log")
        check_inspect_installed()
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
    return push_token(args.push) if args.push else None


def _dataset_run_ids(args: argparse.Namespace) -> list[str] | None:
    """The runs named (RUN_ID and each --run, in order, once each), or None: every finished run."""
    named = list(dict.fromkeys([*([args.run_id] if args.run_id else []), *args.runs]))
    return named or None


def _export_dataset(store: Store, folder: Path, run_ids: list[str] | None, repo_id: str | None, token: str | None,
                    public: bool) -> None:
    """Write the results dataset folder, say what it holds; then push it when asked."""
    written = write_results_dataset(folder, store, run_ids)
    print(f"wrote the results dataset to {written.folder}")
    for config, rows in (("contents", written.contents_rows), ("details", written.details_rows),
                         ("runs", written.runs_rows)):
        where = f"{config}/{DATA_FILE}" if rows else "no file (no rows)"
        print(f"  {config:<8} {rows:>7} rows  {where}")
    print(f"  {'card':<8} {'':>7}       {CARD_FILE}")
    if written.example_runs_left_out:
        count = written.example_runs_left_out
        print(f"  left out {count} run{'' if count == 1 else 's'} scored on the built-in example data (never published)")
    print(f'load it with: datasets.load_dataset({json.dumps(str(written.folder))}, "contents", split="{SPLIT}")')
    if repo_id is None:
        return
    visibility = "public" if public else "private"
    print(f"pushing to dataset {repo_id} (created {visibility} if new; an existing repo keeps its visibility)...",
          file=sys.stderr)
    url = push_results_dataset(written.folder, repo_id, token, public)
    print(f"pushed to dataset {repo_id}: {url}")
    print(f'load it with: datasets.load_dataset("{repo_id}", "contents", split="{SPLIT}")'
          "  (a private repo needs a token that can read it)")


def _export_eval_results(store: Store, args: argparse.Namespace) -> None:
    """The run's .eval_results file written (--eval-results DIR) and/or sent as a pull request (--open-pr)."""
    token = eval_results_pr_token(args.open_pr) if args.open_pr else None
    if args.eval_results is not None:
        written = export_eval_results(store, args.run_id, args.eval_results)
        print(f"wrote {written}")
    if args.open_pr and token is not None:
        print(f"opened a pull request on {args.open_pr}: {open_eval_results_pr(store, args.run_id, args.open_pr, token)}")


def _export_run(store: Store, args: argparse.Namespace) -> None:
    """One run's predictions (--predictions), report (--report) and Inspect log (--inspect-log), or, with none of
    them, its record as JSON."""
    if args.inspect_log:
        written = write_inspect_log(store, args.run_id, args.inspect_log)
        print(f"wrote the Inspect log of run {args.run_id} to {written} (open it with: inspect view --log-dir "
              f"{written.absolute().parent})")
    run, report = run_with_report(store, args.run_id, args.mode)
    if args.predictions:
        with args.predictions.open("w", encoding="utf-8") as out:
            for line in prediction_lines(store, run.id):
                out.write(line + "\n")
    if args.report:
        if report is None:
            raise ToolboardError(f"run {run.id} has no {args.mode} report yet (status {run.status})")
        args.report.write_text(json.dumps({**report, "run_id": run.id, "config": run.config}, ensure_ascii=False, indent=1))
    if not args.predictions and not args.report and not args.inspect_log:
        print(json.dumps({"run_id": run.id, "status": run.status, "config": run.config, "report": report}, ensure_ascii=False))

