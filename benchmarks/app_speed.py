"""Web app speed: start-up time to the first served page, and the server time of a leaderboard filter.

Starts `python app.py` as a new user would (fresh TOOLBOARD_HOME, a free port), times until the page
answers 200, then times the leaderboard filter through the app's API (round trip) and in-process
(the server-side work alone), over a store holding published rows plus N stored runs.

Usage: python benchmarks/app_speed.py [--runs 50] [--repeat 20]

Most of the start-up is `import gradio` (3.5-4.5 s on a 2-core machine here). Measure in an environment
with only requirements.txt installed, as a new user has: gradio also imports optional packages it finds
(IPython, for one), which adds a second or more in a crowded environment.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def seed_runs(count: int) -> None:
    """N finished ACEBench runs in the store, as uploads of the built-in example."""
    from evaluators.core.registry import get_benchmark
    from evaluators.engine.store import Store
    from evaluators.submissions import check_submission, store_submission

    store = Store()
    example = get_benchmark("acebench").example.folder
    submission = check_submission(example / "predictions.jsonl", "acebench", language="en", data_dir=example)
    for index in range(count):
        store_submission(store, submission, f"seeded-model-{index}")
    store.close()


@contextmanager
def started_app(runs: int) -> Iterator[str]:
    """`python app.py` as a new user starts it, on a fresh TOOLBOARD_HOME holding `runs` uploaded runs and a
    free port; its URL once the page answers; stopped afterwards."""
    with tempfile.TemporaryDirectory() as home:
        os.environ["TOOLBOARD_HOME"] = home
        seed_runs(runs)
        port = free_port()
        env = {**os.environ, "GRADIO_SERVER_PORT": str(port), "GRADIO_ANALYTICS_ENABLED": "False"}
        app = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        try:
            url = f"http://127.0.0.1:{port}/"
            wait_for_page(url)
            yield url
        finally:
            app.terminate()
            app.wait(10)


def wait_for_page(url: str, timeout: float = 60) -> float:
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return time.perf_counter() - started
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"the app did not answer at {url} within {timeout:.0f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=50, help="stored runs besides the published rows")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ["TOOLBOARD_HOME"] = home
        seed_runs(args.runs)
        port = free_port()
        env = {**os.environ, "GRADIO_SERVER_PORT": str(port), "GRADIO_ANALYTICS_ENABLED": "False"}
        started = time.perf_counter()
        app = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        try:
            url = f"http://127.0.0.1:{port}/"
            wait_for_page(url)
            startup = time.perf_counter() - started
            from gradio_client import Client

            client = Client(url, verbose=False)
            round_trips = []
            for index in range(args.repeat):
                search = ("gpt", "qwen", "seeded", "")[index % 4]
                began = time.perf_counter()
                client.predict("acebench", "en", search, None, None, False, "official", "overall", api_name="/leaderboard")
                round_trips.append(time.perf_counter() - began)
        finally:
            app.terminate()
            app.wait(10)
        from evaluators.engine.store import Store
        from ui.context import AppContext
        from ui.leaderboard_tab import view_table

        context = AppContext(store=Store())
        server_times = []
        for index in range(args.repeat):
            search = ("gpt", "qwen", "seeded", "")[index % 4]
            began = time.perf_counter()
            view_table(context, "acebench", "en", search, None, None, False, "official", "overall")
            server_times.append(time.perf_counter() - began)
        context.close()
    print(f"start-up to first page   {startup:.2f} s  (python app.py until GET / answers 200; target < 5 s)")
    print(f"leaderboard filter       {statistics.median(server_times) * 1000:.0f} ms median server time, "
          f"{max(server_times) * 1000:.0f} ms max  ({args.runs} stored runs + published rows; target < 300 ms)")
    print(f"  through the API        {statistics.median(round_trips) * 1000:.0f} ms median round trip (gradio queue included)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
