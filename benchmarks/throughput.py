"""Engine throughput against a local scripted endpoint with fixed latency.

Starts the scripted OpenAI-compatible server on 127.0.0.1 (0.2 s per request by default), runs N
synthetic ACEBench items at concurrency C through the real engine (client, retries, store, cache
off), and prints wall time, the ideal ceil(N/C)·latency, the efficiency ratio, requests/s and peak
RSS; also the CLI's start-up time. Optionally injects faults (--fault-rate) to show none is lost.

Usage: python benchmarks/throughput.py [--samples 1000] [--concurrency 64] [--latency 0.2] [--fault-rate 0.1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluators.engine.client import ChatClient, RetryPolicy  # noqa: E402
from evaluators.engine.runner import execute, start_run  # noqa: E402
from evaluators.engine.settings import ModelSettings, RunConfig  # noqa: E402
from evaluators.engine.store import Store  # noqa: E402
from tests.engine_fixtures import write_dataset  # noqa: E402


def cli_startup_seconds() -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "evaluators", "--help"], cwd=ROOT, capture_output=True, check=True)
        best = min(best, time.perf_counter() - started)
    return best


async def warm_up_client(model: ModelSettings) -> None:
    await ChatClient(model).close()


async def bare_sdk_seconds(base_url: str, samples: int, concurrency: int) -> float:
    """The same number of requests through the openai SDK alone (no engine): the ceiling any engine
    built on the SDK can reach on this machine."""
    from openai import AsyncOpenAI, DefaultAioHttpClient

    client = AsyncOpenAI(base_url=base_url, api_key="not-needed", max_retries=0, http_client=DefaultAioHttpClient())
    queue: asyncio.Queue[int] = asyncio.Queue()
    for index in range(samples):
        queue.put_nowait(index)

    async def worker() -> None:
        while not queue.empty():
            index = queue.get_nowait()
            body = json.dumps({"model": "scripted", "messages": [{"role": "user", "content": f"bare {index}"}]}).encode()
            await client.post("/chat/completions", content=body, cast_to=object,
                              options={"headers": {"Content-Type": "application/json"}})

    started = time.perf_counter()
    await asyncio.gather(*[worker() for _ in range(concurrency)])
    seconds = time.perf_counter() - started
    await client.close()
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--fault-rate", type=float, default=0.0, help="share of first attempts answered with 503")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["TOOLBOARD_HOME"] = tmp
        data = write_dataset(Path(tmp) / "data", args.samples)
        server = subprocess.Popen(
            [sys.executable, "-m", "tests.scripted_server", "--latency", str(args.latency), "--fault-rate", str(args.fault_rate)],
            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        try:
            base_url = server.stdout.readline().strip()
            model = ModelSettings(base_url=base_url, model="scripted", timeout=30)
            config = RunConfig("acebench", model, language="en", subsets=("normal_atom_bool",), data_dir=str(data),
                               concurrency=args.concurrency, use_cache=False)
            store = Store(Path(tmp) / "bench.db")
            run_id, samples = start_run(config, store)
            import_started = time.perf_counter()
            # One-off costs per process, reported apart: importing the SDK, and the first client, which
            # imports the SDK's HTTP stack lazily (httpcore) and builds its TLS context.
            asyncio.run(warm_up_client(model))
            import_seconds = time.perf_counter() - import_started
            started = time.perf_counter()
            outcome = asyncio.run(execute(store, run_id, samples, retry=RetryPolicy(base_delay=0.05)))
            wall = time.perf_counter() - started
            server.stdin.write("stats\n")
            server.stdin.flush()
            stats = json.loads(server.stdout.readline())
            # The bare loop has no retries, so it is only comparable (and only runs) without injected faults.
            bare_wall = asyncio.run(bare_sdk_seconds(base_url, args.samples, args.concurrency)) if not args.fault_rate else None
        finally:
            server.stdin.close()
            server.terminate()
            server.wait()
        requests, peak_in_flight = stats["requests"], stats["max_in_flight"]
    report = outcome.report.to_json()
    ideal = math.ceil(args.samples / args.concurrency) * args.latency
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"samples {args.samples}, concurrency {args.concurrency}, latency {args.latency:g} s, fault rate {args.fault_rate:g}")
    print(f"wall time        {wall:.2f} s  (all requests, storing and scoring; the one-off SDK import and first client, {import_seconds:.2f} s, are apart)")
    print(f"ideal            {ideal:.2f} s  (ceil(N/C) x latency)")
    print(f"efficiency       {ideal / wall:.2f}  (target >= 0.9)")
    if bare_wall is not None:
        print(f"bare SDK loop    {bare_wall:.2f} s, efficiency {ideal / bare_wall:.2f}  (same requests through the openai SDK"
              " alone: the ceiling for an engine on the SDK)")
    print(f"requests/s       {requests / wall:.1f}  ({requests} requests, peak {peak_in_flight} in flight)")
    print(f"peak RSS         {rss_mb:.0f} MB  (process, the engine's process; target < 400 MB)")
    print(f"scored           {report['subsets']['normal_atom_bool']['n']} samples, accuracy "
          f"{report['subsets']['normal_atom_bool']['metrics']['accuracy']}, request errors {report['errors'].get('request_error', 0)}")
    print(f"CLI --help       {cli_startup_seconds():.2f} s  (target < 1 s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
