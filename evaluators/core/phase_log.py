"""When each phase of a process was reached, for `benchmarks/engine_phases.py`: with TOOLBOARD_PHASE_LOG naming
a file, the wall-clock time (time.time()) of each phase is written there as one JSON object when the process
exits; without it, marking costs one dictionary lookup.

`mark` keeps a phase's first time (the first request out), `mark_latest` its last (the last answer in)."""

from __future__ import annotations

import atexit
import json
import time

from evaluators.core.environment import read_setting

PHASE_LOG_ENV = "TOOLBOARD_PHASE_LOG"

_PATH = read_setting("phase_log")
_TIMES: dict[str, float] = {}


def mark(phase: str) -> None:
    """The time the phase was first reached."""
    if _PATH and phase not in _TIMES:
        _TIMES[phase] = time.time()


def mark_latest(phase: str) -> None:
    """The last time the phase was reached."""
    if _PATH:
        _TIMES[phase] = time.time()


def _write() -> None:
    if _PATH and _TIMES:
        _TIMES.setdefault("exit", time.time())
        with open(_PATH, "w", encoding="utf-8") as out:
            json.dump(_TIMES, out)


if _PATH:
    atexit.register(_write)
