"""`run`'s flags -> the raw input of a run request, checked by the one builder every front door uses
(evaluators.service.run_request); the engine takes the request from here and never sees the flags."""

from __future__ import annotations

import argparse
from typing import Any

from evaluators.cli.roles import raw_options, raw_roles
from evaluators.core.errors import ToolboardError
from evaluators.core.registry import get_benchmark
from evaluators.engine.settings import Endpoint, RunRequest
from evaluators.service.run_request import LOCAL_FOLDER, build_run_request, command_line_policy


def run_request(args: argparse.Namespace) -> RunRequest:
    if not args.benchmark:
        raise ToolboardError("run needs BENCHMARK, --base-url and --model (or --model local:smollm2, "
                             "or --resume/--rerun-errors RUN_ID)")
    return build_run_request(raw_run(args), command_line_policy())


def raw_run(args: argparse.Namespace) -> dict[str, Any]:
    """The flags by the builder's names (RAW_FIELDS); numbers stay as typed, so a bad one is refused in the
    same words as in the form."""
    benchmark = get_benchmark(args.benchmark)
    tested = Endpoint(args.base_url or "", args.model or "", args.api_key_env or "")
    return {
        "benchmark": benchmark.name, "base_url": args.base_url, "model": args.model, "api_key_env": args.api_key_env,
        "language": args.language, "subsets": args.subset,
        "data_source": LOCAL_FOLDER if args.data_dir else None, "data_folder": str(args.data_dir or ""),
        "limit": args.limit, "concurrency": args.concurrency, "request_mode": args.request_mode,
        "prompt_style": args.prompt_style, "temperature": args.temperature, "top_p": args.top_p,
        "max_tokens": args.max_tokens, "timeout": args.timeout, "max_attempts": args.max_attempts,
        "extra_body": args.extra_body, "use_cache": not args.no_cache,
        "roles": raw_roles(args, tested), "options": raw_options(args, benchmark),
    }
