"""Where runtime data lives: one folder, TOOLBOARD_HOME."""

from __future__ import annotations

import os
from pathlib import Path

from evaluators.core.environment import read_other, read_setting


def toolboard_home() -> Path:
    """TOOLBOARD_HOME, else /data/toolboard on a Space with a writable /data, else the user cache."""
    configured = read_setting("home")
    if configured:
        home = Path(configured).expanduser()
    elif read_other("SPACE_ID") and os.access("/data", os.W_OK):
        home = Path("/data/toolboard")
    else:
        cache = read_other("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        home = Path(cache) / "toolboard"
    home.mkdir(parents=True, exist_ok=True)
    return home


def datasets_dir() -> Path:
    path = toolboard_home() / "datasets"
    path.mkdir(parents=True, exist_ok=True)
    return path


def data_dir_from_env() -> Path | None:
    configured = read_setting("data_dir")
    return Path(configured).expanduser() if configured else None
