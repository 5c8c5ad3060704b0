"""score(sample, prediction, mode) -> SampleScore: what the model did on one dialogue, as the flags the
per-tool counts are built from (spec §7). Pure: the judge's verdict is read from the prediction."""

from __future__ import annotations

import json
import re
from typing import Any

from evaluators.benchmarks.stepeval_audio.extract import ExtractedCall, extract_call
from evaluators.benchmarks.stepeval_audio.judge import EXACT_METHOD, needs_judge
from evaluators.benchmarks.stepeval_audio.tools import NO_PARAMETER_TOOLS
from evaluators.core.types import Prediction, Sample, SampleScore

_SPACES = re.compile(r"\s+")


def normalised_value(value: Any) -> str:
    """Exact-match form of an argument value: as text, stripped, lower-cased, all whitespace removed."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return _SPACES.sub("", text.strip().lower())


def exact_arguments_match(predicted: dict[str, Any] | None, gold: dict[str, Any]) -> bool:
    """The deterministic fallback: same argument names, each value equal after normalisation."""
    if predicted is None or set(predicted) != set(gold):
        return False
    return all(normalised_value(predicted[key]) == normalised_value(gold[key]) for key in gold)


def parameter_verdict(sample: Sample, prediction: Prediction, call: ExtractedCall) -> dict[str, Any]:
    """Whether a right-tool call's arguments are reasonable: the judge's verdict kept on the prediction
    when it is about this very call, else exact match."""
    if call.arguments is None:
        # No method needed (nor judge asked): unreadable arguments are never reasonable.
        return {"ok": False, "method": None, "reason": "arguments are not a JSON object"}
    verdict = (prediction.extra or {}).get("judge")
    if (
        isinstance(verdict, dict) and needs_judge(sample, call)
        and verdict.get("call") == {"name": call.name, "arguments": call.arguments}
    ):
        return {"ok": bool(verdict.get("reasonable")), "method": str(verdict.get("method")), "reason": str(verdict.get("reason", "")),
                "label": verdict.get("label")}
    ok = exact_arguments_match(call.arguments, sample.gold["call"]["arguments"])
    return {"ok": ok, "method": EXACT_METHOD, "reason": "arguments equal the gold" if ok else "arguments differ from the gold"}


def _positive(sample: Sample, prediction: Prediction | None, call: ExtractedCall | None) -> tuple[dict[str, float], str | None, dict[str, Any] | None]:
    """Flags: called (any tool), right_tool (among called), param_ok (among right tool, tools with arguments)."""
    flags = {"positive": 1.0, "called": float(call is not None)}
    if call is None or prediction is None:  # a call is only read from a prediction
        return flags, "missed_call", None
    flags["right_tool"] = float(call.name == sample.subset)
    if call.name != sample.subset:
        return flags, "wrong_tool", None
    if sample.subset in NO_PARAMETER_TOOLS:
        return flags, None, None
    verdict = parameter_verdict(sample, prediction, call)
    flags["param_ok"] = float(verdict["ok"])
    return flags, None if verdict["ok"] else "wrong_arguments", verdict


def _negative(sample: Sample, call: ExtractedCall | None) -> tuple[dict[str, float], str | None]:
    """Flags: called (any tool; FP_any) and called_target (this tool; FP). [assumed] Another tool is no FP."""
    called_target = call is not None and call.name == sample.subset
    flags = {"positive": 0.0, "called": float(call is not None), "called_target": float(called_target)}
    return flags, "false_trigger" if called_target else None


def score(sample: Sample, prediction: Prediction | None, mode: str = "official") -> SampleScore:
    """Both modes score alike: the reconstruction has no checker quirks to fix."""
    call = extract_call(prediction)
    verdict = None
    if sample.input["polarity"] == "positive":
        flags, kind, verdict = _positive(sample, prediction, call)
    else:
        flags, kind = _negative(sample, call)
    if prediction is None:
        kind = "missing_prediction"
    elif prediction.error is not None:
        kind = "request_error"
    evidence = {
        "polarity": sample.input["polarity"],
        "call": call.to_dict() if call else None,
        "gold": sample.gold["call"],
        "param": verdict,
        "modality": (prediction.extra or {}).get("modality") if prediction else None,
    }
    return SampleScore(
        sample.id, sample.subset, correct=kind is None, error_type=kind, rule=None,
        detail=f"called {call.name}" if call else "no tool call", decoded=evidence, metrics=flags,
    )
