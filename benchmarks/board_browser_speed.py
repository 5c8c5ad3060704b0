"""The board's speed in a real browser, as a visitor sees it, at desktop (1440x900) and phone (390x844) sizes.

Starts `python app.py` as a new user would (fresh TOOLBOARD_HOME, a free port; the board shows the published
rows it ships with), or measures an app already running (--url), and drives Debian's Chromium
(/usr/bin/chromium) with playwright. At each size it prints:

1. First table: for fresh visitors (a new browser context each: no cache), the time from the navigation's
   start, and from the page's own `load` event, until the board's first table rows are visible; after
   --warm-visits untimed visits (1 by default: the app's very first visitor after start-up is not timed).
2. Actions on one page: a benchmark switch (cycling through the benchmarks), a sort (a figure column's
   header: the HTML board's header; on a Dataframe board its header menu's "Sort descending"), a search
   (a model name typed over the last, a key every 80 ms, timed from the last key) and a filter (the view
   control, e.g. ACEBench's language). Each is timed from the input event that made it (its timestamp in the
   page) until the table shows the new view: on the HTML board (`.board-html`) until `data-board-state`
   changed and the table stayed unchanged with no server call open for 0.6 s, its time being the table's
   last change; on a Dataframe board the same with the rows' text instead of the state. With each, the server
   calls it caused: POSTs to /gradio_api/ (direct runs, queue joins, any other) from the input until the view
   settled, and when the first of its events was answered (the rest of the time is the page's own work: sending
   later calls, drawing).
3. 50 visitors at once: R real browser pages (--real, 3 by default: real Chromium pages are heavy on 2
   cores) switch benchmark by clicking, timed as above, while the rest of the crowd is simulated: each
   simulated visitor replays over raw HTTP, under a session of its own, exactly the server calls a real page
   sent for the same switch (recorded in step 2), and is timed from its first call until its last event was
   answered (no rendering). All visitors start each round together, for --rounds rounds, each to another
   benchmark. p50/p95/max of the real pages, the simulated visitors, and all together.

Then a table of each goal (issue 29, "Slow") against the measured figure, PASS/FAIL: a figure's median for
a time (its max is printed too), the max for a count of server calls, p95 of all visitors for the crowd.
The browser, the app and the simulated crowd share this machine's cores.

Usage: python benchmarks/board_browser_speed.py [--url http://127.0.0.1:7860/] [--app-dir PATH]
         [--repeat 5] [--visitors 50] [--real 3] [--rounds 3] [--sizes 1440x900,390x844] [--timeout 60]
         [--actions switch,sort,search,filter]
Exit status 1 when a goal fails or a figure could not be measured (each wait that passed its limit is
printed as NOT MEASURED with the step and what it waited for).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import board_controls as controls  # noqa: E402
from benchmarks.app_speed import free_port, wait_for_page  # noqa: E402
from benchmarks.board_crowd import Recording, ReplayVisitor, counter_positions  # noqa: E402
from benchmarks.board_page import ActionResult, BoardPage, ServerCall, StepTimeout  # noqa: E402
from benchmarks.screenshots import CHROMIUM_ARGS  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ACTIONS = ("switch", "sort", "search", "filter")
SEARCHES = ("qwen", "gpt", "llama", "gemini", "claude", "deepseek")
KEY_DELAY_MS = 80
GOAL_FIRST_AFTER_LOAD_S = 1.0
GOAL_FIRST_AFTER_NAVIGATION_S = 3.0
GOAL_ACTION_S = 0.5
GOAL_ACTION_CALLS = 3
GOAL_CROWD_P95_S = 1.0


@contextmanager
def started_app(app_dir: Path, timeout_s: float) -> Iterator[str]:
    """`python app.py` in `app_dir` as a new user starts it: a fresh TOOLBOARD_HOME (only the published rows the
    app ships with), a free port; its URL once the page answers; stopped afterwards."""
    with tempfile.TemporaryDirectory() as home:
        port = free_port()
        env = {**os.environ, "TOOLBOARD_HOME": home, "GRADIO_SERVER_PORT": str(port),
               "GRADIO_ANALYTICS_ENABLED": "False"}
        app = subprocess.Popen([sys.executable, "app.py"], cwd=app_dir, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        try:
            url = f"http://127.0.0.1:{port}/"
            wait_for_page(url, timeout_s)
            yield url
        finally:
            app.terminate()
            app.wait(10)


@dataclass
class SizeFigures:
    """What was measured at one size."""

    size: str
    board: str = ""  # "html" or "dataframe": which board the page had
    first_after_navigation: list[float] = field(default_factory=list)
    first_after_load: list[float] = field(default_factory=list)
    actions: dict[str, list[ActionResult]] = field(default_factory=lambda: {name: [] for name in ACTIONS})
    crowd_real: list[float] = field(default_factory=list)
    crowd_simulated: list[float] = field(default_factory=list)
    crowd_calls: int = 0  # server calls a simulated switch replays
    failures: list[str] = field(default_factory=list)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:6.0f} ms"


def first_tables(browser: Any, url: str, size: tuple[int, int], figures: SizeFigures, loads: int,
                 timeout_s: float, warm_visits: int = 0) -> None:
    """`loads` fresh visitors' first tables; before them, `warm_visits` untimed visits (a deployment's visitors
    come to an app that has served pages before, not to one that has just started)."""
    for visit in range(warm_visits + loads):
        board = BoardPage.open(browser, url, size, timeout_s)
        try:
            after_navigation, after_load = board.first_rows(timeout_s)
            if visit < warm_visits:
                continue
            figures.first_after_navigation.append(after_navigation / 1000)
            figures.first_after_load.append(after_load / 1000)
            figures.board = board.evaluate("window.__bench.read().kind")
        finally:
            board.close()


def settled_choice(board: BoardPage, label: str, option: str, timeout_s: float) -> None:
    """Pick an option untimed, and wait until the page settled."""
    controls.choice_action(board.page, label, option)()
    board.settle(f"choosing {option!r} in {label!r}", timeout_s)


def page_actions(board: BoardPage, figures: SizeFigures, args: argparse.Namespace,
                 recordings: dict[str, Recording]) -> None:
    """Each action of `args.actions` `args.repeat` times on one page, alternating targets; one action failing
    is reported and the next is measured. The switches' calls are recorded for the simulated crowd."""
    steps = {"switch": switches, "filter": filters, "sort": sorts, "search": searches}
    for name in args.actions:
        try:
            steps[name](board, figures, args, recordings)
        except StepTimeout as error:
            figures.failures.append(f"{name}: {error}")
        except Exception as error:  # playwright's errors (a control not found): reported, the next action runs
            figures.failures.append(f"{name}: {type(error).__name__}: {str(error).splitlines()[0]}")


