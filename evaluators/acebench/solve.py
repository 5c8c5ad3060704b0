"""solve(sample, chat, request_mode): one chat call for normal and special items, a rollout for agent items."""

from __future__ import annotations

from typing import Any

from evaluators.acebench.categories import is_agent
from evaluators.acebench.prompts import build_request
from evaluators.core.types import Prediction, Sample
from evaluators.engine.client import calls_with_benchmark_names


def can_solve(subset: str) -> bool:
    """Every category runs against an endpoint (agent ones as rollouts)."""
    return True


async def solve(sample: Sample, chat: Any, request_mode: str = "prompt", user_chat: Any = None,
                prompt_style: str = "toolboard") -> Prediction:
    """Agent items always use the text protocol; `user_chat` plays the simulated user of
    agent_multi_turn (default: the model under test). `prompt_style`: official or toolboard."""
    if is_agent(sample.subset):
        from evaluators.acebench.agent.rollout import run_multi_step, run_multi_turn

        if sample.subset == "agent_multi_step":
            return await run_multi_step(sample, chat, prompt_style)
        return await run_multi_turn(sample, chat, user_chat or chat, prompt_style)
    request = build_request(sample, mode=request_mode, prompt_style=prompt_style)
    result = await chat.complete(request)
    tool_calls = calls_with_benchmark_names(result, request)
    return Prediction(sample.id, output=result.text, tool_calls=tool_calls, latency=result.latency, usage=result.usage)
