"""Gold answers written as predictions: the ceiling the official checker allows on this data."""

from __future__ import annotations

from typing import Any

from evaluators.benchmarks.acebench.categories import is_agent
from evaluators.benchmarks.acebench.normal_checker import official_strips_digit_suffix
from evaluators.core.types import Sample


def gold_call_text(gold: dict[str, Any]) -> str:
    """`{"Api_1": {"k": v}}` -> `[Api(k=<repr of v>)]`."""
    calls = [
        f"{official_strips_digit_suffix(name)}({', '.join(f'{k}={v!r}' for k, v in args.items())})"
        for name, args in gold.items()
    ]
    return "[" + ", ".join(calls) + "]"


def gold_special_text(subset: str, gold: Any) -> str:
    if subset == "special_incomplete":
        api, missing = next(iter(gold.items()))
        return f'["Missing necessary parameters ({", ".join(missing)}) for the api ({api})"]'
    if subset == "special_error_param":
        keys = ", ".join(gold)
        values = ", ".join(value for values in gold.values() for value in values)
        return f'["There is incorrect value ({values}) for the parameters ({keys}) in the conversation history."]'
    return '["Due to the limitations of the function, I cannot solve this problem."]'


def gold_prediction(sample: Sample) -> dict[str, Any]:
    if is_agent(sample.subset):
        milestones = sample.meta.get("mile_stone") or []
        first = milestones[0] if milestones and isinstance(milestones[0], list) else milestones
        return {"id": sample.id, "result": sample.gold, "process": first}
    if sample.subset.startswith("special"):
        return {"id": sample.id, "output": gold_special_text(sample.subset, sample.gold)}
    candidate = sample.gold[0] if isinstance(sample.gold, list) else sample.gold
    return {"id": sample.id, "output": gold_call_text(candidate)}
