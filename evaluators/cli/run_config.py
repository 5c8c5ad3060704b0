"""`run`'s flags -> the raw input of a run request, checked by the one builder every front door uses
(evaluators.service.run_request); the engine takes the request from here and never sees the flags."""

from __future__ import annotations

import argparse
from typing import Any

from evaluators.cli.parser import SETTINGS_ADDED_APART, setting_dest
from evaluators.cli.roles import raw_options, raw_roles
from evaluators.core.errors import ToolboardError
from evaluators.core.registry import get_benchmark
from evaluators.engine.settings import Endpoint, RunRequest
from evaluators.service.run_request import LOCAL_FOLDER, build_run_request, command_line_policy
from evaluators.service.run_settings import SETTING_NAMES


def run_request(args: argparse.Namespace) -> RunRequest:
    if not args.benchmark:
        raise ToolboardError("run needs BENCHMARK, --base-url and --model (or --model local:smollm2, "
                             "or --resume/--rerun-errors RUN_ID)")
    return build_run_request(raw_run(args), command_line_policy())


def raw_run(args: argparse.Namespace) -> dict[str, Any]:
    """The flags by the builder's names (RunSettings); numbers stay as typed, so a bad one is refused in the
    same words as in the form."""
    benchmark = get_benchmark(args.benchmark)
    tested = Endpoint(args.base_url or "", args.model or "", args.api_key_env or "")
    raw = {name: getattr(args, setting_dest(name)) for name in SETTING_NAMES if name not in SETTINGS_ADDED_APART}
    raw["data_folder"] = str(args.data_dir or "")
    if args.data_dir and not args.data_source:
        raw["data_source"] = LOCAL_FOLDER
    raw["use_cache"] = not args.no_cache
    return {**raw, "benchmark": benchmark.name, "roles": raw_roles(args, tested), "options": raw_options(args, benchmark)}
