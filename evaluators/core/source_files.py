"""What a benchmark's data was made from: the files its loader read and the paths it looked for, noted as the
loader goes, so that a parsed copy of the samples can be kept and used for as long as all of them are as they
were (engine/parsed_data.py). Loaders read and look through these functions; outside `noting()` they are the
plain file operations."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class SourceNotes:
    """Files read (whole, or as an archive member) and paths looked for, with what was found."""

    read: set[str] = field(default_factory=set)
    looked_for: dict[str, str] = field(default_factory=dict)


_NOTES: ContextVar[SourceNotes | None] = ContextVar("source_notes", default=None)


@contextlib.contextmanager
def noting() -> Iterator[SourceNotes]:
    """Note every file read and path looked for through this module while the block runs."""
    notes = SourceNotes()
    token = _NOTES.set(notes)
    try:
        yield notes
    finally:
        _NOTES.reset(token)


def note_read(path: Path) -> None:
    """A file the data is made from (a data file, or the archive a member was read from)."""
    notes = _NOTES.get()
    if notes is not None:
        notes.read.add(str(Path(path).resolve()))


def path_kind(path: Path) -> str:
    """"file", "folder" or "none": what is at `path` now."""
    return "file" if path.is_file() else "folder" if path.is_dir() else "none"


def _looked_for(path: Path) -> str:
    kind = path_kind(path)
    notes = _NOTES.get()
    if notes is not None:
        notes.looked_for[str(Path(path).absolute())] = kind
    return kind


def is_file(path: Path) -> bool:
    return _looked_for(path) == "file"


def is_dir(path: Path) -> bool:
    return _looked_for(path) == "folder"


def read_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    note_read(path)
    return data
