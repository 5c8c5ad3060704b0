"""score(sample, prediction, mode) -> SampleScore with the step's metrics and its evidence."""

from __future__ import annotations

from functools import lru_cache

from evaluators.benchmarks.toolbench_static.metrics import official_skip_reason, step_metrics
from evaluators.benchmarks.toolbench_static.parse import ACTION, Step, parse_step, tool_call_as_text
from evaluators.core.types import Prediction, Sample, SampleScore


def official_native_tool_calls_ignored(prediction: Prediction) -> str:
    """The reference scores the text content only; native tool calls count for nothing."""
    return prediction.output or ""


def strict_native_tool_calls_are_actions(prediction: Prediction) -> str:
    """When the text names no action, the first native tool call is read as the step's action."""
    text = prediction.output or ""
    if ACTION not in text and prediction.tool_calls:
        call = prediction.tool_calls[0]
        return text + "\n" + tool_call_as_text(call.name, call.arguments)
    return text


def _error_type(reference: Step, predicted: Step, metrics: dict[str, float]) -> str | None:
    if metrics.get("hallu_rate"):
        return "hallucinated_tool"
    if metrics["plan_em"] == 0.0:
        return "wrong_plan"
    if metrics.get("act_em") == 0.0:
        return "wrong_action"
    if "act_em" in metrics and metrics.get("f1", 1.0) < 1.0:
        return "wrong_arguments"
    if "rouge_l" in metrics and metrics["rouge_l"] < 1.0:
        return "different_answer"
    return None


@lru_cache(maxsize=4096)
def _reference_step(gold: str) -> Step:
    """The reference step, parsed once for both scoring modes (a run scores each sample in each); never changed."""
    return parse_step(gold)


def score(sample: Sample, prediction: Prediction | None, mode: str = "official") -> SampleScore:
    strict = mode == "strict"
    if prediction is None or prediction.error is not None:
        text = ""
        error_type = "missing_prediction" if prediction is None else "request_error"
    else:
        text = strict_native_tool_calls_are_actions(prediction) if strict else official_native_tool_calls_ignored(prediction)
        error_type = None
    reference = _reference_step(sample.gold) if isinstance(sample.gold, str) else parse_step(sample.gold)
    predicted = parse_step(text, strict=strict)
    tool_names = {tool["name"] for tool in sample.input["tools"]}
    # Shallow copies: the evidence is only written out (dataclasses.asdict would deep-copy every parsed input).
    evidence = {"prediction": dict(vars(predicted)), "reference": dict(vars(reference))}
    skip = official_skip_reason(reference, predicted, tool_names, strict)
    if skip is not None:
        return SampleScore(sample.id, sample.subset, correct=False, error_type="skipped", rule="official_skip_reason",
                           detail=skip, decoded=evidence, metrics={})
    metrics = step_metrics(reference, predicted, tool_names)
    kind = _error_type(reference, predicted, metrics)
    return SampleScore(
        sample.id, sample.subset, correct=error_type is None and kind is None, error_type=error_type or kind,
        rule=None, detail="", decoded=evidence, metrics=metrics,
    )
