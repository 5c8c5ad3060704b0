"""The official harnesses side by side with ours, whole process against whole process (issue 31's table).

One scripted OpenAI-compatible server (tests/scripted_server.py in its own process, --latency 0.2, the
`acebench_agent` reply script so that it also plays the real ACEBench agent items) serves every run. For each
workload the official harness and `python -m evaluators run` send the same items at the same concurrency:

  bfcl-c32, bfcl-c8  BFCL simple_python, multiple, parallel, live_simple (1,058 items): official `bfcl generate`
                     (`--num-threads C`) then `bfcl evaluate`, bfcl-eval 2026.3.23 in the test venv; ours
                     `run bfcl --concurrency C`
  acebench           ACEBench en normal + special (973 items), C=32: the official `generate.py`
                     (`--num-threads 32`) then `eval_main.py` at the pinned commit; ours `run acebench
                     --prompt-style official`
  acebench-agent     ACEBench en agent_multi_turn + agent_multi_step (50 rollouts), C=32, the same two scripts;
                     the server plays the agent with the gold milestone calls and the user, who ends when the agent
                     reports done (--agent-rollouts to-limit: every rollout runs to the 40-message limit instead)

Each side is timed from process start to exit (generation and scoring; the official side is its two processes one
after the other, timed as one), after one untimed run of each; medians of --repeat runs, the two sides taking
turns. Peak RSS: ru_maxrss that wait4() returns for each process (the largest resident size of that process and
of any child it waited for); the official figure is the larger of its two processes. The request bodies of the
untimed runs are compared as multisets after JSON parsing (the server dumps them).

--limit N runs the first N items of each category on both sides (BFCL: the official `--run-ids` file and
`evaluate --partial-eval`, ours `--limit N`; ACEBench: a folder holding the first N lines of each data and
answer file, read by both). Develop with --limit; the full workloads take minutes.

The official code is found at run time, never imported or copied into the project (benchmarks/official_harnesses.py
says where it is prepared and how to get it when absent).

Usage: python benchmarks/official_side_by_side.py [--repeat 3] [--workload bfcl-c32 bfcl-c8 acebench acebench-agent]
       [--limit N] [--latency 0.2] [--agent-rollouts gold|to-limit] [--acebench-official DIR]
       [--acebench-mirror GIT_DIR] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.official_harnesses import (  # noqa: E402
    AcebenchHarness,
    BfclHarness,
    HarnessMissing,
    acebench_harness,
    bfcl_harness,
    official_env,
)
from benchmarks.server_process import ServerProcess  # noqa: E402
from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV, pinned_wheel  # noqa: E402

MODEL = "gpt-4o-2024-11-20"  # an API model of the official ACEBench inference map; its name holds "gpt"
BFCL_REGISTRY_NAME = "toolboard-prompt-chat"
BFCL_CATEGORIES = ("simple_python", "multiple", "parallel", "live_simple")
ACEBENCH_SINGLE = ("normal", "special")
ACEBENCH_AGENT = ("agent",)
ACEBENCH_AGENT_SUBSETS = ("agent_multi_turn", "agent_multi_step")
KEY = "side-by-side-key"
WORKLOADS = ("bfcl-c32", "bfcl-c8", "acebench", "acebench-agent")
# How the scripted server plays the agent items (--agent-rollouts): its reply script by name.
AGENT_SCRIPTS = {"gold": "acebench_agent", "to-limit": "acebench_agent_to_limit"}


@dataclass
class Step:
    """One process: its command, working directory and environment additions (printed, so it can be rerun)."""

    command: list[str]
    cwd: Path
    env: dict[str, str]
    prepare: Callable[[], None] = field(default=lambda: None)
    official: bool = True  # an official process: this environment less PYTHONPATH, plus env
    before: str = ""  # what prepare() does, in words, for a reader rerunning the command by hand

    def shell(self) -> str:
        assigns = " ".join(f"{name}={shlex.quote(value)}" for name, value in self.env.items())
        isolation = "env -u PYTHONPATH -u PYTHONHOME PYTHONNOUSERSITE=1 " if self.official else ""
        command = f"cd {shlex.quote(str(self.cwd))} && {isolation}{assigns} {shlex.join(self.command)}"
        return f"({self.before}) {command}" if self.before else command


@dataclass
class Measure:
    seconds: float
    peak_rss_mb: float
    requests: int


@dataclass
class Side:
    """A harness's steps for one run, made fresh for each run (the official ones write into a new folder)."""

    name: str
    steps_for: Callable[[int], list[Step]]


