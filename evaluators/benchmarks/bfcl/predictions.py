"""BFCL predictions: JSON Lines `{"id", "output"}` (the raw model text) and/or `tool_calls`; or the official
result layout, `BFCL_v4_<category>_result.json` files (a folder or a zip of them) whose lines hold
`{"id", "result", …}` with `result` the raw text (prompt mode) or a list of `{name: arguments}` (FC mode).
A multi-turn or agentic item's line holds its model text per turn and step instead (`{"id", "result": [[step text,
...], ...]}`; an agentic item has one turn): both are read by multi_turn/uploads.py. The memory prerequisite
conversations' lines (`memory_kv_prereq_0-customer-0`, …) are set aside as the official evaluation skips them."""

from __future__ import annotations

from typing import Any

from evaluators.benchmarks.bfcl.categories import MEMORY, category_of_id, is_agentic, is_multi_turn
from evaluators.benchmarks.bfcl.multi_turn.uploads import multi_turn_prediction
from evaluators.core.errors import PredictionsError
from evaluators.core.predictions import PredictionReader, Row, text_prediction
from evaluators.core.types import Prediction, Sample, ToolCall


def category_of_upload_id(sample_id: str) -> str | None:
    """The category of an official id in an upload, the multi-turn ones among them (whether or not the benchmark's
    subsets hold them yet); None for any other."""
    category = category_of_id(sample_id)
    if category is not None:
        return category
    candidate = sample_id.rpartition("_")[0]
    return candidate if is_multi_turn(candidate) or is_memory_prereq(candidate) else None


def is_memory_prereq(category: str) -> bool:
    """A memory prerequisite conversation's category (`memory_kv_prereq`): unscored, officially skipped."""
    return category in {f"{name}_prereq" for name in MEMORY}


def _official_fc_calls(result: list[Any], row: Row) -> list[ToolCall]:
    """The official FC result: one `{name: arguments}` object per call (arguments a JSON string or an object)."""
    calls = []
    for index, call in enumerate(result):
        if not isinstance(call, dict) or len(call) != 1:
            raise PredictionsError(f"result[{index}] must be one {{name: arguments}} object (the official FC layout)",
                                   row.where, row.line)
        (name, arguments), = call.items()
        if not isinstance(arguments, (dict, str)):
            raise PredictionsError(f"result[{index}].{name} must be an object or a JSON string of arguments",
                                   row.where, row.line)
        calls.append(ToolCall(name, arguments))
    return calls


def to_prediction(row: Row, sample: Sample) -> Prediction:
    data = row.data
    if is_multi_turn(sample.subset) or is_agentic(sample.subset):
        return multi_turn_prediction(row, sample)
    if "output" not in data and isinstance(data.get("result"), list):
        return Prediction(sample.id, tool_calls=_official_fc_calls(data["result"], row), source_line=row.line)
    if "output" not in data and "result" in data and not isinstance(data["result"], str):
        raise PredictionsError(f"field 'result' must be the raw model text (a string) or a list of {{name: arguments}} "
                               f"calls, got {type(data['result']).__name__}", row.where, row.line)
    return text_prediction(row, sample)

READER = PredictionReader(category_of_upload_id, to_prediction)
match_predictions = READER.match
read_predictions = READER.read
