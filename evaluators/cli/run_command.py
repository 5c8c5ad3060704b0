"""The `run` command: the engine from the terminal, with a progress bar, Ctrl-C as a clean stop,
and the report (or how to resume) at the end."""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import signal
import sys
from typing import Any

from evaluators.cli.report_text import print_report
from evaluators.cli.run_config import run_request
from evaluators.core import phase_log
from evaluators.core.errors import ToolboardError
from evaluators.core.types import Report, Sample
from evaluators.engine.job_manager import RunJobs
from evaluators.engine.runner import Progress, RunOutcome, execute, start_run
from evaluators.engine.settings import describe_requests
from evaluators.engine.store import Store
from evaluators.service.deployment import is_public_mode, unlisted_model_rule

# Exit code of a run that stopped before finishing (cancelled or failed): it can be resumed.
EXIT_UNFINISHED = 3


def run_command(args: argparse.Namespace) -> int:
    if args.detach and not args.queue:
        raise ToolboardError("--detach only works with --queue (a run executed here ends with the command)")
    store = Store()
    try:
        return _run_or_queue(args, store)
    finally:
        store.close()  # what it wrote is whole when the command returns, not when the interpreter ends


def _run_or_queue(args: argparse.Namespace, store: Store) -> int:
    if args.queue:
        _collect_from_now_on()
        return queued_run_command(args, store)
    rerun_errors = bool(args.rerun_errors)
    run_id = args.resume or args.rerun_errors
    samples = None
    if run_id is None:
        run_id, samples = start_run(run_request(args), store, unlisted=unlisted_model_rule(is_public_mode()))
        print(describe_requests(store.get_run(run_id).config), file=sys.stderr)
    else:
        store.get_run(run_id)  # an unknown id is refused by name; execute checks the stored run again
    _collect_from_now_on()
    outcome = _execute_with_progress_bar(store, run_id, samples, rerun_errors)
    if outcome.status == "failed":
        print(f"run {run_id} failed: {store.get_run(run_id).message}\nre-send its requests with: python -m evaluators "
              f"run --rerun-errors {run_id}", file=sys.stderr)
        return EXIT_UNFINISHED
    if outcome.status != "finished":
        print(f"run {run_id} {outcome.status}; continue with: python -m evaluators run --resume {run_id}", file=sys.stderr)
        return EXIT_UNFINISHED
    _print_outcome(store, run_id, outcome, args.mode, args.json)
    phase_log.mark("report printed")
    return 0


class _NoBar:
    """What a run's progress bar is when stderr is not a terminal (tqdm would draw nothing there either)."""

    def __init__(self) -> None:
        self.total = 0
        self.n = 0

    def reset(self, total: int) -> None:
        self.total, self.n = total, 0

    def update(self, count: int = 1) -> None:
        self.n += count

    def set_postfix(self, **_: Any) -> None:
        pass

    def set_description_str(self, _: str, refresh: bool = True) -> None:
        pass

    def close(self) -> None:
        pass


def _progress_bar(run_id: str) -> Any:
    """tqdm on a terminal; off one, nothing to draw, so tqdm is not even imported."""
    if not sys.stderr.isatty():
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=0, unit="sample", desc=run_id, file=sys.stderr)


