"""Test-only: BFCL multi-turn answers written as a model's step texts, the ground truth (the oracle) and seeded
mutations of it, for the parity test against the official checker.

The oracle answers each turn with the ground-truth calls as step texts (in one step as a list, or one call per
step, seeded), positional arguments written as keywords with the names of the function's doc (as a model answers;
the official decoder drops positional arguments), and ends each turn with a step of plain text (no call). A turn
without ground truth (a holdout turn) is answered with text only.

MUTATIONS, one per item and round (seeded by round and id; some items stay as the oracle):
- dropped_call: one ground-truth call left out;
- changed_argument: one argument value changed (text, number, truth value, list);
- swapped_turn: the steps of two turns exchanged;
- extra_step: an extra step repeating one of the item's ground-truth calls, in any turn (holdout turns included);
- early_stop: the answer stops before the last turn(s) (fewer turns than the ground truth).
"""

from __future__ import annotations

import ast
import random
from typing import Any

from evaluators.core.types import Sample

MUTATIONS = ("dropped_call", "changed_argument", "swapped_turn", "extra_step", "early_stop")
ORACLE = "oracle"
CHAT = ("Done.", "I have completed the request.", "The task is finished; let me know what else you need.")
HOLDOUT_CHAT = "I cannot do that with the functions I have; please tell me more."

Turns = list[list[str]]


def _docs(sample: Sample) -> dict[str, dict]:
    docs = {doc["name"]: doc for doc in sample.input["function"]}
    for held in sample.input["missed_function"].values():
        docs.update({doc["name"]: doc for doc in held})
    return docs


def keyword_call(text: str, docs: dict[str, dict]) -> str:
    """A ground-truth call with its positional arguments named after the doc's parameters, in order."""
    call = ast.parse(text, mode="eval").body
    assert isinstance(call, ast.Call)
    name = ast.unparse(call.func)
    if not call.args:
        return text
    params = list(docs[name]["parameters"]["properties"])
    named = [f"{params[index]}={ast.unparse(arg)}" for index, arg in enumerate(call.args)]
    named += [f"{kw.arg}={ast.unparse(kw.value)}" for kw in call.keywords]
    return f"{name}({', '.join(named)})"


def _steps(calls: list[str], rng: random.Random) -> list[str]:
    """A turn's step texts: the calls (all in one list, or one per step), then a plain-text step."""
    if not calls:
        return [HOLDOUT_CHAT]
    if rng.random() < 0.5:
        steps = ["[" + ", ".join(calls) + "]"]
    else:
        steps = list(calls)
    return [*steps, rng.choice(CHAT)]


def oracle_calls(sample: Sample) -> list[list[str]]:
    docs = _docs(sample)
    return [[keyword_call(text, docs) for text in turn] for turn in sample.gold]


def oracle_answer(sample: Sample) -> Turns:
    rng = random.Random(f"oracle:{sample.id}")
    return [_steps(turn, rng) for turn in oracle_calls(sample)]


def _changed_value(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rng.choice((1, 7))
    if isinstance(value, float):
        return value + 1.5
    if isinstance(value, str):
        return value + "_x" if value else "x"
    if isinstance(value, list):
        return value[:-1] if value else ["x"]
    if isinstance(value, dict):
        return {**value, "extra": 1}
    return "x"


def _change_argument(call_text: str, rng: random.Random) -> str | None:
    call = ast.parse(call_text, mode="eval").body
    assert isinstance(call, ast.Call)
    if not call.keywords:
        return None
    index = rng.randrange(len(call.keywords))
    parts = []
    for position, keyword in enumerate(call.keywords):
        value = ast.literal_eval(keyword.value)
        if position == index:
            value = _changed_value(value, rng)
        parts.append(f"{keyword.arg}={value!r}")
    return f"{ast.unparse(call.func)}({', '.join(parts)})"


def mutated_answer(sample: Sample, round_: int) -> tuple[str, Turns]:
    """(kind, step texts per turn): one mutation of the oracle, or the oracle itself for some items."""
    rng = random.Random(f"{round_}:{sample.id}")
    calls = oracle_calls(sample)
    kind = rng.choice((ORACLE, *MUTATIONS))
    filled = [index for index, turn in enumerate(calls) if turn]
    if kind == "dropped_call" and filled:
        turn = rng.choice(filled)
        calls[turn].pop(rng.randrange(len(calls[turn])))
    elif kind == "changed_argument" and filled:
        options = [(t, c) for t in filled for c in range(len(calls[t])) if _change_argument(calls[t][c], rng)]
        if not options:
            return ORACLE, oracle_answer(sample)
        turn, index = rng.choice(options)
        calls[turn][index] = _change_argument(calls[turn][index], rng) or calls[turn][index]
    elif kind == "swapped_turn" and len(calls) > 1:
        first, second = rng.sample(range(len(calls)), 2)
        if calls[first] == calls[second]:
            return ORACLE, oracle_answer(sample)
        calls[first], calls[second] = calls[second], calls[first]
    elif kind == "early_stop":
        kept = rng.randrange(len(calls))  # 0 .. len-1 turns
        return kind, [_steps(turn, rng) for turn in calls[:kept]]
    elif kind == "extra_step" and filled:
        extra = rng.choice([call for turn in calls for call in turn])
        turn = rng.randrange(len(calls))
        answer = [_steps(turn_calls, rng) for turn_calls in calls]
        answer[turn].insert(rng.randrange(len(answer[turn])), extra)
        return kind, answer
    else:
        return ORACLE, oracle_answer(sample)
    return kind, [_steps(turn, rng) for turn in calls]


# Odd result shapes the official checker reads without stopping its run (one per item, seeded).
ODD_SHAPES = ("text_result", "turn_as_text", "null_and_number_steps")


def odd_answer(sample: Sample) -> tuple[str, Any]:
    """A result that is not a list of turns (an inference error), a turn given as one text (read character by
    character), or steps that are not texts (skipped); some items stay as the oracle."""
    rng = random.Random(f"odd:{sample.id}")
    answer: Any = oracle_answer(sample)
    kind = rng.choice((ORACLE, *ODD_SHAPES))
    if kind == "text_result":
        return kind, "Error during inference: the connection was reset"
    turn = rng.randrange(len(answer))
    if kind == "turn_as_text":
        answer[turn] = "\n".join(answer[turn])
    elif kind == "null_and_number_steps":
        answer[turn] = [None, *answer[turn], 3]
    return kind, answer
