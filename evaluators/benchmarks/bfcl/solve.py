"""solve(sample, clients, options): one chat call per item; and the run's request profile (BFCL has the
official requests only, in both request modes)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaluators.benchmarks.bfcl.data import DATA_VERSION
from evaluators.benchmarks.bfcl.official_source import SOURCE_NOTE, official_prompt
from evaluators.benchmarks.bfcl.prompts import OFFICIAL_SAMPLING, build_request
from evaluators.core.errors import ToolboardError
from evaluators.core.hooks import RunSettings
from evaluators.core.types import Prediction, RequestProfile, Sample
from evaluators.engine.client import calls_with_benchmark_names

OFFICIAL_STYLE = "official"
TOOLS_MODE_DIFFERENCE = (
    "native tools mode follows the official FC handler for OpenAI-compatible endpoints (tools converted by "
    "convert_to_tool, names with '.' sent with '_' and mapped back); the parity of requests and scores is "
    "established for prompt mode"
)


async def solve(sample: Sample, clients: Mapping[str, Any], options: Mapping[str, Any]) -> Prediction:
    request = build_request(sample, mode=options.get("request_mode", "prompt"))
    result = await clients["model"].complete(request)
    tool_calls = calls_with_benchmark_names(result, request)
    return Prediction(sample.id, output=result.text, tool_calls=tool_calls, latency=result.latency, usage=result.usage)


def request_profile(config: RunSettings) -> RequestProfile:
    """The official requests (texts read from the pinned wheel, which is fetched here once if needed, so
    a missing wheel is one clear error before any request) and the official temperature unless set."""
    model = config.model
    if model.prompt_style not in (None, OFFICIAL_STYLE):
        raise ToolboardError("bfcl sends the official requests only (texts read from the pinned bfcl-eval wheel); "
                             "drop --prompt-style or choose official")
    official_prompt()
    tools = model.request_mode == "tools"
    return RequestProfile(
        prompt_style=OFFICIAL_STYLE,
        source=f"{SOURCE_NOTE} ({DATA_VERSION})",
        sampling={"single_turn": model.sampling_for(OFFICIAL_SAMPLING)},
        differences=(TOOLS_MODE_DIFFERENCE,) if tools else (),
    )
