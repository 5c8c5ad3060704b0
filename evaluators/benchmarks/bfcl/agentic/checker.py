"""An agentic item's verdict, as bfcl-eval 2026.3.23 scores it (`_evaluate_single_agentic_entry` and
`agentic_checker`), each rule by its name:

- official_agentic_inference_error: the result is not a list of exactly one turn (more turns, none, or the
  runner's "Error during inference: ..." text) -> "agentic:inference_error".
- official_agentic_last_non_call_step: every step of turn 0 is decoded as the prompting loop decodes it
  (`default_decode_execute_prompting`, multi_turn.execution.official_call_texts); the answer is the LAST step that
  fails to decode or decodes to no call. Steps that decode to calls are skipped wherever they are, so a final call
  step leaves an earlier text as the answer.
- official_agentic_no_last_message: no such step (e.g. a conversation cut off after 21 call steps), or it is
  empty (`""`, or a reply without content) -> "agentic:no_last_message".
- official_agentic_standardize: on the answer and on every possible answer, `, . / - _ * ^ ( )` are removed, the
  text lower-cased and `'` turned into `"`. Whitespace is NOT removed (the official docstrings say it is; the code
  does not), so `10 AM - 12 PM` becomes `10 am  12 pm` with two spaces, and punctuation removal glues words
  (`Mr.Michael` -> `mrmichael`).
- official_agentic_answer_found: some standardized possible answer occurs in the standardized answer between word
  boundaries (`\\b` on both sides, the answer escaped); a `\\b` next to a leading or trailing non-word character (a
  `$`) needs a word character on its other side, so `$49.99` alone never matches `it was $49.99`
  -> else "agentic:answer_not_found".
The whole step text counts, fences and all. The environments are not re-run: nothing but the texts is read.
The rules are the same in official and strict mode (no strict fix is offered: the standardization's quirks are
part of what the published figures measure).
"""

from __future__ import annotations

import re
from typing import Any

from evaluators.benchmarks.bfcl.decode_common import DecodeFailure
from evaluators.benchmarks.bfcl.multi_turn.evidence import TURNS
from evaluators.benchmarks.bfcl.multi_turn.execution import is_empty_execute_response, official_call_texts
from evaluators.core.types import Prediction, Sample, SampleScore

PASS_RULE = "official_agentic_answer_found"
ERROR_TYPES = {
    "inference_error": "agentic:inference_error",
    "no_last_message": "agentic:no_last_message",
    "answer_not_found": "agentic:answer_not_found",
}
# The official messages, as the score file writes them.
INFERENCE_ERROR_MESSAGE = "Error during inference phase. Model did not output a list of model responses."
NO_LAST_MESSAGE = "Cannot find the last chat message that is not a function call."
ANSWER_NOT_FOUND_MESSAGE = "None of the expected answers were found in the model response."
# The characters the official standardization removes.
_REMOVED = re.compile(r"[,./\-_*^()]")


def official_agentic_inference_error(turns: Any) -> bool:
    """The official runner wants a list of exactly one turn (an agentic item is one turn of several steps)."""
    return type(turns) is not list or len(turns) != 1


def official_agentic_last_non_call_step(steps: Any) -> tuple[Any, list[list[str]]]:
    """(the last step that does not decode to calls, or None when every step does; the decoded call steps)."""
    last: Any = None
    decoded: list[list[str]] = []
    for step in steps:
        if not isinstance(step, str):  # the official decode raises on anything but text (`.strip`)
            last = step
            continue
        try:
            calls = official_call_texts(step)
        except (DecodeFailure, RecursionError, ValueError):
            last = step
            continue
        if is_empty_execute_response(calls):
            last = step
        else:
            decoded.append(calls)
    return last, decoded


def official_agentic_no_last_message(message: Any) -> bool:
    """No answer to read: none found, or a falsy one (`""`, None)."""
    return not message


def official_agentic_standardize(text: str) -> str:
    """Remove `, . / - _ * ^ ( )`, lower-case, `'` -> `"`; whitespace is kept (the official docstring says
    otherwise)."""
    return _REMOVED.sub("", text).lower().replace("'", '"')


def official_agentic_message_text(message: Any) -> str:
    """The answer as the official checker reads it: a list's first element, anything but text as `str()`."""
    if type(message) is list:
        message = message[0]
    return message if type(message) is str else str(message)


def official_agentic_answer_found(message: str, possible_answers: list[str]) -> bool:
    """Some standardized possible answer occurs in the standardized message between word boundaries."""
    standardized = official_agentic_standardize(message)
    return any(re.search(rf"\b{re.escape(official_agentic_standardize(answer))}\b", standardized)
               for answer in possible_answers)


def score(sample: Sample, prediction: Prediction, mode: str = "official") -> SampleScore:
    """The verdict on one answered agentic item (bfcl.checker.score rules on an item without an answer); pure.
    `mode` changes nothing (the rules are the official ones in both)."""
    turns = (prediction.extra or {}).get(TURNS)
    if official_agentic_inference_error(turns) or not isinstance(turns, list):
        return _verdict(sample, False, ERROR_TYPES["inference_error"], "official_agentic_inference_error",
                        INFERENCE_ERROR_MESSAGE)
    message, decoded = official_agentic_last_non_call_step(turns[0])
    if official_agentic_no_last_message(message):
        return _verdict(sample, False, ERROR_TYPES["no_last_message"], "official_agentic_no_last_message",
                        NO_LAST_MESSAGE, decoded, {"last_message": message})
    if type(message) is list and not message:  # the official checker raises IndexError here (and stops its run)
        return _verdict(sample, False, ERROR_TYPES["answer_not_found"], "official_agentic_checker_crash_scores_wrong",
                        "the official checker raises on an empty list as the last message", decoded)
    text = official_agentic_message_text(message)
    metadata = {"last_message": text, "standardized_message": official_agentic_standardize(text),
                "standardized_answers": [official_agentic_standardize(answer) for answer in sample.gold]}
    if official_agentic_answer_found(text, sample.gold):
        return _verdict(sample, True, None, PASS_RULE, "an expected answer is in the last message", decoded, metadata)
    return _verdict(sample, False, ERROR_TYPES["answer_not_found"], "official_agentic_answer_not_found",
                    ANSWER_NOT_FOUND_MESSAGE, decoded, metadata)


def _verdict(sample: Sample, correct: bool, error_type: str | None, rule: str, detail: str, decoded: Any = None,
             metadata: dict[str, Any] | None = None) -> SampleScore:
    return SampleScore(sample_id=sample.id, subset=sample.subset, correct=correct, error_type=error_type, rule=rule,
                       detail=detail, decoded=decoded, metadata=metadata)
