"""ACEBench: 17 categories of tool use (normal, special, agent) in English and Chinese."""

from evaluators.acebench import categories
from evaluators.acebench.checker import score
from evaluators.acebench.data import DATA_VERSION, load
from evaluators.acebench.predictions import match_predictions, read_predictions
from evaluators.acebench.prompts import build_request
from evaluators.acebench.report import summarize
from evaluators.acebench.request_profile import request_profile
from evaluators.acebench.solve import can_solve, solve
from evaluators.core.registry import Benchmark, register

BENCHMARK = register(
    Benchmark(
        name="acebench",
        title="ACEBench",
        subsets=categories.CATEGORIES,
        groups=categories.GROUPS,
        metrics=("accuracy", "process_accuracy"),
        summary_metrics=("normal", "special", "agent", "overall", "atom", "single", "multi", "api", "pref"),
        languages=categories.LANGUAGES,
        load=load,
        read_predictions=read_predictions,
        match_predictions=match_predictions,
        score=score,
        report=summarize,
        build_request=build_request,
        solve=solve,
        can_solve=can_solve,
        request_profile=request_profile,
        description="ACEBench (arXiv 2501.12851): normal, special and agent tool use, en and zh.",
        # user_simulator: agent_multi_turn rollouts need a simulated user's chat client (see engine/runner.py).
        extra={"data_version": DATA_VERSION, "user_simulator": True},
    )
)
