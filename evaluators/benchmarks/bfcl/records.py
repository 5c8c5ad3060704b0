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
