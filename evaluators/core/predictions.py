"""Reading predictions files (JSON Lines, a JSON array, a folder or a zip of result files) into
rows, and matching them against a benchmark's samples with precise, line-numbered errors."""

from __future__ import annotations

import io
import json
import sys
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, NoReturn

from evaluators.core.archive import MB, ZIP_READ_ERRORS, ByteBudget, CountedReader, check_member, open_member
from evaluators.core.errors import PredictionsError
from evaluators.core.jsonl import decode_utf8, parse_json
from evaluators.core.types import Prediction, Sample, ToolCall

# The problems of a file listed to its sender (all are counted): enough to fix a file in one pass.
MAX_LISTED_ERRORS = 50


@dataclass(frozen=True)
class Unreadable:
    """A line that is not valid UTF-8 JSON: its problem, kept among the rows so that matching reports it beside
    every other problem of the file, in one pass."""

    problem: str


@dataclass(frozen=True)
class Row:
    """One prediction record (or an Unreadable line) and where it was read from."""

    where: str
    line: int
    data: Any


@dataclass(frozen=True)
class ParsedPredictions:
    """A predictions file read once: its rows (unreadable lines among them) named by the file's base name, and
    roughly the memory they hold; matched again against other samples without the file."""

    name: str
    rows: tuple[Row, ...]
    parsed_bytes: int


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
    # Findings that do not refuse the file (a benchmark's matcher says what it left out or scored otherwise).
    notes: list[str] = field(default_factory=list)


MAX_ZIP_MEMBERS = 1_000
MAX_UNPACKED_BYTES = 128 * MB  # everything read from one input: a file, a folder or a zip, unpacked
# One line, or a whole JSON array file: each is held whole to parse it, and parsed JSON can take ~20
# times its text (`[{},{},…]`), so this bounds the memory of one parse.
MAX_JSON_VALUE_BYTES = 8 * MB
# A file of one indented JSON object (an official harness's results file) is read whole, up to this.
MAX_JSON_DOCUMENT_BYTES = 64 * MB
MAX_ROWS = 100_000  # a benchmark has a few thousand samples; each row read is kept until matched
# What the parsed rows of one input may hold in memory in all (Python's own object sizes): a real file
# of every sample of a large benchmark, with long answers, holds a few tens of MB.
MAX_PARSED_BYTES = 160 * MB


def check_unpacked_size(members: list[zipfile.ZipInfo], path: Path) -> None:
    """Refuse a zip whose headers already admit too many files or too many bytes, before reading
    any of it. Headers can lie: the bytes are counted again while reading."""
    if len(members) > MAX_ZIP_MEMBERS:
        raise PredictionsError(f"the zip holds {len(members)} files; at most {MAX_ZIP_MEMBERS} are read", path)
    unpacked = sum(info.file_size for info in members)
    if unpacked > MAX_UNPACKED_BYTES:
        raise PredictionsError(f"the zip unpacks to {unpacked / MB:.3g} MB; at most {MAX_UNPACKED_BYTES / MB:.3g} MB "
                               "is read", path)
    for info in members:
        check_member(info, f"{path}:{info.filename}", PredictionsError)


def parsed_size(value: Any) -> int:
    """Roughly the bytes a parsed JSON value holds in memory (every object counted where it appears)."""
    total, stack = 0, [value]
    while stack:
        item = stack.pop()
        total += sys.getsizeof(item)
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return total


class _RowBudget:
    """Rows, and the memory their parsed values hold, still allowed from one input."""

    def __init__(self) -> None:
        self.left = MAX_ROWS
        self.bytes_left = MAX_PARSED_BYTES

    @property
    def used_bytes(self) -> int:
        return MAX_PARSED_BYTES - self.bytes_left

    def take(self, values: list[Any], where: str, line: int) -> None:
        self.left -= len(values)
        if self.left < 0:
            raise PredictionsError(f"more than {MAX_ROWS:,} predictions; at most that many are read", where, line)
        self.bytes_left -= sum(parsed_size(value) for value in values)
        if self.bytes_left < 0:
            self._refuse(where, line)

    def check_room(self, raw: bytes, where: str, line: int) -> None:
        """Before parsing `raw`: refuse text whose parse alone would pass the budget (an upper estimate
        from its brackets and commas), so no single parse can take the memory either."""
        estimate = len(raw) + 64 * raw.count(b"{") + 56 * raw.count(b"[") + 40 * raw.count(b",")
        if estimate > self.bytes_left:
            self._refuse(where, line)

    @staticmethod
    def _refuse(where: str, line: int) -> NoReturn:
        raise PredictionsError(f"the predictions read so far take more than {MAX_PARSED_BYTES / MB:.3g} MB once "
                               "parsed; at most that is held (a file of a whole benchmark holds far less)", where, line)


