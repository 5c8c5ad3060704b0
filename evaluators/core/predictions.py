"""Reading predictions files (JSON Lines, a JSON array, a folder or a zip of result files) into
rows, and matching them against a benchmark's samples with precise, line-numbered errors."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluators.core.errors import PredictionsError
from evaluators.core.jsonl import decode_utf8, iter_json_lines
from evaluators.core.types import Prediction, Sample, ToolCall

MAX_LISTED_ERRORS = 10


@dataclass(frozen=True)
class Row:
    """One prediction record and where it was read from."""

    where: str
    line: int
    data: Any


@dataclass
class MatchSummary:
    """What a predictions file held, measured against the samples being scored."""

    lines_read: int = 0
    matched: int = 0
    other_subsets: int = 0
    unknown: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _rows_from_text(text: str, where: str) -> list[Row]:
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError:
            items = None
        if isinstance(items, list):
            return [Row(where, index + 1, item) for index, item in enumerate(items)]
    return [Row(where, line, data) for line, data in iter_json_lines(text, where, PredictionsError)]


MAX_ZIP_MEMBERS = 1_000
MAX_UNPACKED_BYTES = 1 << 30


def check_unpacked_size(bundle: zipfile.ZipFile, members: list[str], path: Path) -> None:
    """Refuse a zip whose members would unpack to more than we read (a small upload can expand a
    thousandfold), before reading any of it."""
    if len(members) > MAX_ZIP_MEMBERS:
        raise PredictionsError(f"the zip holds {len(members)} files; at most {MAX_ZIP_MEMBERS} are read", path)
    unpacked = sum(bundle.getinfo(name).file_size for name in members)
    if unpacked > MAX_UNPACKED_BYTES:
        raise PredictionsError(f"the zip unpacks to {unpacked / 1e9:.1f} GB; at most {MAX_UNPACKED_BYTES / 1e9:.1f} GB is read",
                               path)


def read_rows(path: str | Path) -> list[Row]:
    """Rows of a .jsonl/.json file, of every *.json/*.jsonl file in a folder, or in a .zip."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in (".json", ".jsonl") and p.is_file())
        if not files:
            raise PredictionsError("no .json or .jsonl files in this folder", path)
        return [row for file in files for row in read_rows(file)]
    if not path.is_file():
        raise PredictionsError("file not found", path)
    if zipfile.is_zipfile(path):
        rows: list[Row] = []
        with zipfile.ZipFile(path) as bundle:
            members = sorted(
                n for n in bundle.namelist() if n.endswith((".json", ".jsonl")) and "__MACOSX" not in n
            )
            if not members:
                raise PredictionsError("the zip holds no .json or .jsonl files", path)
            check_unpacked_size(bundle, members, path)
            for name in members:
                where = f"{path}:{name}"
                rows.extend(_rows_from_text(decode_utf8(bundle.read(name), where, PredictionsError), where))
        return rows
    return _rows_from_text(decode_utf8(path.read_bytes(), path, PredictionsError), str(path))


def parse_tool_calls(value: Any, row: Row) -> list[ToolCall]:
    """`[{"name", "arguments"}]`, also in OpenAI's `{"function": {...}}` shape."""
    if not isinstance(value, list):
        raise PredictionsError(f"field 'tool_calls' must be a list, got {type(value).__name__}", row.where, row.line)
    calls = []
    for index, item in enumerate(value):
        if isinstance(item, dict) and isinstance(item.get("function"), dict):
            item = item["function"]
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise PredictionsError(
                f"tool_calls[{index}] must be an object with a string 'name'", row.where, row.line
            )
        arguments = item.get("arguments", {})
        if not isinstance(arguments, (dict, str)):
            raise PredictionsError(
                f"tool_calls[{index}].arguments must be an object or a JSON string", row.where, row.line
            )
        calls.append(ToolCall(item["name"], arguments))
    return calls


def match_rows(
    rows: list[Row],
    samples: list[Sample],
    is_known_id: Callable[[str], bool],
    to_prediction: Callable[[Row, Sample], Prediction],
) -> tuple[dict[str, Prediction], MatchSummary]:
    """Rows -> predictions keyed by sample id; every problem is collected with its line."""
    by_id = {sample.id: sample for sample in samples}
    summary = MatchSummary(lines_read=len(rows))
    predictions: dict[str, Prediction] = {}
    first_seen: dict[str, Row] = {}
    for row in rows:
        where = f"{row.where}, line {row.line}"
        if not isinstance(row.data, dict):
            summary.errors.append(f"{where}: expected a JSON object, got {type(row.data).__name__}")
            continue
        sample_id = row.data.get("id")
        if not isinstance(sample_id, str) or not sample_id:
            summary.errors.append(f"{where}: field 'id' must be a non-empty string")
            continue
        if sample_id in first_seen:
            earlier = first_seen[sample_id]
            summary.duplicates.append(sample_id)
            summary.errors.append(f"{where}: duplicate id {sample_id!r} (first at {earlier.where}, line {earlier.line})")
            continue
        first_seen[sample_id] = row
        sample = by_id.get(sample_id)
        if sample is None:
            if is_known_id(sample_id):
                summary.other_subsets += 1
            else:
                summary.unknown.append(sample_id)
                summary.errors.append(f"{where}: unknown id {sample_id!r}")
            continue
        try:
            predictions[sample_id] = to_prediction(row, sample)
        except PredictionsError as exc:
            summary.errors.append(str(exc))
            continue
        summary.matched += 1
    summary.missing = [s.id for s in samples if s.id not in predictions]
    return predictions, summary


def raise_on_errors(summary: MatchSummary, path: str | Path) -> None:
    if not summary.errors:
        return
    listed = "\n  ".join(summary.errors[:MAX_LISTED_ERRORS])
    more = len(summary.errors) - MAX_LISTED_ERRORS
    tail = f"\n  … and {more} more" if more > 0 else ""
    raise PredictionsError(f"{len(summary.errors)} problem(s) in the predictions:\n  {listed}{tail}", path)


def text_prediction(row: Row, sample: Sample) -> Prediction:
    """A prediction made of raw text (`output`, or `result` as ACEBench names it) and/or `tool_calls`."""
    data = row.data
    field_name = "output" if "output" in data else "result"
    text = data.get(field_name)
    if text is not None and not isinstance(text, str):
        raise PredictionsError(
            f"field {field_name!r} must be a string (the raw model text), got {type(text).__name__}", row.where, row.line
        )
    tool_calls = parse_tool_calls(data["tool_calls"], row) if data.get("tool_calls") is not None else None
    if text is None and tool_calls is None:
        raise PredictionsError("needs 'output' (or 'result') text and/or 'tool_calls'", row.where, row.line)
    return Prediction(sample.id, output=text, tool_calls=tool_calls, source_line=row.line)
