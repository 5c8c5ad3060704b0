"""The deployment's limits on runs and uploads: policy, owned by the service, which hands the engine's job
managers an Admission (the engine knows it as an AdmissionPolicy, evaluators/engine/admission.py).

Daily quotas: how many runs one visitor may start, and how many uploads they may add to the board, in any
24 hours (a rolling window, not a calendar day); and room on disk: a cap on the store's size, a free-disk floor,
and the bytes one visitor's runs and uploads may store per day.

They are counted from the store (each run's creation time and owner), so a restarted app forgets nothing and
every process sharing the store counts the same runs. On a public deployment the owner is the visitor's hash
(evaluators/service/ownership.py); on a private one every run has no owner, so a quota set there counts the whole deployment.
"""

from __future__ import annotations

import math
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from evaluators.core.environment import read_variable
from evaluators.core.errors import ToolboardError
from evaluators.core.limits import echoed
from evaluators.core.text import plural
from evaluators.engine.admission import NoRoomError, QuotaReached
from evaluators.engine.store import Store

DAY_SECONDS = 24 * 60 * 60
RUNS_PER_DAY_SETTING = "TOOLBOARD_MAX_RUNS_PER_DAY"
UPLOADS_PER_DAY_SETTING = "TOOLBOARD_MAX_UPLOADS_PER_DAY"
# What a setting takes to mean "no limit" (a private deployment's default).
NO_LIMIT_WORDS = ("off", "none", "unlimited")
# Room on disk, in MB (10^6 bytes): the store's cap (its used pages; the write-ahead log is emptied after large
# writes, and the free-disk floor covers it meanwhile), the bytes of text one
# visitor's runs and uploads may store in any 24 hours, and the free space always left on the store's disk.
MAX_STORE_MB_SETTING = "TOOLBOARD_MAX_STORE_MB"
MAX_STORED_MB_PER_DAY_SETTING = "TOOLBOARD_MAX_STORED_MB_PER_DAY"
MIN_FREE_DISK_MB_SETTING = "TOOLBOARD_MIN_FREE_DISK_MB"
MB = 1_000_000


@dataclass(frozen=True)
class DailyQuota:
    """One kind of thing counted per day: the runs of one source in the store, and how messages name them."""

    source: str  # the runs' `source` in the store: "endpoint" (runs started) or "upload" (uploads added)
    setting: str  # the environment variable that sets it
    noun: str  # "run", "upload"
    done: str  # "started", "added"
    where: str  # "", " to the board"
    doing: str  # "start", "add to the board"
    refused: str  # what is refused until a slot frees


RUNS_QUOTA = DailyQuota("endpoint", RUNS_PER_DAY_SETTING, "run", "started", "", "start",
                        "starting, resuming or re-sending a run is refused")
UPLOADS_QUOTA = DailyQuota("upload", UPLOADS_PER_DAY_SETTING, "upload", "added", " to the board", "add to the board",
                           "adding an upload is refused (checking and scoring a file still works)")


def check_daily_quota(store: Store, quota: DailyQuota, limit: int | None, owner: str | None, now: float,
                      pending: int = 0, window: float = DAY_SECONDS) -> None:
    """QuotaReached when `owner` already has `limit` of `quota`'s runs created in the `window` seconds before
    `now` (with `pending` more under way, not stored yet); nothing when `limit` is None. The message says the
    limit, the setting and when the next slot frees (the oldest counted run leaving the window)."""
    if limit is None:
        return
    times = store.created_since(quota.source, owner, now - window)
    used = len(times) + pending
    if used < limit:
        return
    setting = f"{quota.setting}={limit}"
    if limit <= 0:
        raise QuotaReached(f"this deployment accepts no {quota.noun}s ({setting})")
    counted = f"{used} {plural(quota.noun, used)}"
    who = (f"you have {quota.done} {counted}{quota.where} in the last 24 hours, the most one visitor may "
           f"{quota.doing} per day here" if owner is not None else
           f"{counted} {'was' if used == 1 else 'were'} {quota.done}{quota.where} on this deployment in the last 24"
           " hours, the most it allows per day")
    # The slot frees when enough of the oldest counted runs have left the window to bring the count under the limit.
    index = used - limit
    when = (f"the next one can be {quota.done} at {slot_time(times[index] + window, now)}"
            if index < len(times) else "try again when the starts under way have ended")
    raise QuotaReached(f"{who} ({setting}): {when}; until then {quota.refused}")


