"""Server paths out of what visitors of a public deployment read (errors, run messages, notes)."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from evaluators.core.paths import toolboard_home

# The application's own folder (the project's checkout), named in tracebacks and notes.
APP_ROOT = Path(__file__).resolve().parents[2]


def shown_as_is(text: str) -> str:
    return text


# An absolute path of two parts or more, not inside a URL (so its "/" is not right after a letter, digit,
# ":", "/" or ".").
ABSOLUTE_PATH = re.compile(r"(?<![\w:/.])(?:/\.?[\w@+-]+(?:\.[\w@+-]+)*){2,}/?")


class PathRedactor:
    """Server paths out of text shown to visitors of a public deployment: known folders become short
    names (`<data folder>/<benchmark>`), any other absolute path keeps only its last part (`…/toolboard.db`)."""

    def __init__(self, folders: Mapping[str | Path, str]):
        spellings: dict[str, str] = {}
        for folder, name in folders.items():
            for spelling in (str(folder), str(Path(folder).resolve())):
                if spelling not in ("", "/", "."):
                    spellings[spelling.rstrip("/")] = name
        # Longest first, so a folder inside another gets its own name.
        self.folders = sorted(spellings.items(), key=lambda item: len(item[0]), reverse=True)

    def __call__(self, text: str) -> str:
        return ABSOLUTE_PATH.sub(lambda match: self._short(match.group()), text)

    def _short(self, path: str) -> str:
        for folder, name in self.folders:
            if path == folder or path.startswith(folder + "/"):
                return name + path[len(folder):]
        return "…/" + path.rstrip("/").rsplit("/", 1)[-1]


def redacted(value: Any, redact: Callable[[str], str]) -> Any:
    """`value` (text, or JSON-like lists and dicts of it) with `redact` applied to every string in it."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: redacted(item, redact) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redacted(item, redact) for item in value]
    return value


def server_path_redactor(store_folder: Path, data_dir: str | None) -> PathRedactor:
    """Short names for the server's folders: the temporary folder, the app's, the toolboard home (and the
    store's folder), the home folder and the operator's data folder."""
    folders: dict[str | Path, str] = {
        tempfile.gettempdir(): "<temp>",
        APP_ROOT: "<app>",
        toolboard_home(): "<toolboard home>",
        store_folder: "<toolboard home>",
        Path.home(): "~",
    }
    if data_dir:
        folders[data_dir] = "<data folder>"
    return PathRedactor(folders)
