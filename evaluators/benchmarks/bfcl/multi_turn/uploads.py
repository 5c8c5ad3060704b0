"""A multi-turn item's line in an uploaded predictions file, read into the contract's Prediction: its `turns` (per
turn, per step, the model's raw text: all the checker reads) with the evidence kept beside it.

Two shapes are read. The official result file's line, `{"id", "result": [[step text, ...], ...],
"input_token_count": [[n, ...], ...], "output_token_count": ..., "latency": ..., "inference_log": ...}`, keeps only
`result` (as `turns`) and the sums of the per-turn, per-step token counts and latencies. This tool's predictions
format (what a run's export writes) holds `turns` and, as evidence, `transcript`, `initial_state` and `stop`.

An official line whose `result` is a string is the runner's record of an inference that failed ("Error during
inference: ..."): it is kept as it is, so the item is scored wrong (multi_turn:inference_error), as the official
checker scores any `result` that is not a list. Everything else malformed is refused, with every problem of the
line named: the official runner never writes it, and a file a converter got wrong should be fixed, not scored."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

from evaluators.benchmarks.bfcl.multi_turn.evidence import INITIAL_STATE, STOP, STOPS, TRANSCRIPT, TURNS
from evaluators.core.errors import PredictionsError
from evaluators.core.predictions import Row
from evaluators.core.types import Prediction, Sample

OFFICIAL_FIELD = "result"
# The official metadata per turn and step that become the prediction's usage and latency.
INPUT_TOKENS = "input_token_count"
OUTPUT_TOKENS = "output_token_count"
LATENCY = "latency"
# The most problems of one line named in its one message (a file's lines are all listed: see match_rows).
MAX_PROBLEMS_PER_LINE = 5


def multi_turn_prediction(row: Row, sample: Sample) -> Prediction:
    """The prediction of a multi-turn item's line (either shape); PredictionsError names every problem found."""
    data: Mapping[str, Any] = row.data
    problems = _stray_fields(data)
    if TURNS in data and OFFICIAL_FIELD in data:
        problems.append(f"has both '{TURNS}' (this tool's predictions format) and '{OFFICIAL_FIELD}' (the official "
                        "result file's layout): give one")
    elif TURNS not in data and OFFICIAL_FIELD not in data:
        problems.append(f"a multi-turn or agentic item needs '{OFFICIAL_FIELD}' (the official result file's model texts per turn "
                        f"and step) or '{TURNS}' (the same, in this tool's predictions format)")
    if problems:
        _refuse(problems, row)
    if OFFICIAL_FIELD in data:
        return _official_prediction(row, sample)
    return _own_format_prediction(row, sample)


def _stray_fields(data: Mapping[str, Any]) -> list[str]:
    """Single-turn fields given a value: a multi-turn item's text is per turn and step, read in prompt mode only."""
    problems = []
    if data.get("output") not in (None, ""):
        problems.append(f"field 'output' must be null or absent: a multi-turn item's model text is per turn and step, "
                        f"in '{TURNS}' (or '{OFFICIAL_FIELD}')")
    if data.get("tool_calls") is not None:
        problems.append("field 'tool_calls' must be null or absent: multi-turn items are read in prompt mode only (the "
                        "calls are in each step's text)")
    return problems


def _official_prediction(row: Row, sample: Sample) -> Prediction:
    result = row.data[OFFICIAL_FIELD]
    if isinstance(result, str):  # the official runner's record of a failed inference: scored wrong, not refused
        turns: Any = result
    else:
        turns = _checked_turns(result, OFFICIAL_FIELD, row)
    return Prediction(sample.id, extra={TURNS: turns}, source_line=row.line, latency=_summed(row.data, LATENCY),
                      usage=_usage(row.data))


def _own_format_prediction(row: Row, sample: Sample) -> Prediction:
    data = row.data
    turns = data[TURNS]
    problems = [] if isinstance(turns, list) else [_not_turns(turns, TURNS)]
    if isinstance(turns, list):
        problems += _turn_problems(turns, TURNS)
    problems += _evidence_problems(data)
    if problems:
        _refuse(problems, row)
    extra = {TURNS: _with_empty_steps(turns)}
    extra.update({key: data[key] for key in (TRANSCRIPT, INITIAL_STATE, STOP) if data.get(key) is not None})
    return Prediction(sample.id, extra=extra, source_line=row.line)


def _checked_turns(value: Any, field: str, row: Row) -> list[list[str]]:
    if not isinstance(value, list):
        _refuse([_not_turns(value, field) + "; or a string, the official runner's record of a failed inference"], row)
    problems = _turn_problems(value, field)
    if problems:
        _refuse(problems, row)
    return _with_empty_steps(value)


