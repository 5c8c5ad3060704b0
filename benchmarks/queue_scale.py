"""Queue mode's throughput against the number of workers, on one machine.

Starts Redis (Debian's redis-server, a free loopback port), the scripted endpoint in its own process
(0.2 s per answer), then for 1, 2 and 4 workers (`python -m evaluators worker --concurrency 1`, each its
own process and TOOLBOARD_HOME): queues RUNS runs at once (200 items each, per-run concurrency 16) and
times them from the first queued to the last stored in the app's store. Prints runs per minute, the wall
time and its ratio to the ideal (ceil(runs / workers) runs one after the other, each 200 x 0.2 s / 16).

Usage: python benchmarks/queue_scale.py [--runs 8] [--workers 1 2 4] [--items 200] [--latency 0.2]

Every worker on one 2-core machine shares its cores with the others, the endpoint and Redis, so the
figures show how the queue spreads runs, not what separate machines would reach.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    from evaluators.engine.queue_app import QueueSettings
    from evaluators.engine.queue_jobs import QueueJobs
    from evaluators.engine.settings import ModelSettings, RunConfig, RunRequest
    from evaluators.engine.store import Store
    from tests.engine_fixtures import write_dataset
    from tests.queue_fixtures import RedisServer, needs_redis, start_worker

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=16, help="requests in flight per run")
    args = parser.parse_args()
    try:
        needs_redis()
    except BaseException:  # pytest's skip outside pytest
        raise SystemExit("needs Debian's redis-server (apt-get install redis-server)") from None

    ideal_run = args.items * args.latency / args.concurrency
    print(f"{args.runs} runs of {args.items} items, concurrency {args.concurrency} per run, endpoint {args.latency} s "
          f"per answer (one run alone, ideally {ideal_run:.2f} s)")
    print(f"{'workers':>7}  {'wall s':>7}  {'runs/min':>8}  {'ideal s':>7}  {'wall/ideal':>10}")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        data = write_dataset(root / "data", args.items)
        endpoint = subprocess.Popen([sys.executable, "-m", "tests.scripted_server", "--latency", str(args.latency)],
                                    cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        base_url = endpoint.stdout.readline().strip()
        redis = RedisServer(root / "redis")
        redis.start()
        try:
            for count in args.workers:
                os.environ["TOOLBOARD_HOME"] = str(root / f"app-{count}")
                os.environ.setdefault("OPENAI_API_KEY", "unused")
                workers = [start_worker(redis.url, root / f"pool-{count}", f"w{index}", concurrency=1,
                                        TOOLBOARD_QUEUE_VISIBILITY_S="300")  # the default, not the tests' seconds
                           for index in range(count)]
                store = Store()
                jobs = QueueJobs(store, QueueSettings(redis.url), poll_seconds=0.2)
                try:
                    started = time.perf_counter()
                    run_ids = [jobs.start(RunRequest(RunConfig(
                        benchmark="acebench", language="en", subsets=("normal_atom_bool",), data_dir=str(data),
                        limit=args.items, concurrency=args.concurrency, use_cache=False,
                        model=ModelSettings(base_url=base_url, model=f"scale-{count}-{index}"))))
                        for index in range(args.runs)]
                    ended = [jobs.wait(run_id, 1800) for run_id in run_ids]
                    wall = time.perf_counter() - started
                finally:
                    jobs.shutdown()
                    store.close()
                    for worker in workers:
                        worker.stop()
                if ended.count("finished") != args.runs:
                    raise SystemExit(f"{count} worker(s): runs ended {ended}")
                ideal = math.ceil(args.runs / count) * ideal_run
                print(f"{count:>7}  {wall:>7.1f}  {args.runs / wall * 60:>8.1f}  {ideal:>7.1f}  {wall / ideal:>10.2f}",
                      flush=True)
        finally:
            redis.stop()
            endpoint.stdin.close()
            endpoint.terminate()
            endpoint.wait(10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