def switches(board: BoardPage, figures: SizeFigures, args: argparse.Namespace, recordings: dict[str, Recording]) -> None:
    page, timeout_s = board.page, args.timeout
    benchmarks = controls.choices(page, args.benchmark_label)
    calls: dict[str, list[ServerCall]] = {}
    if len(benchmarks) < 2:
        raise StepTimeout(f"switch: the control {args.benchmark_label!r} offers {benchmarks}: nothing to switch to")
    for index in range(args.repeat):
        target = benchmarks[(index + 1) % len(benchmarks)]
        done = gesture(board, f"switch to {target!r}", lambda t=target: controls.choice_action(page, args.benchmark_label, t),
                       timeout_s)
        figures.actions["switch"].append(done)
        calls.setdefault(target, done.calls)
    counters = counter_positions(board.calls)
    recordings.update({target: Recording.of(made, counters) for target, made in calls.items()})
    if benchmarks[args.repeat % len(benchmarks)] != benchmarks[0]:
        settled_choice(board, args.benchmark_label, benchmarks[0], timeout_s)


def filters(board: BoardPage, figures: SizeFigures, args: argparse.Namespace, _recordings: Any) -> None:
    page, timeout_s = board.page, args.timeout
    views = controls.choices(page, args.filter_label)
    if len(views) < 2:
        raise StepTimeout(f"filter: the control {args.filter_label!r} offers {views}: nothing to filter to")
    for index in range(args.repeat):
        target = views[(index + 1) % len(views)]
        figures.actions["filter"].append(gesture(
            board, f"filter {args.filter_label} = {target!r}",
            lambda t=target: controls.choice_action(page, args.filter_label, t), timeout_s))
    if views[args.repeat % len(views)] != views[0]:
        settled_choice(board, args.filter_label, views[0], timeout_s)


