"""Web app speed: start-up time to the first served page, and the server time of a leaderboard filter.

Starts `python app.py` as a new user would (fresh TOOLBOARD_HOME, a free port), times until the page
answers 200, then times the leaderboard filter through the app's API (round trip) and in-process
(the server-side work alone), over a store holding published rows plus N stored runs.

Usage: python benchmarks/app_speed.py [--runs 50] [--repeat 20] [--startups 5]

`--startups N` also starts the app N times as installed and N times with pyarrow and datasets hidden
(imports of them fail, as on a machine without them: pandas then keeps its own string storage), one after
the other, and prints both medians and their ratio: what installing the results dataset's dependencies
costs the app's start-up (the limit is 1.2x).

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
    from evaluators.service.submissions import check_submission, store_submission

    store = Store()
    example = get_benchmark("acebench").example.folder
    submission = check_submission(example / "predictions.jsonl", "acebench", language="en", data_dir=example)
    for index in range(count):
        store_submission(store, submission, f"seeded-model-{index}")
    store.close()


@contextmanager
def started_app(runs: int, project: Path | None = None) -> Iterator[str]:
    """`python app.py` as a new user starts it (this checkout's, or `project`'s), on a fresh TOOLBOARD_HOME holding
    `runs` uploaded runs and a free port; its URL once the page answers; stopped afterwards."""
    with tempfile.TemporaryDirectory() as home:
        os.environ["TOOLBOARD_HOME"] = home
        seed_runs(runs)
        port = free_port()
        env = {**os.environ, "GRADIO_SERVER_PORT": str(port), "GRADIO_ANALYTICS_ENABLED": "False"}
        app = subprocess.Popen([sys.executable, "app.py"], cwd=project or ROOT, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        try:
            url = f"http://127.0.0.1:{port}/"
            wait_for_page(url)
            yield url
        finally:
            app.terminate()
            app.wait(10)


# Runs app.py with some top-level packages hidden: importing them raises ImportError, as when not installed.
HIDING_LAUNCHER = """
import runpy, sys
hidden = set(sys.argv[1:])
class Hide:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in hidden:
            raise ImportError(f"{name} is hidden by benchmarks/app_speed.py")
sys.meta_path.insert(0, Hide())
sys.argv = ["app.py"]
runpy.run_path("app.py", run_name="__main__")
"""
HIDDEN_FOR_COMPARISON = ("pyarrow", "datasets")


def startup_seconds(hidden: tuple[str, ...] = ()) -> float:
    """Seconds from starting the app's process (app.py, with `hidden` packages made unimportable) until its
    page answers 200; the process is stopped afterwards."""
    port = free_port()
    env = {**os.environ, "GRADIO_SERVER_PORT": str(port), "GRADIO_ANALYTICS_ENABLED": "False"}
    command = [sys.executable, "-c", HIDING_LAUNCHER, *hidden] if hidden else [sys.executable, "app.py"]
    started = time.perf_counter()
    app = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_page(f"http://127.0.0.1:{port}/")
        return time.perf_counter() - started
    finally:
        app.terminate()
        app.wait(10)


def compare_startups(count: int) -> None:
    """The app's start-up as installed and with HIDDEN_FOR_COMPARISON hidden, alternating, `count` times each."""
    installed, without = [], []
    for _ in range(count):
        installed.append(startup_seconds())
        without.append(startup_seconds(HIDDEN_FOR_COMPARISON))
    ratio = statistics.median(installed) / statistics.median(without)
    print(f"start-up, as installed   {statistics.median(installed):.2f} s median of {count} "
          f"({min(installed):.2f}-{max(installed):.2f})")
    print(f"start-up, without {'/'.join(HIDDEN_FOR_COMPARISON)}  {statistics.median(without):.2f} s median of {count} "
          f"({min(without):.2f}-{max(without):.2f})")
    print(f"  ratio                  {ratio:.2f}x  (limit 1.2x)")


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
    parser.add_argument("--startups", type=int, default=0,
                        help="also compare N start-ups as installed with N without pyarrow/datasets")
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
        from evaluators.service.board_queries import view_rows as view_table
        from ui.context import AppContext

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
    if args.startups:
        with tempfile.TemporaryDirectory() as home:
            os.environ["TOOLBOARD_HOME"] = home
            seed_runs(args.runs)
            compare_startups(args.startups)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
