"""solve(sample, chat, request_mode): one chat call for normal and special items."""

from __future__ import annotations

from typing import Any

from evaluators.acebench.categories import is_agent
from evaluators.acebench.prompts import build_request
from evaluators.core.types import Prediction, Sample
from evaluators.engine.client import calls_with_benchmark_names


def can_solve(subset: str) -> bool:
    """Agent categories need multi-turn rollouts, which are not built yet."""
    return not is_agent(subset)


async def solve(sample: Sample, chat: Any, request_mode: str = "prompt") -> Prediction:
    request = build_request(sample, mode=request_mode)
    result = await chat.complete(request)
    tool_calls = calls_with_benchmark_names(result, request)
    return Prediction(sample.id, output=result.text, tool_calls=tool_calls, latency=result.latency, usage=result.usage)
