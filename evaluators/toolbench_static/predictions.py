"""ToolBench-Static predictions: JSON Lines with `id` = `<subset>_<index>` and `output`/`tool_calls`."""

from __future__ import annotations

import re
from pathlib import Path

from evaluators.core.predictions import MatchSummary, match_rows, raise_on_errors, read_rows, text_prediction
from evaluators.core.types import Prediction, Sample
from evaluators.toolbench_static.data import SUBSETS

_ID = re.compile(rf"^({'|'.join(SUBSETS)})_\d+$")


def match_predictions(path: str | Path, samples: list[Sample]) -> tuple[dict[str, Prediction], MatchSummary]:
    loaded = {sample.subset for sample in samples}

    def belongs_to_another_subset(sample_id: str) -> bool:
        found = _ID.match(sample_id)
        return found is not None and found.group(1) not in loaded

    return match_rows(read_rows(path), samples, belongs_to_another_subset, text_prediction)


def read_predictions(path: str | Path, samples: list[Sample]) -> dict[str, Prediction]:
    predictions, summary = match_predictions(path, samples)
    raise_on_errors(summary, path)
    return predictions
