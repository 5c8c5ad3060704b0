"""ToolBench-Static end to end, as a user runs it: whole `python -m evaluators run` processes (start to
exit) over the real out-of-domain split (1,547 steps, the messages EvalScope 1.14.1 sends) at
concurrency 64 against a local scripted endpoint answering in 0.2 s; then the same run again --reruns times,
answered by the cache (0 requests; the goal of issue 31: under 0.6 s). Prints each wall time, the ratio of the
cold run to EvalScope's whole process on the same workload (17.7 s, measured on this kind of machine; see
README), and where a cached rerun's time goes (TOOLBOARD_PHASE_LOG, seconds after the spawn, medians).

Each attempt starts from an empty TOOLBOARD_HOME, as a new user's first run and reruns. Bytecode is compiled
first, as an installed copy has it.

Data: TOOLBOARD_DATA_DIR/toolbench_static/derived, else ../shared/data/toolbench_static/derived.
Usage: python benchmarks/toolbench_whole.py [--repeat 3] [--reruns 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluators.core.phase_log import PHASE_LOG_ENV  # noqa: E402
from tests.scripted_server import ScriptedServer  # noqa: E402

EVALSCOPE_SECONDS = 17.7


def data_folder() -> Path:
    configured = os.environ.get("TOOLBOARD_DATA_DIR")
    base = Path(configured) if configured else ROOT.parent / "shared" / "data"
    return base / "toolbench_static" / "derived"


def finish_reply(body: dict) -> dict:
    return {"content": "Thought: done\nAction: Finish\nAction Input: {\"return_type\": \"give_answer\", \"final_answer\": \"ok\"}"}


def whole_run(server_url: str, data: Path, home: str, phases: Path | None = None) -> float:
    env = {**os.environ, "TOOLBOARD_HOME": home, **({PHASE_LOG_ENV: str(phases)} if phases else {})}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "evaluators", "run", "toolbench_static", "--data-dir", str(data), "--subset",
                    "out_of_domain", "--base-url", server_url, "--model", "scripted", "--api-key-env", "",
                    "--concurrency", "64", "--json"], cwd=ROOT, env=env, capture_output=True, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--reruns", type=int, default=5)
    args = parser.parse_args()
    data = data_folder()
    if not (data / "out_of_domain.jsonl").is_file():
        sys.exit(f"no ToolBench-Static data at {data} (set TOOLBOARD_DATA_DIR)")
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "evaluators")], check=True,
                   stdout=subprocess.DEVNULL)
    cached_all: list[float] = []
    phases: dict[str, list[float]] = {}
    with ScriptedServer(reply=finish_reply, latency=0.2) as server, tempfile.TemporaryDirectory() as tmp:
        for attempt in range(args.repeat):
            home = tempfile.mkdtemp(prefix="toolbench-whole-", dir=tmp)
            cold = whole_run(server.base_url, data, home)
            cached = []
            for _ in range(args.reruns):
                log = Path(home) / "phases.json"
                started = time.time()
                cached.append(whole_run(server.base_url, data, home, log))
                for phase, at in json.loads(log.read_text()).items():
                    phases.setdefault(phase, []).append(at - started)
            cached_all += cached
            print(f"run {attempt + 1}: cold {cold:.2f} s ({EVALSCOPE_SECONDS / cold:.2f}x EvalScope's {EVALSCOPE_SECONDS} s), "
                  f"answered by the cache {', '.join(f'{value:.2f}' for value in cached)} s")
    print(f"answered by the cache: median {statistics.median(cached_all):.3f} s, min {min(cached_all):.3f}, "
          f"max {max(cached_all):.3f} (goal: under 0.6 s)")
    print("a cached rerun's phases, seconds after the spawn (medians): " + ", ".join(
        f"{phase} {statistics.median(times):.3f}" for phase, times in sorted(phases.items(), key=lambda item: statistics.median(item[1]))))


if __name__ == "__main__":
    main()
