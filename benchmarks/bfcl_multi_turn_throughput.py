"""Rollout throughput: BFCL multi-turn or agentic items played through the real engine (client, runner, store,
environment host) against a scripted OpenAI-compatible endpoint answering in a fixed latency.

The endpoint runs in its own process (this script with --serve) and answers by the group's plan:
- multi_turn: each item from its ground truth (tests/bfcl_multi_turn_script.py, plan `at_once`: each turn's calls in
  one answer, then an answer without a call), so every step of every turn is played and executed;
- web_search (base and no_snippet, the recorded backend, tests/web_search_fixtures.py): a search, a fetch of the
  recorded page, then an answer;
- memory (kv and rec_sum; vector too with --vector and its extra): each prerequisite turn stores its text, then a
  text; each item reads the memory, then answers.
Prints items/s and requests/s beside the ideal: all requests spread evenly over the concurrency, each taking the
latency (requests / concurrency x latency), and the longest item's own chain of requests (a rollout's steps are
sequential). The schedule bound is the time the items' steps as played take when each item holds one slot from its
first step to its last, started in the run's order with no time between steps. A run solves more items at once than
it has slots (runner.samples_at_once), so it can end before that bound; whole rounds, ceil(requests / concurrency) x
latency, is the floor. A memory scenario's prerequisite conversations are one chain, played in order before its items (as the
official generator does): its bound adds each chain's own steps before them, and no run of memory can come near
whole rounds.

The data is the pinned bfcl-eval wheel (TOOLBOARD_BFCL_WHEEL, or the cached / downloaded one).

Usage: python benchmarks/bfcl_multi_turn_throughput.py [--group multi_turn|web_search|memory] [--items 25]
       [--concurrency 32] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import heapq
import json
import math
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluators.benchmarks.bfcl.agentic.web_search import BACKEND_OPTION, RECORDING  # noqa: E402
from evaluators.benchmarks.bfcl.categories import MULTI_TURN, WEB_SEARCH  # noqa: E402
from evaluators.benchmarks.bfcl.data import load  # noqa: E402
from evaluators.benchmarks.bfcl.multi_turn.env_host import DEFAULT_WORKERS, shared_host  # noqa: E402
from evaluators.benchmarks.bfcl.wheel import DATA_PREFIX, WHEEL_PATH_ENV, pinned_wheel, read_member  # noqa: E402
from evaluators.core.registry import get_benchmark  # noqa: E402
from evaluators.engine.client import RetryPolicy  # noqa: E402
from evaluators.engine.runner import execute, longest_first, start_run  # noqa: E402
from evaluators.engine.settings import ModelSettings, RunConfig, RunRequest  # noqa: E402
from evaluators.engine.store import Store  # noqa: E402
from tests.bfcl_multi_turn_script import script_for  # noqa: E402
from tests.scripted_server import ScriptedServer  # noqa: E402
from tests.web_search_fixtures import write_recording  # noqa: E402

GROUPS = {"multi_turn": MULTI_TURN, "web_search": WEB_SEARCH, "memory": ("memory_kv", "memory_rec_sum")}
MEMORY_SCENARIOS = ("customer", "finance", "healthcare", "notetaker", "student")
TOOL_RESULTS = "[{'role': 'tool'"  # how prompt mode hands a step's results back, as a user message


def prerequisite_turns(scenario: str) -> list[str]:
    """The user turns of a memory scenario's prerequisite conversations, in the order they are played."""
    text = read_member(pinned_wheel(), f"{DATA_PREFIX}memory_prereq_conversation/memory_{scenario}.json").decode()
    conversations = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [turn[-1]["content"] for conversation in conversations for turn in conversation["question"]]


def steps_in_turn(messages: list[dict[str, Any]]) -> int:
    """The model's answers since the turn's user message (a step's results come back as a user message too)."""
    last_turn = max(index for index, message in enumerate(messages)
                    if message["role"] == "user" and not str(message["content"]).startswith(TOOL_RESULTS))
    return sum(1 for message in messages[last_turn:] if message["role"] == "assistant")


def web_search_reply(body: dict[str, Any]) -> dict[str, Any]:
    """A search, a fetch of the recorded page, then an answer."""
    step = steps_in_turn(body["messages"])
    if step == 0:
        return {"content": "[search_engine_query(keywords='company founder', max_results=2)]"}
    if step == 1:
        return {"content": "[fetch_url_content(url='https://site1.example/page', mode='truncate')]"}
    return {"content": "{'answer': 'Ada Example', 'context': 'the page'}"}


