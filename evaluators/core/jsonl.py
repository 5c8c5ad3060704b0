"""Reading JSON Lines with errors that name the file and the line."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evaluators.core import source_files
from evaluators.core.errors import DataError


def decode_utf8(raw: bytes, path: str | Path, error_cls: type[DataError] = DataError, first_line: int = 1) -> str:
    """`raw` as text; `first_line` is the line `raw` starts at, so an error names the right line."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = first_line + raw[: exc.start].count(b"\n")
        raise error_cls(
            f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})", path, line
        ) from None


def parse_json(text: str, path: str | Path, line: int, error_cls: type[DataError] = DataError) -> Any:
    """json.loads whose every failure (syntax, nesting too deep, a number too long) names the file
    and the line; `line` is the line `text` starts at."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error_cls(f"invalid JSON: {exc.msg} (column {exc.colno})", path, line + exc.lineno - 1) from None
    except RecursionError:
        raise error_cls("invalid JSON: nested too deeply to read", path, line) from None
    except ValueError:  # int() refuses integer literals longer than the interpreter's digit limit
        raise error_cls(f"invalid JSON: a number has more than {sys.get_int_max_str_digits()} digits",
                        path, line) from None


def iter_json_lines(
    text: str, path: str | Path, error_cls: type[DataError] = DataError
) -> Iterator[tuple[int, Any]]:
    """Yield (1-based line number, parsed value) for each non-blank line."""
    # Only "\n" ends a line: str.splitlines() would also split at U+2028, U+0085 and the like,
    # which JSON writers leave unescaped inside strings.
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        yield number, parse_json(line, path, number, error_cls)


def read_json_lines(path: Path, error_cls: type[DataError] = DataError) -> list[tuple[int, Any]]:
    if not source_files.is_file(path):
        raise error_cls("file not found", path)
    return list(iter_json_lines(decode_utf8(source_files.read_bytes(path), path, error_cls), path, error_cls))
