"""StepEval-Audio-Toolcall's leaderboard table: one view per tool and their macro mean, with the
input modality and how parameters were judged beside the numbers."""

from __future__ import annotations

from typing import Any

from evaluators.benchmarks.stepeval_audio.tools import TOOLS
from evaluators.core.board_layout import BoardLayout, per_subset_published, per_subset_run_values

LABELS = ("modality", "param_method")


def run_values(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    views = per_subset_run_values(report)
    summary = report.get("summary") or {}
    labels = {key: report.get(key, summary.get(key)) for key in LABELS}
    if "all" in views:
        views["macro"] = views.pop("all")
    for values in views.values():
        values.update({k: v for k, v in labels.items() if v is not None})
    return views


def published_values(row: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    view, values = per_subset_published(row)
    values.setdefault("modality", row.get("modality"))
    return ("macro" if view == "all" else view), values


LAYOUT = BoardLayout(
    view_label="Tool", views=("macro", *TOOLS),
    columns=("precision", "recall", "type_accuracy", "param_accuracy"),
    run_values=run_values, published_values=published_values,
    detail_columns=("TP", "FN", "FP", "FP_any"), text_columns=LABELS, macro_view="macro",
)