def _collect_from_now_on() -> None:
    """The garbage collector back on where evaluators/__main__.py turned it off for start-up, with what start-up
    made (modules, samples) set aside from its passes: they live as long as the run."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def _execute_with_progress_bar(store: Store, run_id: str, samples: list[Sample] | None,
                               rerun_errors: bool) -> RunOutcome:
    bar = _progress_bar(run_id)

    def on_progress(progress: Progress) -> None:
        if bar.total != progress.total_count:
            bar.reset(total=progress.total_count)
            bar.update(progress.done_count)
            return
        # tqdm redraws at most every `mininterval`; the postfix rides along with the next redraw
        bar.set_postfix(errors=progress.errors, refresh=False)
        bar.update(progress.done_count - bar.n)

    async def main() -> RunOutcome:
        cancel = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, cancel.set)
        return await execute(store, run_id, samples, rerun_errors=rerun_errors, on_progress=on_progress, cancel=cancel)

    try:
        return asyncio.run(main())
    finally:
        bar.close()


def _print_outcome(store: Store, run_id: str, outcome: RunOutcome, mode: str, as_json: bool) -> None:
    """The report in the mode asked for (the strict one is read back from the store), then the totals."""
    report = outcome.report if mode == "official" else None
    if report is None:
        stored = store.load_report(run_id, mode)
        if as_json:
            print(json.dumps({**(stored or {}), "run_id": run_id}, ensure_ascii=False))
            return
        print(json.dumps(stored, ensure_ascii=False, indent=1))
    elif as_json:
        print(json.dumps({**report.to_json(), "run_id": run_id}, ensure_ascii=False))
    else:
        print_report(report, False)
    totals = store.run_totals(run_id)
    print(
        f"run {run_id}: {totals['done']} samples, {totals['errors']} request errors, "
        f"{totals['prompt_tokens']} prompt + {totals['completion_tokens']} completion tokens",
        file=sys.stderr,
    )
    if totals["errors"]:
        print(f"re-send the failed requests with: python -m evaluators run --rerun-errors {run_id}", file=sys.stderr)
    message = store.get_run(run_id).message or ""
    if "from the cache" in message:
        print("every answer came from the cache: these requests were answered before, nothing was sent "
              "(--no-cache sends them again)", file=sys.stderr)


def queued_run_command(args: argparse.Namespace, store: Store) -> int:
    """`run --queue`: create the run here (checked as any run), send it to the queue's workers and, unless
    --detach, follow it with a progress bar and print its report as `run` does. Ctrl-C cancels it."""
    from evaluators.engine.queue_app import BROKER_ENV, settings_from_env
    from evaluators.engine.queue_jobs import QueueJobs

    settings = settings_from_env()
    if settings is None:
        raise ToolboardError(f"--queue needs {BROKER_ENV}=redis://HOST:6379/0 (the queue the workers read)")
    # What the watcher has to say while it waits (a run whose task the broker lost, sent again) goes above the bar.
    from tqdm import tqdm

    jobs = QueueJobs(store, settings, poll_seconds=0.5, unlisted=unlisted_model_rule(is_public_mode()),
                     notify=lambda run_id, text: tqdm.write(f"run {run_id}: {text}", file=sys.stderr))
    try:
        run_id = args.resume or args.rerun_errors
        if run_id is None:
            run_id = jobs.start(run_request(args))
            print(describe_requests(store.get_run(run_id).config), file=sys.stderr)
        elif args.rerun_errors:
            jobs.rerun_errors(run_id)
        else:
            jobs.resume(run_id)
        if args.detach:
            print(run_id)
            print(f"queued run {run_id}; `python -m evaluators runs` shows it (and stores it once it has ended)",
                  file=sys.stderr)
            return 0
        status = _follow(jobs, run_id)
    finally:
        jobs.shutdown()
    if status != "finished":
        job = jobs.job(run_id)
        print(f"run {run_id} {status}: {job.message if job else ''}", file=sys.stderr)
        return EXIT_UNFINISHED
    stored = store.load_report(run_id, "official")
    report = Report.from_json(stored) if stored else None
    _print_outcome(store, run_id, RunOutcome(run_id, status, report, Progress(run_id, {})), args.mode, args.json)
    return 0


def _follow(jobs: RunJobs, run_id: str) -> str:
    """The queued run's progress on a bar until it ends; its final status. Ctrl-C cancels it."""
    bar = _progress_bar(run_id)
    try:
        while True:
            try:
                status = jobs.wait(run_id, 0.5)
            except KeyboardInterrupt:
                jobs.cancel(run_id)
                continue
            job = jobs.job(run_id)
            progress = job.progress if job is not None else {}
            if progress.get("total") and bar.total != progress["total"]:
                bar.reset(total=progress["total"])
            if progress:
                bar.set_postfix(errors=progress.get("errors", 0), refresh=False)
                bar.update(progress.get("done", 0) - bar.n)
            if job is not None:
                bar.set_description_str(f"{run_id} {job.message}"[:80], refresh=False)
            if status is not None:
                return status
    finally:
        bar.close()
