"""solve(sample, clients, options): one chat call per decision step."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaluators.benchmarks.toolbench_static.parse import ACTION, tool_call_as_text
from evaluators.benchmarks.toolbench_static.prompts import build_request
from evaluators.core.types import Prediction, Sample
from evaluators.engine.client import calls_with_benchmark_names


async def solve(sample: Sample, clients: Mapping[str, Any], options: Mapping[str, Any]) -> Prediction:
    request = build_request(sample, mode=options.get("request_mode", "prompt"))
    result = await clients["model"].complete(request)
    calls = calls_with_benchmark_names(result, request)
    text = result.text or ""
    if calls and ACTION not in text:
        # Tools mode: the returned call is written as the Action / Action Input it stands for.
        text = (text + "\n" if text else "") + tool_call_as_text(calls[0].name, calls[0].arguments)
    return Prediction(sample.id, output=text, tool_calls=calls, latency=result.latency, usage=result.usage)
