"""How many HTTP worker processes a run starts: decided before its event loop, from plain values, for
whoever starts runs in a fresh process (the CLI)."""

from __future__ import annotations

import os

from evaluators.engine.http_pool import WORKERS_ENV, can_fork_workers, fork_workers, workers_for
from evaluators.engine.store import Store

# Run settings that change how a run goes, not which requests it sends (nor the cache keys).
_SETTINGS_NOT_IN_REQUESTS = ("concurrency", "max_attempts", "use_cache")


def requests_expected(store: Store, run_id: str, rerun_errors: bool) -> bool:
    """Whether this run will send requests: False when no sample is left to do, or when an earlier
    run with the same requests (benchmark, data, subsets, model settings) finished without a request
    error, so the cache holds every answer."""
    run = store.get_run(run_id)
    states = store.prediction_states(run_id)
    if rerun_errors:
        return any(states.values()) or len(states) < run.total
    if len(states) >= run.total:
        return False
    if not run.config.get("use_cache", True):
        return True

    def requests_of(config: dict) -> dict:
        return {key: value for key, value in config.items() if key not in _SETTINGS_NOT_IN_REQUESTS}

    for other in store.list_runs():
        if other.id != run_id and other.status == "finished" and requests_of(other.config) == requests_of(run.config):
            totals = store.run_totals(other.id)
            if totals["done"] >= other.total and not totals["errors"]:
                return False
    return True


def start_http_workers(store: Store, run_id: str, concurrency: int, requested: int | None, rerun_errors: bool) -> int:
    """The number of HTTP workers the run uses (`requested`, else TOOLBOARD_HTTP_WORKERS, else the
    default for `concurrency`), forking them now when this process can. Call it before any thread or
    event loop starts: forked workers share this process's SDK import and are ready at once."""
    asked = requested is not None or bool(os.environ.get(WORKERS_ENV, "").strip())
    workers = workers_for(concurrency, requested, cheap_start=can_fork_workers())
    if not asked and not requests_expected(store, run_id, rerun_errors):
        return 0  # the cache answers, or nothing is left: not even the SDK is imported
    # Where they cannot be forked, the run starts fresh ones, which by default only pays off on more cores.
    if workers and not fork_workers(workers) and not asked:
        workers = workers_for(concurrency)
    return workers
