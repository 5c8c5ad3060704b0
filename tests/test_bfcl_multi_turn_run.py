"""BFCL multi-turn runs from the CLI against the scripted server: a few items of each category end with every
item scored, within the official bounds of steps; a run killed with SIGKILL resumes without repeating the
items it had finished."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.bfcl_multi_turn_script import opening_key, script_for
from tests.conftest import PROJECT
from tests.engine_fixtures import stored_predictions
from tests.scripted_server import ScriptedServer

MULTI_TURN = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")
RUN_SECONDS = 600


@pytest.fixture
def wheel_env(bfcl_official: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV
    from evaluators.core.registry import get_benchmark

    if "multi_turn_base" not in get_benchmark("bfcl").subsets:
        pytest.skip("the multi-turn categories are not among bfcl's subsets in this checkout")
    monkeypatch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
    return {**os.environ, "TOOLBOARD_HOME": str(tmp_path / "home"), WHEEL_PATH_ENV: str(bfcl_official.wheel)}


def _samples(limit: int) -> list[Any]:
    from evaluators.benchmarks.bfcl.data import load

    return load(subsets=MULTI_TURN, limit=limit)


def _run_args(server: ScriptedServer, limit: int, concurrency: int, categories: tuple[str, ...] = MULTI_TURN
              ) -> list[str]:
    return [sys.executable, "-m", "evaluators", "run", "bfcl", "--subset", *categories, "--limit", str(limit),
            "--base-url", server.base_url, "--model", "org/scripted-model-1.5", "--api-key-env", "",
            "--concurrency", str(concurrency), "--json"]


class ItemCounter:
    """Requests per item, the item found by its opening messages (items that open alike count together)."""

    def __init__(self, samples: list[Any]):
        from evaluators.benchmarks.bfcl.multi_turn.requests import multi_turn_texts, official_turn_messages

        texts = multi_turn_texts()
        self.ids: dict[str, list[str]] = {}
        for sample in samples:
            self.ids.setdefault(opening_key(official_turn_messages(sample, 0, texts)), []).append(sample.id)
        self.counts: Counter[str] = Counter()

    def __call__(self, body: dict[str, Any]) -> None:
        self.counts[opening_key(body["messages"])] += 1

    def plays_own_script(self, sample_id: str) -> bool:
        """Whether the item is the first of those opening alike (script_for gives the group its script)."""
        return any(ids[0] == sample_id for ids in self.ids.values())

    def of(self, sample_id: str) -> int:
        return next(self.counts[key] for key, ids in self.ids.items() if sample_id in ids)


@pytest.mark.slow
def test_a_run_of_a_few_items_of_each_category_ends_with_every_item_scored_within_the_step_bounds(
        wheel_env: dict[str, str]):
    from evaluators.benchmarks.bfcl.multi_turn.requests import multi_turn_texts

    samples = _samples(3)
    step_limit = multi_turn_texts().step_limit
    counter = ItemCounter(samples)
    with ScriptedServer(reply=script_for(samples, {}, distinct=False), on_request=counter) as server:
        done = subprocess.run(_run_args(server, 3, 4), cwd=PROJECT, env=wheel_env, capture_output=True, text=True,
                              timeout=RUN_SECONDS)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert {name: subset["n"] for name, subset in report["subsets"].items()} == dict.fromkeys(MULTI_TURN, 3)
    # each turn's ground truth played (some still fail: a positional argument is dropped by the official decode)
    assert all(subset["metrics"]["accuracy"] > 0 for subset in report["subsets"].values())
    predictions = stored_predictions(Path(wheel_env["TOOLBOARD_HOME"]), report["run_id"])
    assert len(predictions) == 12
    for sample in samples:
        prediction = predictions[sample.id]
        turns = prediction.extra["turns"]
        assert prediction.error is None and prediction.extra["stop"] == "completed", sample.id
        assert len(turns) == len(sample.gold) and all(1 <= len(steps) <= step_limit + 1 for steps in turns)
        if counter.plays_own_script(sample.id):
            # the script answers each turn with its calls, then without: two steps where the turn has calls
            assert [len(steps) for steps in turns] == [2 if gold else 1 for gold in sample.gold], sample.id
        assert len(prediction.extra["transcript"]) == len(turns) and prediction.extra["initial_state"]
    # a long-context item asks what its base twin asked until their environments differ: the cache may answer
    assert server.requests <= sum(len(steps) for p in predictions.values() for steps in p.extra["turns"])


@pytest.mark.slow
def test_a_killed_run_resumes_without_repeating_finished_items(wheel_env: dict[str, str]):
    # base and miss_func items open with different messages (miss_func's system prompt lacks the held-out docs),
    # so each request is told to its item; the other two categories open as base does.
    categories = MULTI_TURN[:2]
    samples = [sample for sample in _samples(4) if sample.subset in categories]
    counter = ItemCounter(samples)
    assert all(len(ids) == 1 for ids in counter.ids.values())
    home = Path(wheel_env["TOOLBOARD_HOME"])
    with ScriptedServer(reply=script_for(samples, {}), latency=0.05, on_request=counter) as server:
        process = subprocess.Popen(_run_args(server, 4, 2, categories), cwd=PROJECT, env=wheel_env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        db_path = home / "toolboard.db"
        finished: set[str] = set()
        deadline = time.monotonic() + RUN_SECONDS
        while not finished:
            if time.monotonic() > deadline:
                process.kill()
                raise AssertionError("the run stored no 3 items in time")
            if process.poll() is not None:
                raise AssertionError(f"the run ended before it was killed: {process.stderr.read()[-3000:]}")
            rows = _prediction_rows(db_path)
            if len(rows) >= 3:
                process.send_signal(signal.SIGKILL)
                process.wait()
                rows = _prediction_rows(db_path)
                finished, run_id = {sample for _, sample in rows}, rows[0][0]
            time.sleep(0.05)
        assert len(finished) < len(samples)
        at_kill = {sample.id: counter.of(sample.id) for sample in samples}
        server.latency = 0.0  # slow answers were for killing the run mid-way
        resumed = subprocess.run([sys.executable, "-m", "evaluators", "run", "--resume", run_id, "--json"], cwd=PROJECT,
                                 env=wheel_env, capture_output=True, text=True, timeout=RUN_SECONDS)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    report = json.loads(resumed.stdout)
    assert report["run_id"] == run_id
    assert {name: subset["n"] for name, subset in report["subsets"].items()} == dict.fromkeys(categories, 4)
    repeated = [sample_id for sample_id in finished if counter.of(sample_id) > at_kill[sample_id]]
    assert not repeated, f"finished items asked again after the resume: {repeated}"
    predictions = stored_predictions(home, run_id)
    assert len(predictions) == len(samples) and all(p.extra["stop"] == "completed" for p in predictions.values())
    assert all(counter.of(sample.id) > 0 for sample in samples)


def _prediction_rows(db_path: Path) -> list[tuple[str, str]]:
    if not db_path.exists():
        return []
    with sqlite3.connect(db_path) as db:
        try:
            return db.execute("SELECT run_id, sample_id FROM predictions").fetchall()
        except sqlite3.OperationalError:
            return []


# ---- a rollout's ends: a failed request, an environment past its limits; and its replay from the cache ----------


def _rollout(sample: Any, server: ScriptedServer, host: Any, store: Any = None) -> Any:
    import asyncio

    from evaluators.benchmarks.bfcl.multi_turn.rollout import run_rollout
    from evaluators.engine.client import ChatClient, RetryPolicy
    from evaluators.engine.settings import ModelSettings

    async def play() -> Any:
        client = ChatClient(ModelSettings(base_url=server.base_url, model="m"), store=store, use_cache=store is not None,
                            retry=RetryPolicy(max_attempts=1))
        try:
            return await run_rollout(sample, client, host)
        finally:
            await client.close()

    return asyncio.run(play())


@pytest.fixture(scope="module")
def host(bfcl_official: Any) -> Any:
    from evaluators.benchmarks.bfcl.multi_turn.env_host import EnvironmentHost

    host = EnvironmentHost(workers=1, call_seconds=1.0, wheel=bfcl_official.wheel)
    yield host
    host.shutdown()


@pytest.fixture
def wheel_set(bfcl_official: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV

    monkeypatch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
    return bfcl_official.wheel


@pytest.mark.slow
def test_a_failed_request_ends_the_rollout_as_a_request_error_with_what_was_played(wheel_set: Path, host: Any):
    from tests.scripted_server import Fault

    sample = _samples(1)[0]
    with ScriptedServer(reply=script_for([sample], {})) as server:
        server.fault = lambda key, attempt: Fault(status=400, message="no more") if server.requests > 3 else None
        prediction = _rollout(sample, server, host)
    assert prediction.error is not None and prediction.error.startswith("HTTP 400") and "no more" in prediction.error
    assert prediction.extra["stop"] == "request_failed"
    assert [len(turn) for turn in prediction.extra["turns"]] == [2, 1]  # three answers, the fourth request failed
    assert len(prediction.extra["transcript"]) == 2 and "state" not in prediction.extra["transcript"][1]


@pytest.mark.slow
def test_an_environment_past_its_limits_ends_the_rollout_and_the_item_is_scored_on_what_was_played(
        wheel_set: Path, host: Any):
    sample = next(s for s in _samples(20) if "MathAPI" in s.input["involved_classes"])
    slow = "square_root(number=2, precision=10000000)"  # past the host's 1 s per call
    with ScriptedServer(reply=lambda body: {"content": f"[{slow}]"}) as server:
        prediction = _rollout(sample, server, host)
    assert prediction.error is None and prediction.extra["stop"] == "environment_limit"
    assert prediction.extra["turns"] == [[f"[{slow}]"]] and "environment_limit" in prediction.extra
    assert prediction.extra["transcript"][0]["steps"][0]["calls"] == [slow]


@pytest.mark.slow
def test_a_rollout_replays_from_the_response_cache_without_sending_anything(wheel_set: Path, host: Any,
                                                                          tmp_path: Path):
    from evaluators.engine.store import Store

    sample = _samples(1)[0]
    store = Store(tmp_path / "db.sqlite")
    with ScriptedServer(reply=script_for([sample], {"multi_turn_base_0": "one_by_one"})) as server:
        first = _rollout(sample, server, host, store)
        sent = server.requests
        again = _rollout(sample, server, host, store)
        assert server.requests == sent > len(sample.gold)
    assert again.extra["turns"] == first.extra["turns"] and again.extra["transcript"] == first.extra["transcript"]
    assert again.extra["stop"] == first.extra["stop"] == "completed"