def sorts(board: BoardPage, figures: SizeFigures, args: argparse.Namespace, _recordings: Any) -> None:
    # Figure columns the board is not sorted by, one after the other (a column is not sorted by twice in a row).
    columns = controls.sort_columns(board.page)
    if not columns:
        raise StepTimeout("sort: the board shows no figure column header to click")
    for index in range(args.repeat):
        column = columns[index % len(columns)]
        figures.actions["sort"].append(gesture(
            board, f"sort by {column!r}", lambda c=column: controls.sort_action(board.page, c, args.sort_label),
            args.timeout))


def searches(board: BoardPage, figures: SizeFigures, args: argparse.Namespace, _recordings: Any) -> None:
    for index in range(args.repeat):
        text = SEARCHES[index % len(SEARCHES)]
        figures.actions["search"].append(gesture(
            board, f"search {text!r}",
            lambda t=text: controls.search_action(board.page, args.search_label, t, KEY_DELAY_MS),
            args.timeout, start_at="last"))


def gesture(board: BoardPage, step: str, prepare: Any, timeout_s: float, start_at: str = "first") -> ActionResult:
    """`prepare()` (the untimed part of a gesture, returning its timed input), then the input timed; any failure
    as a StepTimeout naming the step."""
    try:
        act = prepare()
    except Exception as error:  # playwright's errors: a control not found, not clickable
        raise StepTimeout(f"{step}: could not prepare the gesture: {str(error).splitlines()[0]}") from error
    try:
        return board.timed(step, act, timeout_s, start_at)
    except StepTimeout:
        raise
    except Exception as error:
        raise StepTimeout(f"{step}: {str(error).splitlines()[0]}") from error


