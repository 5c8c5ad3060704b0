"""What the engine asks of a deployment's limits on runs. The limits themselves are the service's policy
(evaluators/service/quota.py: the public defaults, the daily quotas, room on disk, read from the environment);
the job managers are handed one AdmissionPolicy when they are made and read no setting of their own.

A policy refuses a start by raising QuotaReached (NoRoomError when the disk or a byte budget is what is full):
the engine lets the refusal through to the front door, and cancels a run whose writes pass a room limit.
"""

from __future__ import annotations

from typing import Protocol

from evaluators.core.errors import ToolboardError
from evaluators.engine.store import Store


class QuotaReached(ToolboardError):
    """A visitor (or a private deployment as a whole) has used its daily quota."""


class NoRoomError(QuotaReached):
    """The store is at its cap, its disk is nearly full, or a visitor has stored their bytes for the day."""


class AdmissionPolicy(Protocol):
    """Limits on the runs the engine executes; None means no limit."""

    @property
    def max_active(self) -> int | None:
        """How many runs may go on at once."""

    @property
    def max_active_per_owner(self) -> int | None:
        """How many runs one visitor may have going on at once."""

    @property
    def max_run_seconds(self) -> float | None:
        """How long one run may execute in all, over its starts and resumes."""

    @property
    def watches_room(self) -> bool:
        """Whether a run's writes are to be watched against a limit on disk (check_room while it runs)."""

    def check_runs_quota(self, store: Store, owner: str | None, pending: int = 0) -> None:
        """QuotaReached when `owner` may start no more runs today (`pending`: starts under way, not stored yet)."""

    def check_room(self, store: Store, owner: str | None) -> None:
        """NoRoomError when the store, its disk or `owner`'s stored bytes are past their limits."""


class NoLimits:
    """The policy of an engine given none (the CLI, a library caller): every run is admitted."""

    max_active: int | None = None
    max_active_per_owner: int | None = None
    max_run_seconds: float | None = None
    watches_room = False

    def check_runs_quota(self, store: Store, owner: str | None, pending: int = 0) -> None:
        return None

    def check_room(self, store: Store, owner: str | None) -> None:
        return None


NO_LIMITS: AdmissionPolicy = NoLimits()
