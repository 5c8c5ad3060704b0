"""Simulated visitors for benchmarks/board_browser_speed.py: each replays, over raw HTTP, exactly the server
calls a real page sent for one user action (recorded from the browser: each call's path, fn_index, data,
trigger_id and event data), under a session of its own, as Gradio's page does it: an event outside the queue is
one POST /gradio_api/run/… answered with its outputs; a queued event is a POST /gradio_api/queue/join, then the
session's event stream GET /gradio_api/queue/data until every joined event has completed.

A page may number its calls (the HTML board numbers its redraws so that an overtaken one answers nothing):
a data position holding a whole number that differs between two recorded calls of the same event is such a
counter, and each simulated visitor sends its own increasing numbers there instead of the recorded ones.

Calls the page sent together (within WAVE_GAP_S of each other) are sent together; a later group (events the
page fires once an earlier one's outputs arrive, e.g. the `.change` of a control the first event updated) is
sent once the earlier group completed. What is not simulated: the page's own rendering, and its JavaScript.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

from benchmarks.board_page import ServerCall

WAVE_GAP_S = 0.05
JOIN_PATH = "/gradio_api/queue/join"
RUN_PATH = "/gradio_api/run/"  # an event outside the queue: its answer is the HTTP response


def replayed(path: str) -> bool:
    """The calls a board action sends that a simulated visitor replays: queue joins and direct runs."""
    return path == JOIN_PATH or path.startswith(RUN_PATH)


def is_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def counter_positions(calls: list[ServerCall]) -> dict[Any, frozenset[int]]:
    """For each event (fn_index), the data positions that look like the page's own counter: a whole number
    in every recorded call, not always the same."""
    seen: dict[Any, list[list[Any]]] = {}
    for call in calls:
        if replayed(call.path) and call.body is not None and isinstance(call.body.get("data"), list):
            seen.setdefault(call.body.get("fn_index"), []).append(call.body["data"])
    positions: dict[Any, frozenset[int]] = {}
    for fn, datas in seen.items():
        width = min(len(data) for data in datas)
        positions[fn] = frozenset(i for i in range(width) if all(is_number(data[i]) for data in datas)
                                  and len({data[i] for data in datas}) > 1)
    return positions


@dataclass(frozen=True)
class Recording:
    """The calls of one recorded action (path, body), in the groups the page sent them, and where each event's
    data holds a counter of the page's."""

    waves: tuple[tuple[tuple[str, dict[str, Any]], ...], ...]
    counters: dict[Any, frozenset[int]]

    @classmethod
    def of(cls, calls: list[ServerCall], counters: dict[Any, frozenset[int]]) -> Recording:
        waves: list[list[tuple[str, dict[str, Any]]]] = []
        last = None
        for call in sorted(calls, key=lambda c: c.at):
            if not replayed(call.path) or call.body is None:
                continue  # uploads and the like: no board action sends them
            if last is None or call.at - last > WAVE_GAP_S:
                waves.append([])
            waves[-1].append((call.path, call.body))
            last = call.at
        return cls(tuple(tuple(wave) for wave in waves), counters)

    @property
    def calls(self) -> int:
        return sum(len(wave) for wave in self.waves)


class ReplayVisitor:
    """One simulated visitor: a kept HTTP connection and a session of its own, as one open page has."""

    def __init__(self, url: str, timeout_s: float):
        import httpx

        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self.http = httpx.Client(timeout=timeout_s)
        self.session = uuid.uuid4().hex[:11]
        self.number = 0  # this visitor's own counter, where the page numbers its calls

    def own(self, body: dict[str, Any], positions: frozenset[int]) -> dict[str, Any]:
        """The recorded call as this visitor sends it: its session, its own numbers in the counter positions."""
        data = list(body.get("data") or [])
        for position in positions:
            if position < len(data):
                self.number += 1
                data[position] = self.number
        return {**body, "data": data, "session_hash": self.session}

    def close(self) -> None:
        self.http.close()

    def replay(self, recording: Recording) -> float:
        """Seconds from the first call sent until the last event of the recording completed."""
        began = time.perf_counter()
        deadline = time.monotonic() + self.timeout_s
        for wave in recording.waves:
            joined = set()
            for path, body in wave:
                positions = recording.counters.get(body.get("fn_index"), frozenset())
                answer = self.http.post(f"{self.url}{path}", json=self.own(body, positions))
                answer.raise_for_status()
                if path == JOIN_PATH:
                    joined.add(answer.json()["event_id"])
                elif "data" not in answer.json():
                    raise RuntimeError(f"simulated visitor: the app answered no outputs: {answer.text[:300]}")
            if joined:
                self.await_events(joined, deadline)
        return time.perf_counter() - began

    def await_events(self, joined: set[str], deadline: float) -> None:
        with self.http.stream("GET", f"{self.url}/gradio_api/queue/data", params={"session_hash": self.session}) as stream:
            for line in stream.iter_lines():
                if time.monotonic() > deadline:
                    raise TimeoutError(f"simulated visitor: events {sorted(joined)} not completed within "
                                       f"{self.timeout_s:.0f} s")
                if not line.startswith("data: "):
                    continue
                message = json.loads(line[len("data: "):])
                if message.get("msg") == "process_completed":
                    if not message.get("success", True):
                        raise RuntimeError(f"simulated visitor: the app answered an error: {message.get('output')}")
                    joined.discard(message.get("event_id"))
                if message.get("msg") in ("close_stream", "unexpected_error") or not joined:
                    if joined:
                        raise RuntimeError(f"simulated visitor: the event stream ended with {len(joined)} events "
                                           f"pending ({message})")
                    return
        if joined:
            raise RuntimeError(f"simulated visitor: the event stream closed with {len(joined)} events pending")
