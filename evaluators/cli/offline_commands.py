"""The commands that need no endpoint: `list`, `score`, `demo` and `replay`."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from evaluators.cli.companions import judge_settings
from evaluators.cli.report_text import print_report
from evaluators.core.registry import all_benchmarks, get_benchmark, score_all
from evaluators.core.selection import language_names, resolve_language

EXAMPLE_DIR = Path(__file__).parents[1] / "acebench" / "example"


def list_command(_: argparse.Namespace) -> int:
    for benchmark in all_benchmarks():
        print(f"{benchmark.name}: {benchmark.title} — {benchmark.description}")
        if language_names(benchmark):
            print(f"  languages: {', '.join(language_names(benchmark))}")
        print(f"  groups: {', '.join(benchmark.groups)}")
        print(f"  subsets: {', '.join(benchmark.subsets)}")
        print(f"  metrics: {', '.join(benchmark.metrics)}; summary: {', '.join(benchmark.summary_metrics)}")
    return 0


def score_command(args: argparse.Namespace) -> int:
    benchmark = get_benchmark(args.benchmark)
    language = resolve_language(benchmark, args.language)
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


def _verdict_line(verdict: dict) -> str:
    """One sample's verdict as JSON; a decoded answer JSON cannot hold (tuple keys, an integer too long
    to print) is written as its description instead of failing the whole file."""
    try:
        return json.dumps(verdict, ensure_ascii=False, default=repr)
    except (ValueError, TypeError, RecursionError) as problem:
        return json.dumps({**verdict, "decoded": f"(not writable as JSON: {problem})"}, ensure_ascii=False, default=repr)


def demo_command(args: argparse.Namespace) -> int:
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


def replay_command(args: argparse.Namespace) -> int:
    # Imported here: the agent environment is ACEBench's alone and only this command needs it.
    from evaluators.acebench.agent.replay import replay_file
    from evaluators.acebench.categories import AGENT

    benchmark = get_benchmark(args.benchmark)
    language = resolve_language(benchmark, args.language)
    samples = benchmark.load(args.data_dir, language=language, subsets=list(AGENT))
    replay_file(samples, args.calls, sys.stdout)
    return 0
