"""The benchmark's `build_request`: a single-turn item's request (prompts.py), a format sensitivity item's
(format_sensitivity/prompts.py), or a multi-turn item's first request (multi_turn/requests.py; the rollout builds the
later ones from the answers and execution results)."""

from __future__ import annotations

from evaluators.benchmarks.bfcl.categories import is_format_sensitivity, is_multi_turn
from evaluators.benchmarks.bfcl.format_sensitivity.prompts import build_request as build_format_sensitivity_request
from evaluators.benchmarks.bfcl.multi_turn.requests import multi_turn_texts, official_turn_messages, step_request
from evaluators.benchmarks.bfcl.prompts import build_request as build_single_turn_request
from evaluators.core.types import ChatRequest, Sample


def build_request(sample: Sample, mode: str = "prompt", language: str | None = None,
                  prompt_style: str | None = None) -> ChatRequest:
    """See prompts.build_request; multi-turn and format sensitivity items are sent in prompt mode only."""
    if is_format_sensitivity(sample.subset):
        return build_format_sensitivity_request(sample, mode)
    if not is_multi_turn(sample.subset):
        return build_single_turn_request(sample, mode, language, prompt_style)
    if mode != "prompt":
        raise ValueError(f"multi-turn items are sent in prompt mode only, not {mode!r}")
    return step_request(official_turn_messages(sample, 0, multi_turn_texts()))
