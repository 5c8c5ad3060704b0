"""ACEBench predictions: JSON Lines with `id` and `output`/`result`/`tool_calls` (agent items:
`result` = end state, `process` = agent messages), or the official result layout."""

from __future__ import annotations

from pathlib import Path

from evaluators.acebench.categories import category_of_id, is_agent
from evaluators.core.errors import PredictionsError
from evaluators.core.predictions import MatchSummary, Row, match_rows, raise_on_errors, read_rows, text_prediction
from evaluators.core.types import Prediction, Sample


def _agent_prediction(row: Row, sample: Sample) -> Prediction:
    data = row.data
    result = data.get("result")
    if not isinstance(result, list) or not all(isinstance(item, dict) for item in result):
        raise PredictionsError(
            "agent item: field 'result' must be the end state, a list of {ClassName: {attribute: value}} objects",
            row.where,
            row.line,
        )
    process = data.get("process", [])
    if not isinstance(process, list) or not all(isinstance(m, str) for m in process):
        raise PredictionsError("agent item: field 'process' must be a list of strings", row.where, row.line)
    return Prediction(sample.id, result=result, process=process, source_line=row.line)


def to_prediction(row: Row, sample: Sample) -> Prediction:
    if is_agent(sample.subset):
        return _agent_prediction(row, sample)
    return text_prediction(row, sample)


def match_predictions(path: str | Path, samples: list[Sample]) -> tuple[dict[str, Prediction], MatchSummary]:
    loaded = {sample.subset for sample in samples}

    def belongs_to_another_category(sample_id: str) -> bool:
        category = category_of_id(sample_id)
        return category is not None and category not in loaded

    return match_rows(read_rows(path), samples, belongs_to_another_category, to_prediction)


def read_predictions(path: str | Path, samples: list[Sample]) -> dict[str, Prediction]:
    """Predictions keyed by sample id; raises PredictionsError listing every bad line."""
    predictions, summary = match_predictions(path, samples)
    raise_on_errors(summary, path)
    return predictions
