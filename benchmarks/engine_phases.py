"""Where a CLI run's time goes, whole process, beside the floor: a bare `openai` async client sending the same
request bodies at the same concurrency to the same server, in the same session.

Starts the scripted OpenAI-compatible server in its own process (0.2 s per answer by default), then for each
workload and concurrency runs `python -m evaluators run ...` as a user would (a fresh process, --no-cache, one
TOOLBOARD_HOME per workload kept across its runs, so files a run keeps between runs are warm after the first,
untimed run) and reads the phases from outside it:

  start -> first request   the process is spawned .. the server sees its first request
  requests                 the first request arrives .. the last answer leaves the server
  tail                     the last answer .. the process has exited (scoring, report, store, exit)

then sends the very bodies that run sent (dumped by the server) through a bare AsyncOpenAI client, `C` at a
time, and times its request phase the same way. Also: the interpreter with the CLI's imports alone
(`python -m evaluators --help`). Medians of --repeat runs. Goals (issue 31): start -> first request <= 0.5 s;
whole process <= the bare client's request phase + 0.5 s.

Workloads: BFCL's simple_python, multiple, parallel and live_simple (1,058 items; the data from the pinned
wheel, TOOLBOARD_BFCL_WHEEL or the cached copy) and ACEBench en normal + special (973 items; the data from
TOOLBOARD_DATA_DIR or ../shared/data, skipped when absent).

Usage: python benchmarks/engine_phases.py [--concurrency 8 32] [--repeat 3] [--latency 0.2] [--workload bfcl acebench]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.throughput import bare_sdk_seconds  # noqa: E402
from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV, pinned_wheel  # noqa: E402

WORKLOADS = {
    "bfcl": ["bfcl", "--subset", "simple_python", "multiple", "parallel", "live_simple"],
    "acebench": ["acebench", "--language", "en", "--subset", "normal", "special"],
}


@dataclass
class Phases:
    start_to_first: float
    requests: float
    tail: float
    whole: float
    sent: int


class Server:
    """The scripted server in its own process, driven over its stdin."""

    def __init__(self, latency: float):
        self.process = subprocess.Popen([sys.executable, "-m", "tests.scripted_server", "--latency", str(latency)],
                                        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.base_url = self.process.stdout.readline().strip()

    def ask(self, command: str) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.terminate()
        self.process.wait()


def acebench_data() -> Path | None:
    for candidate in (os.environ.get("TOOLBOARD_DATA_DIR"), ROOT.parent / "shared" / "data"):
        if candidate and (Path(candidate) / "acebench").is_dir():
            return Path(candidate)
    return None


def timed_cli_run(server: Server, arguments: list[str], env: dict[str, str]) -> Phases:
    server.ask("reset")
    started = time.time()
    done = subprocess.run([sys.executable, "-m", "evaluators", "run", *arguments], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    ended = time.time()
    if done.returncode != 0:
        raise SystemExit(f"the run failed ({done.returncode}): {done.stderr.strip()[-600:]}")
    stats = server.ask("stats")
    first, last = stats["first_request_at"], stats["last_answer_at"]
    return Phases(first - started, last - first, ended - last, ended - started, stats["bodies"])


def cli_import_seconds(env: dict[str, str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "evaluators", "--help"], cwd=ROOT, env=env, capture_output=True, check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--workload", nargs="+", choices=sorted(WORKLOADS), default=sorted(WORKLOADS))
    args = parser.parse_args()
    wheel = pinned_wheel()  # found (or fetched) once, outside the timed runs
    data = acebench_data()
    server = Server(args.latency)
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for workload in args.workload:
                if workload == "acebench" and data is None:
                    print("acebench: skipped (no ACEBench data: set TOOLBOARD_DATA_DIR or put it in ../shared/data)")
                    continue
                env = {**os.environ, "TOOLBOARD_HOME": str(Path(tmp) / workload), WHEEL_PATH_ENV: str(wheel),
                       "PYTHONDONTWRITEBYTECODE": os.environ.get("PYTHONDONTWRITEBYTECODE", "")}
                extra = ["--data-dir", str(data)] if workload == "acebench" and data is not None else []
                imports = cli_import_seconds(env, args.repeat)
                for concurrency in args.concurrency:
                    arguments = [*WORKLOADS[workload], *extra, "--base-url", server.base_url, "--model", "scripted",
                                 "--concurrency", str(concurrency), "--no-cache", "--json"]
                    timed_cli_run(server, arguments, env)  # untimed: files a run keeps between runs are made
                    runs = [timed_cli_run(server, arguments, env) for _ in range(args.repeat)]
                    dump = Path(tmp) / "bodies.jsonl"
                    server.ask(f"dump {dump}")
                    bodies = [line for line in dump.read_bytes().splitlines() if line.strip()]
                    bare = statistics.median(asyncio.run(bare_sdk_seconds(server.base_url, bodies, concurrency))
                                             for _ in range(args.repeat))
                    rows.append((workload, concurrency, imports, runs, bare))
    finally:
        server.close()
    print(f"{os.cpu_count()} cores, latency {args.latency:g} s, medians of {args.repeat} whole processes "
          "(after one untimed run)")
    print(f"{'workload':10} {'C':>3} {'requests':>8} {'imports':>8} {'start->1st':>10} {'requests':>9} {'tail':>6} "
          f"{'whole':>7} {'bare':>7} {'whole-bare':>10}")
    for workload, concurrency, imports, runs, bare in rows:
        def median(name: str, runs: list[Phases] = runs) -> float:
            return statistics.median(getattr(run, name) for run in runs)
        whole = median("whole")
        print(f"{workload:10} {concurrency:>3} {runs[0].sent:>8} {imports:>7.2f}s {median('start_to_first'):>9.2f}s "
              f"{median('requests'):>8.2f}s {median('tail'):>5.2f}s {whole:>6.2f}s {bare:>6.2f}s {whole - bare:>9.2f}s")
    print("goals: start->1st <= 0.50 s; whole - bare <= 0.50 s (bare: the same bodies through a bare AsyncOpenAI "
          "client, first request out .. last answer in)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
