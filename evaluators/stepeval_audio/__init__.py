"""StepEval-Audio-Toolcall: when to call which of four tools in spoken Chinese dialogues, scored per
tool by trigger precision / recall, type accuracy and (judged) parameter accuracy."""

from evaluators.core.registry import Benchmark, register
from evaluators.stepeval_audio.checker import score
from evaluators.stepeval_audio.data import DATA_VERSION, load
from evaluators.stepeval_audio.judge import judge_uploaded_predictions
from evaluators.stepeval_audio.predictions import match_predictions, read_predictions
from evaluators.stepeval_audio.prompts import DEFAULT_DATE, MODALITIES, build_request
from evaluators.stepeval_audio.report import COUNTS, METRICS, summarize
from evaluators.stepeval_audio.solve import solve
from evaluators.stepeval_audio.tools import TOOLS

# The spec's [assumed] choices, in one place (see docs/stepeval-audio-scoring.md).
ASSUMPTIONS = {
    "false_positive": "FP counts negatives that call the scored tool; calls to another tool are only in FP_any",
    "offered_tools": "all four tools plus calculate on every sample; `search` is accepted as web_search",
    "extraction": "native tool_calls, then <tool_call>function/NAME/{json}, then Hermes JSON; the first call counts",
    "system_prompt_date": DEFAULT_DATE,
    "param_fallback": "exact match of argument values after strip, lower-case and whitespace removal",
}

BENCHMARK = register(
    Benchmark(
        name="stepeval_audio",
        title="StepEval-Audio-Toolcall",
        subsets=TOOLS,
        groups={"all": TOOLS},
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
        description="StepEval-Audio-Toolcall (Step-Audio 2, arXiv 2507.16632): tool triggering, type and parameters, text or audio.",
        extra={
            "data_version": DATA_VERSION,
            "count_metrics": COUNTS,
            "modalities": MODALITIES,
            "judge_predictions": judge_uploaded_predictions,
            "assumptions": ASSUMPTIONS,
        },
    )
)
