"""ToolBench-Static declared for the registry: what it is, its subsets, metrics and table."""

from evaluators.benchmarks.toolbench_static.checker import score
from evaluators.benchmarks.toolbench_static.data import DATA_VERSION, SUBSETS, load
from evaluators.benchmarks.toolbench_static.predictions import match_predictions, read_predictions
from evaluators.benchmarks.toolbench_static.prompts import build_request
from evaluators.benchmarks.toolbench_static.report import summarize
from evaluators.benchmarks.toolbench_static.solve import solve
from evaluators.core.board_layout import BoardLayout
from evaluators.core.declarations import About, Metric, Overview
from evaluators.core.registry import Benchmark

METRICS = (
    Metric("act_em", "Act.EM", "the tool name is right"),
    Metric("plan_em", "Plan.EM", "the step's plan (call a tool, give up, or finish) is right"),
    Metric("f1", "F1", "F1 over argument key/value pairs", share_of_items=False),
    Metric("easy_f1", "Easy F1", "F1 on steps with one gold argument set", share_of_items=False),
    Metric("hard_f1", "Hard F1", "F1 on the other steps", share_of_items=False),
    Metric("hallu_rate", "HalluRate", "share of calls to tools that do not exist", higher_is_better=False,
           share_of_items=False),
    Metric("rouge_l", "Rouge-L", "Rouge-L of the final answer", share_of_items=False),
)

# What a person reads for each subset and view.
TITLES = {"in_domain": "In-domain", "out_of_domain": "Out-of-domain", "all": "Both splits"}

BENCHMARK = Benchmark(
    name="toolbench_static",
    title="ToolBench-Static",
    description="ToolBench-Static (alpha-UMi, arXiv 2401.07324): in-domain / out-of-domain decision steps.",
    about=About(
        measures=(
            "single decision steps from ToolBench dialogues, in-domain and out-of-domain. **Plan.EM**: the step's "
            "plan (call a tool, give up, or finish) is right. **Act.EM**: the tool name is right. **F1** (Easy F1, "
            "Hard F1): F1 over argument key/value pairs. **HalluRate**: share of calls to tools that do not exist "
            "(lower is better). **Rouge-L**: Rouge-L of the final answer. Scored as EvalScope 1.14.1 scores it."
        ),
        paper="alpha-UMi, arXiv 2401.07324",
        paper_url="https://arxiv.org/abs/2401.07324",
        source_url="https://huggingface.co/datasets/Sandyyy/ToolBench-Static",
        data="the `Sandyyy/ToolBench-Static` dataset on the Hugging Face Hub, derived from ToolBench",
        licence="Apache-2.0 (ToolBench); check the dataset card",
        citation="Shen et al., alpha-UMi, arXiv 2401.07324; Qin et al., ToolBench, arXiv 2307.16789",
        strict_fixes="reasoning blocks and native tool calls read",
        published="the alpha-UMi paper",
    ),
    subsets=SUBSETS,
    groups={"all": SUBSETS},
    metrics=METRICS,
    summary_metrics=METRICS,
    languages=(None,),
    data_version=DATA_VERSION,
    load=load,
    read_predictions=read_predictions,
    match_predictions=match_predictions,
    score=score,
    report=summarize,
    build_request=build_request,
    solve=solve,
    titles=TITLES,
    layout=BoardLayout(
        view_label="Subset", views=("in_domain", "out_of_domain", "all"),
        columns=("act_em", "plan_em", "f1", "hallu_rate", "rouge_l"), detail_columns=("easy_f1", "hard_f1"),
    ),
    # The published table has in_domain and out_of_domain rows only (our `all` pools both, which it
    # cannot be compared with); in_domain is the table's first view and the larger split. act_em, the
    # table's ranking column, enters the aggregate.
    overview=Overview("in_domain", ("act_em", "f1"), "act_em",
                      why="the in-domain split: the published table prints no pooled row, and in-domain is the "
                          "larger split"),
)
