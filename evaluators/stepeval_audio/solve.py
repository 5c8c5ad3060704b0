"""solve(sample, chat, request_mode): one chat call for the dialogue's final turn, then (when a judge
is configured) the parameter judge, so that scoring stays pure. Modality and judge come from the
client's settings (ModelSettings.modality / .judge)."""

from __future__ import annotations

import asyncio
from typing import Any

from evaluators.core.types import Prediction, Sample
from evaluators.engine.client import calls_with_benchmark_names
from evaluators.stepeval_audio.audio import audio_root
from evaluators.stepeval_audio.judge import judge_prediction
from evaluators.stepeval_audio.prompts import build_request


async def solve(sample: Sample, chat: Any, request_mode: str = "prompt", judge_chat: Any = None) -> Prediction:
    """`judge_chat`: the run's client for the judge (ModelSettings.judge), when one is configured."""
    settings = getattr(chat, "settings", None)
    modality = getattr(settings, "modality", "text")
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
    judge = getattr(settings, "judge", None)
    if judge is not None:
        verdict = await judge_prediction(sample, prediction, judge, judge_chat, like=chat)
        if verdict is not None:
            prediction.extra = {**(prediction.extra or {}), "judge": verdict}
    return prediction
