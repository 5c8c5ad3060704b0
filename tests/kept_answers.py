"""Test-only: an official answer kept on disk beside its venv, written whole or not at all."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any


def keep_text(path: Path, text: str) -> None:
    """`text` written to `path` whole or not at all: two test workers may keep the same answer at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.part")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


def kept_or_played(memo: Path | None, received: Callable[[], list[Any]], play: Callable[[], Any]
                   ) -> tuple[Any, list[Any]]:
    """An official play against a scripted server (one whose every answer is a function of the request alone): its
    answer and the requests it sent, read from `memo` when kept there, else `play()` and the requests `received()`
    gained meanwhile (JSON values), then kept. A kept play does not reach the server: its answers are known."""
    if memo is not None and memo.is_file():
        kept = json.loads(memo.read_text(encoding="utf-8"))
        return kept["answer"], kept["bodies"]
    before = len(received())
    answer = play()
    bodies = received()[before:]
    if memo is not None:
        keep_text(memo, json.dumps({"answer": answer, "bodies": bodies}))
    return answer, bodies
