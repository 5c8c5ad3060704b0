"""Engine throughput against a local scripted endpoint with fixed latency.

Starts the scripted OpenAI-compatible server on 127.0.0.1 (0.2 s per request by default), runs N
synthetic ACEBench items at concurrency C through the real engine (client, retries, store, cache
off), and prints wall time, the ideal ceil(N/C)·latency, the efficiency ratio, requests/s and peak
RSS; also the CLI's start-up time. Optionally injects faults (--fault-rate) to show none is lost.

Without faults it measures, in one run: the engine as the CLI runs it (request starts paced), the
engine with starts not paced, and the same requests through the bare openai SDK with no engine at
all (one process, no pacing).

The defaults are the workload we compare with EvalScope 1.14.1 on: 1,547 requests at concurrency 64
against 0.2 s of latency (ideal 5.0 s; EvalScope took 17.7 s).

Usage: python benchmarks/throughput.py [--samples 1547] [--concurrency 64] [--latency 0.2] [--fault-rate 0.1]
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
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluators.engine.client import RetryPolicy  # noqa: E402
from evaluators.engine.pacing import PACING_ENV, pacing_enabled  # noqa: E402
from evaluators.engine.runner import RunOutcome, execute, start_run  # noqa: E402
from evaluators.engine.sdk_transport import EndpointSpec, make_sdk_client  # noqa: E402
from evaluators.engine.settings import ModelSettings, RunConfig, RunRequest  # noqa: E402
from evaluators.engine.store import Store  # noqa: E402
from tests.engine_fixtures import write_dataset  # noqa: E402


@dataclass
class EngineTiming:
    label: str
    one_off: float  # the SDK's import and first client
    wall: float
    outcome: RunOutcome


def cli_startup_seconds() -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "evaluators", "--help"], cwd=ROOT, capture_output=True, check=True)
        best = min(best, time.perf_counter() - started)
    return best


async def timed_engine_run(label: str, store: Store, config: RunConfig) -> EngineTiming:
    """One engine run, its one-off start (the SDK's import and first client) timed apart."""
    run_id, samples = start_run(RunRequest(config), store)
    started = time.perf_counter()
    await make_sdk_client(EndpointSpec("http://127.0.0.1:9/v1", None, 1.0)).close()
    one_off = time.perf_counter() - started
    started = time.perf_counter()
    outcome = await execute(store, run_id, samples, retry=RetryPolicy(base_delay=0.05))
    wall = time.perf_counter() - started
    return EngineTiming(label, one_off, wall, outcome)


async def bare_sdk_seconds(base_url: str, bodies: list[bytes], concurrency: int) -> float:
    """The bodies through the openai SDK alone (no engine), `concurrency` at a time: the ceiling any engine
    built on the SDK can reach on this machine (first request out .. last answer in)."""
    return await bare_chain_seconds(base_url, [[body] for body in bodies], concurrency)


async def bare_chain_seconds(base_url: str, chains: list[list[bytes]], concurrency: int) -> float:
    """Chains of bodies through the openai SDK alone, `concurrency` chains at a time, each chain's bodies one after
    another (a rollout's requests, each waiting for the answer before it): first request out .. last answer in."""
    from openai import AsyncOpenAI, DefaultAioHttpClient

    client = AsyncOpenAI(base_url=base_url, api_key="not-needed", max_retries=0, http_client=DefaultAioHttpClient())
    pending = list(reversed(chains))

    async def worker() -> None:
        while pending:
            for body in pending.pop():
                await client.post("/chat/completions", content=body, cast_to=object,
                                  options={"headers": {"Content-Type": "application/json"}})

    started = time.perf_counter()
    await asyncio.gather(*[worker() for _ in range(concurrency)])
    seconds = time.perf_counter() - started
    await client.close()
    return seconds


def bare_bodies(samples: int) -> list[bytes]:
    return [json.dumps({"model": "scripted", "messages": [{"role": "user", "content": f"bare {index}"}]}).encode()
            for index in range(samples)]


def server_stats(server: subprocess.Popen) -> dict:
    server.stdin.write("stats\n")
    server.stdin.flush()
    return json.loads(server.stdout.readline())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=1547)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--fault-rate", type=float, default=0.0, help="share of first attempts answered with 503")
    args = parser.parse_args()
    # Faults hit only first attempts of each prompt, so with faults the prompts are sent by one run only.
    # (label, starts paced)
    if args.fault_rate:
        variants = [("engine, as the CLI runs it", pacing_enabled())]
    else:
        variants = [("engine, as the CLI runs it (starts paced)", True),
                    (f"engine, starts not paced ({PACING_ENV}=off)", False)]
    timings: list[EngineTiming] = []
    requests: list[int] = []
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
            for label, paced in variants:
                before = server_stats(server)["requests"]
                os.environ[PACING_ENV] = "on" if paced else "off"
                timings.append(asyncio.run(timed_engine_run(label, store, config)))
                requests.append(server_stats(server)["requests"] - before)
            peak_in_flight = server_stats(server)["max_in_flight"]
            bare_wall = asyncio.run(bare_sdk_seconds(base_url, bare_bodies(args.samples), args.concurrency)) if not args.fault_rate else None
        finally:
            server.stdin.close()
            server.terminate()
            server.wait()
    ideal = math.ceil(args.samples / args.concurrency) * args.latency
    print(f"samples {args.samples}, concurrency {args.concurrency}, latency {args.latency:g} s, fault rate {args.fault_rate:g}, "
          f"{os.cpu_count()} cores")
    print(f"ideal            {ideal:.2f} s  (ceil(N/C) x latency)")
    for timing, sent in zip(timings, requests):
        subset = timing.outcome.report.to_json()["subsets"]["normal_atom_bool"]
        errors = timing.outcome.report.to_json()["errors"].get("request_error", 0)
        print(f"{timing.label}:")
        print(f"  wall time      {timing.wall:.2f} s  (all requests, storing and scoring; the one-off start, "
              f"{timing.one_off:.2f} s, is apart)")
        print(f"  efficiency     {ideal / timing.wall:.2f}  (target >= 0.9)")
        print(f"  requests/s     {sent / timing.wall:.1f}  ({sent} requests)")
        print(f"  scored         {subset['n']} samples, accuracy {subset['metrics']['accuracy']}, request errors {errors}")
    if bare_wall is not None:
        print(f"bare SDK loop    {bare_wall:.2f} s, efficiency {ideal / bare_wall:.2f}  (the same requests through the"
              " openai SDK alone: no engine, one process, starts not paced)")
    print(f"peak in flight   {peak_in_flight}  (the server's count; limit {args.concurrency})")
    print(f"peak RSS         {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB  (the engine's process;"
          " target < 400 MB)")
    print(f"CLI --help       {cli_startup_seconds():.2f} s  (target < 1 s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
