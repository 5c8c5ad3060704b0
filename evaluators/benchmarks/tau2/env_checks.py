"""The environment parts of each trial's verdict (the host's EnvCheck: the official domain environment replayed in
a worker process, never in this one), kept by everything the replay reads.

A run starts each trial's check as soon as the trial ends (`check_ahead`, called by the rollout, which goes on at
once), on the environment host's check workers, apart from the workers the conversations' sessions use (so a
session's short requests never wait behind a replay); the scorer, which runs on one thread, finds the check ready (or
waits for it) instead of replaying trajectories one at a time after the last answer. Both scoring modes read the same check too. A kept check
is the same value a fresh replay gives: the key holds the domain, the task record, every message and the source
folder, and nothing else reaches the replay."""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Any

from evaluators.benchmarks.tau2.evaluator import EnvCheckLike
from evaluators.benchmarks.tau2.samples import SOURCE_ROOT
from evaluators.benchmarks.tau2.source import Source, environment_root, open_source
from evaluators.core.types import Sample

# A full board run holds 278 tasks x 4 trials; the scorer takes each check soon after it is made.
CHECKS_KEPT = 2048

_checks: OrderedDict[str, EnvCheckLike | Mapping[str, Any]] = OrderedDict()
_pending: dict[str, Future[None]] = {}  # checks being made ahead, by key
_checks_lock = threading.Lock()
# Threads that wait on the check workers (their host queues the requests); two keep one ready while one runs.
_executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="tau2-check-ahead")


@lru_cache(maxsize=8)
def _environment_root(given: str | None) -> Path:
    return environment_root(Source(Path(given)) if given else open_source())


def environment_root_of(source: Source) -> Path:
    """The folder the workers build `source`'s environments from (source.environment_root, once per folder)."""
    return _environment_root(str(source.root))


def source_root_of(sample: Sample) -> Path:
    """Where the environment workers load the pinned data and code from: the sample's source (samples.py) when it
    holds the code files too, else the cache (source.environment_root)."""
    given = sample.input.get(SOURCE_ROOT)
    return _environment_root(str(given) if given else None)


def replay_key(domain: str, record: Mapping[str, Any], messages: list[dict[str, Any]], source_root: Path) -> str:
    text = json.dumps([domain, record, messages, str(source_root)], sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _kept(key: str) -> EnvCheckLike | Mapping[str, Any] | None:
    with _checks_lock:
        found = _checks.get(key)
        if found is not None:
            _checks.move_to_end(key)
        return found


def _keep(key: str, check: EnvCheckLike | Mapping[str, Any]) -> None:
    with _checks_lock:
        _checks[key] = check
        while len(_checks) > CHECKS_KEPT:
            _checks.popitem(last=False)


def _host() -> Any:
    # Imported when first needed: the host starts worker processes, and scoring fixtures inject their own check.
    return importlib.import_module("evaluators.benchmarks.tau2.env_host").shared_check_host()


def official_env_check(domain: str, record: Mapping[str, Any], messages: list[dict[str, Any]], *,
                       source_root: Path) -> EnvCheckLike | Mapping[str, Any]:
    """The trial's EnvCheck: kept, or being made (waited for), or replayed now. Replay is lenient, as the official
    re-grading (`evaluate-trajs`) does: a replayed write whose result differs from the recorded one is noted in
    `replay_problems`, not fatal."""
    key = replay_key(domain, record, messages, source_root)
    with _checks_lock:
        pending = _pending.get(key)
    if pending is not None:
        with contextlib.suppress(Exception):  # a failed check ahead is replayed below, and fails in the verdict
            pending.result()
    found = _kept(key)
    if found is not None:
        return found
    check: EnvCheckLike | Mapping[str, Any] = _host().evaluate_env(domain, dict(record), messages, strict=False,
                                                                   source_root=source_root)
    _keep(key, check)
    return check


def check_ahead(domain: str, record: Mapping[str, Any], messages: list[dict[str, Any]], *,
                source_root: Path) -> None:
    """Start replaying a finished trial (on a thread of its own, against the check workers) and keep its check for
    the scorer, which waits for it if it comes first. Returns at once: the conversation's slot is not held."""
    key = replay_key(domain, record, messages, source_root)
    with _checks_lock:
        if key in _checks or key in _pending:
            return
        future = _executor.submit(_check_and_keep, _host(), key, domain, dict(record), list(messages), source_root)
        _pending[key] = future
    future.add_done_callback(lambda done: _forget(key))


def _check_and_keep(host: Any, key: str, domain: str, record: dict[str, Any], messages: list[dict[str, Any]],
                    source_root: Path) -> None:
    _keep(key, host.evaluate_env(domain, record, messages, strict=False, source_root=source_root))


def _forget(key: str) -> None:
    with _checks_lock:
        _pending.pop(key, None)