def _not_turns(value: Any, field: str) -> str:
    return f"field '{field}' must be a list of turns, each a list of the model's step texts, got {_kind(value)}"


def _turn_problems(turns: list[Any], field: str) -> list[str]:
    """What is wrong in a list of turns: a turn that is not a list, a step that is not text (null is: a reply with no
    content, kept as an empty text as the rollout keeps it)."""
    problems = []
    for turn_index, turn in enumerate(turns):
        if not isinstance(turn, list):
            problems.append(f"{field}[{turn_index}] (turn {turn_index}) must be a list of the model's step texts, "
                            f"got {_kind(turn)}")
            continue
        for step_index, step in enumerate(turn):
            if isinstance(step, str) or step is None:
                continue
            where = f"{field}[{turn_index}][{step_index}] (turn {turn_index}, step {step_index})"
            if isinstance(step, list) and all(isinstance(call, dict) for call in step):
                problems.append(f"{where} is a list of {{name: arguments}} calls (the official FC layout): multi-turn "
                                "items are read in prompt mode only, each step the model's raw text")
            else:
                problems.append(f"{where} must be the model's raw text (a string), got {_kind(step)}")
    return problems


def _with_empty_steps(turns: list[list[str | None]]) -> list[list[str]]:
    return [["" if step is None else step for step in turn] for turn in turns]


def _evidence_problems(data: Mapping[str, Any]) -> list[str]:
    """The evidence fields of this tool's format, when given: the shapes Explore reads."""
    problems = []
    transcript = data.get(TRANSCRIPT)
    if transcript is not None:
        if not isinstance(transcript, list):
            problems.append(f"field '{TRANSCRIPT}' must be a list of turns, got {_kind(transcript)}")
        else:
            problems += [problem for index, turn in enumerate(transcript) for problem in _turn_record_problems(index, turn)]
    state = data.get(INITIAL_STATE)
    if state is not None and not isinstance(state, dict):
        problems.append(f"field '{INITIAL_STATE}' must be an object (class name -> its attributes), got {_kind(state)}")
    stop = data.get(STOP)
    if stop is not None and stop not in STOPS:
        problems.append(f"field '{STOP}' must be one of {', '.join(STOPS)}, got {str(stop)[:80]!r}")
    return problems


def _turn_record_problems(index: int, turn: Any) -> list[str]:
    where = f"{TRANSCRIPT}[{index}]"
    if not isinstance(turn, dict):
        return [f"{where} must be an object with 'query', 'steps' and 'state', got {_kind(turn)}"]
    problems = []
    for name, expected, kind in (("query", list, "a list of messages"), ("steps", list, "a list of steps"),
                                 ("state", dict, "an object (class name -> its attributes)")):
        if turn.get(name) is not None and not isinstance(turn[name], expected):
            problems.append(f"{where}.{name} must be {kind}, got {_kind(turn[name])}")
    steps = turn.get("steps")
    for step_index, step in enumerate(steps if isinstance(steps, list) else []):
        if not isinstance(step, dict) or not isinstance(step.get("text", ""), str):
            problems.append(f"{where}.steps[{step_index}] must be an object with the step's 'text' (a string)")
    return problems


def _summed(data: Mapping[str, Any], key: str) -> float | None:
    """The sum of a per-turn, per-step metadata list; numbers only, as the official cost and latency summary reads
    them (anything else in it is left out, not refused: it is not scored). None when the line has none."""
    value = data.get(key)
    if not isinstance(value, list) or not all(isinstance(turn, list) for turn in value):
        return None
    numbers = [item for turn in value for item in turn if isinstance(item, int | float) and not isinstance(item, bool)]
    return float(sum(numbers)) if numbers else None


def _usage(data: Mapping[str, Any]) -> dict[str, int] | None:
    prompt, completion = _summed(data, INPUT_TOKENS), _summed(data, OUTPUT_TOKENS)
    if prompt is None and completion is None:
        return None
    return {"prompt_tokens": round(prompt or 0), "completion_tokens": round(completion or 0)}


def _kind(value: Any) -> str:
    return "null" if value is None else {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "a number" if isinstance(value, int | float) else type(value).__name__)


def _refuse(problems: list[str], row: Row) -> NoReturn:
    shown = problems[:MAX_PROBLEMS_PER_LINE]
    more = len(problems) - len(shown)
    raise PredictionsError("; ".join(shown) + (f"; and {more} more" if more > 0 else ""), row.where, row.line)
