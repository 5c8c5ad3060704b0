"""StepEval predictions: JSON Lines with `id` = `<file stem>_<line index>` and `output` and/or `tool_calls`."""

from __future__ import annotations

import re
from pathlib import Path

from evaluators.core.predictions import MatchSummary, match_rows, raise_on_errors, read_rows, text_prediction
from evaluators.core.types import Prediction, Sample
from evaluators.stepeval_audio.tools import FILE_PREFIX, POLARITIES

_ID = re.compile(rf"^({'|'.join(FILE_PREFIX.values())})_({'|'.join(POLARITIES)})_\d+$")
_TOOL_OF_PREFIX = {prefix: tool for tool, prefix in FILE_PREFIX.items()}


def tool_of_id(sample_id: str) -> str | None:
    """The tool (subset) an id belongs to: `timbre_positive_3` -> `timbre_rag` (file stems are not tool names)."""
    found = _ID.match(sample_id)
    return _TOOL_OF_PREFIX[found.group(1)] if found else None


def match_predictions(path: str | Path, samples: list[Sample]) -> tuple[dict[str, Prediction], MatchSummary]:
    loaded = {sample.subset for sample in samples}

    def belongs_to_another_tool(sample_id: str) -> bool:
        tool = tool_of_id(sample_id)
        return tool is not None and tool not in loaded

    return match_rows(read_rows(path), samples, belongs_to_another_tool, text_prediction)


def read_predictions(path: str | Path, samples: list[Sample]) -> dict[str, Prediction]:
    predictions, summary = match_predictions(path, samples)
    raise_on_errors(summary, path)
    return predictions
