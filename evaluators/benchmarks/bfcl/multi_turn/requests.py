"""The requests of a multi-turn rollout, built as the official prompting loop builds them
(`BaseHandler.inference_multi_turn_prompting` with `OpenAICompletionsHandler`): the system prompt and
the first turn's messages, each later turn's user messages, the one user message of a holdout turn,
the assistant message as the SDK echoes it, and one user message with the execution results.
The texts and the step limit are read at run time from the pinned wheel's source, as data."""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from evaluators.benchmarks.bfcl.official_source import PROMPTS_FILE, decode, module_constants, official_format
from evaluators.benchmarks.bfcl.prompts import (
    OFFICIAL_SAMPLING,
    official_hinted_functions,
    official_prompt_messages,
    official_system_prompt,
)
from evaluators.benchmarks.bfcl.wheel import pinned_wheel, read_member
from evaluators.core.errors import DataError
from evaluators.core.types import ChatRequest, Sample

HOLDOUT_PROMPT = "DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING"
STEP_LIMIT = "MAXIMUM_STEP_LIMIT"
# What the official prompting query sends besides model and messages: the same as for single-turn items.
OFFICIAL_MULTI_TURN_SAMPLING: dict[str, Any] = dict(OFFICIAL_SAMPLING)


@dataclass(frozen=True)
class MultiTurnTexts:
    """What the official loop takes from constants/default_prompts.py: the template of a holdout turn's
    user message (its one field is `{functions}`) and the step limit of a turn."""

    holdout_prompt: str
    step_limit: int


def _joined_text(node: ast.expr, known: dict[str, Any]) -> str | None:
    """A text built as the official module builds it: literals, names of texts read before, and `+`."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _joined_text(node.left, known), _joined_text(node.right, known)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.Name):
        value = known.get(node.id)
        return value if isinstance(value, str) else None
    return None


def texts_from_source(source: str, where: str) -> MultiTurnTexts:
    """The holdout prompt (a concatenation in the official source, so not a plain literal) and the limit."""
    constants = module_constants(source, where)
    tree = ast.parse(source, filename=where)  # module_constants has parsed it already: no SyntaxError here
    holdout: str | None = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [HOLDOUT_PROMPT]:
            holdout = _joined_text(node.value, constants)
    if holdout is None:
        raise DataError(f"{HOLDOUT_PROMPT} is not a text of literals and known texts in {PROMPTS_FILE}", where)
    official_format(holdout, functions="")  # its one field must be {functions}: a clear error now, not mid-run
    limit = constants.get(STEP_LIMIT)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise DataError(f"{STEP_LIMIT} in {PROMPTS_FILE} is {limit!r}, not a positive whole number", where)
    return MultiTurnTexts(holdout_prompt=holdout, step_limit=limit)


@lru_cache(maxsize=4)
def _texts_of(wheel_text: str) -> MultiTurnTexts:
    wheel = Path(wheel_text)
    where = f"{wheel}:{PROMPTS_FILE}"
    return texts_from_source(decode(read_member(wheel, PROMPTS_FILE), where), where)


def multi_turn_texts(wheel: Path | None = None) -> MultiTurnTexts:
    """The holdout prompt and step limit from the pinned wheel (downloaded once when not cached)."""
    return _texts_of(str(wheel or pinned_wheel()))


def official_holdout_message(held_out: list[dict[str, Any]], texts: MultiTurnTexts) -> dict[str, Any]:
    """official_holdout_docs_as_python_repr: the holdout turn's one user message. The template is filled
    with `.format(functions=<the list of docs>)`, so the docs reach the model as Python's repr of the list
    (single quotes, True/None), without the language hint the other docs carry."""
    return {"role": "user", "content": official_format(texts.holdout_prompt, functions=str(held_out))}


def official_turn_messages(sample: Sample, turn: int, texts: MultiTurnTexts) -> list[dict[str, Any]]:
    """The messages added at the start of turn `turn`: for turn 0 the system prompt (built from the
    hinted docs without the held-out ones) and the turn's messages; for a holdout turn of miss_func its one
    message; else the turn's own messages (copies: the sample is never changed)."""
    question = sample.input["question"]
    held_out = (sample.input.get("missed_function") or {}).get(str(turn))
    if held_out is not None:
        if question[turn]:
            raise DataError(f"turn {turn} holds out functions but also has messages; the official loop allows "
                            "none", sample.id)
        return [official_holdout_message(held_out, texts)]
    if turn == 0:
        functions = official_hinted_functions(sample.input["function"], sample.subset)
        return official_prompt_messages(question, official_system_prompt(functions))
    return copy.deepcopy(question[turn])


def official_execution_results_message(call_texts: list[str], results: list[str]) -> dict[str, Any]:
    """official_results_as_python_repr (format_execution_results_prompting): one user message holding
    `repr` of [{"role": "tool", "name": <call text>, "content": <result>}, ...], paired as zip pairs."""
    tool_results = [{"role": "tool", "name": name, "content": result} for result, name in zip(results, call_texts)]
    return {"role": "user", "content": repr(tool_results)}


def step_request(messages: list[dict[str, Any]]) -> ChatRequest:
    """One step's request: the dialogue so far (copied: it keeps growing after this request is sent)."""
    return ChatRequest(messages=list(messages), sampling=dict(OFFICIAL_MULTI_TURN_SAMPLING))
