"""The other models a command line may name besides the tested one: the parameter judge
(--judge-*) and the simulated user (--user-*), each refused for a benchmark that has no use for it."""

from __future__ import annotations

import argparse

from evaluators.core.errors import ToolboardError
from evaluators.core.registry import Benchmark
from evaluators.engine.settings import JudgeSettings, UserSimulatorSettings


def judge_settings(args: argparse.Namespace, benchmark: Benchmark) -> JudgeSettings | None:
    """The judge asked for with --judge-base-url/--judge-model, refused for benchmarks without one."""
    if not args.judge_base_url and not args.judge_model:
        return None
    if not (args.judge_base_url and args.judge_model):
        raise ToolboardError("--judge-base-url and --judge-model go together")
    if "judge_predictions" not in benchmark.extra:
        raise ToolboardError(f"{benchmark.name} has no parameter judge; drop the --judge-* options")
    return JudgeSettings(base_url=args.judge_base_url, model=args.judge_model, api_key_env=args.judge_api_key_env)


def user_simulator_settings(args: argparse.Namespace, benchmark: Benchmark, base_url: str, model: str,
                            api_key_env: str) -> UserSimulatorSettings | None:
    """--user-base-url/--user-model/--user-api-key-env, each defaulting to the tested model's (`base_url`,
    `model`, `api_key_env`); None when they name the tested model itself (it then plays the user
    through the same client)."""
    given = (args.user_base_url, args.user_model, args.user_api_key_env)
    if not any(given):
        return None
    if not benchmark.extra.get("user_simulator"):
        raise ToolboardError(f"{benchmark.name} has no simulated user; drop the --user-* options")
    user = UserSimulatorSettings(base_url=given[0] or base_url, model=given[1] or model, api_key_env=given[2] or api_key_env)
    same = (user.base_url, user.model, user.api_key_env) == (base_url, model, api_key_env)
    return None if same else user
