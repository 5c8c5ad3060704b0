"""score(sample, prediction, mode) -> SampleScore for every ACEBench category."""

from __future__ import annotations

from typing import Any

from evaluators.benchmarks.acebench.agent_checker import check_end_state, official_process_score
from evaluators.benchmarks.acebench.categories import is_agent, is_multi_turn, is_special
from evaluators.benchmarks.acebench.decode import DecodeError, decode_text, decode_tool_calls
from evaluators.benchmarks.acebench.evidence import PROCESS_SCORE, end_state_of, process_of
from evaluators.benchmarks.acebench.normal_checker import Verdict, check_calls, fail
from evaluators.benchmarks.acebench.special_checker import SPECIAL_CHECKS
from evaluators.core.types import Prediction, Sample, SampleScore


def official_checker_crash_counts_as_failure(exc: Exception) -> Verdict:
    """Where the reference checker raises (and so aborts its whole run), the item scores 0."""
    return fail("checker_crash", "official_checker_crash_counts_as_failure", f"{type(exc).__name__}: {exc}")


def strict_huge_number_is_a_wrong_value(exc: OverflowError) -> Verdict:
    """An int past float range (`10 ** 5000` decodes, as the reference computes it) cannot be compared
    with a number; no gold is that large, so it is a wrong value rather than a crash."""
    return fail("wrong_value", "strict_huge_number_is_a_wrong_value", f"a number too large to compare: {exc}")


def _score(sample: Sample, verdict: Verdict, decoded: Any = None, process_score: float | None = None) -> SampleScore:
    """The verdict; an agent item's process score is its per-sample metric."""
    return SampleScore(
        sample_id=sample.id,
        subset=sample.subset,
        correct=verdict.valid,
        error_type=verdict.error_type,
        rule=verdict.rule,
        detail=verdict.detail,
        decoded=decoded,
        metrics=None if process_score is None else {PROCESS_SCORE: process_score},
    )


def _missing(prediction: Prediction | None) -> Verdict | None:
    if prediction is None:
        return fail("missing_prediction", "missing_prediction", "no prediction for this sample")
    if prediction.error is not None:
        return fail("request_error", "request_error", prediction.error)
    return None


def _score_normal(sample: Sample, prediction: Prediction, strict: bool) -> SampleScore:
    try:
        if prediction.tool_calls:
            decoded = decode_tool_calls(prediction.tool_calls)
        else:
            decoded = decode_text(prediction.output, multi_turn=is_multi_turn(sample.subset), strict=strict)
    except DecodeError as exc:
        return _score(sample, fail("format_error", "wrong_output_format", str(exc)))
    candidates = sample.gold if isinstance(sample.gold, list) else [sample.gold]
    first_failure: Verdict | None = None
    for candidate in candidates:
        try:
            verdict = check_calls(sample.input["functions"], decoded, candidate, strict)
        except Exception as exc:  # noqa: BLE001 - mirrors the reference crashing on odd input
            if strict and isinstance(exc, OverflowError):
                verdict = strict_huge_number_is_a_wrong_value(exc)
            elif strict:
                raise
            else:
                # The reference aborts at the first crash, so later candidates are never tried.
                return _score(sample, official_checker_crash_counts_as_failure(exc), decoded)
        if verdict.valid:
            return _score(sample, verdict, decoded)
        first_failure = first_failure or verdict
    assert first_failure is not None
    return _score(sample, first_failure, decoded)


def _score_special(sample: Sample, prediction: Prediction) -> SampleScore:
    output = prediction.output or ""
    return _score(sample, SPECIAL_CHECKS[sample.subset](output, sample.gold), output)


def _score_agent(sample: Sample, prediction: Prediction, strict: bool) -> SampleScore:
    try:
        verdict = check_end_state(end_state_of(prediction), sample.gold, strict)
    except Exception as exc:  # noqa: BLE001 - mirrors the reference crashing on odd input
        verdict = official_checker_crash_counts_as_failure(exc)
    if verdict.valid:
        process = 1.0
    else:
        process = official_process_score(process_of(prediction), sample.meta.get("mile_stone") or [])
    return _score(sample, verdict, end_state_of(prediction), process_score=process)


def score(sample: Sample, prediction: Prediction | None, mode: str = "official") -> SampleScore:
    strict = mode == "strict"
    problem = _missing(prediction)
    if problem is not None:
        process = 0.0 if is_agent(sample.subset) else None
        return _score(sample, problem, process_score=process)
    assert prediction is not None
    if is_special(sample.subset):
        return _score_special(sample, prediction)
    if is_agent(sample.subset):
        return _score_agent(sample, prediction, strict)
    return _score_normal(sample, prediction, strict)
