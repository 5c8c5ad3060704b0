"""solve(sample, clients, options): one chat call for the dialogue's final turn, then (when the run
gave the judge role to a model) the parameter judge, so that scoring stays pure. `options["modality"]`
says whether user turns go as transcripts or audio."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from evaluators.benchmarks.stepeval_audio.audio import audio_root
from evaluators.benchmarks.stepeval_audio.judge import JUDGE_ROLE, judge_prediction
from evaluators.benchmarks.stepeval_audio.prompts import build_request
from evaluators.core.types import Prediction, Sample
from evaluators.engine.client import calls_with_benchmark_names


async def solve(sample: Sample, clients: Mapping[str, Any], options: Mapping[str, Any]) -> Prediction:
    chat = clients["model"]
    request_mode = options.get("request_mode", "prompt")
    modality = options.get("modality", "text")
    if modality == "audio":
        # Fetching/unpacking the wavs and reading them are blocking: done off the event loop.
        root = await asyncio.to_thread(audio_root, sample.meta)
        request = await asyncio.to_thread(build_request, sample, request_mode, None, modality=modality, audio_root=root)
    else:
        request = build_request(sample, request_mode, modality=modality)
    result = await chat.complete(request)
    prediction = Prediction(
        sample.id, output=result.text, tool_calls=calls_with_benchmark_names(result, request),
        latency=result.latency, usage=result.usage, extra={"modality": modality},
    )
    judge = clients.get(JUDGE_ROLE.name)
    if judge is not None:
        verdict = await judge_prediction(sample, prediction, judge)
        if verdict is not None:
            prediction.extra = {**(prediction.extra or {}), "judge": verdict}
    return prediction
