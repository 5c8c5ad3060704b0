"""Pacing of request starts.

Requests that start together come back together, and their answers then wait in line for the CPU
(the SDK spends ~1.5 ms on each): every answer in a bunch is late by most of the bunch, and carries
that lateness into its sample's next request, so the bunch never disperses. Keeping starts a little
apart lets each answer be handled as it arrives. The gap between starts is a share of the measured
latency over the concurrency, so starts may come at twice the rate the concurrency limit sustains
(pacing then never limits throughput, it only spreads bunches); before the first answer, a short
fixed gap spreads the first wave.
"""

from __future__ import annotations

import asyncio
import os

PACING_ENV = "TOOLBOARD_SEND_PACING"
RAMP_GAP = 0.002  # seconds between the first starts, before any answer has told the latency
LATENCY_SHARE = 0.5  # gap = share x latency / concurrency, i.e. at most twice the sustainable rate
MAX_GAP = 0.02  # at rates this low, bunches cost nothing: never wait longer than this
LATENCY_WEIGHT = 0.1  # weight of each new answer in the latency's moving average


def pacing_enabled() -> bool:
    """On unless TOOLBOARD_SEND_PACING is 0/off/false (to compare, or rule it out)."""
    return os.environ.get(PACING_ENV, "").strip().lower() not in ("0", "off", "false", "no")


class SendPacer:
    """Spaces the starts of one client's requests; `wait` before sending, `observe` each answer's latency."""

    def __init__(self, concurrency: int):
        self.concurrency = max(1, concurrency)
        self.latency: float | None = None
        self._next_start = 0.0

    def gap(self) -> float:
        if self.latency is None:
            return RAMP_GAP
        return min(MAX_GAP, LATENCY_SHARE * self.latency / self.concurrency)

    def reserve(self, now: float) -> float:
        """Book the next start at `now` or later; returns how long to wait for it."""
        start = max(now, self._next_start)
        self._next_start = start + self.gap()
        return start - now

    def observe(self, latency: float) -> None:
        self.latency = latency if self.latency is None else (1 - LATENCY_WEIGHT) * self.latency + LATENCY_WEIGHT * latency

    async def wait(self) -> None:
        delay = self.reserve(asyncio.get_running_loop().time())
        if delay > 0:
            await asyncio.sleep(delay)
