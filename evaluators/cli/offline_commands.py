"""The commands that need no endpoint: `list`, `env`, `score`, `demo` and `replay`."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping

from evaluators.cli.report_text import print_report
from evaluators.cli.roles import chosen_roles
from evaluators.core.environment import all_variables, environment_table
from evaluators.core.errors import ToolboardError
from evaluators.core.registry import all_benchmarks, get_benchmark
from evaluators.core.selection import language_names, resolve_language
from evaluators.service.offline_scoring import benchmark_with_example, score_example, score_predictions_file


def list_command(_: argparse.Namespace) -> int:
    for benchmark in all_benchmarks():
        print(f"{benchmark.name}: {benchmark.title} — {benchmark.description}")
        if language_names(benchmark):
            print(f"  languages: {', '.join(language_names(benchmark))}")
        if benchmark.groups:
            print(f"  groups: {', '.join(benchmark.groups)}")
        print(f"  subsets: {', '.join(benchmark.subsets)}")
        if benchmark.upload_only:
            print(f"  scored from uploads only (not run against an endpoint yet): {', '.join(benchmark.upload_only)}")
        print(f"  metrics: {', '.join(benchmark.metric_names)}; summary: {', '.join(benchmark.summary_names)}")
        for role in benchmark.roles:
            fallback = f"; without one, {role.fallback}" if role.fallback else ""
            print(f"  role {role.name}: {role.label}, {role.description}{fallback} (--role {role.name}=URL,MODEL[,KEY_ENV])")
        for option in benchmark.options:
            print(f"  option {option.name}: {' | '.join(option.choices)} (default {option.default}): {option.description}")
        if benchmark.request_profile is not None:
            print(f"  prompt styles: {' | '.join(benchmark.prompt_styles)} (--prompt-style)")
        print(f"  request modes: {' | '.join(benchmark.request_modes)} (--request-mode; default {benchmark.request_modes[0]})")
    return 0


def env_command(args: argparse.Namespace) -> int:
    """The environment variables toolboard reads, with their values now (or what unset means); --markdown: the
    README's table of them."""
    all_benchmarks()  # each benchmark package declares its own variables as it is imported
    if args.markdown:
        print(environment_table())
        return 0
    rows = current_values()
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    return 0


def current_values(environ: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(variable, what it is set to now, or "(unset: <default>)"); a URL shown without its credentials."""
    from evaluators.engine.redact import without_credentials

    rows = []
    for variable in all_variables():
        value = variable.read(environ)
        shown = (without_credentials(value) if "://" in value else value) if value else f"(unset: {variable.default})"
        rows.append((variable.name, shown))
    return rows


def score_command(args: argparse.Namespace) -> int:
    benchmark = get_benchmark(args.benchmark)
    roles = chosen_roles(args, benchmark, scoring_files=True)
    started = time.perf_counter()
    scored = score_predictions_file(benchmark, args.predictions, args.data_dir, args.language, args.subset, args.mode,
                                    roles)
    if args.samples:
        with args.samples.open("w", encoding="utf-8") as out:
            for result in scored.scores:
                out.write(_verdict_line(result.to_dict()) + "\n")
    print_report(scored.report, args.json)
    print(f"scored {len(scored.samples)} samples in {time.perf_counter() - started:.2f}s", file=sys.stderr)
    return 0


def _verdict_line(verdict: dict) -> str:
    """One sample's verdict as JSON; a decoded answer JSON cannot hold (tuple keys, an integer too long
    to print) is written as its description instead of failing the whole file."""
    try:
        return json.dumps(verdict, ensure_ascii=False, default=repr)
    except (ValueError, TypeError, RecursionError) as problem:
        return json.dumps({**verdict, "decoded": f"(not writable as JSON: {problem})"}, ensure_ascii=False, default=repr)


def demo_command(args: argparse.Namespace) -> int:
    benchmark = benchmark_with_example(args.benchmark)
    example, scored = score_example(benchmark, args.mode)
    if not args.json:
        print(f"Built-in example of {benchmark.title}: {example.note}.\n")
        for result in scored.scores:
            verdict = "right" if result.correct else f"wrong ({result.error_type}: {result.rule})"
            print(f"  {result.sample_id:<45} {verdict}")
        print()
    print_report(scored.report, args.json)
    return 0


def replay_command(args: argparse.Namespace) -> int:
    benchmark = get_benchmark(args.benchmark)
    if benchmark.replay is None:
        with_replay = [b.name for b in all_benchmarks() if b.replay is not None]
        raise ToolboardError(f"{benchmark.name} has no agent environments to replay; these do: "
                             f"{', '.join(with_replay) or 'none'}")
    language = resolve_language(benchmark, args.language)
    samples = benchmark.load(args.data_dir, language=language, subsets=list(benchmark.replay.subsets))
    benchmark.replay.run(samples, args.calls, sys.stdout)
    return 0
