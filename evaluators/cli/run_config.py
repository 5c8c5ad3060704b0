"""`run`'s flags -> a checked RunConfig (the engine takes it from here and never sees the flags)."""

from __future__ import annotations

import argparse

from evaluators.cli.roles import chosen_options, chosen_roles
from evaluators.core.errors import ToolboardError
from evaluators.core.registry import get_benchmark
from evaluators.core.selection import resolve_language
from evaluators.engine.local_model import is_local, local_model
from evaluators.engine.settings import Endpoint, ModelSettings, RunConfig, check_run_settings


def run_config(args: argparse.Namespace) -> RunConfig:
    base_url, model, api_key_env, max_tokens = args.base_url, args.model, args.api_key_env, args.max_tokens
    timeout = args.timeout
    if model and is_local(model):
        # The built-in local model: its server is ours, so there is no URL or key to give.
        if base_url and base_url != model:
            raise ToolboardError(f"--model {model} runs the built-in local model; drop --base-url")
        chosen = local_model(model)
        base_url, model, api_key_env = model, chosen.name, ""
        max_tokens = max_tokens or chosen.max_tokens
        timeout = max(timeout, chosen.timeout)  # its one-at-a-time server makes a request wait for those ahead
    if not args.benchmark or not base_url or not model:
        raise ToolboardError("run needs BENCHMARK, --base-url and --model (or --model local:smollm2, "
                             "or --resume/--rerun-errors RUN_ID)")
    benchmark = get_benchmark(args.benchmark)
    language = resolve_language(benchmark, args.language)
    if not isinstance(args.extra_body, dict):
        raise ToolboardError("--extra-body must be a JSON object")
    settings = ModelSettings(
        base_url=base_url, model=model, api_key_env=api_key_env, request_mode=args.request_mode,
        temperature=args.temperature, max_tokens=max_tokens, timeout=timeout, extra_body=args.extra_body,
        top_p=args.top_p, prompt_style=args.prompt_style,
    )
    return check_run_settings(RunConfig(
        benchmark=benchmark.name, model=settings, language=language, subsets=tuple(args.subset or ()), limit=args.limit,
        data_dir=str(args.data_dir) if args.data_dir else None, concurrency=args.concurrency,
        use_cache=not args.no_cache, max_attempts=args.max_attempts,
        roles=chosen_roles(args, benchmark, Endpoint(base_url, model, api_key_env)),
        options=chosen_options(args, benchmark),
    ))
