"""The steps a test of a source read again once aged (service/aged_reload.AgedReload through AppServices) takes with
the services' clock moved by hand: still fresh a second before its maximum age, then one reread on a thread of its
own and no second one while it runs."""

from __future__ import annotations

import threading
from collections.abc import Callable


def reread_once_aged(refresh: Callable[[], threading.Thread | None], now: list[float], max_age: float,
                     while_fresh: Callable[[], None] = lambda: None) -> None:
    """Move `now` to a second before `max_age` (refresh starts nothing; `while_fresh` checks the board meanwhile),
    then to `max_age`: refresh starts one reread, a second call none; waits for it to end."""
    now[0] += max_age - 1
    assert refresh() is None  # still fresh
    while_fresh()
    now[0] += 1
    reread = refresh()
    assert reread is not None and refresh() is None  # one reread at a time
    reread.join(timeout=60)
    assert not reread.is_alive()
