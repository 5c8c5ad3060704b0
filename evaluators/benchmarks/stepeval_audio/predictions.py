"""StepEval predictions: JSON Lines with `id` = `<file stem>_<line index>` and `output` and/or `tool_calls`."""

from __future__ import annotations

import re

from evaluators.benchmarks.stepeval_audio.tools import FILE_PREFIX, POLARITIES
from evaluators.core.predictions import PredictionReader

_ID = re.compile(rf"^({'|'.join(FILE_PREFIX.values())})_({'|'.join(POLARITIES)})_\d+$")
_TOOL_OF_PREFIX = {prefix: tool for tool, prefix in FILE_PREFIX.items()}


def tool_of_id(sample_id: str) -> str | None:
    """The tool (subset) an id belongs to: `timbre_positive_3` -> `timbre_rag` (file stems are not tool names)."""
    found = _ID.match(sample_id)
    return _TOOL_OF_PREFIX[found.group(1)] if found else None

READER = PredictionReader(tool_of_id)
match_predictions = READER.match
read_predictions = READER.read
