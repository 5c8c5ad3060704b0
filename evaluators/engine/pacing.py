"""Pacing of request starts.

Requests that start together come back together, and their answers then wait in line for the CPU
(the SDK spends ~1.5 ms on each): every answer in a bunch is late by most of the bunch, and carries
that lateness into its sample's next request, so the bunch never disperses. Keeping starts a little
apart lets each answer be handled as it arrives. The gap between starts is a share of the latency
over the concurrency, so starts may come at twice the rate the concurrency limit sustains (pacing
then never limits throughput, it only spreads bunches); before the first answer, a short fixed gap
spreads the first wave. Waiting starts are let through in order, each with the gap as it is when
its turn comes, so a gap that shrinks (answers getting faster) takes effect at once.
"""

from __future__ import annotations

import asyncio
import collections

from evaluators.core.environment import read_flag

PACING_ENV = "TOOLBOARD_SEND_PACING"
RAMP_GAP = 0.002  # seconds between the first starts, before any answer has told the latency
RAMP_SPAN = 0.128  # ... but the whole first wave spread over no more than this
LATENCY_SHARE = 0.5  # gap = share x latency / concurrency, i.e. at most twice the sustainable rate
MAX_GAP = 0.02  # at rates this low, bunches cost nothing: never wait longer than this
RECENT_ANSWERS = 32  # the latency is the shortest of this many latest answers
MAX_CATCH_UP = 0.002  # starts let through late (the loop's timers are ~1 ms coarse) may catch up this much


def pacing_enabled() -> bool:
    """On unless TOOLBOARD_SEND_PACING is off (0/false/no/off: to compare, or rule it out)."""
    return read_flag("send_pacing", unset=True)


class SendPacer:
    """Spaces the starts of one client's requests; `wait` before sending, `observe` each answer's latency."""

    def __init__(self, concurrency: int):
        self.concurrency = max(1, concurrency)
        self._recent: collections.deque[float] = collections.deque(maxlen=RECENT_ANSWERS)
        self._next_start = 0.0
        self._waiting: collections.deque[asyncio.Future[None]] = collections.deque()
        self._timer: asyncio.TimerHandle | None = None

    @property
    def latency(self) -> float | None:
        # The shortest recent answer, not an average: a speed-up (an endpoint warmed up) shortens the
        # gap at once, and slow stragglers do not lengthen it; pacing errs towards holding nothing back.
        return min(self._recent) if self._recent else None

    def gap(self) -> float:
        latency = self.latency
        if latency is None:
            return min(RAMP_GAP, RAMP_SPAN / self.concurrency)
        return min(MAX_GAP, LATENCY_SHARE * latency / self.concurrency)

    def observe(self, latency: float) -> None:
        self._recent.append(latency)

    async def wait(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        if not self._waiting and now >= self._next_start:
            self._next_start = now + self.gap()
            return
        turn: asyncio.Future[None] = loop.create_future()
        self._waiting.append(turn)
        if self._timer is None:
            self._timer = loop.call_at(self._next_start, self._release_due)
        await turn  # a cancelled waiter is skipped when its turn comes

    def _release_due(self) -> None:
        """Let through every waiting start whose slot has come, each slot one gap (as it is now) after
        the one before: a timer that fires late lets several through, so gaps shorter than the
        loop's timer resolution still give their rate."""
        self._timer = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        slot = max(self._next_start, now - MAX_CATCH_UP)
        while self._waiting and slot <= now:
            turn = self._waiting.popleft()
            if turn.done():  # given up while waiting: takes no slot
                continue
            turn.set_result(None)
            slot += self.gap()
        self._next_start = slot
        while self._waiting and self._waiting[0].done():
            self._waiting.popleft()
        if self._waiting:
            self._timer = loop.call_at(self._next_start, self._release_due)
