"""ACEBench normal + special (973 English items, the official requests) through the engine at
concurrency 64 against a local scripted endpoint answering in 0.2 s: the in-flight efficiency (the
ideal ceil(requests/64)·0.2 s over the time from the first request's arrival to the last answer) and
the wall time; then the same run again, which must send no request (answered by the cache).

Data: TOOLBOARD_DATA_DIR/acebench, else ../shared/data/acebench.
Usage: python benchmarks/acebench_inflight.py [--repeat 2]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluators.engine.runner import execute, start_run  # noqa: E402
from evaluators.engine.settings import ModelSettings, RunConfig, RunRequest  # noqa: E402
from evaluators.engine.store import Store  # noqa: E402
from tests.scripted_server import ScriptedServer  # noqa: E402

CONCURRENCY = 64
LATENCY = 0.2


def data_folder() -> Path:
    configured = os.environ.get("TOOLBOARD_DATA_DIR")
    return (Path(configured) if configured else ROOT.parent / "shared" / "data") / "acebench"


def one_run(store: Store, server: ScriptedServer, arrivals: list[float], data: Path) -> str:
    arrivals.clear()
    config = RunConfig("acebench", ModelSettings(server.base_url, "scripted", api_key_env=""), language="en",
                       subsets=("normal", "special"), data_dir=str(data), concurrency=CONCURRENCY)
    run_id, samples = start_run(RunRequest(config), store)
    started = time.perf_counter()
    outcome = asyncio.run(execute(store, run_id, samples))
    wall = time.perf_counter() - started
    if not arrivals:
        return f"{len(samples)} items, {outcome.status}, wall {wall:.2f} s, requests sent 0"
    window = arrivals[-1] + LATENCY - arrivals[0]
    ideal = math.ceil(len(arrivals) / CONCURRENCY) * LATENCY
    return (f"{len(samples)} items, {outcome.status}, wall {wall:.2f} s, requests sent {len(arrivals)}, in flight "
            f"{window:.2f} s against the ideal {ideal:.1f} s: efficiency {ideal / window:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    data = data_folder()
    if not data.is_dir():
        sys.exit(f"no ACEBench data at {data} (set TOOLBOARD_DATA_DIR)")
    arrivals: list[float] = []
    with ScriptedServer(latency=LATENCY, on_request=lambda body: arrivals.append(time.monotonic())) as server:
        for attempt in range(args.repeat):
            store = Store(Path(tempfile.mkdtemp(prefix="acebench-inflight-")) / "toolboard.db")
            print(f"run {attempt + 1}: {one_run(store, server, arrivals, data)}")
            print(f"  again:  {one_run(store, server, arrivals, data)}")
            store.close()


if __name__ == "__main__":
    main()
