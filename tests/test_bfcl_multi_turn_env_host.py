"""The environment host: sessions over the official environment classes in worker processes (sync and async),
each session's state its own, and the limits: a call past the time limit or the memory limit ends its worker,
every session it held ends with "environment_limit", and the host keeps serving new and other sessions."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from evaluators.benchmarks.bfcl.data import load
from evaluators.benchmarks.bfcl.multi_turn.env_host import (
    ENVIRONMENT_LIMIT,
    EnvironmentHost,
    EnvironmentLimit,
    EnvironmentRequestError,
    rollout_namespace,
)
from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV
from evaluators.core.types import Sample
from tests.conftest import BfclOfficial

# A Decimal square root of ten million digits runs for minutes; of a billion digits it needs gigabytes at once.
SLOW_CALL = "square_root(number=2, precision=10000000)"
HUNGRY_CALL = "square_root(number=2, precision=1000000000)"


@pytest.fixture(scope="module")
def samples(bfcl_official: BfclOfficial) -> dict[str, Sample]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
        patch.delenv("TOOLBOARD_DATA_DIR", raising=False)
        return {s.id: s for s in load(subsets=["multi_turn_base", "multi_turn_long_context"])}


@pytest.fixture(scope="module")
def host(bfcl_official: BfclOfficial):
    host = EnvironmentHost(workers=2, memory_mb=1024, call_seconds=5.0, wheel=bfcl_official.wheel)
    yield host
    host.shutdown()


def _with_math(samples: dict[str, Sample]) -> Sample:
    return next(s for s in samples.values() if "MathAPI" in s.input["involved_classes"])


@pytest.mark.slow
def test_a_session_runs_the_ground_truth_and_keeps_its_state(host: EnvironmentHost, samples: dict[str, Sample]):
    sample = samples["multi_turn_base_0"]
    session = host.open(sample, rollout_namespace("org/model-1.5"))
    before = host.state(session)
    assert set(before) == {c for c in sample.input["involved_classes"] if c != "MathAPI"}
    results = host.execute(session, sample.gold[0])
    assert len(results) == len(sample.gold[0])
    assert all(isinstance(text, str) for text in results)
    after = host.state(session)
    assert after != before
    json.dumps(after)  # JSON-safe
    other = host.open(sample, "another")
    assert host.state(other) == before  # a second session of the same item starts from the initial config
    host.close(session)
    host.close(other)
    with pytest.raises(EnvironmentLimit):
        host.execute(session, ["ls()"])


@pytest.mark.slow
def test_errors_read_as_the_official_loop_shows_them(host: EnvironmentHost, samples: dict[str, Sample]):
    session = host.open(samples["multi_turn_base_0"], "m")
    results = host.execute(session, ["kill(pid=1)", "nothing_here(a=1)", "cd(folder_name='x')", "ls("])
    assert results[0] == "Error during execution: Function call kill is not allowed."
    assert results[1] == "Error during execution: name 'nothing_here' is not defined"
    assert results[2].startswith("Error during execution: GorillaFileSystem.cd() got an unexpected keyword")
    assert results[3] == "Error during execution: '(' was never closed (<string>, line 1)"
    host.close(session)


@pytest.mark.slow
def test_the_async_api_serves_many_sessions_at_once(host: EnvironmentHost, samples: dict[str, Sample]):
    chosen = list(samples.values())[:12]

    async def one(sample: Sample) -> tuple[str, list[str], dict]:
        session = await host.open_async(sample, "m")
        results = []
        for turn in sample.gold:
            results.extend(await host.execute_async(session, turn))
        state = await host.state_async(session)
        await host.close_async(session)
        return sample.id, results, state

    async def run_all() -> list:
        return await asyncio.gather(*(one(s) for s in chosen))

    done = asyncio.run(run_all())
    assert [item for item, _, _ in done] == [s.id for s in chosen]
    # The same item run alone gives the same results and end state.
    item_id, results, state = done[0]
    session = host.open(samples[item_id], "m")
    alone = [text for turn in samples[item_id].gold for text in host.execute(session, turn)]
    assert alone == results and host.state(session) == state
    host.close(session)


def test_an_unknown_class_is_refused(host: EnvironmentHost, samples: dict[str, Sample]):
    sample = samples["multi_turn_base_0"]
    bad = Sample(sample.id, sample.subset, {**sample.input, "involved_classes": ["Toaster"]}, sample.gold, sample.meta)
    with pytest.raises(EnvironmentRequestError, match="Toaster"):
        host.open(bad, "m")


@pytest.mark.slow
@pytest.mark.parametrize("call", [SLOW_CALL, HUNGRY_CALL], ids=["time", "memory"])
def test_a_worker_past_its_limit_ends_its_sessions_and_the_host_serves_on(bfcl_official: BfclOfficial,
                                                                          samples: dict[str, Sample], call: str):
    host = EnvironmentHost(workers=2, memory_mb=512, call_seconds=1.0, wheel=bfcl_official.wheel)
    try:
        sample = _with_math(samples)
        victim = host.open(sample, "m", slot=0)
        neighbour = host.open(sample, "n", slot=0)  # the same worker
        bystander = host.open(sample, "b", slot=1)  # the other worker
        with pytest.raises(EnvironmentLimit):
            host.execute(victim, [call])
        assert victim.ended == ENVIRONMENT_LIMIT
        with pytest.raises(EnvironmentLimit):
            host.execute(neighbour, ["mean(numbers=[1, 2])"])
        assert neighbour.ended == ENVIRONMENT_LIMIT
        assert host.execute(bystander, ["mean(numbers=[1, 2])"]) == ['{"result": 1.5}']
        host.close(bystander)
        host.close(victim)  # closing an ended session is harmless
        fresh = host.open(sample, "m")
        assert host.execute(fresh, ["mean(numbers=[1, 2])"]) == ['{"result": 1.5}']
        host.close(fresh)
    finally:
        host.shutdown()


def test_the_worker_never_imports_the_rest_of_the_official_package(host: EnvironmentHost,
                                                                   samples: dict[str, Sample]):
    session = host.open(samples["multi_turn_base_0"], "m")
    # bfcl_eval's real __init__ and its utils would be importable names if the package were imported.
    assert host.execute(session, ["ls(a=True)"])[0].startswith('{"current_directory_content"')
    host.close(session)


def test_an_environment_host_needs_a_worker(bfcl_official: BfclOfficial, tmp_path: Path):
    with pytest.raises(ValueError):
        EnvironmentHost(workers=0, wheel=bfcl_official.wheel)


@pytest.mark.slow
def test_a_worker_killed_between_requests_is_replaced(bfcl_official: BfclOfficial, samples: dict[str, Sample]):
    host = EnvironmentHost(workers=1, wheel=bfcl_official.wheel)
    try:
        sample = samples["multi_turn_base_0"]
        session = host.open(sample, "m")
        session.worker.process.kill()
        session.worker.process.wait()
        with pytest.raises(EnvironmentLimit):
            host.execute(session, ["pwd()"])
        assert session.ended == ENVIRONMENT_LIMIT
        fresh = host.open(sample, "m")
        assert fresh.worker is not session.worker
        assert host.execute(fresh, ["pwd()"])[0].startswith('{"current_working_directory": ')
        host.close(fresh)
    finally:
        host.shutdown()
