"""ToolBench-Static end to end, as a user runs it: whole `python -m evaluators run` processes (start to
exit) over the real out-of-domain split (1,547 steps, the messages EvalScope 1.14.1 sends) at
concurrency 64 against a local scripted endpoint answering in 0.2 s; then the same run again, answered
by the cache. Prints each wall time and the ratio to EvalScope's whole process on the same workload
(17.7 s, measured on this kind of machine; see README).

Data: TOOLBOARD_DATA_DIR/toolbench_static/derived, else ../shared/data/toolbench_static/derived.
Usage: python benchmarks/toolbench_whole.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.scripted_server import ScriptedServer  # noqa: E402

EVALSCOPE_SECONDS = 17.7


def data_folder() -> Path:
    configured = os.environ.get("TOOLBOARD_DATA_DIR")
    base = Path(configured) if configured else ROOT.parent / "shared" / "data"
    return base / "toolbench_static" / "derived"


def finish_reply(body: dict) -> dict:
    return {"content": "Thought: done\nAction: Finish\nAction Input: {\"return_type\": \"give_answer\", \"final_answer\": \"ok\"}"}


def whole_run(server_url: str, data: Path, home: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "evaluators", "run", "toolbench_static", "--data-dir", str(data), "--subset",
                    "out_of_domain", "--base-url", server_url, "--model", "scripted", "--api-key-env", "",
                    "--concurrency", "64", "--json"], cwd=ROOT, env={**os.environ, "TOOLBOARD_HOME": home},
                   capture_output=True, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    data = data_folder()
    if not (data / "out_of_domain.jsonl").is_file():
        sys.exit(f"no ToolBench-Static data at {data} (set TOOLBOARD_DATA_DIR)")
    with ScriptedServer(reply=finish_reply, latency=0.2) as server:
        for attempt in range(args.repeat):
            home = tempfile.mkdtemp(prefix="toolbench-whole-")
            cold = whole_run(server.base_url, data, home)
            cached = whole_run(server.base_url, data, home)
            print(f"run {attempt + 1}: cold {cold:.2f} s ({EVALSCOPE_SECONDS / cold:.2f}x EvalScope's {EVALSCOPE_SECONDS} s), "
                  f"answered by the cache {cached:.2f} s")


if __name__ == "__main__":
    main()