def memory_reply(facts: set[str]) -> Any:
    """A prerequisite turn stores its text, then a text; an item reads the memory, then answers."""
    def reply(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        kv = "core_memory_add" in messages[0]["content"]
        step = steps_in_turn(messages)
        turn = next(m["content"] for m in reversed(messages) if m["role"] == "user"
                    and not str(m["content"]).startswith(TOOL_RESULTS))
        if turn in facts:
            if step:
                return {"content": "Noted."}
            key = f"fact_{len(turn)}_{sum(map(ord, turn)) % 997}"
            return {"content": f"[core_memory_add(key={key!r}, value={turn[:200]!r})]" if kv
                    else f"[memory_append(text={turn[:200] + ' '!r})]"}
        if step == 0:
            return {"content": "[core_memory_retrieve_all()]" if kv else "[memory_retrieve()]"}
        return {"content": "{'answer': 'I do not know', 'context': 'memory'}"}
    return reply


def serve(group: str, subsets: tuple[str, ...], items: int, latency: float) -> None:
    """The endpoint's process: prints its base URL; answers `stats` on stdin with its counters as JSON."""
    if group == "multi_turn":
        # Items opening alike (a long-context item and its base twin) get the first one's answers: all this needs.
        reply = script_for(load(subsets=subsets, limit=items), {}, distinct=False)
    elif group == "web_search":
        reply = web_search_reply
    else:
        reply = memory_reply({turn for scenario in MEMORY_SCENARIOS for turn in prerequisite_turns(scenario)})
    with ScriptedServer(reply=reply, latency=latency) as server:
        print(server.base_url, flush=True)
        for line in sys.stdin:
            if line.strip() == "stats":
                print(json.dumps({"requests": server.requests, "max_in_flight": server.max_in_flight,
                                  "first_request_at": server.first_request_at, "last_answer_at": server.last_answer_at}),
                      flush=True)


def warm_environment_host(sample: Any) -> float:
    """Start the environment host's workers (a Python process each, the wheel's modules compiled) and import what a
    run imports in this process on first use (the HTTP client, the execution of calls) before the timed run, as a
    long-running server has them; returns the seconds it took."""
    host = shared_host()
    started = time.perf_counter()
    import httpx  # noqa: F401

    import evaluators.benchmarks.bfcl.multi_turn.execution  # noqa: F401
    for slot in range(DEFAULT_WORKERS):
        host.close(host.open(sample, "warm_up", slot=slot))
    return time.perf_counter() - started


def stats(server: subprocess.Popen) -> dict[str, Any]:
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write("stats\n")
    server.stdin.flush()
    counters: dict[str, Any] = json.loads(server.stdout.readline())
    return counters


def schedule_seconds(steps: list[int], concurrency: int, latency: float, ready: list[float] | None = None) -> float:
    """When the last item ends if each starts in the next free slot (in the order given, not before its ready time)
    and its steps take the latency each, back to back."""
    slots = [0.0] * concurrency
    for index, count in enumerate(steps):
        start = max(heapq.heappop(slots), ready[index] if ready else 0.0)
        heapq.heappush(slots, start + count * latency)
    return max(slots)


def memory_chain_seconds(samples: list[Any], latency: float) -> dict[str, float]:
    """Per memory scenario: how long its prerequisite chain takes as played (two steps a turn), no time between steps;
    its items start after it."""
    return {scenario: 2 * len(prerequisite_turns(scenario)) * latency for scenario in set(map(scenario_of, samples))}


def scenario_of(sample: Any) -> str:
    """A memory item's scenario, from its id (`memory_kv_0-customer-0`)."""
    return str(sample.id).split("-")[1]


def stored_bytes(database: Path) -> int:
    """The database's size once its write-ahead log is folded in (the log is transient)."""
    with contextlib.closing(sqlite3.connect(database)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sum(path.stat().st_size for path in database.parent.glob(database.name + "*"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--group", choices=sorted(GROUPS), default="multi_turn")
    parser.add_argument("--vector", action="store_true", help="memory: memory_vector too (needs its extra)")
    parser.add_argument("--items", type=int, default=25, help="items per category")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    subsets = GROUPS[args.group] + (("memory_vector",) if args.group == "memory" and args.vector else ())
    if args.serve:
        serve(args.group, subsets, args.items, args.latency)
        return 0
    os.environ[WHEEL_PATH_ENV] = str(pinned_wheel())  # found (or fetched) once, before the home below is made
    with tempfile.TemporaryDirectory() as home:
        os.environ["TOOLBOARD_HOME"] = home
        options = {}
        if args.group == "web_search":
            os.environ[RECORDING.name] = str(write_recording(Path(home)))
            options[BACKEND_OPTION] = "recorded"
        server = subprocess.Popen([sys.executable, __file__, "--serve", "--group", args.group, "--items",
                                   str(args.items), "--latency", str(args.latency), *(["--vector"] if args.vector else [])],
                                  cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert server.stdout is not None
            base_url = server.stdout.readline().strip()
            config = RunConfig("bfcl", ModelSettings(base_url=base_url, model="scripted", timeout=60),
                               subsets=subsets, limit=args.items, concurrency=args.concurrency, use_cache=False,
                               options=options)
            store = Store(Path(home) / "bench.db")
            run_id, samples = start_run(RunRequest(config), store)
            warm_up = warm_environment_host(load(subsets=MULTI_TURN[:1], limit=1)[0])
            started, started_at = time.perf_counter(), time.time()
            outcome = asyncio.run(execute(store, run_id, samples, retry=RetryPolicy(base_delay=0.05)))
            wall = time.perf_counter() - started
            ended_at = time.time()
            counters = stats(server)
            played = {sample_id: sum(len(turn) for turn in prediction.extra["turns"])
                      for sample_id, prediction in store.load_predictions(run_id).items() if prediction.extra}
            steps = list(played.values())
            in_run_order = longest_first(samples, get_benchmark("bfcl"))
            chains = memory_chain_seconds(samples, args.latency) if args.group == "memory" else {}
            ready = [chains[scenario_of(sample)] for sample in in_run_order] if chains else None
            step_counts = [played.get(sample.id, 0) for sample in in_run_order]
            store_bytes = stored_bytes(Path(home) / "bench.db")
        finally:
            if server.stdin is not None:
                server.stdin.close()
            server.terminate()
            server.wait()
    report = outcome.report.to_json() if outcome.report is not None else {}
    requests = counters["requests"]
    ideal = requests / args.concurrency * args.latency
    chain = max(steps, default=0) * args.latency
    whole_rounds = math.ceil(requests / args.concurrency) * args.latency
    bound = schedule_seconds(step_counts, args.concurrency, args.latency, ready)
    print(f"{len(samples)} {args.group} items ({args.items} per category), concurrency {args.concurrency}, latency "
          f"{args.latency:g} s, {os.cpu_count()} cores")
    print(f"requests         {requests}  ({requests / len(samples):.1f} per item; the longest item {max(steps, default=0)})")
    print(f"wall time        {wall:.2f} s  (all rollouts, execution, storing and scoring; starting the environment "
          f"host's {DEFAULT_WORKERS} workers, {warm_up:.2f} s, is apart)")
    print(f"items/s          {len(samples) / wall:.2f}  (ideal {len(samples) / ideal:.2f})")
    print(f"requests/s       {requests / wall:.1f}  (ideal {args.concurrency / args.latency:.1f})")
    print(f"ideal            {ideal:.2f} s  (requests / concurrency x latency); the longest item's own chain "
          f"{chain:.2f} s")
    print(f"schedule bound   {bound:.2f} s  (the steps as played, one item per slot, started in the run's order, no "
          f"time between them; whole rounds, ceil(requests / concurrency) x latency: {whole_rounds:.2f} s)")
    print(f"efficiency       {ideal / wall:.2f}  (ideal / wall; against whole rounds {whole_rounds / wall:.2f}; of the "
          f"schedule bound {bound / wall:.2f})")
    first, last = counters["first_request_at"] or started_at, counters["last_answer_at"] or ended_at
    print(f"timeline         first request after {first - started_at:.2f} s; first request to last answer "
          f"{last - first:.2f} s ({whole_rounds / (last - first):.2f} of whole rounds); last answer to the end "
          f"{ended_at - last:.2f} s")
    print(f"peak in flight   {counters['max_in_flight']}  (limit {args.concurrency})")
    print(f"status           {outcome.status}; scored {sum(s['n'] for s in (report.get('subsets') or {}).values())} items")
    print(f"store            {store_bytes / len(samples) / 1024:.0f} kB per item (predictions with their evidence, "
          "verdicts in both modes, the response cache)")
    print(f"peak RSS         {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB  (the engine's process)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
