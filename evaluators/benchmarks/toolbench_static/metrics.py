"""Per-step metrics as the reference computes them (EvalScope `calculate_metrics`): Act.EM and
argument F1 on call steps, Rouge-L on final answers, Plan.EM and HalluRate on every kept step."""

from __future__ import annotations

import importlib.abc
import json
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from evaluators.benchmarks.toolbench_static.parse import Step
from evaluators.core.lazy_packages import defer_rouge_score_imports

HALF_CREDIT = 0.5
TINY = 1e-30  # the reference adds it to both denominators


class WhitespaceTokenizer:
    """Rouge tokens are whitespace-separated words: case, punctuation and stems kept."""

    def tokenize(self, text: str) -> list[str]:
        return text.split()


class _LeftOut(importlib.abc.MetaPathFinder):
    """Refuses one package to the thread that installed it, while it is on sys.meta_path (see
    `rouge_scorer`); imports in other threads (the app's) go on as usual."""

    def __init__(self, package: str):
        self.package = package
        self.thread = threading.get_ident()

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if threading.get_ident() != self.thread:
            return
        if fullname == self.package or fullname.startswith(self.package + "."):
            raise ModuleNotFoundError(f"{fullname} is left out while rouge-score loads", name=fullname)


@contextmanager
def _left_out(package: str) -> Iterator[None]:
    if package in sys.modules:  # already loaded: nothing to save
        yield
        return
    finder = _LeftOut(package)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


@cache
def rouge_scorer() -> Any:
    """Imported on first use, so the app and the CLI pay for it only when a final answer is scored.
    rouge-score imports nltk for its Porter stemmer and numpy for its bootstrap: NLTK's own `__init__` (all of
    NLTK, ~0.15 s) and numpy's (~30 ms) are deferred (see lazy_packages), and if NLTK's runs after all, its
    collocation measures try `scipy.stats` (1.2 s more) and work without it; Rouge-L never uses them, so scipy
    is left out of that import."""
    defer_rouge_score_imports()
    with _left_out("scipy"):
        from rouge_score import rouge_scorer as module  # type: ignore[import-untyped]  # ships no type information

    return module.RougeScorer(["rougeL"], tokenizer=WhitespaceTokenizer())


def rouge_l_f(prediction: str, reference: str) -> float:
    f_measure: float = rouge_scorer().score(target=reference, prediction=prediction)["rougeL"].fmeasure
    return f_measure


def official_skip_reason(reference: Step, prediction: Step, tool_names: set[str], strict: bool) -> str | None:
    """Why a step is left out of every metric, or None to keep it.

    - the reference action is `invalid_hallucination_function_name` (dirty data);
    - `official_give_up_steps_dropped_when_prediction_parses`: when the prediction has an action, a
      reference whose action is not a tool name is dropped, and a give-up reference has no action
      (None), so give-up steps only count when the prediction gives up too. Strict keeps them.
    """
    if reference.action == "invalid_hallucination_function_name":
        return "invalid_hallucination_function_name"
    if prediction.action is not None and reference.action != "none" and reference.action not in tool_names:
        if strict and reference.action is None:
            return None
        return "reference action is not a tool"
    return None


def official_argument_f1(prediction_input: str, reference_input: str) -> tuple[float | None, str | None]:
    """(F1, "easy" | "hard") with half credit for a key present with another value; None when the
    reference input is not JSON (the step then carries no F1)."""
    try:
        reference = json.loads(reference_input)
    except Exception:  # noqa: BLE001
        return None, None
    kind = "easy" if reference == {} else "hard"
    try:
        candidate = json.loads(prediction_input)
        if reference == {}:
            return (1.0 if candidate == {} else 0.0), kind
        full = half = 0
        for key, value in reference.items():
            if key in candidate.keys():
                if candidate[key] == value:
                    full += 1
                else:
                    half += 1
        recall = (HALF_CREDIT * half + full) / (len(reference) + TINY)
        precision = (HALF_CREDIT * half + full) / (len(candidate) + TINY)
        return (2 * recall * precision) / (recall + precision), kind
    except Exception:  # noqa: BLE001 - bad JSON, a non-object, or no shared key (0/0): F1 = 0
        return 0.0, kind


def step_metrics(reference: Step, prediction: Step, tool_names: set[str]) -> dict[str, float]:
    """The metrics one kept step carries (keys as in the report)."""
    hallucinated = prediction.action is not None and prediction.action != "none" and prediction.action not in tool_names
    metrics: dict[str, float] = {
        "plan_em": 1.0 if prediction.plan == reference.plan else 0.0,
        "hallu_rate": 1.0 if hallucinated else 0.0,
    }
    if reference.plan == "finish":
        metrics["rouge_l"] = rouge_l_f(prediction.answer if prediction.answer is not None else "none", str(reference.answer))
    elif reference.plan == "call":
        predicted_action = prediction.action if prediction.action is not None else "none"
        metrics["act_em"] = 1.0 if predicted_action == reference.action else 0.0
        predicted_input = prediction.action_input if prediction.action_input is not None else "{}"
        if predicted_action != reference.action:
            metrics.update(f1=0.0, easy_f1=0.0, hard_f1=0.0)
        else:
            f1, kind = official_argument_f1(predicted_input, reference.action_input)
            if f1 is not None:
                metrics["f1"] = f1
                metrics[f"{kind}_f1"] = f1
    return metrics

