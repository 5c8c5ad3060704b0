"""StepEval-Audio-Toolcall declared for the registry: what it is, its tools, metrics, table, the
parameter judge role and the modality option."""

from evaluators.benchmarks.stepeval_audio.board import LAYOUT
from evaluators.benchmarks.stepeval_audio.checker import score
from evaluators.benchmarks.stepeval_audio.data import DATA_VERSION, load
from evaluators.benchmarks.stepeval_audio.judge import JUDGE_ROLE, judge_uploaded_predictions
from evaluators.benchmarks.stepeval_audio.predictions import match_predictions, read_predictions, tool_of_id
from evaluators.benchmarks.stepeval_audio.prompts import MODALITIES, build_request
from evaluators.benchmarks.stepeval_audio.report import summarize
from evaluators.benchmarks.stepeval_audio.solve import solve
from evaluators.benchmarks.stepeval_audio.tools import TOOLS
from evaluators.core.declarations import About, EvidenceKind, Metric, Option, Overview
from evaluators.core.registry import Benchmark

METRICS = (
    Metric("precision", "Precision", "right calls over right calls plus negatives that called this tool", share_of_items=False),
    Metric("recall", "Recall", "positives where the model called anything", share_of_items=False),
    Metric("type_accuracy", "Type acc.", "the right tool among triggered positives", share_of_items=False),
    Metric("param_accuracy", "Param acc.", "arguments judged reasonable (judge or exact match)", share_of_items=False),
)
# What a person reads for each tool and view.
TITLES = {"timbre_rag": "Timbre (voice) search", "get_date_time": "Date and time", "get_weather": "Weather",
          "web_search": "Web search", "macro": "Macro mean (4 tools)", "all": "All tools"}
COUNT_METRICS = tuple(Metric(name, name, kind="count") for name in ("TP", "FN", "FP", "FP_any"))

BENCHMARK = Benchmark(
    name="stepeval_audio",
    title="StepEval-Audio-Toolcall",
    description="StepEval-Audio-Toolcall (Step-Audio 2, arXiv 2507.16632): tool triggering, type and parameters, "
                "text or audio.",
    about=About(
        measures=(
            "spoken multi-turn dialogues where the model must decide whether to call one of four tools (audio "
            "search `timbre_rag`, `get_date_time`, `get_weather`, `web_search`), with text transcripts or audio "
            "input. Per tool: **recall** = positives where the model called anything; **precision** = right calls "
            "over right calls plus negatives that called this tool; **type accuracy** = the right tool among "
            "triggered positives; **parameter accuracy** = arguments judged reasonable (by an LLM judge you "
            "configure, or exact match: the report's `param_method` says which); the counts behind each number "
            "are in the report."
        ),
        paper="Step-Audio 2, arXiv 2507.16632",
        paper_url="https://arxiv.org/abs/2507.16632",
        source_url="https://huggingface.co/datasets/stepfun-ai/StepEval-Audio-Toolcall",
        data="the `stepfun-ai/StepEval-Audio-Toolcall` dataset on the Hub",
        licence="see the dataset card",
        citation="StepFun, Step-Audio 2, arXiv 2507.16632",
        published="the Step-Audio 2 paper",
    ),
    subsets=TOOLS,
    groups={"all": TOOLS},
    metrics=(*METRICS, *COUNT_METRICS),
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
    roles=(JUDGE_ROLE,),
    options=(Option("modality", MODALITIES, "text", "user turns as transcripts (text) or as audio"),),
    prepare_uploaded=judge_uploaded_predictions,
    evidence=(EvidenceKind("judge", "Judge", "json", description="the parameter judge's verdict on the call, and why"),
              EvidenceKind("modality", "Input modality", "text", description="user turns sent as text or audio")),
    layout=LAYOUT,
    titles=TITLES,
    subset_of_id=tool_of_id,
    # Triggering is what the other benchmarks do not measure; precision, the table's ranking column,
    # enters the aggregate.
    overview=Overview("macro", ("precision", "recall"), "precision",
                      why="the macro mean over the four tools (computed here from the published per-tool rows)"),
)
