"""Reading `Thought / Action / Action Input` text, as the reference does (EvalScope `parse_action`,
`parse_output`), with the strict variants as named rules."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from evaluators.core.text import without_think_blocks

ACTION = "Action:"
ACTION_INPUT = "Action Input:"


@dataclass(frozen=True)
class Step:
    """One parsed step: plan is `call`, `finish` or `give up`."""

    plan: str
    action: str | None
    action_input: Any  # the raw text for calls, the parsed object for Finish, None for give up
    answer: str | None


def official_last_action(text: str) -> tuple[str, str]:
    """Action = text after the last `Action:` (cut at a following `Action Input:`), else `none`;
    input = text after the last `Action Input:`, else `{}`."""
    action_input = text[text.rindex(ACTION_INPUT) + len(ACTION_INPUT):].strip() if ACTION_INPUT in text else "{}"
    if ACTION not in text:
        return "none", action_input
    action = text[text.rindex(ACTION) + len(ACTION):].strip()
    if ACTION_INPUT in action:
        action = action[: action.index(ACTION_INPUT)].strip()
    return action, action_input


def official_finish_is_answer_or_give_up(action_input: str) -> Step:
    """`Finish` with return_type give_answer is a final answer (empty-ish answers become 'None');
    any other return type, or input that is not a JSON object with one, is a give-up."""
    try:
        parsed = json.loads(action_input)
        return_type = parsed["return_type"]
        if return_type != "give_answer":
            return Step("give up", None, None, None)
        answer = str(parsed["final_answer"]) if "final_answer" in parsed.keys() else "None"
        if answer.strip() in ("", ".", ","):
            answer = "None"
        return Step("finish", "Finish", parsed, answer)
    except Exception:  # noqa: BLE001 - the reference treats every failure here as a give-up
        return Step("give up", None, None, None)


def strict_strips_think_blocks(text: str) -> str:
    """Reasoning inside <think>…</think> is not the answer: drop it before reading the action."""
    return without_think_blocks(text)


def parse_step(text: str, strict: bool = False) -> Step:
    if strict:
        text = strict_strips_think_blocks(text)
    action, action_input = official_last_action(text)
    if action == "Finish":
        return official_finish_is_answer_or_give_up(action_input)
    return Step("call", action, action_input, None)


def tool_call_as_text(name: str, arguments: Any) -> str:
    """A native tool call written as the step text it stands for."""
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return f"{ACTION} {name}\n{ACTION_INPUT} {arguments}"
