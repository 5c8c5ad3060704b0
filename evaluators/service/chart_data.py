"""What the board's charts read about runs stored here: their mean cost per sample, their reports, their names."""

from __future__ import annotations

from typing import Any

import pandas as pd

from evaluators.core.limits import MAX_MODEL_NAME_CHARS, shown_text
from evaluators.engine.store import Store

COST_COLUMNS = ("run_id", "latency", "tokens")


def run_costs(store: Store, run_ids: list[str]) -> pd.DataFrame:
    """Mean latency (s) and tokens (prompt + completion) per stored sample of each run that has samples."""
    rows = []
    for run_id in run_ids:
        totals = store.run_totals(run_id)
        if not totals["done"]:
            continue
        rows.append({"run_id": run_id, "latency": totals["latency"] / totals["done"],
                     "tokens": (totals["prompt_tokens"] + totals["completion_tokens"]) / totals["done"]})
    return pd.DataFrame(rows, columns=list(COST_COLUMNS))


def run_report(store: Store, run_id: str, mode: str) -> dict[str, Any]:
    """A run's report in a scoring mode ({} when it has none)."""
    return store.load_report(run_id, mode) or {}


def run_model(store: Store, run_id: str) -> str:
    """The model a run evaluated, as a board shows it (core/limits.shown_text)."""
    return str(shown_text(store.get_run(run_id).model, MAX_MODEL_NAME_CHARS))
