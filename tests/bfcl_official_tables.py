"""Test-only: the official leaderboard tables (`generate_leaderboard_csv` of `bfcl-eval` 2026.3.23) made from
given per-category accuracies, in the cached official venv (tests/bfcl_official_venv.py), so the summaries
the report computes (Multi Turn, Overall) can be compared with the tables the official code prints.

The pytest side writes the cases to a JSON file and reads the CSV files back; only the subprocess, started
on this very file with the venv's Python (see `_drive` at the bottom), imports `bfcl_eval`.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.bfcl_official_venv import OfficialVenv

# The official registry's prompt-mode model the tables are made for (as tests/bfcl_official_venv.PROMPT_MODEL;
# repeated here because the subprocess side cannot import the tests package).
PROMPT_MODEL = "gpt-4o-2024-11-20"
TABLES = ("data_overall.csv", "data_multi_turn.csv")
TIMEOUT_SECONDS = 600


def official_tables(venv: OfficialVenv, work: Path, cases: dict[str, dict[str, tuple[int, int]]]
                    ) -> dict[str, dict[str, dict[str, float | None]]]:
    """case name -> table file -> column -> figure (a fraction; None for N/A), from (correct, total) per
    category of each case. Every case is one table of one model, written to `work/<case>/`."""
    from tests.bfcl_official_venv import DRIVER_FLAGS, _subprocess_env

    request = work / "cases.json"
    work.mkdir(parents=True, exist_ok=True)
    request.write_text(json.dumps({name: {c: list(v) for c, v in counts.items()} for name, counts in cases.items()}),
                       encoding="utf-8")
    done = subprocess.run([str(venv.python), *DRIVER_FLAGS, __file__, str(venv.stand_ins), str(work / "bfcl_root"),
                           str(request), str(work)], capture_output=True, text=True, timeout=TIMEOUT_SECONDS,
                          env=_subprocess_env())
    if done.returncode != 0:
        raise RuntimeError("the official table code failed:\n" + (done.stderr or done.stdout)[-4000:])
    return {name: {table: _csv_row(work / name / table) for table in TABLES} for name in cases}


def _csv_row(path: Path) -> dict[str, float | None]:
    """The one model row of a table, percentages ("87.50%") as fractions, N/A as None."""
    with path.open(encoding="utf-8", newline="") as handle:
        (row,) = list(csv.DictReader(handle))
    return {column: float(text[:-1]) / 100 if text.endswith("%") else None
            for column, text in row.items() if text.endswith("%") or text == "N/A"}


# ---- the subprocess side: runs with the venv's Python only ------------------------------------------------


def _drive(argv: list[str]) -> None:
    stand_ins, root, request, work = argv
    sys.path.append(stand_ins)  # appended: a real SDK that happens to be installed wins over its stand-in
    os.environ["BFCL_PROJECT_ROOT"] = root
    Path(root).mkdir(parents=True, exist_ok=True)
    import importlib

    helper = importlib.import_module("bfcl_eval.eval_checker.eval_runner_helper")
    for name, counts in json.loads(Path(request).read_text(encoding="utf-8")).items():
        table: dict = {}
        for category, (correct, total) in counts.items():
            helper.record_result(table, PROMPT_MODEL, category, correct / total, total)
        folder = Path(work) / name
        folder.mkdir(parents=True, exist_ok=True)
        helper.generate_leaderboard_csv(table, folder)


if __name__ == "__main__":
    _drive(sys.argv[1:])
