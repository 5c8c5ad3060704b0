"""A data line's required fields, checked the same way for every BFCL file (which file, which line, which field)."""

from __future__ import annotations

from typing import Any

from evaluators.core.errors import DataError


def required_fields(record: Any, fields: dict[str, type], where: str, line: int) -> dict[str, Any]:
    """`record` when it is a JSON object holding each of `fields` with its type; else a DataError naming it."""
    if not isinstance(record, dict):
        raise DataError(f"expected a JSON object, got {type(record).__name__}", where, line)
    for name, kind in fields.items():
        if name not in record:
            raise DataError(f"missing field {name!r}", where, line)
        if not isinstance(record[name], kind):
            raise DataError(f"field {name!r} must be a {kind.__name__}, got {type(record[name]).__name__}", where, line)
    return record


# Where the official data keeps each questions file's possible answers (possible_answer/<same name>).
ANSWER_FOLDER = "possible_answer"


def paired_with_answers(source: Any, questions_file: str) -> tuple[list[Any], list[Any], str, str]:
    """A questions file's records and its answers file's, which the official runner pairs by position (so they must
    be equally many), with where each was read; `source` is bfcl.data.DataSource."""
    answers_file = f"{ANSWER_FOLDER}/{questions_file}"
    questions = source.read(questions_file)
    answers = source.read(answers_file)
    if len(answers) != len(questions):
        raise DataError(f"{len(questions)} items in {questions_file} but {len(answers)} answers (they are paired by "
                        "position and must be equally many)", source.where(answers_file))
    return questions, answers, source.where(questions_file), source.where(answers_file)
