"""One visitor's page of the board in a real Chromium, for benchmarks/board_browser_speed.py: when its first
table rows showed, and each user action timed from the trusted input event that began it until the table
shows the new view, with the server calls the action caused.

What the page watches (an init script, before any of the app's code runs):
- the board's table: the HTML board's root `.board-html` (its `data-board-state`, `data-rows` and the text of
  its first rows) when the page has one, else the Gradio Dataframe `.board-ranked` (the text of its first
  visible rows), read in the first animation frame after the DOM changed (the frame that paints the change).
  Each change of that signature is logged with that frame's `performance.now()` time;
- the trusted input events (pointer, mouse, key), with their own timestamps;
- the first moment a table row was visible (times are milliseconds from the navigation's start).

- the server's events: a queued one's join answer names it and the session's event stream says when it
  completed; one outside the queue (POST /gradio_api/run/…) completes with its answer (the page's own fetch is
  wrapped; only copies of its answers are read).

What Python watches (playwright's request events): every POST to `/gradio_api/` (a queue join or any other
server call): the calls an action caused, and those still unanswered.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

# Rows of the board: the HTML board's rows or cards (whatever the board helper renders), else the Dataframe's
# data rows (Gradio also renders hidden rows to measure them: only visible ones count).
RECORDER_JS = """
(() => {
  const bench = {changes: [], inputs: [], firstRows: null, signature: null};
  window.__bench = bench;
  const HTML_ROWS = "tbody tr, [role=row], .board-card, li, article";
  const FRAME_ROWS = ".virtual-row, tbody tr";
  const visible = (el) => (el.checkVisibility ? el.checkVisibility() : el.offsetParent !== null)
    && el.getBoundingClientRect().height > 0;
  const rowsOf = (root, selector) => Array.from(root.querySelectorAll(selector)).filter(visible);
  bench.read = () => {
    const html = document.querySelector(".board-html");
    if (html) {
      const rows = rowsOf(html, HTML_ROWS);
      const text = rows.slice(0, 30).map(r => r.innerText).join("\\n");
      return {kind: "html", state: html.dataset.boardState ?? "", rows: html.dataset.rows ?? "",
              visibleRows: rows.length, text: text || (visible(html) ? html.innerText.slice(0, 4000) : "")};
    }
    const frame = document.querySelector(".board-ranked");
    if (!frame) return {kind: "none", state: "", rows: "", visibleRows: 0, text: ""};
    const rows = rowsOf(frame, FRAME_ROWS).filter(r => !r.closest("thead"));
    return {kind: "dataframe", state: "", rows: String(rows.length), visibleRows: rows.length,
            text: rows.slice(0, 30).map(r => r.innerText).join("\\n")};
  };
  const look = () => {
    const now = performance.now();
    const seen = bench.read();
    const signature = seen.kind + "\\u0001" + seen.state + "\\u0001" + seen.rows + "\\u0001" + seen.text;
    if (bench.firstRows === null && seen.visibleRows > 0 && seen.text.trim()) bench.firstRows = now;
    if (signature !== bench.signature) {
      bench.signature = signature;
      bench.changes.push({t: now, kind: seen.kind, state: seen.state, rows: seen.rows,
                          text: seen.text.slice(0, 200)});
    }
  };
  bench.look = look;
  // The queue's events: joined (the join's answer names the event), then completed (the event stream says so).
  // Only a copy of each answer is read, after the page got it.
  bench.events = {};
  bench.queueActivity = 0;
  const seen = (id, done) => {
    if (!id) return;
    const event = bench.events[id] ?? (bench.events[id] = {done: false, joined: performance.now()});
    event.last = performance.now();
    if (done && !event.done) event.completed = event.last;
    event.done = event.done || done;
    bench.queueActivity = event.last;
  };
  const pageFetch = window.fetch;
  let runs = 0;
  window.fetch = async (...args) => {
    const url = String(args[0]?.url ?? args[0]);
    // An event outside the queue: sent now, completed when its answer arrives.
    const run = url.includes("/gradio_api/run/") ? `run-${++runs}` : null;
    if (run) seen(run, false);
    const answer = await pageFetch(...args);
    if (run) {
      seen(run, true);
    } else if (url.includes("/gradio_api/queue/join")) {
      answer.clone().json().then((body) => seen(body?.event_id, false), () => {});
    } else if (url.includes("/gradio_api/queue/data") && answer.body) {
      const reader = answer.clone().body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      (async () => {
        for (;;) {
          const {done, value} = await reader.read();
          if (done) return;
          buffer += decoder.decode(value, {stream: true});
          const lines = buffer.split(String.fromCharCode(10));
          buffer = lines.pop();
          for (const line of lines) {
            if (!line.startsWith("data:")) continue;
            try {
              const message = JSON.parse(line.slice(5));
              if (message.msg !== "heartbeat") seen(message.event_id, message.msg === "process_completed");
            } catch (error) { /* a line the page's own reader handles */ }
          }
        }
      })().catch(() => {});
    }
    return answer;
  };
  bench.answered = (after) => Object.values(bench.events).filter((e) => e.joined >= after && e.completed)
    .map((e) => e.completed);
  bench.pending = () => Object.entries(bench.events).filter(([, e]) => !e.done)
    .map(([id, e]) => ({id, idle: performance.now() - e.last}));
  for (const type of ["pointerdown", "mousedown", "keydown", "click"]) {
    document.addEventListener(type, (e) => { if (e.isTrusted) bench.inputs.push({type, t: e.timeStamp}); }, true);
  }
  // The page's changes are read once per frame, not at each of the thousands of DOM mutations of a render: a read
  // measures rows (layout), and doing that per mutation would slow the very render being timed.
  let lookPending = false;
  const lookNextFrame = () => {
    if (lookPending) return;
    lookPending = true;
    requestAnimationFrame(() => { lookPending = false; look(); });
  };
  const start = () => {
    new MutationObserver(lookNextFrame).observe(document.documentElement,
      {subtree: true, childList: true, characterData: true, attributes: true,
       attributeFilter: ["data-board-state", "data-rows", "style", "class", "hidden"]});
    look();
  };
  if (document.documentElement) start(); else document.addEventListener("DOMContentLoaded", start);
  bench.status = (since) => ({now: performance.now(), inputs: bench.inputs.slice(since.inputs),
                              changes: bench.changes.slice(since.changes), firstRows: bench.firstRows,
                              current: bench.read(), pending: bench.pending(),
                              queueActivity: bench.queueActivity});
  bench.mark = () => ({inputs: bench.inputs.length, changes: bench.changes.length});
})();
"""

QUEUE_STREAM = "/gradio_api/queue/data"
HEARTBEAT = "/gradio_api/heartbeat/"
# A queue event with no news for this long is counted lost, not waited for: Gradio now and then leaves one of a
# page's events pending for good (the session's event stream then stays open, sending only heartbeats).
LOST_AFTER_S = 15.0
GESTURE_TIMEOUT_S = 30.0


class StepTimeout(RuntimeError):
    """A wait of the benchmark passed its limit: the message names the step and what it waited for."""


@dataclass
class ServerCall:
    at: float  # time.perf_counter() when the page sent it
    path: str
    body: dict[str, Any] | None  # the JSON the page posted (a queue join's fn_index, data, trigger_id…)


@dataclass
class ActionResult:
    seconds: float  # from the action's input event until the table showed the new view (its last change)
    calls: list[ServerCall]
    state: str  # the table's state afterwards (data-board-state, or "" for the Dataframe)
    kind: str  # "html" or "dataframe"
    lost: int = 0  # queue events of the page left pending (see LOST_AFTER_S) when it settled
    first_answer: float | None = None  # from the input until the first of its queue events completed


@dataclass
class Pending:
    """An action sent, not yet timed: the table before it, the page's logs' lengths, the calls' count."""

    before: dict[str, Any]
    since: dict[str, int]
    first_call: int
    start_at: str


