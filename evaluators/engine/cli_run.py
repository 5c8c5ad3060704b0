"""The `run`, `runs` and `export` commands: the engine from the terminal, with a progress bar."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys

from tqdm import tqdm

from evaluators.core.errors import ToolboardError
from evaluators.core.registry import Benchmark, get_benchmark
from evaluators.engine.endpoint_guard import check_run_keys
from evaluators.engine.http_pool import WORKERS_ENV, can_fork_workers, fork_workers, workers_for
from evaluators.engine.local_model import is_local, local_model
from evaluators.engine.runner import Progress, execute, start_run
from evaluators.engine.settings import ModelSettings, RunConfig, UserSimulatorSettings, describe_requests
from evaluators.engine.store import Store


def _config(args: argparse.Namespace) -> RunConfig:
    if args.model and is_local(args.model):
        # The built-in local model: its server is ours, so there is no URL or key to give.
        if args.base_url and args.base_url != args.model:
            raise ToolboardError(f"--model {args.model} runs the built-in local model; drop --base-url")
        chosen = local_model(args.model)
        args.base_url, args.model, args.api_key_env = args.model, chosen.name, ""
        args.max_tokens = args.max_tokens or chosen.max_tokens
    if not args.benchmark or not args.base_url or not args.model:
        raise ToolboardError("run needs BENCHMARK, --base-url and --model (or --model local:smollm2, "
                             "or --resume/--rerun-errors RUN_ID)")
    benchmark = get_benchmark(args.benchmark)
    language = args.language
    if benchmark.languages != (None,):
        language = language or benchmark.languages[0]
        if language not in benchmark.languages:
            raise ToolboardError(f"unknown language {language!r}; expected one of {', '.join(map(str, benchmark.languages))}")
    if args.concurrency < 1:
        raise ToolboardError("--concurrency must be at least 1")
    if not isinstance(args.extra_body, dict):
        raise ToolboardError("--extra-body must be a JSON object")
    from evaluators.cli import judge_settings

    if args.modality not in benchmark.extra.get("modalities", ("text",)):
        raise ToolboardError(f"{benchmark.name} has no {args.modality} mode; drop --modality")
    settings = ModelSettings(
        base_url=args.base_url, model=args.model, api_key_env=args.api_key_env, request_mode=args.request_mode,
        temperature=args.temperature, max_tokens=args.max_tokens, timeout=args.timeout, extra_body=args.extra_body,
        modality=args.modality, judge=judge_settings(args, benchmark), top_p=args.top_p, prompt_style=args.prompt_style,
    )
    return RunConfig(
        benchmark=benchmark.name, model=settings, language=language, subsets=tuple(args.subset or ()), limit=args.limit,
        data_dir=str(args.data_dir) if args.data_dir else None, concurrency=args.concurrency,
        use_cache=not args.no_cache, max_attempts=args.max_attempts, user_simulator=_user_simulator(args, benchmark),
    )


def _user_simulator(args: argparse.Namespace, benchmark: Benchmark) -> UserSimulatorSettings | None:
    """--user-base-url/--user-model/--user-api-key-env, each defaulting to the tested model's; None
    when they name the tested model itself (it then plays the user through the same client)."""
    given = [getattr(args, name, None) for name in ("user_base_url", "user_model", "user_api_key_env")]
    if not any(given):
        return None
    if not benchmark.extra.get("user_simulator"):
        raise ToolboardError(f"{benchmark.name} has no simulated user; drop the --user-* options")
    user = UserSimulatorSettings(base_url=given[0] or args.base_url, model=given[1] or args.model,
                                 api_key_env=given[2] or args.api_key_env)
    same = (user.base_url, user.model, user.api_key_env) == (args.base_url, args.model, args.api_key_env)
    return None if same else user


# Run settings that change how a run goes, not which requests it sends (nor the cache keys).
_SETTINGS_NOT_IN_REQUESTS = ("concurrency", "max_attempts", "use_cache")


def _requests_expected(store: Store, run_id: str, rerun_errors: bool) -> bool:
    """Whether this run will send requests: False when no sample is left to do, or when an earlier
    run with the same requests (benchmark, data, subsets, model settings) finished without a request
    error, so the cache holds every answer."""
    run = store.get_run(run_id)
    states = store.prediction_states(run_id)
    if rerun_errors:
        return any(states.values()) or len(states) < run.total
    if len(states) >= run.total:
        return False
    if not run.config.get("use_cache", True):
        return True

    def requests_of(config: dict) -> dict:
        return {key: value for key, value in config.items() if key not in _SETTINGS_NOT_IN_REQUESTS}

    for other in store.list_runs():
        if other.id != run_id and other.status == "finished" and requests_of(other.config) == requests_of(run.config):
            totals = store.run_totals(other.id)
            if totals["done"] >= other.total and not totals["errors"]:
                return False
    return True


def run_command(args: argparse.Namespace) -> int:
    from evaluators.cli import print_report

    if args.http_workers is not None and args.http_workers < 0:
        raise ToolboardError("--http-workers must be 0 (send from this process) or more")
    store = Store()
    rerun_errors = bool(args.rerun_errors)
    run_id = args.resume or args.rerun_errors
    samples = None
    if run_id is None:
        config = _config(args)
        check_run_keys(config)
        run_id, samples = start_run(config, store)
        print(describe_requests(store.get_run(run_id).config), file=sys.stderr)
    else:
        config = RunConfig.from_json(store.get_run(run_id).config)
        check_run_keys(config)
    asked = args.http_workers is not None or bool(os.environ.get(WORKERS_ENV, "").strip())
    http_workers = workers_for(config.concurrency, args.http_workers, cheap_start=can_fork_workers())
    if not asked and not _requests_expected(store, run_id, rerun_errors):
        http_workers = 0  # the cache answers, or nothing is left: not even the SDK is imported
    # Forked now, before the progress bar's thread and the event loop: the workers share this process's
    # SDK import and are ready at once. Where they cannot be forked, the run starts fresh ones, which
    # by default only pays off on more cores.
    if http_workers and not fork_workers(http_workers) and not asked:
        http_workers = workers_for(config.concurrency)
    bar = tqdm(total=0, unit="sample", desc=run_id, file=sys.stderr, disable=None)

    def on_progress(progress: Progress) -> None:
        if bar.total != progress.total_count:
            bar.reset(total=progress.total_count)
            bar.update(progress.done_count)
            return
        # tqdm redraws at most every `mininterval`; the postfix rides along with the next redraw
        bar.set_postfix(errors=progress.errors, refresh=False)
        bar.update(progress.done_count - bar.n)

    async def main() -> object:
        cancel = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, cancel.set)
        return await execute(store, run_id, samples, rerun_errors=rerun_errors, on_progress=on_progress, cancel=cancel,
                             http_workers=http_workers)

    try:
        outcome = asyncio.run(main())
    finally:
        bar.close()
    if outcome.status != "finished":  # type: ignore[attr-defined]
        print(f"run {run_id} {outcome.status}; continue with: python -m evaluators run --resume {run_id}", file=sys.stderr)  # type: ignore[attr-defined]
        return 3
    report = outcome.report if args.mode == "official" else None  # type: ignore[attr-defined]
    if report is None:
        stored = store.load_report(run_id, args.mode)
        if args.json:
            print(json.dumps({**(stored or {}), "run_id": run_id}, ensure_ascii=False))
            return 0
        print(json.dumps(stored, ensure_ascii=False, indent=1))
    elif args.json:
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
    return 0


def runs_command(args: argparse.Namespace) -> int:
    store = Store()
    rows = []
    for run in store.list_runs():
        totals = store.run_totals(run.id)
        report = store.load_report(run.id) or {}
        rows.append({
            "id": run.id, "benchmark": run.benchmark, "language": run.language, "model": run.model,
            "base_url": run.base_url, "status": run.status, "done": totals["done"], "total": run.total,
            "errors": totals["errors"], "fingerprint": run.fingerprint, "summary": report.get("summary"),
        })
    if args.json:
        print(json.dumps(rows, ensure_ascii=False))
    for row in [] if args.json else rows:
        print(f"{row['id']}  {row['benchmark']:<10} {row['model']:<24} {row['status']:<11} {row['done']}/{row['total']}"
              f"  errors={row['errors']}  fingerprint={row['fingerprint']}")
    return 0


def export_command(args: argparse.Namespace) -> int:
    store = Store()
    run = store.get_run(args.run_id)
    predictions = store.load_predictions(run.id)
    if args.predictions:
        with args.predictions.open("w", encoding="utf-8") as out:
            for prediction in predictions.values():
                row = {"id": prediction.sample_id, "output": prediction.output}
                if prediction.tool_calls is not None:
                    row["tool_calls"] = [{"name": c.name, "arguments": c.arguments} for c in prediction.tool_calls]
                if prediction.result is not None:
                    row["result"], row["process"] = prediction.result, prediction.process
                if prediction.error is not None:
                    row["error"] = prediction.error
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    report = store.load_report(run.id, args.mode)
    if args.report:
        if report is None:
            raise ToolboardError(f"run {run.id} has no {args.mode} report yet (status {run.status})")
        args.report.write_text(json.dumps({**report, "run_id": run.id, "config": run.config}, ensure_ascii=False, indent=1))
    if not args.predictions and not args.report:
        print(json.dumps({"run_id": run.id, "status": run.status, "config": run.config, "report": report}, ensure_ascii=False))
    return 0