def crowd(browser: Any, url: str, size: tuple[int, int], figures: SizeFigures, args: argparse.Namespace,
          recordings: dict[str, Recording]) -> None:
    """`args.visitors` at once: `args.real` real pages, the rest simulated (see the module's docstring)."""
    timeout_s = args.timeout
    real = min(args.real, args.visitors)
    targets = sorted(recordings)
    pages = [BoardPage.open(browser, url, size, timeout_s) for _ in range(real)]
    simulated = [ReplayVisitor(url, timeout_s) for _ in range(args.visitors - real)]
    figures.crowd_calls = max(recording.calls for recording in recordings.values())
    try:
        for board in pages:
            board.first_rows(timeout_s)
            board.settle("crowd: a real page's load", timeout_s)
        # A simulated visitor's first call builds its session (what a page load does): untimed.
        warm_errors = run_simulated(simulated, [recordings[targets[0]]] * len(simulated), [])
        if warm_errors:
            raise StepTimeout(f"crowd: simulated visitors' first calls failed: {warm_errors[0]}")
        benchmarks = controls.choices(pages[0].page, args.benchmark_label) if pages else targets
        current = [benchmarks[0]] * len(pages)
        for round_index in range(args.rounds):
            plays = [recordings[targets[(round_index + i) % len(targets)]] for i in range(len(simulated))]
            aims = [next(b for b in benchmarks[round_index + i + 1:] + benchmarks if b != current[i])
                    for i in range(len(pages))]
            acts = [controls.choice_action(board.page, args.benchmark_label, aim) for board, aim in zip(pages, aims)]
            go = threading.Event()
            times: list[float] = []
            errors: list[str] = []
            crowd_thread = threading.Thread(target=run_simulated, args=(simulated, plays, times, errors, go))
            crowd_thread.start()
            go.set()
            pending = [board.begin(act) for board, act in zip(pages, acts)]
            deadline = time.monotonic() + timeout_s
            results: list[ActionResult | None] = [None] * len(pages)
            while any(result is None for result in results):
                for i, board in enumerate(pages):
                    if results[i] is None:
                        results[i] = board.result(pending[i])
                if time.monotonic() > deadline:
                    late = next(i for i, result in enumerate(results) if result is None)
                    raise pages[late].waited_for(f"crowd round {round_index + 1}: real page {late + 1}'s switch to "
                                                 f"{aims[late]!r}", pending[late], timeout_s)
                pages[0].page.wait_for_timeout(40)
            crowd_thread.join(timeout_s * 2)
            if crowd_thread.is_alive():
                raise StepTimeout(f"crowd round {round_index + 1}: simulated visitors not done within {timeout_s * 2:.0f} s")
            if errors:
                figures.failures.append(f"crowd round {round_index + 1}: {len(errors)} simulated switches failed, "
                                        f"e.g. {errors[0]}")
            figures.crowd_real += [result.seconds for result in results if result is not None]
            figures.crowd_simulated += times
            current = aims
    finally:
        for board in pages:
            board.close()
        for visitor in simulated:
            visitor.close()


