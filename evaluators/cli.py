"""python -m evaluators list | score | demo"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from evaluators.core.errors import ToolboardError
from evaluators.core.registry import MODES, Benchmark, all_benchmarks, get_benchmark, score_all
from evaluators.core.types import PROMPT_STYLES, Report
from evaluators.engine.settings import MODALITIES, REQUEST_MODES, JudgeSettings
from evaluators.engine.store import StoreDamagedError, default_db_path, is_damage

EXAMPLE_DIR = Path(__file__).parent / "acebench" / "example"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m evaluators", description="Score how well LLMs call tools.")
    commands = parser.add_subparsers(dest="command", required=True)

    commands.add_parser("list", help="list the benchmarks, their subsets and metrics")

    score = commands.add_parser("score", help="score a predictions file")
    score.add_argument("benchmark")
    score.add_argument("predictions", type=Path, help="JSON Lines file, JSON array, folder or zip of result files")
    _add_data_options(score)
    score.add_argument("--mode", choices=MODES, default="official", help="official (default) or strict")
    score.add_argument("--json", action="store_true", help="print the report as one JSON object")
    score.add_argument("--samples", type=Path, help="also write every sample's verdict here (JSON Lines)")
    _add_judge_options(score)

    run = commands.add_parser("run", help="run a benchmark against an OpenAI-compatible endpoint")
    run.add_argument("benchmark", nargs="?", help="benchmark name (not needed with --resume/--rerun-errors)")
    run.add_argument("--base-url", help="endpoint base URL, e.g. http://127.0.0.1:8000/v1")
    run.add_argument("--model", help="model name as the endpoint knows it, or local:smollm2 for the built-in local model "
                     "(optional install, no key or network needed)")
    run.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the API key (never stored)")
    _add_data_options(run)
    run.add_argument("--limit", type=int, help="at most N samples per subset (whole conversations for multi-turn)")
    run.add_argument("--concurrency", type=int, default=8, help="requests in flight at once (default 8)")
    run.add_argument("--http-workers", type=int, metavar="N",
                     help="processes that send the requests through the SDK (default: none, or 2-4 at concurrency "
                          ">= 32 on 4+ cores; env TOOLBOARD_HTTP_WORKERS)")
    run.add_argument("--request-mode", choices=REQUEST_MODES, default="prompt", help="text prompt (default) or native tools")
    run.add_argument("--modality", choices=MODALITIES, default="text", help="user turns as transcripts (default) or audio (stepeval_audio)")
    _add_judge_options(run)
    run.add_argument("--user-base-url", help="endpoint of the simulated user (ACEBench agent_multi_turn; default: --base-url)")
    run.add_argument("--user-model", help="model playing the simulated user (default: --model)")
    run.add_argument("--user-api-key-env", help="environment variable holding the simulated user's key (default: --api-key-env)")
    run.add_argument("--prompt-style", choices=PROMPT_STYLES,
                     help="ACEBench: official (default when the official prompt files are there: the requests the "
                          "official code sends) or toolboard (our own wording)")
    run.add_argument("--temperature", type=float,
                     help="default: the benchmark's (ACEBench official: 0.7 single-turn, 0.001 agent), else 0")
    run.add_argument("--top-p", type=float, help="default: the benchmark's (ACEBench official: 1), else not sent")
    run.add_argument("--max-tokens", type=int,
                     help="default: the benchmark's (ACEBench official: 1200 single-turn, 1000 agent), else not sent")
    run.add_argument("--timeout", type=float, default=120.0, help="seconds per request (default 120)")
    run.add_argument("--max-attempts", type=int, default=6, help="attempts per request before it counts as an error")
    run.add_argument("--extra-body", type=json.loads, default={}, help='JSON merged into each request body, e.g. \'{"top_p": 0.9}\'')
    run.add_argument("--no-cache", action="store_true", help="send every request even if a cached response exists")
    run.add_argument("--resume", metavar="RUN_ID", help="finish an interrupted run")
    run.add_argument("--rerun-errors", metavar="RUN_ID", help="re-send only the samples that ended in request errors")
    run.add_argument("--mode", choices=MODES, default="official", help="scoring mode shown (both are stored)")
    run.add_argument("--json", action="store_true", help="print the report as one JSON object")

    replay = commands.add_parser("replay", help="run agent messages through an ACEBench item's environment (no model)")
    replay.add_argument("benchmark", choices=["acebench"])
    replay.add_argument("--data-dir", type=Path, help="local copy of ACEBench (else TOOLBOARD_DATA_DIR, else download)")
    replay.add_argument("--language", default="en", help="en (default) or zh")
    replay.add_argument("--calls", type=Path, required=True,
                        help='JSON Lines: {"id": ITEM_ID, "calls": ["[turn_on_wifi()]", ...]}; prints {"id", "state"} per line')

    runs = commands.add_parser("runs", help="list stored runs")
    runs.add_argument("--json", action="store_true")

    export = commands.add_parser("export", help="write a run's predictions (JSON Lines) and report (JSON)")
    export.add_argument("run_id")
    export.add_argument("--predictions", type=Path, help="file for the predictions")
    export.add_argument("--report", type=Path, help="file for the report")
    export.add_argument("--mode", choices=MODES, default="official")

    demo = commands.add_parser("demo", help="score the built-in ACEBench example (no download needed)")
    demo.add_argument("--mode", choices=MODES, default="official")
    demo.add_argument("--json", action="store_true")
    return parser


def _add_data_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--data-dir", type=Path, help="local copy of the benchmark data (else TOOLBOARD_DATA_DIR, else download)")
    command.add_argument("--language", help="en or zh (ACEBench)")
    command.add_argument("--subset", nargs="+", help="subset or group names (default: all)")


def _add_judge_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--judge-base-url", help="parameter judge endpoint (stepeval_audio; else arguments are matched exactly)")
    command.add_argument("--judge-model", help="parameter judge model name")
    command.add_argument("--judge-api-key-env", default="OPENAI_API_KEY", help="environment variable holding the judge's key (never stored)")


def judge_settings(args: argparse.Namespace, benchmark: Benchmark) -> JudgeSettings | None:
    """The judge asked for with --judge-base-url/--judge-model, refused for benchmarks without one."""
    if not args.judge_base_url and not args.judge_model:
        return None
    if not (args.judge_base_url and args.judge_model):
        raise ToolboardError("--judge-base-url and --judge-model go together")
    if "judge_predictions" not in benchmark.extra:
        raise ToolboardError(f"{benchmark.name} has no parameter judge; drop the --judge-* options")
    return JudgeSettings(base_url=args.judge_base_url, model=args.judge_model, api_key_env=args.judge_api_key_env)


def _language(benchmark: Benchmark, language: str | None) -> str | None:
    if benchmark.languages == (None,):
        if language:
            raise ToolboardError(f"{benchmark.name} has no languages; drop --language")
        return None
    if language is None:
        return benchmark.languages[0]
    if language not in benchmark.languages:
        raise ToolboardError(f"unknown language {language!r}; expected one of {', '.join(benchmark.languages)}")
    return language


def format_report(report: Report) -> str:
    """A plain-text table of the report for the terminal."""
    lines = [f"{report.benchmark}" + (f" ({report.language})" if report.language else "") + f" — mode {report.mode}"]
    metric_names: list[str] = []
    for sub in report.subsets.values():
        metric_names += [m for m in sub.metrics if m not in metric_names]
    width = max([len(n) for n in report.subsets] + [6])
    lines.append(f"{'subset':<{width}}  {'n':>5}  " + "  ".join(f"{m:>16}" for m in metric_names))
    for name, sub in report.subsets.items():
        cells = "  ".join(f"{_fmt(sub.metrics.get(m)):>16}" for m in metric_names)
        lines.append(f"{name:<{width}}  {sub.n:>5}  {cells}")
    lines.append("summary: " + ", ".join(f"{k}={_fmt(v)}" for k, v in report.summary.items()))
    if report.errors:
        lines.append("errors: " + ", ".join(f"{k}={v}" for k, v in report.errors.items()))
    if report.missing:
        lines.append(f"missing predictions: {len(report.missing)} (scored as failures)")
    if report.unavailable:
        lines.append(f"unavailable (no data file): {', '.join(report.unavailable)}")
    return "\n".join(lines)


def _fmt(value: float | int | str | None) -> str:
    if isinstance(value, str):  # labels such as StepEval's param_method
        return value
    if isinstance(value, int):  # counts such as StepEval's TP / FP
        return str(value)
    return "—" if value is None else f"{value:.3f}"


def _score(args: argparse.Namespace) -> int:
    benchmark = get_benchmark(args.benchmark)
    language = _language(benchmark, args.language)
    subsets = benchmark.expand_subsets(args.subset)
    judge = judge_settings(args, benchmark)
    started = time.perf_counter()
    samples = benchmark.load(args.data_dir, language=language, subsets=subsets)
    predictions = benchmark.read_predictions(args.predictions, samples)
    if judge is not None:  # the judge runs before scoring, which stays pure
        benchmark.extra["judge_predictions"](samples, predictions, judge)
    scores = score_all(benchmark, samples, predictions, args.mode)
    report = benchmark.report(samples, scores, mode=args.mode, language=language, subsets=subsets)
    if args.samples:
        with args.samples.open("w", encoding="utf-8") as out:
            for result in scores:
                out.write(_verdict_line(result.to_dict()) + "\n")
    print_report(report, args.json)
    print(f"scored {len(samples)} samples in {time.perf_counter() - started:.2f}s", file=sys.stderr)
    return 0


def print_report(report: Report, as_json: bool) -> None:
    if as_json:
        print(json.dumps(report.to_json(), ensure_ascii=False))
    else:
        print(format_report(report))


def _demo(args: argparse.Namespace) -> int:
    benchmark = get_benchmark("acebench")
    samples = benchmark.load(EXAMPLE_DIR, language="en", subsets=None)
    predictions = benchmark.read_predictions(EXAMPLE_DIR / "predictions.jsonl", samples)
    scores = score_all(benchmark, samples, predictions, args.mode)
    report = benchmark.report(samples, scores, mode=args.mode, language="en")
    if not args.json:
        print("Built-in example: a few ACEBench-style items written for this project, and one model's answers.\n")
        for result in scores:
            verdict = "right" if result.correct else f"wrong ({result.error_type}: {result.rule})"
            print(f"  {result.sample_id:<45} {verdict}")
        print()
    print_report(report, args.json)
    return 0


def _run(args: argparse.Namespace) -> int:
    from evaluators.engine.cli_run import run_command

    return run_command(args)


def _replay(args: argparse.Namespace) -> int:
    from evaluators.acebench.agent.replay import replay_file
    from evaluators.acebench.categories import AGENT

    benchmark = get_benchmark(args.benchmark)
    language = _language(benchmark, args.language)
    samples = benchmark.load(args.data_dir, language=language, subsets=list(AGENT))
    replay_file(samples, args.calls, sys.stdout)
    return 0


def _runs(args: argparse.Namespace) -> int:
    from evaluators.engine.cli_run import runs_command

    return runs_command(args)


def _export(args: argparse.Namespace) -> int:
    from evaluators.engine.cli_run import export_command

    return export_command(args)


def _list(_: argparse.Namespace) -> int:
    for benchmark in all_benchmarks():
        print(f"{benchmark.name}: {benchmark.title} — {benchmark.description}")
        if benchmark.languages != (None,):
            print(f"  languages: {', '.join(str(lang) for lang in benchmark.languages)}")
        print(f"  groups: {', '.join(benchmark.groups)}")
        print(f"  subsets: {', '.join(benchmark.subsets)}")
        print(f"  metrics: {', '.join(benchmark.metrics)}; summary: {', '.join(benchmark.summary_metrics)}")
    return 0


def _verdict_line(verdict: dict) -> str:
    """One sample's verdict as JSON; a decoded answer JSON cannot hold (tuple keys, an integer too long
    to print) is written as its description instead of failing the whole file."""
    try:
        return json.dumps(verdict, ensure_ascii=False, default=repr)
    except (ValueError, TypeError, RecursionError) as problem:
        return json.dumps({**verdict, "decoded": f"(not writable as JSON: {problem})"}, ensure_ascii=False, default=repr)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    handlers = {"list": _list, "score": _score, "demo": _demo, "run": _run, "replay": _replay, "runs": _runs, "export": _export}
    try:
        return handlers[args.command](args)
    except ToolboardError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except sqlite3.DatabaseError as exc:
        if not is_damage(exc):
            raise
        print(f"error: {StoreDamagedError(default_db_path(), str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
