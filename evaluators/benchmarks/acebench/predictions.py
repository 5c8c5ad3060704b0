"""ACEBench predictions: JSON Lines with `id` and `output`/`result`/`tool_calls` (agent items:
`result` = end state, `process` = agent messages, kept as the prediction's evidence), or the official result layout."""

from __future__ import annotations

from evaluators.benchmarks.acebench.categories import category_of_id, is_agent
from evaluators.benchmarks.acebench.evidence import agent_prediction
from evaluators.core.errors import PredictionsError
from evaluators.core.predictions import PredictionReader, Row, text_prediction
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
    return agent_prediction(sample.id, result, process, source_line=row.line)


def to_prediction(row: Row, sample: Sample) -> Prediction:
    if is_agent(sample.subset):
        return _agent_prediction(row, sample)
    return text_prediction(row, sample)

READER = PredictionReader(category_of_id, to_prediction)
match_predictions = READER.match
read_predictions = READER.read
