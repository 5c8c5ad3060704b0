"""pass^k and the average reward over a domain's trials, as the official metrics compute them
(metrics/agent_metrics.py; docs/tau2-notes.md §6):

- a trial succeeds when its reward is within 1e-6 of 1;
- per task with n trials and c successes, pass^k = C(c, k) / C(n, k) (its own n, not the trials requested);
- a domain's pass^k is the unweighted mean over its tasks;
- k runs from 1 to the trials requested, lowered to the smallest per-task trial count (said in `note`);
- avg_reward is the mean over the trials that have a reward;
- trials ended by `infrastructure_error` are left out of everything (the official code's intent, what it does
  with pandas 2.x; with pandas 3 its filter matches nothing and they count as failures — plan decision 6). Only
  uploaded results can hold them: our own runs never score one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

SUCCESS_TOLERANCE = 1e-6
INFRASTRUCTURE_ERROR = "infrastructure_error"


def is_successful(reward: float) -> bool:
    return (1 - SUCCESS_TOLERANCE) <= reward <= (1 + SUCCESS_TOLERANCE)


def pass_hat_k(trials: int, successes: int, k: int) -> float:
    """C(successes, k) / C(trials, k): the chance that k trials drawn without replacement all succeed."""
    if trials < k:
        raise ValueError(f"{trials} trial(s) is fewer than k = {k}")
    return math.comb(successes, k) / math.comb(trials, k)


@dataclass(frozen=True)
class TrialRow:
    """One trial as the metrics read it (the official results table's task_id, reward, termination_reason)."""

    task_id: str
    reward: float | None
    termination_reason: str = "user_stop"


@dataclass
class DomainMetrics:
    """pass^k for k = 1 … max_k (None when some trial has no reward: `unscored` trials), the average reward,
    and what was left out or lowered."""

    pass_hat_ks: dict[int, float | None]
    max_k: int
    avg_reward: float | None
    tasks: int
    trials: int
    infrastructure_errors: int = 0
    unscored: int = 0
    notes: list[str] = field(default_factory=list)
    # What the figures are means of (for their intervals): each task's pass^k per k, and the trials' rewards.
    task_pass_hat_ks: dict[int, list[float]] = field(default_factory=dict)
    rewards: list[float] = field(default_factory=list)


def max_k_of(counts: Sequence[int], requested_k: int | None) -> tuple[int, str | None]:
    """k up to the trials requested, lowered to the smallest per-task count (get_metrics_df); the note says so."""
    if not counts:
        return 0, None
    requested = requested_k if requested_k is not None else max(counts)
    smallest = min(counts)
    if smallest < requested:
        return smallest, (f"the smallest number of trials for a task is {smallest}, fewer than the {requested} "
                          f"requested: pass^k is reported up to k = {smallest}")
    return requested, None


def domain_metrics(rows: Iterable[TrialRow], requested_k: int | None = None, absent_tasks: int = 0) -> DomainMetrics:
    """The official figures for one domain's trials; `requested_k` = the trials per task the run asked for
    (official info.num_trials; None: the largest count seen). `absent_tasks`: tasks of the run with no trial at
    all (no prediction, or its requests failed); beyond the official code (which never sees them), each counts as
    failing at every k, as a missing answer does in every benchmark here, and lowers no k."""
    kept: list[TrialRow] = []
    infrastructure = 0
    for row in rows:
        if row.termination_reason == INFRASTRUCTURE_ERROR:
            infrastructure += 1
        else:
            kept.append(row)
    notes = []
    if infrastructure:
        notes.append(f"{infrastructure} trial(s) ended by infrastructure_error were left out (the official "
                     "metrics' intent, as with pandas 2.x)")
    by_task: dict[str, list[float | None]] = {}
    for row in kept:
        by_task.setdefault(row.task_id, []).append(row.reward)
    rewards = [row.reward for row in kept if row.reward is not None]
    avg_reward = sum(rewards) / len(rewards) if rewards else None
    unscored = len(kept) - len(rewards)
    max_k, lowered = max_k_of([len(task_rewards) for task_rewards in by_task.values()], requested_k)
    if lowered:
        notes.append(lowered)
    pass_hat_ks: dict[int, float | None] = {}
    per_task_by_k: dict[int, list[float]] = {}
    if unscored:
        notes.append(f"{unscored} trial(s) have no reward: pass^k is not reported")
        pass_hat_ks = {k: None for k in range(1, max_k + 1)}
    else:
        for k in range(1, max_k + 1):
            per_task = [pass_hat_k(len(task_rewards), sum(is_successful(r) for r in task_rewards if r is not None), k)
                        for task_rewards in by_task.values()]
            per_task.extend([0.0] * absent_tasks)
            per_task_by_k[k] = per_task
            pass_hat_ks[k] = sum(per_task) / len(per_task)
    if absent_tasks:
        notes.append(f"{absent_tasks} task(s) have no trial (no prediction or failed requests): counted as failures")
    return DomainMetrics(pass_hat_ks, max_k, avg_reward, len(by_task) + absent_tasks, len(kept), infrastructure,
                         unscored, notes, per_task_by_k, [float(reward) for reward in rewards])