def run_simulated(visitors: list[ReplayVisitor], plays: list[Recording], times: list[float],
                  errors: list[str] | None = None, go: threading.Event | None = None) -> list[str]:
    """Every visitor replays its recording at once (released together by `go`); their times appended to
    `times`, their errors returned (and appended to `errors`)."""
    errors = [] if errors is None else errors
    lock = threading.Lock()
    start = threading.Barrier(len(visitors)) if visitors else None

    def visit(visitor: ReplayVisitor, play: Recording) -> None:
        if go is not None:
            go.wait()
        if start is not None:
            start.wait()
        try:
            took = visitor.replay(play)
        except Exception as error:  # a failed call is reported, not fatal to the rest of the crowd
            with lock:
                errors.append(f"{type(error).__name__}: {error}")
            return
        with lock:
            times.append(took)

    threads = [threading.Thread(target=visit, args=pair) for pair in zip(visitors, plays)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def measure_size(browser: Any, url: str, size: tuple[int, int], args: argparse.Namespace) -> SizeFigures:
    figures = SizeFigures(f"{size[0]}x{size[1]}")
    recordings: dict[str, Recording] = {}
    steps = (("first table", lambda: first_tables(browser, url, size, figures, args.repeat, args.timeout,
                                                  args.warm_visits)),
             ("actions", lambda: on_one_page(browser, url, size, figures, args, recordings)),
             ("crowd", lambda: crowd(browser, url, size, figures, args, recordings) if recordings and args.visitors
              else figures.failures.append("crowd: no switch was recorded to replay (--actions without switch)")
              if args.visitors else None))
    for name, step in steps:
        began = time.perf_counter()
        try:
            step()
        except (StepTimeout, TimeoutError, RuntimeError) as error:
            figures.failures.append(f"{name}: {error}")
        except Exception as error:  # playwright's errors (a control not found): reported, the next step runs
            figures.failures.append(f"{name}: {type(error).__name__}: {str(error).splitlines()[0]}")
        print(f"  [{figures.size}] {name} done in {time.perf_counter() - began:.0f} s", flush=True)
    return figures


def on_one_page(browser: Any, url: str, size: tuple[int, int], figures: SizeFigures, args: argparse.Namespace,
                recordings: dict[str, Recording]) -> None:
    board = BoardPage.open(browser, url, size, args.timeout)
    try:
        board.first_rows(args.timeout)
        board.settle("the page's load", args.timeout)
        page_actions(board, figures, args, recordings)
    finally:
        board.close()


def print_figures(figures: SizeFigures, args: argparse.Namespace) -> None:
    print(f"\n== {figures.size}  (board: {figures.board or 'not seen'})")
    if figures.first_after_load:
        print(f"first table rows visible, {len(figures.first_after_load)} fresh visitors:")
        for label, values in (("from navigation start", figures.first_after_navigation),
                              ("from the page's load event", figures.first_after_load)):
            print(f"  {label:28s} median {ms(statistics.median(values))}  max {ms(max(values))}")
    print(f"{'action':8s} {'n':>3s} {'median':>9s} {'max':>9s}   server calls (median / max)   "
          f"first server answer (median)")
    for name, results in figures.actions.items():
        if not results:
            print(f"{name:8s} {0:3d}   not measured")
            continue
        seconds = [result.seconds for result in results]
        calls = [len(result.calls) for result in results]
        lost = sum(result.lost for result in results)
        answers = [result.first_answer for result in results if result.first_answer is not None]
        print(f"{name:8s} {len(results):3d} {ms(statistics.median(seconds))} {ms(max(seconds))}   "
              f"{statistics.median(calls):5.0f} / {max(calls):<5d}              "
              f"{ms(statistics.median(answers)) if answers else '     -':>9s}"
              f"{f'   ({lost} queue events never completed)' if lost else ''}")
    if figures.crowd_real or figures.crowd_simulated:
        print(f"{args.visitors} visitors at once, benchmark switches, {args.rounds} rounds "
              f"({min(args.real, args.visitors)} real pages, the rest simulated replaying "
              f"{figures.crowd_calls} server calls per switch):")
        for label, values in (("real pages (drawn)", figures.crowd_real),
                              ("simulated (server answered)", figures.crowd_simulated),
                              ("all visitors", figures.crowd_real + figures.crowd_simulated)):
            if values:
                print(f"  {label:28s} p50 {ms(statistics.median(values))}  p95 {ms(percentile(values, 0.95))}  "
                      f"max {ms(max(values))}  ({len(values)} switches)")
    for failure in figures.failures:
        print(f"  NOT MEASURED: {failure}")


def goal_lines(figures: SizeFigures, visitors: int) -> list[tuple[str, str, str, bool | None]]:
    """(goal, target, measured, passed) rows; passed is None when not measured."""
    rows: list[tuple[str, str, str, bool | None]] = []

    def add(goal: str, target: str, values: list[float], pick: str, limit: float, unit: str) -> None:
        if not values:
            rows.append((goal, target, "not measured", None))
            return
        figure = {"median": statistics.median(values), "max": max(values), "p95": percentile(values, 0.95)}[pick]
        shown = f"{pick} {figure * 1000:.0f} ms" if unit == "s" else f"{pick} {figure:.0f}"
        rows.append((goal, target, shown, figure <= limit if unit == "calls" else figure < limit))

    add("first table after load", "< 1 s", figures.first_after_load, "median", GOAL_FIRST_AFTER_LOAD_S, "s")
    add("first table after navigation", "< 3 s", figures.first_after_navigation, "median",
        GOAL_FIRST_AFTER_NAVIGATION_S, "s")
    for name in ACTIONS:
        results = figures.actions[name]
        add(f"{name} visible", "< 0.5 s", [r.seconds for r in results], "median", GOAL_ACTION_S, "s")
        add(f"{name} server calls", "<= 3", [float(len(r.calls)) for r in results], "max", GOAL_ACTION_CALLS, "calls")
    add(f"{visitors} visitors: switch p95", "< 1 s", figures.crowd_real + figures.crowd_simulated, "p95",
        GOAL_CROWD_P95_S, "s")
    return rows


def print_goals(all_figures: list[SizeFigures], visitors: int) -> bool:
    print("\n== goals (issue 29, Slow): a time's median, a call count's max, the crowd's p95 over all visitors")
    print(f"{'size':10s} {'goal':32s} {'target':8s} {'measured':18s} result")
    passed = True
    for figures in all_figures:
        for goal, target, measured, ok in goal_lines(figures, visitors):
            verdict = "PASS" if ok else "FAIL" if ok is False else "NOT MEASURED"
            passed = passed and bool(ok)
            print(f"{figures.size:10s} {goal:32s} {target:8s} {measured:18s} {verdict}")
    return passed


def parse_actions(text: str) -> list[str]:
    chosen = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in ACTIONS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown actions {unknown}; the actions are {', '.join(ACTIONS)}")
    return chosen


def parse_sizes(text: str) -> list[tuple[int, int]]:
    sizes = []
    for part in text.split(","):
        width, _, height = part.strip().partition("x")
        if not (width.isdigit() and height.isdigit()):
            raise argparse.ArgumentTypeError(f"a size is WIDTHxHEIGHT, e.g. 1440x900; got {part!r}")
        sizes.append((int(width), int(height)))
    return sizes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="measure an app already running here instead of starting one")
    parser.add_argument("--app-dir", type=Path, default=ROOT, help="the checkout whose app.py is started")
    parser.add_argument("--repeat", type=int, default=5, help="fresh page loads, and times each action is done")
    parser.add_argument("--visitors", type=int, default=50, help="visitors at once (0: skip the crowd)")
    parser.add_argument("--warm-visits", type=int, default=1,
                        help="untimed page loads before the timed first tables, at each size (an app that has "
                             "just started answers its very first visitor more slowly)")
    parser.add_argument("--real", type=int, default=3, help="of the visitors, real browser pages")
    parser.add_argument("--rounds", type=int, default=3, help="crowd switches per visitor")
    parser.add_argument("--sizes", type=parse_sizes, default=parse_sizes("1440x900,390x844"))
    parser.add_argument("--timeout", type=float, default=60, help="seconds any one wait for a view may take")
    parser.add_argument("--actions", type=parse_actions, default=list(ACTIONS),
                        help=f"the actions to measure, in this order (default {','.join(ACTIONS)}; the crowd replays "
                             "the switches)")
    parser.add_argument("--benchmark-label", default="Benchmark")
    parser.add_argument("--filter-label", default="Language", help="the view control of the first benchmark")
    parser.add_argument("--sort-label", default="Sort by", help="the sort control when no header is shown")
    parser.add_argument("--search-label", default="Search models")
    args = parser.parse_args()
    if args.repeat < 1 or args.real < 0 or args.visitors < 0 or args.rounds < 1:
        parser.error("--repeat and --rounds must be at least 1, --real and --visitors at least 0")
    from playwright.sync_api import sync_playwright

    with (app_url(args) as url, sync_playwright() as driver):
        browser = driver.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            print(f"board at {url}, {os.cpu_count()} cores, {load_average()}; "
                  f"sizes {', '.join(f'{w}x{h}' for w, h in args.sizes)}", flush=True)
            all_figures = []
            for size in args.sizes:  # each size's figures printed once measured: a cut-off run keeps them
                all_figures.append(measure_size(browser, url, size, args))
                print_figures(all_figures[-1], args)
                print(f"(measured with the machine at {load_average()}: other work on it slows every figure)",
                      flush=True)
        finally:
            browser.close()
    return 0 if print_goals(all_figures, args.visitors) else 1


def load_average() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min)"


@contextmanager
def app_url(args: argparse.Namespace) -> Iterator[str]:
    if args.url:
        wait_for_page(args.url, args.timeout)
        yield args.url
        return
    with started_app(args.app_dir.resolve(), args.timeout) as url:
        yield url


if __name__ == "__main__":
    raise SystemExit(main())
