"""An asyncio event loop on a virtual clock, for timing tests that must not depend on how loaded the
machine is: whenever the loop would sleep until its next timer, the clock jumps there instead, a
little late as a real loop's timers are (`tick`, ~1 ms), so timer-coarseness effects stay visible."""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class _JumpingSelector(selectors.DefaultSelector):
    def __init__(self, loop: VirtualClockLoop):
        super().__init__()
        self._clock = loop

    def select(self, timeout: float | None = None) -> list[Any]:
        if timeout is not None and timeout > 0:
            self._clock.now += max(timeout, self._clock.tick)
        return super().select(0)


class VirtualClockLoop(asyncio.SelectorEventLoop):
    def __init__(self, tick: float = 0.001):
        self.now = 0.0
        self.tick = tick
        super().__init__(selector=_JumpingSelector(self))

    def time(self) -> float:
        return self.now


def run_on_virtual_clock(coroutine: Coroutine[Any, Any, T], tick: float = 0.001) -> T:
    with asyncio.Runner(loop_factory=lambda: VirtualClockLoop(tick)) as runner:
        return runner.run(coroutine)
