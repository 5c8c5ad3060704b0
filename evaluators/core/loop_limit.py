"""At most N of something at once on each event loop: an asyncio.Semaphore per loop, made on first use there (a
semaphore belongs to one loop; a process may run several, e.g. the app's runs and a test's). The engine's limit of
requests in flight and an environment host's limit of open sessions are both this."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable


class LoopLimit:
    """`size` (or how to read it, when first used on a loop: a setting) at once per event loop."""

    def __init__(self, size: int | Callable[[], int]):
        self.size = size
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary())

    def semaphore(self) -> asyncio.Semaphore:
        """This event loop's semaphore (made on first use there)."""
        loop = asyncio.get_running_loop()
        found = self._semaphores.get(loop)
        if found is None:
            found = self._semaphores[loop] = asyncio.Semaphore(self.size() if callable(self.size) else self.size)
        return found
