"""Per-request engine work on a slot's path: for every request after a connection's first, the time from the
server sending the answer before it on the same connection to this request arriving, for a CLI run and for a bare
`AsyncOpenAI` client sending the very bodies the run sent at the same concurrency (the scripted server, 0.2 s per
answer, in this process; the run and the bare client each in a process of its own, so neither shares the server's
interpreter lock). The difference of the two is what the engine adds between an answer and the next request
(parsing and keeping the answer, building the next request, scoring): at low concurrency it is most of what
separates a run's request phase from the bare client's (issue 31).

Usage: python benchmarks/slot_gaps.py [--workload bfcl|acebench] [--concurrency 8] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.engine_phases import acebench_data  # noqa: E402
from benchmarks.throughput import bare_sdk_seconds  # noqa: E402
from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV, pinned_wheel  # noqa: E402
from tests.engine_fixtures import correct_reply  # noqa: E402
from tests.scripted_server import ScriptedServer  # noqa: E402

WORKLOADS = {"bfcl": ["bfcl", "--subset", "simple_python"],
             "acebench": ["acebench", "--language", "en", "--subset", "normal_atom_bool", "normal_single_turn_single_function"]}


class GapServer(ScriptedServer):
    """The scripted server, noting for each connection when its last answer left and, for each request after
    that connection's first, the gap since."""

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.answered_at: dict[Any, float] = {}
        self.gaps: list[float] = []

    async def _handle(self, request: Any) -> Any:
        connection = request.transport.get_extra_info("peername")
        if connection in self.answered_at:
            self.gaps.append(time.perf_counter() - self.answered_at[connection])
        response = await super()._handle(request)
        self.answered_at[connection] = time.perf_counter()
        return response

    def take(self) -> list[float]:
        gaps, self.gaps, self.answered_at = self.gaps, [], {}
        return gaps


def line(label: str, gaps: list[float]) -> str:
    ordered = sorted(gaps)
    return (f"{label:9} {len(ordered):5} gaps: median {statistics.median(ordered) * 1000:6.2f} ms, mean "
            f"{statistics.mean(ordered) * 1000:6.2f} ms, p90 {ordered[int(len(ordered) * 0.9)] * 1000:6.2f} ms")


def bare_client(base_url: str, bodies_file: str, concurrency: str) -> int:
    """The bare client's side, in a process of its own: the bodies (one per line) sent `concurrency` at a time."""
    bodies = [line for line in Path(bodies_file).read_bytes().splitlines() if line.strip()]
    asyncio.run(bare_sdk_seconds(base_url, bodies, int(concurrency)))
    return 0


def main() -> int:
    if sys.argv[1:2] == ["--bare"]:
        return bare_client(*sys.argv[2:5])
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="bfcl")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    data = acebench_data()
    if args.workload == "acebench" and data is None:
        raise SystemExit("no ACEBench data: set TOOLBOARD_DATA_DIR or put it in ../shared/data")
    extra = ["--data-dir", str(data)] if args.workload == "acebench" else []
    with GapServer(reply=correct_reply, latency=args.latency) as server, tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "TOOLBOARD_HOME": home, WHEEL_PATH_ENV: str(pinned_wheel())}
        subprocess.run([sys.executable, "-m", "evaluators", "run", *WORKLOADS[args.workload], *extra, "--base-url",
                        server.base_url, "--model", "scripted", "--concurrency", str(args.concurrency), "--no-cache",
                        "--json"], cwd=ROOT, env=env, capture_output=True, check=True)
        ours = server.take()
        bodies = Path(home) / "bodies"
        bodies.write_bytes(b"\n".join(server.raw_bodies))
        subprocess.run([sys.executable, __file__, "--bare", server.base_url, str(bodies), str(args.concurrency)],
                       cwd=ROOT, check=True)
        bare = server.take()
    print(line("engine", ours))
    print(line("bare SDK", bare))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
