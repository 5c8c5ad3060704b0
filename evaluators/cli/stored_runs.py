"""The `runs` and `export` commands: what the store holds, read back without running anything."""

from __future__ import annotations

import argparse
import json

from evaluators.core.errors import ToolboardError
from evaluators.engine.store import LONE_SURROGATE, Store


def runs_command(args: argparse.Namespace) -> int:
    store = Store()
    rows = []
    runs = store.list_runs()
    all_totals = store.all_run_totals([run.id for run in runs])
    for run in runs:
        totals = all_totals[run.id]
        report = store.load_report(run.id) or {}
        rows.append({
            "id": run.id, "benchmark": run.benchmark, "language": run.language, "model": run.model,
            "base_url": run.base_url, "status": run.status, "done": totals["done"], "total": run.total,
            "errors": totals["errors"], "fingerprint": run.fingerprint, "summary": report.get("summary"),
        })
    if args.json:
        print(json.dumps(rows, ensure_ascii=False))
        return 0
    for row in rows:
        print(f"{row['id']}  {row['benchmark']:<10} {row['model']:<24} {row['status']:<11} {row['done']}/{row['total']}"
              f"  errors={row['errors']}  fingerprint={row['fingerprint']}")
    return 0


def export_command(args: argparse.Namespace) -> int:
    store = Store()
    run = store.get_run(args.run_id)
    if args.predictions:
        with args.predictions.open("w", encoding="utf-8") as out:
            # Each row with its evidence as stored (gold answer, request as sent): the dataset is never reloaded.
            for stored in store.iter_stored_samples(run.id):
                prediction = stored.prediction
                assert prediction is not None  # a predictions row always holds one
                row = {"id": prediction.sample_id, "output": prediction.output}
                if prediction.tool_calls is not None:
                    row["tool_calls"] = [{"name": c.name, "arguments": c.arguments} for c in prediction.tool_calls]
                if prediction.result is not None:
                    row["result"], row["process"] = prediction.result, prediction.process
                if prediction.error is not None:
                    row["error"] = prediction.error
                if stored.gold_kept:
                    row["gold"] = stored.gold
                if stored.request_kept:
                    row["request"] = stored.request
                text = json.dumps(row, ensure_ascii=False)
                # A lone surrogate (kept in a stored request or answer) can only be written as its \u escape.
                out.write((json.dumps(row) if LONE_SURROGATE.search(text) else text) + "\n")
    report = store.load_report(run.id, args.mode)
    if args.report:
        if report is None:
            raise ToolboardError(f"run {run.id} has no {args.mode} report yet (status {run.status})")
        args.report.write_text(json.dumps({**report, "run_id": run.id, "config": run.config}, ensure_ascii=False, indent=1))
    if not args.predictions and not args.report:
        print(json.dumps({"run_id": run.id, "status": run.status, "config": run.config, "report": report}, ensure_ascii=False))
    return 0

