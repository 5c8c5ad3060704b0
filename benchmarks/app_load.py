"""Many visitors at once: how long each waits for the leaderboard when 1, 10 or 50 read it together.

Starts `python app.py` as a new user would (fresh TOOLBOARD_HOME holding N stored runs besides the
published rows, a free port), opens one connection per visitor beforehand, then releases every visitor
at the same instant to read the ACEBench board through the `/leaderboard` API, for a few rounds.
Prints p50 / p95 / max of the round trips per crowd size, for two kinds of visitor:

- http: what a browser does, one kept connection per visitor, Gradio's REST route (POST
  /gradio_api/call/leaderboard, then its event stream): the same queue and handler as the page.
- gradio_client: `Client.predict`, as the issue measured. gradio_client opens a new HTTP client (and
  TLS context) for every call: its own CPU per call is printed, because on these 2 shared cores the 50
  clients' own work, not the app's, sets most of their wait.

Client and app share this machine's cores.

Usage: python benchmarks/app_load.py [--runs 50] [--rounds 3] [--crowds 1,10,50]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.app_speed import started_app  # noqa: E402

SEARCHES = ("", "gpt", "qwen", "seeded")


def board_arguments(index: int) -> list:
    # benchmark, view, search, sources, columns, details, mode, sort_by (later parameters: their defaults)
    return ["acebench", "en", SEARCHES[index % len(SEARCHES)], None, None, False, "official", "overall"]


class HttpVisitor:
    """A browser-like visitor: one kept connection and one session (as one open page has), Gradio's REST
    route for an API endpoint."""

    def __init__(self, url: str):
        import uuid

        import httpx

        self.url = url.rstrip("/")
        self.http = httpx.Client(timeout=120)
        self.session = uuid.uuid4().hex
        self.defaults: dict[str, list] = {}

    def with_defaults(self, api_name: str, data: tuple) -> list:
        """The arguments given, then the endpoint's defaults for the rest (the REST route fills in none)."""
        if api_name not in self.defaults:
            info = self.http.get(f"{self.url}/gradio_api/info").raise_for_status().json()
            parameters = info["named_endpoints"][api_name]["parameters"]
            self.defaults[api_name] = [parameter.get("parameter_default") for parameter in parameters]
        return [*data, *self.defaults[api_name][len(data):]]

    def predict(self, *data, api_name: str) -> object:
        route = f"{self.url}/gradio_api/call/{api_name.lstrip('/')}"
        event = self.http.post(route, json={"data": self.with_defaults(api_name, data), "session_hash": self.session}).raise_for_status().json()["event_id"]
        with self.http.stream("GET", f"{route}/{event}") as stream:
            for line in stream.iter_lines():
                if line.startswith("event: error"):
                    raise RuntimeError(f"the app answered an error: {line}")
                if line.startswith("data: ") and line != "data: null":
                    return line[len("data: "):]
        raise RuntimeError("the event stream ended without data")


def read_board(client, index: int) -> float:
    began = time.perf_counter()
    client.predict(*board_arguments(index), api_name="/leaderboard")
    return time.perf_counter() - began


def crowd_round_trips(clients: list, rounds: int) -> list[float]:
    """Every client reads the board at the same instant, `rounds` times; each read's round trip."""
    times: list[float] = []
    lock = threading.Lock()
    for _ in range(rounds):
        start = threading.Barrier(len(clients))

        def visit(index: int, start: threading.Barrier = start) -> None:
            start.wait()
            elapsed = read_board(clients[index], index)
            with lock:
                times.append(elapsed)

        threads = [threading.Thread(target=visit, args=(i,)) for i in range(len(clients))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return times


def make_visitor(kind: str, url: str):
    if kind == "http":
        return HttpVisitor(url)
    from gradio_client import Client

    return Client(url, verbose=False)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=50, help="stored runs besides the published rows")
    parser.add_argument("--rounds", type=int, default=3, help="reads per visitor, all visitors together each time")
    parser.add_argument("--crowds", default="1,10,50", help="visitor counts to measure")
    parser.add_argument("--visitors", default="http,gradio_client", help="kinds of visitor to measure")
    args = parser.parse_args()
    crowds = [int(c) for c in args.crowds.split(",")]
    results = []
    with started_app(args.runs) as url:
        for kind in args.visitors.split(","):
            clients = [make_visitor(kind, url) for _ in range(max(crowds))]
            # Each visitor's first request is its page load: Gradio builds the session's state (a copy of
            # every component's config) and the first one builds the cached board. Timed apart.
            first = [read_board(client, 0) for client in clients]
            results.append((f"{kind} first", 1, first, 0.0))
            for crowd in crowds:
                cpu = time.process_time()
                times = crowd_round_trips(clients[:crowd], args.rounds)
                results.append((kind, crowd, times, (time.process_time() - cpu) / len(times)))
    print(f"leaderboard reads through /leaderboard ({args.runs} stored runs + published rows, {args.rounds} rounds)")
    for kind, crowd, times, cpu in results:
        if kind.endswith(" first"):
            print(f"  {kind[:-6]}: each visitor's first request (its new session), one at a time: "
                  f"median {statistics.median(times) * 1000:.0f} ms")
            continue
        print(f"  {kind:13s} {crowd:3d} visitors at once: p50 {statistics.median(times) * 1000:6.0f} ms   "
              f"p95 {percentile(times, 0.95) * 1000:6.0f} ms   max {max(times) * 1000:6.0f} ms   ({len(times)} reads; "
              f"the visitors' own CPU {cpu * 1000:.0f} ms per read)")
    print("target: 50 visitors at once, p95 < 1 s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
