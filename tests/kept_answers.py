"""Test-only: an official answer kept on disk beside its venv, written whole or not at all."""

from __future__ import annotations

import os
from pathlib import Path


def keep_text(path: Path, text: str) -> None:
    """`text` written to `path` whole or not at all: two test workers may keep the same answer at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.part")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)
