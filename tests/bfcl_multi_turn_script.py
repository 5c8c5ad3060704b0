"""Test-only: scripted answers for multi-turn rollouts, for the scripted OpenAI-compatible server. An answer is
a pure function of the request's messages (which item, which turn, which step), so two harnesses that send
the same requests get the same answers; each item follows a plan built from its ground truth:

- `at_once`: each turn, all the turn's ground-truth calls in one answer, then an empty answer (no call);
  a turn without calls gets a text that does not decode.
- `one_by_one`: one call per step (with extra message fields the SDK echoes back: `reasoning_content`,
  an empty `tool_calls`), then a text that does not decode, or an answer without content (null).
- `errors`: first an unknown function and a call with an unexpected argument, then the calls in a code
  fence, then an empty answer; later turns as `at_once`.
- `step_limit`: the first turn's first call, again and again, until the loop force-quits the item.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

TOOL_RESULTS_PREFIX = "[{'role': 'tool'"
PLANS = ("at_once", "one_by_one", "errors", "step_limit")
NOT_A_CALL = "I cannot do that with the functions I have."


@dataclass(frozen=True)
class ItemScript:
    plan: str
    gold: list[list[str]]


def first_user_text(messages: Iterable[dict[str, Any]]) -> str:
    return next(m["content"] for m in messages if m.get("role") == "user")


def dialogue_position(messages: list[dict[str, Any]]) -> tuple[int, int]:
    """(turn, step) of the answer asked for: a turn starts at a user message that is not execution results
    and does not follow another user message; the step counts the assistant messages since."""
    turn, step, previous = -1, 0, None
    for message in messages:
        role, content = message.get("role"), message.get("content")
        tool_results = role == "user" and isinstance(content, str) and content.startswith(TOOL_RESULTS_PREFIX)
        if role == "user" and not tool_results and previous != "user":
            turn, step = turn + 1, 0
        elif role == "assistant":
            step += 1
        previous = role
    return turn, step


def _with_bad_argument(call: str) -> str:
    name, _, rest = call.partition("(")
    return f"{name}(bogus_argument=1, {rest}" if rest != ")" else f"{name}(bogus_argument=1)"


def answer(script: ItemScript, turn: int, step: int) -> dict[str, Any]:
    """The message fields the server answers with (content null is sent as such)."""
    gold = script.gold[turn] if turn < len(script.gold) else []
    calls = "[" + ", ".join(gold) + "]"
    if script.plan == "step_limit" and script.gold[0]:
        return {"content": f"[{script.gold[0][0]}]"}
    if script.plan == "one_by_one":
        if step < len(gold):
            return {"content": f"[{gold[step]}]", "reasoning_content": f"step {step}", "tool_calls": []}
        return {"content": None} if turn % 2 else {"content": "Done."}
    if script.plan == "errors" and turn == 0 and gold:
        return {"content": [f"[no_such_function(x=1), {_with_bad_argument(gold[0])}]", f"```\n{calls}\n```", ""][min(step, 2)]}
    if step == 0:
        return {"content": calls if gold else NOT_A_CALL}
    return {"content": ""}


def opening_key(messages: list[dict[str, Any]]) -> str:
    """What finds an item: its messages up to the first user message (the system prompt holds the item's
    function docs, so items with the same question but other docs are told apart)."""
    end = next(index for index, message in enumerate(messages) if message.get("role") == "user")
    return json.dumps(messages[:end + 1], sort_keys=True)


class MultiTurnScript:
    """The server's reply function: item found by its opening messages, then answer()."""

    def __init__(self, scripts: dict[str, ItemScript]):
        self.scripts = scripts

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages") or []
        script = self.scripts.get(opening_key(messages))
        if script is None:
            return {"content": "unknown item"}
        turn, step = dialogue_position(messages)
        return answer(script, turn, step)


def script_for(samples: Iterable[Any], plans: dict[str, str], distinct: bool = True) -> MultiTurnScript:
    """Scripts for the samples (each sample's plan by id, default at_once), keyed by their first request's
    opening messages. `distinct`: two samples must not share those (else the first one's script serves both,
    e.g. a long-context item and its base twin, whose first requests are the same)."""
    from evaluators.benchmarks.bfcl.multi_turn.requests import multi_turn_texts, official_turn_messages

    texts = multi_turn_texts()
    scripts: dict[str, ItemScript] = {}
    for sample in samples:
        key = opening_key(official_turn_messages(sample, 0, texts))
        if key in scripts:
            if distinct:
                raise ValueError(f"{sample.id} opens with the same messages as another scripted item")
            continue
        scripts[key] = ItemScript(plans.get(sample.id, "at_once"), sample.gold)
    return MultiTurnScript(scripts)
