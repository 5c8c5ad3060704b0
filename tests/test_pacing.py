"""Paced request starts (timings on a virtual clock, see tests/virtual_clock.py): a short fixed gap before the first answer (the first wave spread over a
bounded span), then a share of the measured latency over the concurrency (never more than a cap);
no wait when starts are already apart; waiting starts take the gap as it is when released, and one
given up costs the others nothing; a real run's requests reach the server spread out; the switch."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from evaluators.engine.pacing import (
    LATENCY_SHARE,
    MAX_GAP,
    PACING_ENV,
    RAMP_GAP,
    RAMP_SPAN,
    RECENT_ANSWERS,
    SendPacer,
    pacing_enabled,
)
from evaluators.engine.store import Store
from tests.engine_fixtures import correct_reply, run_to_end, scripted_run_config, write_dataset
from tests.scripted_server import ScriptedServer
from tests.virtual_clock import run_on_virtual_clock


def _release_times(pacer: SendPacer, waiters: int, cancel: int | None = None, after_first=None) -> list[float]:
    """When each of `waiters` concurrent starts was let through (seconds after the first); the one
    numbered `cancel` gives up while waiting; `after_first` runs once the first is through."""

    async def run() -> list[float]:
        loop = asyncio.get_running_loop()
        virtual_times: dict[int, float] = {}

        async def start(index: int) -> None:
            await pacer.wait()
            virtual_times[index] = loop.time()
            if index == 0 and after_first is not None:
                after_first()

        tasks = [asyncio.create_task(start(i)) for i in range(waiters)]
        await asyncio.sleep(0)
        if cancel is not None:
            tasks[cancel].cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return [virtual_times[i] - virtual_times[0] for i in sorted(virtual_times)]

    return run_on_virtual_clock(run())


def test_first_starts_are_spread_by_the_ramp_gap():
    virtual_times = _release_times(SendPacer(concurrency=8), 4)
    assert virtual_times[0] == 0
    assert all(later - earlier >= RAMP_GAP * 0.9 for earlier, later in zip(virtual_times, virtual_times[1:]))


def test_the_first_wave_is_spread_over_a_bounded_span_at_any_concurrency():
    assert SendPacer(concurrency=8).gap() == RAMP_GAP
    assert SendPacer(concurrency=1024).gap() * 1024 == pytest.approx(RAMP_SPAN)


def test_after_answers_the_gap_is_a_share_of_the_latency_over_the_concurrency():
    pacer = SendPacer(concurrency=64)
    pacer.observe(0.2)
    assert pacer.gap() == pytest.approx(LATENCY_SHARE * 0.2 / 64)
    pacer.observe(5.0)  # a slow straggler does not lengthen it
    assert pacer.gap() == pytest.approx(LATENCY_SHARE * 0.2 / 64)
    pacer.observe(0.01)  # a fast answer shortens it at once
    assert pacer.gap() == pytest.approx(LATENCY_SHARE * 0.01 / 64)
    for _ in range(RECENT_ANSWERS):  # and it follows the endpoint when it slows down for good
        pacer.observe(0.4)
    assert pacer.gap() == pytest.approx(LATENCY_SHARE * 0.4 / 64)


def test_gaps_finer_than_the_loops_timers_still_give_their_rate():
    pacer = SendPacer(concurrency=1024)
    pacer.observe(0.05)  # 25 microseconds apart: 40,000 starts a second
    virtual_times = _release_times(pacer, 400)
    assert virtual_times[-1] < 0.1  # not one loop turn (~1 ms) each


def test_slow_endpoints_at_low_concurrency_never_wait_long():
    pacer = SendPacer(concurrency=1)
    pacer.observe(30.0)
    assert pacer.gap() == MAX_GAP


def test_no_wait_when_starts_are_already_apart():
    pacer = SendPacer(concurrency=4)
    pacer.observe(0.1)

    async def run() -> float:
        await pacer.wait()
        await asyncio.sleep(0.05)  # longer than the gap
        started = asyncio.get_running_loop().time()
        await pacer.wait()
        return asyncio.get_running_loop().time() - started

    assert run_on_virtual_clock(run()) < 0.005


def test_waiting_starts_take_the_gap_as_it_is_when_released():
    pacer = SendPacer(concurrency=1)
    pacer.observe(0.04)  # a gap of 20 ms while the first waits...
    virtual_times = _release_times(pacer, 4, after_first=lambda: pacer.observe(0.002))  # ... then 1 ms
    assert virtual_times[1] >= MAX_GAP * 0.9  # booked before the speed-up
    assert virtual_times[3] - virtual_times[1] < 2 * MAX_GAP  # not 20 ms each


def test_a_start_given_up_while_waiting_costs_the_others_no_gap():
    pacer = SendPacer(concurrency=1)
    pacer.observe(0.04)  # 20 ms between starts
    virtual_times = _release_times(pacer, 3, cancel=1)
    assert len(virtual_times) == 2 and virtual_times[1] < 1.9 * MAX_GAP


def test_the_switch(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(PACING_ENV, raising=False)
    assert pacing_enabled()
    for value in ("0", "off", "OFF", "false", "no"):
        monkeypatch.setenv(PACING_ENV, value)
        assert not pacing_enabled()
    monkeypatch.setenv(PACING_ENV, "on")
    assert pacing_enabled()


@pytest.mark.slow
def test_a_runs_requests_reach_the_server_spread_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(PACING_ENV, raising=False)
    data = write_dataset(tmp_path / "data", 16)
    arrivals: list[float] = []
    latency = 0.3
    with ScriptedServer(reply=correct_reply, latency=latency, on_request=lambda body: arrivals.append(time.monotonic())) as server:
        outcome = run_to_end(Store(tmp_path / "db.sqlite"), scripted_run_config(server, data, concurrency=8))
    assert outcome.progress.done_count == 16 and outcome.progress.errors == 0
    # The first wave's answers come back within milliseconds of each other; the second wave, sent as
    # they arrive, is spaced by the pacer (the latency is known by then).
    second_wave = sorted(arrivals)[8:]
    gap = min(MAX_GAP, LATENCY_SHARE * latency / 8)
    assert second_wave[-1] - second_wave[0] >= 7 * gap * 0.9
