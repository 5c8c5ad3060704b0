"""τ²-bench throughput: our whole `python -m evaluators run tau2` process beside the official runner's, both against
one scripted OpenAI-compatible endpoint answering every request in a fixed latency, on the same tasks and trials.

The endpoint (this script with --serve, its own process) plays the three participants from what each request shows,
as the tests' GoldPlayer (tests/tau2_fixtures.py) does: the agent calls the task's gold assistant actions one by one, then says
the facts the task wants communicated; the user opens with the task's case, then stops once the agent is done; the
judge says every assertion is met. So each trajectory's length is fixed by its task, on either side.

Figures, measured in one run:
- Ours: the whole CLI process (`run tau2 --concurrency C --trials T --no-cache`, a fresh TOOLBOARD_HOME), the span
  from the endpoint's first request to its last answer, and the time before and after that span. --no-cache: telecom's
  114 tasks share 15 scenarios, so with this scripted agent many conversations are byte-identical and a cached run
  would send only the first of each (fewer requests than the official runner); --with-cache measures that instead.
- The dependent-request floor: a trajectory's requests are sequential (agent and user alternate; the judge's comes
  after its trajectory), so no run of the scheduled set ends before max(longest trajectory's requests,
  ceil(requests / C)) x latency (a slot completes at most one request per latency).
- The official runner: `run_domain` (what `tau2 run --domain D` calls) with max_concurrency C, domain after domain
  (the official CLI takes one domain per run), in one process with the official venv's Python
  (tests/tau2_official_venv.py builds it); the whole process timed. It also writes each domain's results.json, prints
  its progress and metrics, and would retry a failed simulation (none fails here).

Usage: nice python benchmarks/tau2_throughput.py [--limit N] [--trials 1] [--concurrency 32] [--latency 0.1]
       (--limit: tasks per domain, default all 278 base tasks; --skip-official: ours only)
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# The model names the scripted players answer to (tests/tau2_fixtures.py's; the official driver below, which runs in
# the official venv without our packages, needs them too).
AGENT, USER = "agent-model", "user-model"
# The official runner always asks this judge (not configurable there); ours is given the same name as its role.
JUDGE = "gpt-4.1-2025-04-14"
OPENING = re.compile(r"My case is (\S+) \(conversation (\d+)\)")


def make_player(samples: list[Any]) -> Any:
    """The tests' GoldPlayer (tests/tau2_fixtures.py), whose user also gives each opening a serial number, so every
    request (the judge's too) is tagged with the conversation it belongs to, for the floor (telecom's 114 tasks
    share 15 scenarios, so the case alone does not tell them apart)."""
    from tests.tau2_fixtures import GoldPlayer

    class TaggingPlayer(GoldPlayer):
        def __init__(self, samples: list[Any]):
            super().__init__(samples)
            # (role, conversation, case, when answered) per request, in answer order
            self.tags: list[tuple[str, int, str, float]] = []
            self.openings = itertools.count()
            self.lock = threading.Lock()

        def opening(self, sample_id: str) -> str:
            return f"{super().opening(sample_id)} (conversation {next(self.openings)})"  # atomic under the GIL

        def reply(self, body: dict[str, Any]) -> dict[str, Any]:
            role = {AGENT: "agent", USER: "user"}.get(body["model"], "judge")
            answer = super().reply(body)
            found = OPENING.search(json.dumps(body["messages"]) + json.dumps(answer))
            with self.lock:
                now = time.time()
                self.tags.append((role, int(found.group(2)), found.group(1), now) if found else (role, -1, "?", now))
            return answer

    return TaggingPlayer(samples)


def data_root() -> Path:
    """Every pinned file of the official repository, as the tests fill it (from ../shared/reference)."""
    from tests.tau2_fixtures import full_source_root

    return full_source_root()


def load_samples(limit: int | None) -> list[Any]:
    from evaluators.core.registry import get_benchmark

    return list(get_benchmark("tau2").load(data_root(), limit=limit))


def serve(limit: int | None, latency: float) -> None:
    """The endpoint's process: prints its base URL; on stdin, `stats` answers the counters and the requests' tags
    as JSON, `reset` forgets them (the next process is measured afresh)."""
    from tests.scripted_server import ScriptedServer

    player = make_player(load_samples(limit))
    with ScriptedServer(reply=player.reply, latency=latency) as server:
        print(server.base_url, flush=True)
        for line in sys.stdin:
            command = line.strip()
            if command == "stats":
                with player.lock:
                    tags = list(player.tags)
                print(json.dumps({"max_in_flight": server.max_in_flight, "first_request_at": server.first_request_at,
                                  "last_answer_at": server.last_answer_at, "tags": tags}), flush=True)
            elif command == "reset":
                with player.lock:
                    player.tags.clear()
                server.reset_clock()
                server.max_in_flight = 0
                print("{}", flush=True)


def ask(server: subprocess.Popen, command: str) -> dict[str, Any]:
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(command + "\n")
    server.stdin.flush()
    answer: dict[str, Any] = json.loads(server.stdout.readline())
    return answer


def chains(tags: list[list[Any]]) -> dict[int, int]:
    """Requests per conversation (the agent's, the user's and its judge's)."""
    return dict(Counter(conversation for _, conversation, _, _ in tags))


def domains_of(tags: list[list[Any]]) -> dict[int, str]:
    return {conversation: case.split("_", 1)[0] for _, conversation, case, _ in tags}


def between_requests(tags: list[list[Any]], latency: float) -> tuple[float, float]:
    """The time a conversation spends between one answer and its next request (the environment's work, the
    client's own, the endpoint's beyond its latency), summed over conversations: (total, mean per gap)."""
    answers: dict[int, list[float]] = defaultdict(list)
    for _, conversation, _, when in tags:
        answers[conversation].append(when)
    gaps = [later - earlier - latency for times in answers.values() for earlier, later in itertools.pairwise(times)]
    return sum(gaps), (sum(gaps) / len(gaps) if gaps else 0.0)


def phases(server_stats: dict[str, Any], started: float, wall: float) -> str:
    """The process's time before the endpoint's first request and after its last answer."""
    before = server_stats["first_request_at"] - started
    after = started + wall - server_stats["last_answer_at"]
    return (f"{before:.2f} s before the first request (start-up), {after:.2f} s after the last answer "
            "(scoring, storing, exit)")


def describe(tags: list[list[Any]]) -> str:
    lengths = chains(tags)
    roles = Counter(role for role, _, _, _ in tags)
    unknown = f"; {lengths[-1]} not told apart" if -1 in lengths else ""
    return (f"{sum(lengths.values())} in {len(lengths)} conversations (agent {roles['agent']}, user {roles['user']}, "
            f"judge {roles['judge']}; the longest {max(lengths.values())}, "
            f"{sum(lengths.values()) / len(lengths):.1f} on average{unknown})")


def floor_seconds(lengths: list[int], concurrency: int, latency: float) -> float:
    return max(max(lengths, default=0), math.ceil(sum(lengths) / concurrency)) * latency


def slot_schedule_seconds(lengths: list[int], concurrency: int, latency: float, in_order: bool = False) -> float:
    """The end of the best simple schedule of whole conversations on `concurrency` slots (longest first, or in the
    order given, each to the slot free first), a conversation holding its slot for its requests x latency: what a
    run that gives each conversation a slot of its own can reach with no time between requests."""
    slots = [0.0] * concurrency
    for length in (lengths if in_order else sorted(lengths, reverse=True)):
        heapq.heapreplace(slots, slots[0] + length * latency)
    return max(slots, default=0.0)


def run_ours(base_url: str, limit: int | None, trials: int, concurrency: int,
             use_cache: bool) -> tuple[float, float, dict[str, Any]]:
    """The whole CLI process, timed (its start and its wall time); its JSON report."""
    with tempfile.TemporaryDirectory(prefix="tau2-speed-home-") as home:
        env = dict(os.environ, TOOLBOARD_HOME=home)
        env.pop("TOOLBOARD_DATA_DIR", None)
        command = [sys.executable, "-m", "evaluators", "run", "tau2", "--base-url", base_url, "--model", AGENT,
                   "--data-dir", str(data_root()), "--trials", str(trials), "--concurrency", str(concurrency),
                   "--role", f"user={base_url},{USER}", "--role", f"judge={base_url},{JUDGE}", "--json"]
        if limit is not None:
            command += ["--limit", str(limit)]
        if not use_cache:
            command.append("--no-cache")
        started = time.time()
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.time() - started
    if done.returncode != 0:
        raise SystemExit(f"our run failed:\n{done.stderr[-3000:]}")
    report: dict[str, Any] = json.loads(done.stdout)
    return started, wall, report


def run_official(base_url: str, samples: list[Any], trials: int,
                 concurrency: int) -> tuple[float, float, dict[str, Any]]:
    """The official venv's Python on this file (--official-drive), the whole process timed; per domain its own
    seconds and what its results recorded."""
    from tests.tau2_official_venv import DRIVER_FLAGS, _driver_env, build_official_venv

    venv = build_official_venv()
    tasks: dict[str, list[str]] = defaultdict(list)
    for sample in samples:
        tasks[sample.subset].append(str(sample.input["task_id"]))
    with tempfile.TemporaryDirectory(prefix="tau2-speed-official-") as folder:
        work = Path(folder)
        (work / "payload.json").write_text(json.dumps({"base_url": base_url, "tasks": tasks, "trials": trials,
                                                       "concurrency": concurrency}))
        with (work / "official.log").open("w", encoding="utf-8") as log:
            started = time.time()
            done = subprocess.run([str(venv.python), *DRIVER_FLAGS, __file__, "--official-drive", str(work)],
                                  stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                  env=_driver_env(venv), cwd=work)
            wall = time.time() - started
        if done.returncode != 0:
            raise SystemExit("the official run failed:\n" + (work / "official.log").read_text()[-3000:])
        answer: dict[str, Any] = json.loads((work / "answer.json").read_text())
    return started, wall, answer


def official_drive(work: Path) -> None:
    """Runs only in the official venv: `run_domain` per domain, as `tau2 run --domain D --max-concurrency C
    --num-trials T` does (seed 300, the default llm args), results.json in this call's own folder."""
    payload = json.loads((work / "payload.json").read_text())
    # litellm reads the endpoint of "openai/..." models (and of the judge's bare name) from here at each call.
    os.environ["OPENAI_API_BASE"] = payload["base_url"]
    from tau2.data_model.simulation import TextRunConfig
    from tau2.run import run_domain

    answer: dict[str, Any] = {}
    for domain, task_ids in payload["tasks"].items():
        started = time.perf_counter()
        results = run_domain(TextRunConfig(domain=domain, task_ids=task_ids, num_trials=payload["trials"],
                                           max_concurrency=payload["concurrency"], seed=300,
                                           llm_agent=f"openai/{AGENT}", llm_user=f"openai/{USER}",
                                           save_to=str(work / domain)))
        rewards = [sim.reward_info.reward if sim.reward_info else None for sim in results.simulations]
        answer[domain] = {"seconds": time.perf_counter() - started, "simulations": len(results.simulations),
                          "successes": sum(reward == 1.0 for reward in rewards),
                          "terminations": Counter(str(sim.termination_reason) for sim in results.simulations)}
    (work / "answer.json").write_text(json.dumps(answer))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="tasks per domain (default: all base tasks)")
    parser.add_argument("--trials", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.1, help="seconds the endpoint takes per request")
    parser.add_argument("--with-cache", action="store_true",
                        help="let our run answer a request identical to an earlier one of the same run from its cache "
                             "(telecom's tasks share scenarios: with this scripted agent many conversations are alike)")
    parser.add_argument("--skip-official", action="store_true", help="measure our run only")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--official-drive", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.official_drive:
        official_drive(Path(args.official_drive))
        return 0
    sys.path.insert(0, str(ROOT))
    if args.serve:
        serve(args.limit, args.latency)
        return 0
    samples = load_samples(args.limit)
    server_command = [sys.executable, __file__, "--serve", "--latency", str(args.latency)]
    if args.limit is not None:
        server_command += ["--limit", str(args.limit)]
    server = subprocess.Popen(server_command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        ours_start, ours_wall, report = run_ours(base_url, args.limit, args.trials, args.concurrency,
                                                     args.with_cache)
        ours = ask(server, "stats")
        ask(server, "reset")
        official_start, official_wall, official = (0.0, None, {}) if args.skip_official else run_official(
            base_url, samples, args.trials, args.concurrency)
        theirs = ask(server, "stats")
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(timeout=30)

    per_domain = Counter(sample.subset for sample in samples)
    lengths = chains(ours["tags"])
    requests = sum(lengths.values())
    floor = floor_seconds(list(lengths.values()), args.concurrency, args.latency)
    span = ours["last_answer_at"] - ours["first_request_at"]
    print(f"{len(samples)} tasks ({', '.join(f'{d} {n}' for d, n in per_domain.items())}) x {args.trials} trial(s), "
          f"concurrency {args.concurrency}, latency {args.latency:g} s; {os.cpu_count()} cores (shared, noisy); our "
          f"run {'with its cache (identical requests answered once)' if args.with_cache else 'with --no-cache'}")
    print(f"requests         {describe(ours['tags'])}")
    print(f"floor            {floor:.2f} s  (max(longest trajectory {max(lengths.values())} x latency, "
          f"ceil(requests / C) {math.ceil(requests / args.concurrency)} x latency))")
    scheduled = slot_schedule_seconds(list(lengths.values()), args.concurrency, args.latency)
    started = list(dict.fromkeys(conversation for _, conversation, _, _ in ours["tags"]))  # by first answer
    as_started = slot_schedule_seconds([lengths[c] for c in started], args.concurrency, args.latency, in_order=True)
    print(f"slot schedule    {scheduled:.2f} s  (whole conversations on C slots, longest first, no time between "
          f"requests: {scheduled / floor:.2f}x the floor); in the order our run started them {as_started:.2f} s")
    print(f"ours             {ours_wall:.2f} s whole process = {ours_wall / floor:.2f}x the floor; first request to "
          f"last answer {span:.2f} s = {span / floor:.2f}x; peak in flight {ours['max_in_flight']}")
    print(f"ours outside     {phases(ours, ours_start, ours_wall)}")
    total_gap, mean_gap = between_requests(ours["tags"], args.latency)
    print(f"ours between     {total_gap:.1f} s over all conversations between an answer and the next request "
          f"({mean_gap * 1000:.0f} ms per step: the environment, our client, the wait for a request slot while "
          f"more conversations than slots are open, the endpoint beyond its latency)")
    summary = {domain: (report["subsets"][domain]["metrics"].get("pass_1"), report["subsets"][domain]["n"])
               for domain in report["subsets"]}
    print(f"ours scored      pass^1 (tasks) by domain {summary}")
    if official_wall is not None:
        their_span = theirs["last_answer_at"] - theirs["first_request_at"]
        by_domain: dict[str, list[int]] = defaultdict(list)
        their_domains = domains_of(theirs["tags"])
        for conversation, count in chains(theirs["tags"]).items():
            by_domain[their_domains[conversation]].append(count)
        # Domains one after another: the official runner's own floor is the sum of each domain's.
        sequential_floor = sum(floor_seconds(counts, args.concurrency, args.latency) for counts in by_domain.values())
        print(f"official req.    {describe(theirs['tags'])}")
        print(f"official         {official_wall:.2f} s whole process = {official_wall / floor:.2f}x the floor; first "
              f"request to last answer {their_span:.2f} s; peak in flight {theirs['max_in_flight']}; its own floor "
              f"domain after domain {sequential_floor:.2f} s")
        print(f"official outside {phases(theirs, official_start, official_wall)}")
        total_gap, mean_gap = between_requests(theirs["tags"], args.latency)
        print(f"official between {total_gap:.1f} s over all conversations ({mean_gap * 1000:.0f} ms per step)")
        print(f"official/ours    {official_wall / ours_wall:.2f}x (whole processes)")
        for domain, figures in official.items():
            print(f"official {domain:8} {figures['seconds']:.2f} s, {figures['simulations']} simulations, "
                  f"{figures['successes']} with reward 1, {dict(figures['terminations'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
