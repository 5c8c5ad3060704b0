"""solve(sample, clients, options): one chat call for normal and special items, a rollout for agent items."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaluators.benchmarks.acebench.categories import is_agent
from evaluators.benchmarks.acebench.prompts import build_request
from evaluators.core.types import Prediction, Sample
from evaluators.engine.client import calls_with_benchmark_names


async def solve(sample: Sample, clients: Mapping[str, Any], options: Mapping[str, Any]) -> Prediction:
    """Agent items always use the text protocol; `clients["user"]` plays the simulated user of
    agent_multi_turn (the model under test unless the run gave the role to another model).
    `options["prompt_style"]`: official or toolboard."""
    chat = clients["model"]
    prompt_style = options.get("prompt_style", "toolboard")
    if is_agent(sample.subset):
        from evaluators.benchmarks.acebench.agent.rollout import run_multi_step, run_multi_turn

        if sample.subset == "agent_multi_step":
            return await run_multi_step(sample, chat, prompt_style)
        return await run_multi_turn(sample, chat, clients.get("user", chat), prompt_style)
    request = build_request(sample, mode=options.get("request_mode", "prompt"), prompt_style=prompt_style)
    result = await chat.complete(request)
    tool_calls = calls_with_benchmark_names(result, request)
    return Prediction(sample.id, output=result.text, tool_calls=tool_calls, latency=result.latency, usage=result.usage)
