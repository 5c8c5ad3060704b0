"""What the store takes on disk (issue 41): bytes stored per uploaded byte, and per item of an upload and of a run.

For each workload, a fresh store: its used pages before and after (Store.used_bytes, what the store cap counts),
the write-ahead log left after, and the text bytes the run was counted for (runs.stored_bytes, what a visitor's
daily budget counts). Workloads:
  - an upload of ACEBench English normal + special (973 items) with short answers, as a model writes them;
  - the same upload with every answer padded to ~40 kB (a 39 MB file: bulky answers);
  - a run of those 973 items against a local scripted endpoint (every request and answer kept as evidence).

Data: TOOLBOARD_DATA_DIR/acebench, else ../shared/data/acebench; without it, the built-in example (20 items).
Usage: python benchmarks/store_bytes.py
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluators.core.registry import get_benchmark  # noqa: E402
from evaluators.engine.runner import execute, start_run  # noqa: E402
from evaluators.engine.settings import ModelSettings, RunConfig, RunRequest  # noqa: E402
from evaluators.engine.store import Store  # noqa: E402
from evaluators.service.submissions import check_submission, store_submission  # noqa: E402
from tests.scripted_server import ScriptedServer  # noqa: E402

EXAMPLE = ROOT / "evaluators" / "benchmarks" / "acebench" / "example"
PADDING = 40_000


def data_folder() -> Path:
    configured = os.environ.get("TOOLBOARD_DATA_DIR")
    folder = (Path(configured) if configured else ROOT.parent / "shared" / "data") / "acebench"
    return folder if (folder / "data_en").is_dir() else EXAMPLE


def wal_bytes(store: Store) -> int:
    wal = store.path.with_name(store.path.name + "-wal")
    return wal.stat().st_size if wal.exists() else 0


def upload_row(name: str, data: Path, home: Path, padding: int) -> str:
    samples = [sample for sample in get_benchmark("acebench").load(str(data), language="en")
               if not sample.subset.startswith("agent")]
    predictions = home / f"{name}.jsonl"
    predictions.write_text("".join(json.dumps({"id": sample.id, "output": "[f(a=1)]" + " " * padding}) + "\n"
                                   for sample in samples), encoding="utf-8")
    store = Store(home / f"{name}.db")
    before = store.used_bytes()
    submission = check_submission(predictions, "acebench", language="en", data_dir=str(data))
    run_id = store_submission(store, submission, name)
    grown, size = store.used_bytes() - before, predictions.stat().st_size
    return (f"{name:34} {size / 1e6:>9.2f} {grown / 1e6:>9.2f} {grown / size:>9.2f} {grown / len(samples):>10,.0f}"
            f" {store.get_run(run_id).stored_bytes / 1e6:>9.2f} {wal_bytes(store) / 1e6:>7.2f}")


def run_row(data: Path, home: Path) -> str:
    store = Store(home / "run.db")
    before = store.used_bytes()
    subsets = tuple(name for name in get_benchmark("acebench").subsets if not name.startswith("agent"))
    with ScriptedServer(reply=lambda body: {"content": "[f(a=1)]"}) as server:
        config = RunConfig("acebench", ModelSettings(base_url=server.base_url, model="scripted", api_key_env=""),
                           language="en", subsets=subsets, data_dir=str(data), concurrency=16)
        run_id, samples = start_run(RunRequest(config), store)
        asyncio.run(execute(store, run_id, samples))
    store.close()
    store = Store(home / "run.db")
    grown = store.used_bytes() - before
    label = f"run, {len(samples)} items (requests kept)"
    return (f"{label:34} {'-':>9} {grown / 1e6:>9.2f} {'-':>9} {grown / len(samples):>10,.0f}"
            f" {store.get_run(run_id).stored_bytes / 1e6:>9.2f} {wal_bytes(store) / 1e6:>7.2f}")


def main() -> None:
    data = data_folder()
    print(f"data: {data}")
    print(f"{'workload':34} {'file MB':>9} {'store MB':>9} {'per byte':>9} {'per item':>10} {'counted':>9} {'WAL MB':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        print(upload_row("upload, short answers", data, home, 0), flush=True)
        print(upload_row("upload, ~40 kB answers", data, home, PADDING), flush=True)
        print(run_row(data, home), flush=True)


if __name__ == "__main__":
    main()
