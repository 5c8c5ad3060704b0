"""Reading JSON Lines with errors that name the file and the line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evaluators.core.errors import DataError


def decode_utf8(raw: bytes, path: str | Path, error_cls: type[DataError] = DataError) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise error_cls(
            f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})", path, line
        ) from None


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
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise error_cls(f"invalid JSON: {exc.msg} (column {exc.colno})", path, number) from None


def read_json_lines(path: Path, error_cls: type[DataError] = DataError) -> list[tuple[int, Any]]:
    if not path.is_file():
        raise error_cls("file not found", path)
    return list(iter_json_lines(decode_utf8(path.read_bytes(), path, error_cls), path, error_cls))