def check_room(store: Store, owner: str | None, now: float, *, max_store_bytes: int | None = None,
               max_stored_bytes_per_day: int | None = None, min_free_disk_bytes: int | None = None,
               window: float = DAY_SECONDS) -> None:
    """NoRoomError, saying what is full and what to do, when the store is past one of the limits (None: no limit):
    its cap, the free space left on its disk, `owner`'s bytes stored in `window`. Asked before a run starts (its
    size is not known yet), and for an upload both before and after its rows are written, inside its transaction,
    so an upload that would pass a limit is rolled back whole."""
    if min_free_disk_bytes is not None:
        free = shutil.disk_usage(store.path.parent).free
        if free < min_free_disk_bytes:
            raise NoRoomError(f"the disk holding this deployment's results has {_mb(free)} free, and at least "
                              f"{_mb(min_free_disk_bytes)} are kept free ({MIN_FREE_DISK_MB_SETTING}): new runs and "
                              "uploads are refused until the operator frees space; the board and finished runs still "
                              "show (nothing was stored)")
    if max_store_bytes is not None:
        used = store.used_bytes()
        if used > max_store_bytes:
            raise NoRoomError(f"this deployment's results store holds {_mb(used)}, past its cap of "
                              f"{_mb(max_store_bytes)} ({MAX_STORE_MB_SETTING}): new runs and uploads are refused until "
                              "the operator raises the cap or removes runs; the board and finished runs still show "
                              "(nothing was stored)")
    if max_stored_bytes_per_day is not None:
        stored = store.stored_bytes_since(owner, now - window)
        if stored > max_stored_bytes_per_day:
            who = ("your runs and uploads have stored" if owner is not None
                   else "the runs and uploads of this deployment have stored")
            raise NoRoomError(f"{who} {_mb(stored)} in the last 24 hours, past the {_mb(max_stored_bytes_per_day)} "
                              f"{'one visitor' if owner is not None else 'it'} may store per day here "
                              f"({MAX_STORED_MB_PER_DAY_SETTING}): try again once older runs and uploads leave the 24 "
                              "hours (nothing was stored)")


def _mb(size: int) -> str:
    return f"{size / MB:,.1f} MB"


def megabytes_from_env(name: str, default: float | None, environ: Mapping[str, str] | None = None) -> int | None:
    """A size setting in MB as bytes: unset or empty gives `default`; off, none or unlimited lifts it; anything
    but a number >= 0 stops the app with a clear message."""
    raw = read_variable(name, environ) or ""
    if not raw:
        return None if default is None else int(default * MB)
    if raw.lower() in NO_LIMIT_WORDS:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not math.isfinite(value) or value < 0:
        raise ToolboardError(f"{name} must be a size in MB (e.g. 500) or off (no limit), not {echoed(raw)!r}")
    return int(value * MB)


def slot_time(free_at: float, now: float) -> str:
    """`free_at` as a reader takes it: the UTC minute it has passed by, and how long until then."""
    minute = math.ceil(free_at / 60) * 60
    wait = max(0, math.ceil((minute - now) / 60))
    hours, minutes = divmod(wait, 60)
    after = f"{hours} h {minutes} min" if hours else f"{minutes} min"
    return f"{datetime.fromtimestamp(minute, UTC):%Y-%m-%d %H:%M} UTC (in {after})"


def limit_from_env(name: str, default: int | None, environ: Mapping[str, str] | None = None) -> int | None:
    """A daily quota setting: unset or empty gives `default`; a whole number >= 0 is the limit (0: none
    accepted); off, none or unlimited lifts it. Anything else stops the app with a clear message."""
    raw = read_variable(name, environ) or ""
    if not raw:
        return default
    if raw.lower() in NO_LIMIT_WORDS:
        return None
    if raw.isdigit():
        return int(raw)
    raise ToolboardError(f"{name} must be a whole number per day (0: none accepted) or off (no limit), not "
                         f"{echoed(raw)!r}")


@dataclass(frozen=True)
class Admission:
    """Limits on the runs this app executes and the uploads it adds to the board; None means no limit."""

    max_active: int | None = None
    max_active_per_owner: int | None = None
    max_run_seconds: float | None = None
    # Daily quotas per visitor (on a private deployment, for everyone together) over any 24 hours, counted from
    # the store (this module): runs started, uploads added to the board.
    max_runs_per_day: int | None = None
    max_uploads_per_day: int | None = None
    # Room on disk, in bytes (check_room): the store's cap, one visitor's bytes per 24 hours, the disk's free floor.
    max_store_bytes: int | None = None
    max_stored_bytes_per_day: int | None = None
    min_free_disk_bytes: int | None = None
    # The wall clock the quotas are counted by (the store's creation times); tests pass one they move by hand.
    now: Callable[[], float] = field(default=time.time, compare=False, repr=False)

    def check_runs_quota(self, store: Store, owner: str | None, pending: int = 0) -> None:
        """QuotaReached when `owner` has started max_runs_per_day runs in the last 24 hours (`pending`: starts
        under way, not stored yet). Embedded and queue mode both call it in their admission check."""
        check_daily_quota(store, RUNS_QUOTA, self.max_runs_per_day, owner, self.now(), pending)

    def check_uploads_quota(self, store: Store, owner: str | None) -> None:
        """QuotaReached when `owner` has added max_uploads_per_day uploads to the board in the last 24 hours."""
        check_daily_quota(store, UPLOADS_QUOTA, self.max_uploads_per_day, owner, self.now())

    @property
    def watches_room(self) -> bool:
        """Whether a run's writes are to be watched against a limit on disk (any is set)."""
        return any(limit is not None for limit in (self.max_store_bytes, self.max_stored_bytes_per_day,
                                                   self.min_free_disk_bytes))

    def check_room(self, store: Store, owner: str | None) -> None:
        """NoRoomError when the store, its disk or `owner`'s daily bytes are past their limits (check_room)."""
        check_room(store, owner, self.now(), max_store_bytes=self.max_store_bytes,
                   max_stored_bytes_per_day=self.max_stored_bytes_per_day,
                   min_free_disk_bytes=self.min_free_disk_bytes)