@dataclass
class BoardPage:
    """A playwright page on the app, its board watched (see the module's docstring)."""

    page: Any
    calls: list[ServerCall] = field(default_factory=list)
    open_posts: set[Any] = field(default_factory=set)
    last_network: float = 0.0  # time.perf_counter() of the last server request sent or ended

    @classmethod
    def open(cls, browser: Any, url: str, size: tuple[int, int], timeout_s: float) -> BoardPage:
        """A new visitor (a fresh browser context: no cache, no cookies) at `size`, the page loaded."""
        context = browser.new_context(viewport={"width": size[0], "height": size[1]})
        context.add_init_script(RECORDER_JS)
        board = cls(context.new_page())
        # A control a gesture needs is there within seconds or not at all: its wait is shorter than a view's.
        board.page.set_default_timeout(min(timeout_s, GESTURE_TIMEOUT_S) * 1000)
        board.page.on("request", board._sent)
        board.page.on("requestfinished", board._ended)
        board.page.on("requestfailed", board._ended)
        try:
            board.page.goto(url, wait_until="load", timeout=timeout_s * 1000)
        except Exception as error:  # playwright's TimeoutError, or the app not answering
            raise StepTimeout(f"page load: {url} did not load within {timeout_s:.0f} s ({error})") from error
        return board

    def close(self) -> None:
        self.page.context.close()

    def _sent(self, request: Any) -> None:
        if "/gradio_api/" not in request.url or HEARTBEAT in request.url:
            return
        self.last_network = time.perf_counter()
        if request.method != "POST":
            return  # the queue's event streams: their events are followed in the page
        self.open_posts.add(request)
        try:
            body = json.loads(request.post_data or "null")
        except ValueError:
            body = None
        path = re.sub(r"^https?://[^/]+", "", request.url).split("?")[0]
        self.calls.append(ServerCall(self.last_network, path, body if isinstance(body, dict) else None))

    def _ended(self, request: Any) -> None:
        if "/gradio_api/" in request.url and HEARTBEAT not in request.url:
            self.open_posts.discard(request)
            self.last_network = time.perf_counter()

    def evaluate(self, script: str, argument: Any = None) -> Any:
        return self.page.evaluate(script, argument)

    def mark(self) -> dict[str, int]:
        return self.evaluate("window.__bench.mark()")

    def status(self, since: dict[str, int]) -> dict[str, Any]:
        return self.evaluate("(since) => window.__bench.status(since)", since)

    def busy(self, status: dict[str, Any], quiet_s: float) -> bool:
        """Whether a server call of the page is open (a POST unanswered, a queue event not completed and not
        lost) or one ended less than `quiet_s` ago."""
        waiting = [event for event in status["pending"] if event["idle"] < LOST_AFTER_S * 1000]
        recent = (time.perf_counter() - self.last_network < quiet_s
                  or status["now"] - status["queueActivity"] < quiet_s * 1000)
        return bool(self.open_posts or waiting or recent)

    def first_rows(self, timeout_s: float) -> tuple[float, float]:
        """Milliseconds from navigation start, and from the page's own load event, until the first table
        rows were visible."""
        deadline = time.monotonic() + timeout_s
        while True:
            found = self.evaluate("""() => {
              const nav = performance.getEntriesByType("navigation")[0];
              return {first: window.__bench.firstRows, load: nav ? nav.loadEventStart : null};
            }""")
            if found["first"] is not None and found["load"]:
                return found["first"], found["first"] - found["load"]
            if time.monotonic() > deadline:
                raise StepTimeout(f"first table: no visible board row (.board-html rows or .board-ranked rows) "
                                  f"within {timeout_s:.0f} s of the page's load")
            self.page.wait_for_timeout(50)

    def settle(self, step: str, timeout_s: float, quiet_s: float = 0.6) -> None:
        """Wait until no server call is open and the table has not changed for `quiet_s` (the view a visitor
        left the page in)."""
        deadline = time.monotonic() + timeout_s
        since = self.mark()
        calm_since = None
        while True:
            status = self.status(since)
            since = self.mark()
            if self.busy(status, quiet_s) or status["changes"]:
                calm_since = None
            elif calm_since is None:
                calm_since = time.monotonic()
            elif time.monotonic() - calm_since >= quiet_s:
                return
            if time.monotonic() > deadline:
                raise StepTimeout(f"{step}: the page did not settle within {timeout_s:.0f} s{self.still_open(status)}")
            self.page.wait_for_timeout(100)

    def begin(self, act: Any, start_at: str = "first") -> Pending:
        """Run `act()` (playwright input on this page) and return what `result` needs to time it."""
        pending = Pending(self.evaluate("window.__bench.read()"), self.mark(), len(self.calls), start_at)
        act()
        return pending

    def result(self, pending: Pending, quiet_s: float = 0.6) -> ActionResult | None:
        """The action's timing once its view is drawn, else None: from its first trusted input event (or its
        last one, `start_at="last"`: the last key typed) until the table's last change, once the table changed
        (the HTML board: `data-board-state` changed), no server call is open and nothing changed for
        `quiet_s`. The server calls counted are the POSTs sent from the action's start until then."""
        status = self.status(pending.since)
        inputs = status["inputs"]
        if not inputs:
            return None
        started = inputs[0]["t"] if pending.start_at == "first" else inputs[-1]["t"]
        changes = [c for c in status["changes"] if c["t"] >= started]
        current, before = status["current"], pending.before
        changed = (current["state"] != before["state"] if current["kind"] == "html" and before["kind"] == "html"
                   else bool(changes))
        if not changed or not changes or self.busy(status, quiet_s) or status["now"] - changes[-1]["t"] < quiet_s * 1000:
            return None
        lost = sum(1 for event in status["pending"] if event["idle"] >= LOST_AFTER_S * 1000)
        answers = self.evaluate("(after) => window.__bench.answered(after)", started)
        first_answer = (min(answers) - started) / 1000 if answers else None
        return ActionResult((changes[-1]["t"] - started) / 1000, self.calls[pending.first_call:], current["state"],
                            current["kind"], lost, first_answer)

    def waited_for(self, step: str, pending: Pending, timeout_s: float) -> StepTimeout:
        """The error of an action whose view did not come within `timeout_s`: what it waited for."""
        status = self.status(pending.since)
        waited = ("a trusted input event to reach the page" if not status["inputs"] else
                  "data-board-state to change" if pending.before["kind"] == "html" else "the table's rows to change")
        return StepTimeout(f"{step}: waited {timeout_s:.0f} s for {waited}{self.still_open(status)}")

    def still_open(self, status: dict[str, Any]) -> str:
        open_posts = sorted(re.sub(r"^https?://[^/]+", "", r.url) for r in self.open_posts)
        events = [f"{e['id'][:8]} (no news for {e['idle'] / 1000:.0f} s)" for e in status["pending"]]
        parts = ([f"server calls unanswered: {', '.join(open_posts)}"] if open_posts else []) + (
            [f"queue events pending: {', '.join(events)}"] if events else [])
        return f" ({'; '.join(parts)})" if parts else ""

    def timed(self, step: str, act: Any, timeout_s: float, start_at: str = "first") -> ActionResult:
        """`act()` timed (see `result`); StepTimeout naming `step` when its view does not come in time."""
        pending = self.begin(act, start_at)
        deadline = time.monotonic() + timeout_s
        while (done := self.result(pending)) is None:
            if time.monotonic() > deadline:
                raise self.waited_for(step, pending, timeout_s)
            self.page.wait_for_timeout(40)
        return done
