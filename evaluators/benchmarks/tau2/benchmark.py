"""τ²-bench (text track): customer-service agents that follow a domain policy, talk with a simulated user and act
through the domain's tools (airline, retail, telecom, where the user acts on their own phone too), scored as the
official evaluator scores each trajectory (the databases' end state, the actions taken, what was said, the
environment's assertions, assertions judged by an LLM) and reported as pass^k over several trials per task."""

from __future__ import annotations

from evaluators.benchmarks.tau2 import board, report, rollout, run_rules, samples, uploads
from evaluators.benchmarks.tau2.about import ABOUT
from evaluators.benchmarks.tau2.judged_uploads import prepare_uploaded
from evaluators.benchmarks.tau2.source import COMMIT
from evaluators.core.registry import Benchmark

BENCHMARK = Benchmark(
    name=board.BENCHMARK_NAME,
    title="τ²-bench",
    description="τ²-bench (text): policy-following agents with a simulated user in airline, retail and telecom "
                "customer service; pass^k over trials, scored as the official evaluator",
    about=ABOUT,
    subsets=board.DOMAINS,
    groups={},
    metrics=board.METRICS,
    summary_metrics=board.SUMMARY_METRICS,
    languages=(None,),
    data_version=f"tau2-bench@{COMMIT[:7]}",
    load=samples.load,
    read_predictions=uploads.read_predictions,
    match_predictions=uploads.match_predictions,
    score=report.score,
    report=report.summarize,
    solve=rollout.solve,
    expected_requests=rollout.expected_requests,
    request_profile=run_rules.request_profile,
    run_problem=run_rules.run_problem,
    prompt_styles=("official",),
    request_modes=("tools",),
    roles=run_rules.ROLES,
    options=run_rules.OPTIONS,
    prepare_uploaded=prepare_uploaded,
    layout=board.LAYOUT,
    overview=board.OVERVIEW,
    hub=board.HUB,
    evidence=board.EVIDENCE,
    titles=board.TITLES,
    subset_of_id=samples.subset_of_id,
    subset_of_document=uploads.subset_of_upload,
    unranked_reasons=run_rules.unranked_reasons,
)
