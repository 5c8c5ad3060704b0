"""ToolBench-Static: single decision steps of ToolBench dialogues, scored as EvalScope 1.14.1 does."""

from evaluators.core.registry import Benchmark, register
from evaluators.toolbench_static.checker import score
from evaluators.toolbench_static.data import DATA_VERSION, SUBSETS, load
from evaluators.toolbench_static.predictions import match_predictions, read_predictions
from evaluators.toolbench_static.prompts import build_request
from evaluators.toolbench_static.report import METRICS, summarize
from evaluators.toolbench_static.solve import solve

BENCHMARK = register(
    Benchmark(
        name="toolbench_static",
        title="ToolBench-Static",
        subsets=SUBSETS,
        groups={"all": SUBSETS},
        metrics=METRICS,
        summary_metrics=METRICS,
        languages=(None,),
        load=load,
        read_predictions=read_predictions,
        match_predictions=match_predictions,
        score=score,
        report=summarize,
        build_request=build_request,
        solve=solve,
        description="ToolBench-Static (alpha-UMi, arXiv 2401.07324): in_domain / out_of_domain decision steps.",
        extra={"data_version": DATA_VERSION},
    )
)
