"""Where a CLI run's time goes, whole process, beside the floor: a bare `openai` async client sending the same
request bodies at the same concurrency to the same server, in the same session.

Starts the scripted OpenAI-compatible server in its own process (0.2 s per answer by default), then for each
workload and concurrency runs `python -m evaluators run ...` as a user would (a fresh process, --no-cache, one
TOOLBOARD_HOME per workload kept across its runs, so files a run keeps between runs, such as the parsed data,
are warm after the first, untimed run; the endpoint check a run keeps for a few minutes is removed before each
timed run, so every timed run looks at the endpoint as a first run does) and reads its phases:

  from outside the process (the server's first request and last answer, the process's spawn and exit):
    start -> first request   the process is spawned .. the server sees its first request
    requests                 the first request arrives .. the last answer leaves the server
    tail                     the last answer .. the process has exited (scoring, report, store, exit)
  from inside it (TOOLBOARD_PHASE_LOG, see evaluators/core/phase_log.py), as seconds after the spawn:
    imports done, endpoint checked, data loaded, run created, first request, last answer, requests done,
    scored and stored, report printed, exit

then sends the very bodies that run sent (dumped by the server) through a bare AsyncOpenAI client, `C` at a
time, and times its request phase the same way. Medians of --repeat runs. Goals (issue 31): start -> first
request <= 0.5 s; whole process <= the bare client's request phase + 0.5 s.

Workloads: BFCL's simple_python, multiple, parallel and live_simple (1,058 items; the data from the pinned
wheel, TOOLBOARD_BFCL_WHEEL or the cached copy), ACEBench en normal + special (973 items) and ACEBench en agent
(50 rollouts, the scripted server playing the agent's model and the simulated user; the data from
TOOLBOARD_DATA_DIR or ../shared/data, skipped when absent).

Usage: python benchmarks/engine_phases.py [--concurrency 8 32] [--repeat 3] [--latency 0.2]
                                          [--workload bfcl acebench acebench-agent]
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.server_process import ServerProcess  # noqa: E402
from benchmarks.throughput import bare_chain_seconds  # noqa: E402
from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV, pinned_wheel  # noqa: E402
from evaluators.core.phase_log import PHASE_LOG_ENV  # noqa: E402
from evaluators.core.registry import get_benchmark  # noqa: E402
from evaluators.core.selection import runnable_subsets  # noqa: E402
from evaluators.engine.client import encode_body, request_of_event  # noqa: E402
from evaluators.engine.preflight import CHECKS_FILE  # noqa: E402
from evaluators.engine.store import Store  # noqa: E402

WORKLOADS = {
    "bfcl": ["bfcl", "--subset", "simple_python", "multiple", "parallel", "live_simple"],
    "acebench": ["acebench", "--language", "en", "--subset", "normal", "special"],
    "acebench-agent": ["acebench", "--language", "en", "--subset", "agent"],
}
NEEDS_ACEBENCH_DATA = ("acebench", "acebench-agent")
# The phases a run marks (evaluators/core/phase_log.py), in their order.
INSIDE = ("imports done", "endpoint checked", "data loaded", "run created", "first request", "last answer",
          "requests done", "scored and stored", "report printed", "exit")


@dataclass
class Phases:
    start_to_first: float
    requests: float
    tail: float
    whole: float
    sent: int
    inside: dict[str, float]  # seconds after the spawn
    run_id: str


def acebench_data() -> Path | None:
    for candidate in (os.environ.get("TOOLBOARD_DATA_DIR"), ROOT.parent / "shared" / "data"):
        if candidate and (Path(candidate) / "acebench").is_dir():
            return Path(candidate)
    return None


def server_script(workload: str, data: Path | None) -> list[str]:
    """The scripted server's reply script for a workload: the agent rollouts need the model's and the simulated
    user's turns played from the items' own milestones."""
    if workload == "acebench-agent" and data is not None:
        # Every rollout to the official 40-message limit: the workload (1,030 requests for 50 rollouts).
        return ["--script", "acebench_agent_to_limit", "--script-data", str(data / "acebench")]
    return []


def rollout_chains(home: Path, run_id: str) -> list[list[bytes]]:
    """Each sample's requests (a rollout's: the agent's and its simulated user's) in the order it sent them, as
    the run's store keeps them (its events), encoded as the engine encodes a body; the samples in the run's order."""
    store = Store(home / "toolboard.db")
    try:
        config = store.get_run(run_id).config
        benchmark = get_benchmark(config["benchmark"])
        subsets = runnable_subsets(benchmark, list(config["subsets"]) or None)
        order = {sample.id: index for index, sample in
                 enumerate(benchmark.load(config["data_dir"], language=config["language"], subsets=subsets))}
        stored = sorted((s for s in store.iter_stored_samples(run_id) if s.events), key=lambda s: order[s.sample_id])
        return [[encode_body(request_of_event(s.events, number)) for number in range(1, len(s.events) + 1)]
                for s in stored]
    finally:
        store.close()


def timed_cli_run(server: ServerProcess, arguments: list[str], env: dict[str, str], home: Path) -> Phases:
    (home / CHECKS_FILE).unlink(missing_ok=True)  # the endpoint is looked at, as in a first run
    log = home / "phases.json"
    log.unlink(missing_ok=True)
    server.ask("reset")
    started = time.time()
    done = subprocess.run([sys.executable, "-m", "evaluators", "run", *arguments], cwd=ROOT,
                          env={**env, PHASE_LOG_ENV: str(log)}, capture_output=True, text=True)
    ended = time.time()
    if done.returncode != 0:
        raise SystemExit(f"the run failed ({done.returncode}): {done.stderr.strip()[-600:]}")
    stats = server.ask("stats")
    first, last = stats["first_request_at"], stats["last_answer_at"]
    inside = {phase: at - started for phase, at in json.loads(log.read_text()).items()}
    return Phases(first - started, last - first, ended - last, ended - started, stats["bodies"], inside,
                  json.loads(done.stdout)["run_id"])


def cli_import_seconds(env: dict[str, str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "evaluators", "--help"], cwd=ROOT, env=env, capture_output=True, check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


@dataclass
class Row:
    workload: str
    concurrency: int
    runs: list[Phases]
    bare: float

    def median(self, name: str) -> float:
        return statistics.median(getattr(run, name) for run in self.runs)

    def inside(self, phase: str) -> float | None:
        times = [run.inside[phase] for run in self.runs if phase in run.inside]
        return statistics.median(times) if times else None


def measure(workload: str, concurrency: int, args: argparse.Namespace, data: Path | None, wheel: Path,
            tmp: Path) -> Row:
    server = ServerProcess(args.latency, server_script(workload, data))
    try:
        home = tmp / workload
        home.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "TOOLBOARD_HOME": str(home), WHEEL_PATH_ENV: str(wheel)}
        extra = ["--data-dir", str(data)] if workload in NEEDS_ACEBENCH_DATA and data is not None else []
        arguments = [*WORKLOADS[workload], *extra, "--base-url", server.base_url, "--model", "scripted",
                     "--concurrency", str(concurrency), "--no-cache", "--json"]
        timed_cli_run(server, arguments, env, home)  # untimed: files a run keeps between runs are made
        runs = [timed_cli_run(server, arguments, env, home) for _ in range(args.repeat)]
        dump = tmp / "bodies.jsonl"
        server.ask(f"dump {dump}")
        bodies = [line for line in dump.read_bytes().splitlines() if line.strip()]
        # A rollout's requests each wait for the answer before them: the bare client sends them as chains.
        chains = rollout_chains(home, runs[-1].run_id) if workload == "acebench-agent" else [[body] for body in bodies]
        bare = statistics.median(asyncio.run(bare_chain_seconds(server.base_url, chains, concurrency))
                                 for _ in range(args.repeat))
        return Row(workload, concurrency, runs, bare)
    finally:
        server.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--workload", nargs="+", choices=list(WORKLOADS), default=list(WORKLOADS))
    args = parser.parse_args()
    # Bytecode cached, as an installed copy has it (PYTHONDONTWRITEBYTECODE=1 here would compile every run anew).
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "evaluators")], check=True,
                   stdout=subprocess.DEVNULL)
    wheel = pinned_wheel()  # found (or fetched) once, outside the timed runs
    data = acebench_data()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        imports = cli_import_seconds({**os.environ, "TOOLBOARD_HOME": tmp}, args.repeat)
        for workload in args.workload:
            if workload in NEEDS_ACEBENCH_DATA and data is None:
                print(f"{workload}: skipped (no ACEBench data: set TOOLBOARD_DATA_DIR or put it in ../shared/data)")
                continue
            for concurrency in args.concurrency:
                rows.append(measure(workload, concurrency, args, data, wheel, Path(tmp)))
    print(f"{os.cpu_count()} cores, latency {args.latency:g} s, medians of {args.repeat} whole processes "
          f"(after one untimed run); the CLI's imports alone (`--help`): {imports:.2f} s")
    print(f"{'workload':15} {'C':>3} {'requests':>8} {'start->1st':>10} {'requests':>9} {'tail':>6} "
          f"{'whole':>7} {'bare':>7} {'whole-bare':>10}")
    for row in rows:
        whole = row.median("whole")
        bare = f"{row.bare:>6.2f}s" if row.bare == row.bare else f"{'-':>7}"
        gap = f"{whole - row.bare:>9.2f}s" if row.bare == row.bare else f"{'-':>10}"
        print(f"{row.workload:15} {row.concurrency:>3} {row.runs[0].sent:>8} {row.median('start_to_first'):>9.2f}s "
              f"{row.median('requests'):>8.2f}s {row.median('tail'):>5.2f}s {whole:>6.2f}s {bare} {gap}")
    print("goals: start->1st <= 0.50 s; whole - bare <= 0.50 s (bare: the same bodies through a bare AsyncOpenAI "
          "client, first request out .. last answer in)")
    print("\ninside the process, seconds after the spawn (medians):")
    print(f"{'workload':15} {'C':>3} " + " ".join(f"{phase[:10]:>10}" for phase in INSIDE))
    for row in rows:
        cells = [row.inside(phase) for phase in INSIDE]
        print(f"{row.workload:15} {row.concurrency:>3} " + " ".join(f"{cell:>10.3f}" if cell is not None else f"{'-':>10}"
                                                                 for cell in cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
