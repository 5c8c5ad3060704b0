"""A report on the terminal: a plain-text table, or one JSON object with --json."""

from __future__ import annotations

import json

from evaluators.core.types import Report


def format_report(report: Report) -> str:
    """A plain-text table of the report for the terminal."""
    lines = [f"{report.benchmark}" + (f" ({report.language})" if report.language else "") + f" — mode {report.mode}"]
    metric_names: list[str] = []
    for sub in report.subsets.values():
        metric_names += [m for m in sub.metrics if m not in metric_names]
    width = max([len(n) for n in report.subsets] + [6])
    lines.append(f"{'subset':<{width}}  {'n':>5}  " + "  ".join(f"{m:>16}" for m in metric_names))
    for name, sub in report.subsets.items():
        cells = "  ".join(f"{_fmt(sub.metrics.get(m)):>16}" for m in metric_names)
        lines.append(f"{name:<{width}}  {sub.n:>5}  {cells}")
    lines.append("summary: " + ", ".join(f"{k}={_fmt(v)}" for k, v in report.summary.items()))
    if report.errors:
        lines.append("errors: " + ", ".join(f"{k}={v}" for k, v in report.errors.items()))
    if report.missing:
        lines.append(f"missing predictions: {len(report.missing)} (scored as failures)")
    if report.unavailable:
        lines.append(f"unavailable (no data file): {', '.join(report.unavailable)}")
    return "\n".join(lines)


def _fmt(value: float | int | str | None) -> str:
    if isinstance(value, str):  # labels, such as how parameters were judged
        return value
    if isinstance(value, int):  # counts, such as true / false positives
        return str(value)
    return "—" if value is None else f"{value:.3f}"


def print_report(report: Report, as_json: bool) -> None:
    if as_json:
        print(json.dumps(report.to_json(), ensure_ascii=False))
    else:
        print(format_report(report))
