"""Agent categories: the end state against the gold state, and milestone (process) accuracy."""

from __future__ import annotations

from typing import Any

from evaluators.benchmarks.acebench.normal_checker import PASS, Verdict, fail
from evaluators.core.text import show


def attributes_match(class_name: str, model_attrs: dict[str, Any], gold_attrs: dict[str, Any]) -> Verdict:
    """`agent_checker`: every model attribute must be in the gold; dict attributes need each gold key
    present and equal (extra model keys ignored); other attributes must be equal."""
    for attr, model_value in model_attrs.items():
        if attr not in gold_attrs:
            return fail("wrong_state", "agent_attribute_not_in_gold", f"{class_name}.{attr} is not in the gold state")
        gold_value = gold_attrs[attr]
        if isinstance(gold_value, dict):
            for key, value in gold_value.items():
                if not _contains(model_value, key) or model_value[key] != value:
                    return fail("wrong_state", "agent_dict_attribute_subset", f"{class_name}.{attr}[{show(key)}] differs")
        elif gold_value != model_value:
            return fail("wrong_state", "agent_attribute_equal", f"{class_name}.{attr} differs")
    return PASS


def _contains(container: Any, key: Any) -> bool:
    try:
        return key in container
    except TypeError:
        return False


def official_unmatched_gold_class_is_skipped(gold_class: dict[str, Any], result: list[Any]) -> bool:
    """A gold class with no same-named result dict is skipped (the gold misspells `ReminderAPI`,
    `Reminderpi` and `BaseAPI`), and the previous class's verdict stands."""
    return not any(isinstance(d, dict) and set(d) == set(gold_class) for d in result)


def check_end_state(result: Any, gold: Any, strict: bool) -> Verdict:
    gold_classes = gold if isinstance(gold, list) else [gold]
    if not isinstance(result, list) or len(result) != len(gold_classes):
        count = len(result) if isinstance(result, list) else 0
        return fail("wrong_state", "agent_class_count", f"{count} classes, expected {len(gold_classes)}")
    verdict = PASS
    for gold_class in gold_classes:
        if official_unmatched_gold_class_is_skipped(gold_class, result):
            if strict:
                return fail("wrong_state", "strict_unmatched_gold_class_fails", f"no state for {list(gold_class)}")
            continue
        matched = next(d for d in result if isinstance(d, dict) and set(d) == set(gold_class))
        name = next(iter(gold_class))
        model_attrs = matched[name]
        if not isinstance(model_attrs, dict):
            return fail("wrong_state", "agent_attribute_equal", f"{name} state is not an object")
        current = attributes_match(name, model_attrs, gold_class[name])
        if not current.valid:
            verdict = current
    return verdict


def milestone_fraction(process: list[str], milestones: list[str]) -> float:
    """Greedy in-order search for each milestone in `process`, exact after trimming."""
    if not milestones:
        return 1.0
    found, position = 0, 0
    for stone in milestones:
        while position < len(process):
            position += 1
            if str(process[position - 1]).strip() == str(stone).strip():
                found += 1
                break
    return found / len(milestones)


def official_process_score(process: list[str], milestones: list[Any]) -> float:
    """Alternatives: the best fraction, each rounded to 3 places; a single list: the unrounded fraction."""
    if milestones and isinstance(milestones[0], list):
        return max(round(milestone_fraction(process, alternative), 3) for alternative in milestones)
    return milestone_fraction(process, milestones)
