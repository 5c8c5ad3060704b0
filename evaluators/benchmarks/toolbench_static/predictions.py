"""ToolBench-Static predictions: JSON Lines with `id` = `<subset>_<index>` and `output`/`tool_calls`."""

from __future__ import annotations

import re

from evaluators.benchmarks.toolbench_static.data import SUBSETS
from evaluators.core.predictions import PredictionReader

_ID = re.compile(rf"^({'|'.join(SUBSETS)})_\d+$")


def subset_of_id(sample_id: str) -> str | None:
    found = _ID.match(sample_id)
    return found.group(1) if found else None


READER = PredictionReader(subset_of_id)
match_predictions = READER.match
read_predictions = READER.read