@dataclass
class Workload:
    name: str
    title: str
    official: Side
    ours: Side


class Server(ServerProcess):
    """The scripted server in its own process, with the agent reply script when the agent workload runs."""

    def __init__(self, latency: float, agent_data: Path | None, agent_script: str = "acebench_agent"):
        super().__init__(latency, ["--script", agent_script, "--script-data", str(agent_data)] if agent_data else [])


# ---- running and measuring a process -------------------------------------------------------------------------


def run_measured(step: Step, log: Path) -> tuple[float, float]:
    """Wall seconds from spawn to exit and ru_maxrss (MB) of the process as wait4 reports it."""
    step.prepare()
    env = official_env(step.env) if step.official else {**os.environ, **step.env}
    with log.open("w", encoding="utf-8") as output:
        started = time.perf_counter()
        process = subprocess.Popen(step.command, cwd=step.cwd, env=env, stdout=output, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace")[-1500:]
        raise SystemExit(f"exit {process.returncode}: {step.shell()}\n--- {log} ---\n{tail}")
    return seconds, usage.ru_maxrss / 1024


def run_side(server: Server, side: Side, run_index: int, logs: Path, dump: Path | None = None) -> Measure:
    """One run of a side's processes, one after the other; its log files are logs/<side>-<run>-<step>.log."""
    server.ask("reset")
    seconds, peak = 0.0, 0.0
    for number, step in enumerate(side.steps_for(run_index)):
        step_seconds, step_peak = run_measured(step, logs / f"{side.name}-{run_index}-{number}.log")
        seconds, peak = seconds + step_seconds, max(peak, step_peak)
    requests = server.ask("stats")["bodies"]
    if dump is not None:
        server.ask(f"dump {dump}")
    label = "untimed" if run_index == 0 else f"run {run_index}"
    print(f"  {logs.name} {side.name} {label}: {seconds:.2f} s, {peak:.0f} MB, {requests} requests", file=sys.stderr,
          flush=True)
    return Measure(seconds, peak, requests)


# ---- the request bodies of the two sides ---------------------------------------------------------------------


def parsed_bodies(dump: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in dump.read_bytes().splitlines() if line.strip()]


def canonical(bodies: list[dict[str, Any]], dropped: frozenset[str] = frozenset()) -> Counter[str]:
    """The bodies as a multiset of canonical JSON texts, without the top-level keys in `dropped`."""
    return Counter(json.dumps({k: v for k, v in body.items() if k not in dropped}, sort_keys=True, ensure_ascii=False)
                   for body in bodies)


def first_difference(left: Any, right: Any, path: str = "") -> str | None:
    """The path of the first place two parsed JSON values differ (None when equal)."""
    if isinstance(left, dict) and isinstance(right, dict):
        for key in sorted(set(left) | set(right)):
            if key not in left or key not in right:
                return f"{path}.{key} (only {'ours' if key in right else 'official'})"
            found = first_difference(left[key], right[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(left, list) and isinstance(right, list):
        if len(left) != len(right):
            return f"{path} (length {len(left)} official, {len(right)} ours)"
        return next((found for index, (a, b) in enumerate(zip(left, right))
                     if (found := first_difference(a, b, f"{path}[{index}]"))), None)
    return None if left == right else f"{path} ({_short(left)} official, {_short(right)} ours)"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _closest(body: dict[str, Any], candidates: list[dict[str, Any]]) -> dict[str, Any]:
    """The candidate sharing the most top-level values and, among those, the longest common messages prefix."""
    def score(other: dict[str, Any]) -> tuple[int, int]:
        same = sum(1 for key in body if other.get(key) == body[key])
        mine, theirs = body.get("messages") or [], other.get("messages") or []
        prefix = next((i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b), min(len(mine), len(theirs)))
        return same, prefix
    return max(candidates, key=score)


def compare_bodies(official_dump: Path, ours_dump: Path) -> str:
    """Whether the two sides sent the same multiset of bodies; if not, how many differ, the top-level keys only one
    side sends (and whether the rest is then the same), and the kinds of the remaining differences with a count."""
    official, ours = parsed_bodies(official_dump), parsed_bodies(ours_dump)
    left, right = canonical(official), canonical(ours)
    totals = f"{sum(left.values())} official, {sum(right.values())} ours"
    if left == right:
        return f"the same multiset ({totals})"
    text = (f"DIFFERENT ({totals}): {sum((left - right).values())} official bodies not among ours, "
            f"{sum((right - left).values())} of ours not among the official")
    one_sided = frozenset(_top_level_keys(official) ^ _top_level_keys(ours))
    if one_sided:
        left, right = canonical(official, one_sided), canonical(ours, one_sided)
        text += f"; top-level keys only one side sends: {sorted(one_sided)}"
        if left == right:
            return text + "; without them the same multiset"
        text += "; without them still different"
    return text + "; " + difference_kinds(left - right, right - left)


def difference_kinds(only_official: Counter[str], only_ours: Counter[str], sample: int = 200) -> str:
    """Each official-only body (up to `sample`) beside the closest body only ours sent: the first place they differ,
    counted by its path with the list indexes kept (e.g. `.messages[2].role`), with one example."""
    if not only_official or not only_ours:
        return "no body to pair them with"
    candidates = [json.loads(item) for item in only_ours]
    kinds: Counter[str] = Counter()
    examples: dict[str, str] = {}
    for item in list(only_official.elements())[:sample]:
        body = json.loads(item)
        found = first_difference(body, _closest(body, candidates)) or "no difference found"
        path = found.split(" (", 1)[0]
        kinds[path] += 1
        examples.setdefault(path, found)
    counted = sum(kinds.values())
    return (f"first differences of {counted} official bodies beside the closest of ours: "
            + ", ".join(f"{examples[path]} x{count}" for path, count in kinds.most_common(5)))


def _top_level_keys(bodies: list[dict[str, Any]]) -> set[str]:
    return {key for body in bodies for key in body}


# ---- the workloads ---------------------------------------------------------------------------------------------


@dataclass
class Settings:
    base_url: str
    limit: int | None
    work: Path
    wheel: Path
    ours_home: Path
    acebench_data: Path | None  # the folder our loader reads (--data-dir), the official data_all beside it


def our_step(settings: Settings, arguments: list[str], concurrency: int, data_dir: Path | None) -> Step:
    command = [sys.executable, "-m", "evaluators", "run", *arguments]
    if data_dir is not None:
        command += ["--data-dir", str(data_dir)]
    command += ["--base-url", settings.base_url, "--model", MODEL, "--concurrency", str(concurrency),
                "--no-cache", "--json", "--api-key-env", "SIDE_BY_SIDE_KEY"]
    env = {"TOOLBOARD_HOME": str(settings.ours_home), WHEEL_PATH_ENV: str(settings.wheel), "SIDE_BY_SIDE_KEY": KEY}
    return Step(command, ROOT, env, official=False)


def bfcl_workload(settings: Settings, harness: BfclHarness, concurrency: int) -> Workload:
    driver = [str(harness.python), "-s", "-P", str(ROOT / "benchmarks" / "bfcl_official_cli.py"),
              str(harness.venv.stand_ins), str(harness.extras), BFCL_REGISTRY_NAME, MODEL, "--"]
    categories = ",".join(BFCL_CATEGORIES)
    env = {"OPENAI_BASE_URL": settings.base_url, "OPENAI_API_KEY": KEY, "PYTHONUTF8": "1"}
    limited = settings.limit is not None

    def official_steps(run_index: int) -> list[Step]:
        root = settings.work / f"bfcl-c{concurrency}-official-{run_index}"
        run_env = {**env, "BFCL_PROJECT_ROOT": str(root)}
        generate = [*driver, "generate", "--model", BFCL_REGISTRY_NAME, "--test-category", categories,
                    "--num-threads", str(concurrency), *(["--run-ids"] if limited else [])]
        evaluate = [*driver, "evaluate", "--model", BFCL_REGISTRY_NAME, "--test-category", categories,
                    *(["--partial-eval"] if limited else [])]
        before = f"first: an empty {root}" + (f" holding test_case_ids_to_generate.json, the first {settings.limit} ids"
                                              " of each category" if limited else "")
        return [Step(generate, settings.work, run_env, prepare=lambda: prepare_bfcl_root(root, harness, settings.limit),
                     before=before),
                Step(evaluate, settings.work, run_env)]

    limit = ["--limit", str(settings.limit)] if limited else []
    ours = our_step(settings, ["bfcl", "--subset", *BFCL_CATEGORIES, *limit], concurrency, None)
    return Workload(f"bfcl-c{concurrency}", f"BFCL {'/'.join(BFCL_CATEGORIES)}, C={concurrency}",
                    Side("official", official_steps), Side("toolboard", lambda _: [ours]))


def prepare_bfcl_root(root: Path, harness: BfclHarness, limit: int | None) -> None:
    """A fresh BFCL_PROJECT_ROOT; with a limit, the official id file naming the first `limit` ids per category."""
    import shutil

    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    if limit is None:
        return
    ids = {}
    for category in BFCL_CATEGORIES:
        lines = (harness.data_folder / f"BFCL_v4_{category}.json").read_text(encoding="utf-8").splitlines()
        ids[category] = [json.loads(line)["id"] for line in lines if line.strip()][:limit]
    (root / "test_case_ids_to_generate.json").write_text(json.dumps(ids), encoding="utf-8")


def acebench_workload(settings: Settings, harness: AcebenchHarness, agent: bool) -> Workload:
    categories = ACEBENCH_AGENT if agent else ACEBENCH_SINGLE
    name = "acebench-agent" if agent else "acebench"
    data_root = official_data_root(settings)
    runner = [str(harness.python), "-s", "-P", str(ROOT / "benchmarks" / "acebench_official_run.py"),
              str(harness.checkout), str(harness.stand_ins)]
    env = {"GPT_BASE_URL": settings.base_url, "GPT_AGENT_BASE_URL": settings.base_url, "GPT_API_KEY": KEY,
           "GPT_AGENT_API_KEY": KEY}

    def official_steps(run_index: int) -> list[Step]:
        folder = settings.work / f"{name}-official-{run_index}"
        generate = [*runner, "generate.py", "--", "--model", MODEL, "--category", *categories, "--language", "en",
                    "--num-threads", "32", "--user-model", MODEL]
        evaluate = [*runner, "eval_main.py", "--", "--model", MODEL, "--category", *categories, "--language", "en"]
        before = (f"first: an empty {folder} holding data_all/data_en/ with links to the files and possible_answer/ of "
                  f"{acebench_english(data_root)}, empty data_all/data_en/dialogue_history/{{multi_turn,multi_step}}/{MODEL}/"
                  f" and an empty score_all/score_en/{MODEL}/")
        return [Step(generate, folder, env, prepare=lambda: prepare_acebench_folder(folder, data_root), before=before),
                Step(evaluate, folder, env)]

    subsets = list(ACEBENCH_AGENT_SUBSETS) if agent else list(ACEBENCH_SINGLE)
    arguments = ["acebench", "--language", "en", "--subset", *subsets, "--prompt-style", "official"]
    ours = our_step(settings, arguments, 32, settings.acebench_data)
    title = "ACEBench en agent (multi_turn + multi_step), C=32" if agent else "ACEBench en normal + special, C=32"
    return Workload(name, title, Side("official", official_steps), Side("toolboard", lambda _: [ours]))


def official_data_root(settings: Settings) -> Path:
    """The folder holding data_all/ that the official scripts read (the same data our --data-dir points at)."""
    assert settings.acebench_data is not None
    for candidate in (settings.acebench_data, settings.acebench_data / "acebench"):
        if (candidate / "data_all").is_dir() or (candidate / "data_en").is_dir():
            return candidate
    raise SystemExit(f"no ACEBench data under {settings.acebench_data}")


def prepare_acebench_folder(folder: Path, data_root: Path) -> None:
    """A fresh run folder: ./data_all/data_en/ links each data file and possible_answer/ (generate.py writes its
    dialogue histories into ./data_all/data_en/dialogue_history/, which must not land in the data), ./result_all and
    ./score_all are written. Made beforehand, working around two faults of the official code: the dialogue history
    folders (each rollout thread checks `os.path.exists` then calls `os.makedirs`; two threads can race and one dies
    with FileExistsError) and ./score_all/score_en/MODEL/ (eval_main.py's agent scoring writes its process file there
    before anything creates it, so scoring the agent categories alone fails with FileNotFoundError)."""
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
    english = folder / "data_all" / "data_en"
    english.mkdir(parents=True)
    for entry in acebench_english(data_root).iterdir():
        if entry.name != "dialogue_history":
            (english / entry.name).symlink_to(entry)
    for kind in ("multi_turn", "multi_step"):
        (english / "dialogue_history" / kind / MODEL).mkdir(parents=True)
    (folder / "score_all" / "score_en" / MODEL).mkdir(parents=True)


def acebench_english(data_root: Path) -> Path:
    return data_root / "data_all" / "data_en" if (data_root / "data_all").is_dir() else data_root / "data_en"


def limited_acebench_data(source: Path, checkout: Path, limit: int, target: Path) -> Path:
    """`target/data_all/data_en/` with the first `limit` lines of every data and answer file of `source`, and
    `target/model_inference` (the official prompt files our --prompt-style official reads) linked to the checkout."""
    english = source / "data_all" / "data_en" if (source / "data_all").is_dir() else source / "acebench" / "data_en"
    if not english.is_dir():
        english = source / "data_en"
    for path in sorted(english.rglob("*.json")):
        relative = path.relative_to(english)
        copy = target / "data_all" / "data_en" / relative
        copy.parent.mkdir(parents=True, exist_ok=True)
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)[:limit]
        copy.write_text("".join(lines), encoding="utf-8")
    link = target / "model_inference"
    if not link.exists():
        link.symlink_to(checkout / "model_inference")
    return target


def acebench_data_dir(checkout: Path) -> Path:
    """Our --data-dir: TOOLBOARD_DATA_DIR, else ../shared/data, else the official checkout itself."""
    for candidate in (os.environ.get("TOOLBOARD_DATA_DIR"), str(ROOT.parent / "shared" / "data")):
        if candidate and (Path(candidate) / "acebench" / "data_en").is_dir():
            return Path(candidate)
    return checkout


# ---- the session -----------------------------------------------------------------------------------------------


@dataclass
class Row:
    workload: Workload
    official: list[Measure]
    ours: list[Measure]
    bodies: str
    commands: dict[str, list[str]]


def median_of(measures: list[Measure]) -> tuple[float, float]:
    return statistics.median(m.seconds for m in measures), statistics.median(m.peak_rss_mb for m in measures)


def measure_workload(server: Server, workload: Workload, repeat: int, work: Path) -> Row:
    logs = work / "logs" / workload.name
    logs.mkdir(parents=True, exist_ok=True)
    official_dump, ours_dump = work / f"{workload.name}-official.jsonl", work / f"{workload.name}-ours.jsonl"
    run_side(server, workload.official, 0, logs, official_dump)  # untimed; its bodies are compared
    run_side(server, workload.ours, 0, logs, ours_dump)
    official, ours = [], []
    for run_index in range(1, repeat + 1):
        official.append(run_side(server, workload.official, run_index, logs))
        ours.append(run_side(server, workload.ours, run_index, logs))
    commands = {side.name: [step.shell() for step in side.steps_for(1)] for side in (workload.official, workload.ours)}
    return Row(workload, official, ours, compare_bodies(official_dump, ours_dump), commands)


def print_report(rows: list[Row], server: Server, repeat: int, limit: int | None, kept: bool) -> None:
    scope = f"the first {limit} items of each category" if limit else "every item"
    print(f"\nMedians of {repeat} runs after one untimed run of each; {scope}; one scripted server "
          f"({shlex.join(server.command)}).")
    print("Peak RSS: ru_maxrss from wait4() per process (its largest resident size, waited-for children included); "
          "official = the larger of its two processes.\n")
    print("| workload | official harness: whole s, peak RSS MB | toolboard: whole s, peak RSS MB | ratio |")
    print("|---|---|---|---|")
    for row in rows:
        (official_s, official_mb), (ours_s, ours_mb) = median_of(row.official), median_of(row.ours)
        print(f"| {row.workload.title} | {official_s:.2f} s, {official_mb:.0f} MB | {ours_s:.2f} s, {ours_mb:.0f} MB | "
              f"{official_s / ours_s:.2f}x time, {official_mb / ours_mb:.2f}x memory |")
    print()
    for row in rows:
        requests = sorted({m.requests for m in row.official}), sorted({m.requests for m in row.ours})
        print(f"{row.workload.name}: request bodies: {row.bodies}; requests per timed run: official {requests[0]}, "
              f"ours {requests[1]}; whole s per run: official {[round(m.seconds, 2) for m in row.official]}, "
              f"ours {[round(m.seconds, 2) for m in row.ours]}")
    where = "kept (--keep)" if kept else "in a temporary folder, removed at exit (--keep DIR keeps them)"
    print(f"\nCommands (run 1; each official run writes into a fresh folder, -<run>; run folders, logs and the dumped "
          f"bodies are {where}; the server must be running):")
    for row in rows:
        print(f"# {row.workload.name}")
        for side, commands in row.commands.items():
            for command in commands:
                print(f"[{side}] {command}")


def build_workloads(names: list[str], settings: Settings, bfcl: BfclHarness | None,
                    acebench: AcebenchHarness | None) -> list[Workload]:
    workloads = []
    for name in names:
        if name.startswith("bfcl"):
            assert bfcl is not None
            workloads.append(bfcl_workload(settings, bfcl, int(name.removeprefix("bfcl-c"))))
        else:
            assert acebench is not None
            workloads.append(acebench_workload(settings, acebench, agent=name == "acebench-agent"))
    return workloads


def find_harnesses(names: list[str], args: argparse.Namespace) -> tuple[BfclHarness | None, AcebenchHarness | None]:
    try:
        bfcl = bfcl_harness() if any(name.startswith("bfcl") for name in names) else None
        wants_acebench = any(name.startswith("acebench") for name in names)
        acebench = acebench_harness(args.acebench_official, args.acebench_mirror) if wants_acebench else None
    except HarnessMissing as missing:
        raise SystemExit(f"official harness missing: {missing}") from None
    return bfcl, acebench


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workload", nargs="+", choices=WORKLOADS, default=list(WORKLOADS))
    parser.add_argument("--limit", type=int, default=None, help="the first N items of each category, both sides")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--acebench-official", type=Path, default=None,
                        help="a prepared ACEBench folder (src/, venv/, stand_ins/); default: the cache's, built once")
    parser.add_argument("--acebench-mirror", type=Path, default=None,
                        help="a git folder holding chenchen0103/ACEBench's pinned commit, to build the default folder")
    parser.add_argument("--agent-rollouts", choices=sorted(AGENT_SCRIPTS), default="gold",
                        help="gold: the agent makes the gold milestone calls, then ends (the user ends multi_turn); "
                             "to-limit: nobody ends, every rollout runs to the 40-message limit (the issue's 1,030 "
                             "requests for 50 rollouts)")
    parser.add_argument("--keep", type=Path, default=None, help="keep the run folders, logs and dumped bodies here")
    args = parser.parse_args()
    bfcl, acebench = find_harnesses(args.workload, args)
    wheel = pinned_wheel()  # found (or fetched) once, outside the timed runs
    with tempfile.TemporaryDirectory(prefix="side-by-side-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        data = None
        if acebench is not None:
            data = acebench_data_dir(acebench.checkout)
            if args.limit is not None:
                data = limited_acebench_data(data, acebench.checkout, args.limit, work / f"acebench-first-{args.limit}")
        server = Server(args.latency, data, AGENT_SCRIPTS[args.agent_rollouts])
        try:
            settings = Settings(server.base_url, args.limit, work, wheel, work / "toolboard-home", data)
            rows = [measure_workload(server, workload, args.repeat, work)
                    for workload in build_workloads(args.workload, settings, bfcl, acebench)]
        finally:
            server.close()
        print_report(rows, server, args.repeat, args.limit, kept=args.keep is not None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