def _lines(stream: IO[bytes], where: str) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes without the line end); only "\n" ends a line, as in iter_json_lines."""
    number = 0
    while raw := stream.readline(MAX_JSON_VALUE_BYTES + 1):
        number += 1
        if len(raw) > MAX_JSON_VALUE_BYTES and not raw.endswith(b"\n"):
            raise PredictionsError(f"line longer than {MAX_JSON_VALUE_BYTES / MB:.3g} MB; at most that is read per line",
                                   where, number)
        yield number, raw.removesuffix(b"\n").removesuffix(b"\r")


def _rows_from_stream(stream: IO[bytes], where: str, rows: _RowBudget, keep_unreadable: bool = False) -> list[Row]:
    """JSON Lines, or a JSON array when the first non-blank line starts with `[`, or one JSON object spread over
    lines (an official harness's results file: one row) when the first line opens an object it does not close;
    read line by line so no more than one line (or one array or object file) is held whole. `keep_unreadable`: a line that is not
    UTF-8 JSON becomes an Unreadable row (counted as a row) instead of stopping the read."""
    found: list[Row] = []
    lines = _lines(stream, where)
    for number, raw in lines:
        if not raw.strip():
            continue
        if not found and raw.lstrip(b"\xef\xbb\xbf \t").startswith(b"["):
            return _rows_from_array(raw + b"\n" + _read_rest(stream, where, len(raw)), where, number, rows)
        if not found and _opens_a_document(raw):
            whole = raw + b"\n" + _read_rest(stream, where, len(raw), MAX_JSON_DOCUMENT_BYTES, "JSON document")
            document = _document_row(whole, where, number, rows)
            if document is not None:
                return [document]
            # not one document after all: read its lines (from this one on) as JSON Lines, each reported
            rest = ((number + index, line) for index, (_, line) in enumerate(_lines(io.BytesIO(whole), where)))
            return _rows_from_lines(rest, where, rows, keep_unreadable)
        found.append(_row_of_line(raw, where, number, rows, keep_unreadable))
    return found


def _rows_from_lines(lines: Iterator[tuple[int, bytes]], where: str, rows: _RowBudget,
                     keep_unreadable: bool) -> list[Row]:
    return [_row_of_line(raw, where, number, rows, keep_unreadable) for number, raw in lines if raw.strip()]


def _row_of_line(raw: bytes, where: str, number: int, rows: _RowBudget, keep_unreadable: bool) -> Row:
    rows.check_room(raw, where, number)
    try:
        value = parse_json(decode_utf8(raw, where, PredictionsError, number), where, number, PredictionsError)
    except PredictionsError as exc:
        if not keep_unreadable:
            raise
        value = Unreadable(str(exc))
    rows.take([value], where, number)
    return Row(where, number, value)


def _read_rest(stream: IO[bytes], where: str, already: int, limit: int | None = None,
               what: str = "JSON array file") -> bytes:
    limit = MAX_JSON_VALUE_BYTES if limit is None else limit  # read when called: tests lower the module's limits
    rest = stream.read(limit + 1 - already)
    if already + len(rest) > limit:
        raise PredictionsError(f"a {what} is read whole, so at most {limit / MB:.3g} MB; "
                               "write JSON Lines (one prediction per line) for more", where)
    return rest


def _opens_a_document(line: bytes) -> bool:
    """A first line that opens a JSON object it does not close (an indented file of one object, e.g. an official
    harness's results file), rather than a JSON Lines row."""
    text = line.lstrip(b"\xef\xbb\xbf \t").rstrip()
    if not text.startswith(b"{"):
        return False
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return True
    return False


def _document_row(whole: bytes, where: str, first_line: int, rows: _RowBudget) -> Row | None:
    """The file as one JSON object (one row), or None when it is not one (then its lines are read as JSON Lines)."""
    rows.check_room(whole, where, first_line)
    if whole.split(b"\n", 1)[0].lstrip(b"\xef\xbb\xbf \t").rstrip() == b"{":
        # a lone "{": an indented document, whose problem is reported where it is (no JSON Lines file starts so)
        value = parse_json(decode_utf8(whole, where, PredictionsError, first_line), where, first_line, PredictionsError)
    else:
        try:
            value = json.loads(whole.decode("utf-8-sig"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return None
    if not isinstance(value, dict):
        return None
    rows.take([value], where, first_line)
    return Row(where, first_line, value)


def _rows_from_array(raw: bytes, where: str, first_line: int, rows: _RowBudget) -> list[Row]:
    rows.check_room(raw, where, first_line)
    items = parse_json(decode_utf8(raw, where, PredictionsError, first_line), where, first_line, PredictionsError)
    if not isinstance(items, list):
        raise PredictionsError(f"a file starting with '[' must be a JSON array, got {type(items).__name__}", where, first_line)
    rows.take(items, where, first_line)
    return [Row(where, index + 1, item) for index, item in enumerate(items)]


# How much of a file is looked at to tell text from a binary file, and the share of its characters that may be
# undecodable before the whole file is refused as not text (one bad line is reported as that line's problem).
SNIFF_BYTES = 8192
MAX_UNDECODABLE_SHARE = 0.1


def looks_like_utf16(head: bytes) -> bool:
    """UTF-16 text without a byte-order mark: one of each two bytes zero (ASCII text), the other not."""
    even, odd = head[0::2], head[1::2]
    if len(head) < 4:
        return False
    zeros_even, zeros_odd = even.count(0) / len(even), odd.count(0) / max(len(odd), 1)
    return (zeros_odd > 0.9 and zeros_even < 0.1) or (zeros_even > 0.9 and zeros_odd < 0.1)


def not_text_reason(head: bytes) -> str | None:
    """Why a file whose first bytes are `head` is not a predictions text file (a picture, a PDF, a UTF-16 file,
    an archive other than zip), or None when it reads as text. Said before any line, so the sender is told what
    the file is, not that no prediction matched."""
    if not head:
        return None
    shown = " ".join(f"0x{byte:02x}" for byte in head[:4])
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or looks_like_utf16(head):
        return f"not a UTF-8 text file: it looks like UTF-16 (it starts {shown}); save it as UTF-8"
    decoded = head.decode("utf-8", errors="replace")
    undecodable = decoded.count("\ufffd") / max(len(decoded), 1)
    if b"\x00" in head or undecodable > MAX_UNDECODABLE_SHARE:
        return (f"not a text file: predictions are JSON Lines or JSON (UTF-8 text), or a zip of them; this file's "
                f"first bytes ({shown}) are binary (a picture, a PDF or another archive?)")
    return None


def _rows_of_file(path: Path, budget: ByteBudget, rows: _RowBudget, keep_unreadable: bool = False) -> list[Row]:
    size = path.stat().st_size
    if size > budget.left:
        raise PredictionsError(f"the file is {size / MB:.3g} MB; at most {MAX_UNPACKED_BYTES / MB:.3g} MB is read", path)
    with path.open("rb") as handle:
        reason = not_text_reason(handle.read(SNIFF_BYTES))
        if reason is not None:
            raise PredictionsError(reason, path)
        handle.seek(0)
        return _rows_from_stream(io.BufferedReader(CountedReader(handle, path, budget)), str(path), rows, keep_unreadable)


def _rows_of_zip(path: Path, budget: ByteBudget, rows: _RowBudget, keep_unreadable: bool = False) -> list[Row]:
    try:
        bundle = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError):
        raise PredictionsError("not a valid zip file", path) from None
    found: list[Row] = []
    with bundle:
        members = sorted((info for info in bundle.infolist() if info.filename.endswith((".json", ".jsonl"))
                          and "__MACOSX" not in info.filename and not info.is_dir()), key=lambda info: info.filename)
        if not members:
            raise PredictionsError("the zip holds no .json or .jsonl files", path)
        check_unpacked_size(members, path)
        for info in members:
            where = f"{path}:{info.filename}"
            try:
                with open_member(bundle, info, where, budget) as stream:
                    found.extend(_rows_from_stream(stream, where, rows, keep_unreadable))
            except ZIP_READ_ERRORS as exc:  # a bad CRC-32, a truncated or corrupt member
                raise PredictionsError(f"the zip is damaged ({exc})", where) from None
    return found


def read_rows(source: str | Path | ParsedPredictions, keep_unreadable: bool = False) -> list[Row]:
    """Rows of a .jsonl/.json file, of every *.json/*.jsonl file in a folder, or in a .zip (or those of a
    file parsed before, Unreadable rows among them: a benchmark's own matcher gets an upload as it was parsed).

    Everything read from one input shares one budget of bytes (counted as they are unpacked) and
    rows; an input that yields no row at all is an error, not a score of zero. `keep_unreadable`: a
    JSON Lines line that is not UTF-8 JSON is an Unreadable row (else the first one raises)."""
    if isinstance(source, ParsedPredictions):
        return list(source.rows)
    return _read(Path(source), keep_unreadable)[0]


def parse_predictions(path: str | Path) -> ParsedPredictions:
    """The file read once for matching (unreadable lines kept as Unreadable rows), every row and problem
    naming it by its base name (no server folder is kept); the limits of read_rows apply."""
    path = Path(path)
    found, rows = _read(path, keep_unreadable=True)
    folder = str(path.parent) + "/" if path.parent != Path(".") else ""

    def shown(where: str) -> str:
        return where.removeprefix(folder)

    kept = tuple(Row(shown(row.where), row.line, Unreadable(row.data.problem.replace(folder, "", 1))
                     if isinstance(row.data, Unreadable) else row.data) for row in found)
    return ParsedPredictions(path.name, kept, rows.used_bytes)


def _read(path: Path, keep_unreadable: bool) -> tuple[list[Row], _RowBudget]:
    budget = ByteBudget(MAX_UNPACKED_BYTES, PredictionsError)
    rows = _RowBudget()
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in (".json", ".jsonl") and p.is_file())
        if not files:
            raise PredictionsError("no .json or .jsonl files in this folder", path)
        found = [row for file in files for row in _rows_of_file(file, budget, rows, keep_unreadable)]
    elif not path.is_file():
        raise PredictionsError("file not found", path)
    elif zipfile.is_zipfile(path):
        found = _rows_of_zip(path, budget, rows, keep_unreadable)
    else:
        found = _rows_of_file(path, budget, rows, keep_unreadable)
    if not found:
        raise PredictionsError("no prediction was read (the input is empty, holds only blank lines, or is [])", path)
    return found, rows


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
        if isinstance(row.data, Unreadable):
            summary.errors.append(row.data.problem)
            continue
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
                summary.errors.append(f"{where}: unknown id {sample_id!r}: no item of the data being scored has it")
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
    """A prediction made of raw text (`output`, or `result` as some official result files name it) and/or `tool_calls`."""
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


@dataclass(frozen=True)
class PredictionReader:
    """A benchmark's predictions files, read: which subset an official id names (None: no subset of the
    benchmark), and how a row becomes a prediction. An id of a subset the run did not load is counted apart,
    not refused (a file of every subset scored against some of them)."""

    subset_of_id: Callable[[str], str | None]
    to_prediction: Callable[[Row, Sample], Prediction] = text_prediction

    def match(self, source: str | Path | ParsedPredictions,
              samples: list[Sample]) -> tuple[dict[str, Prediction], MatchSummary]:
        """Predictions keyed by sample id, with every problem of the file collected in one pass, unreadable lines
        among them (the upload check); `source` a file (read here) or one read before (parse_predictions)."""
        loaded = {sample.subset for sample in samples}

        def belongs_to_another_subset(sample_id: str) -> bool:
            subset = self.subset_of_id(sample_id)
            return subset is not None and subset not in loaded

        return match_rows(read_rows(source, keep_unreadable=True), samples, belongs_to_another_subset, self.to_prediction)

    def read(self, path: str | Path, samples: list[Sample]) -> dict[str, Prediction]:
        """Predictions keyed by sample id; raises PredictionsError listing every bad line."""
        predictions, summary = self.match(path, samples)
        raise_on_errors(summary, path)
        return predictions
