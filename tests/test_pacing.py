"""Paced request starts: a short fixed gap before the first answer, then a share of the measured
latency over the concurrency (never more than a cap), never a wait when starts are already apart;
a real run's requests reach the server spread out; the switch to turn it off."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from evaluators.engine import pacing
from evaluators.engine.pacing import LATENCY_SHARE, MAX_GAP, PACING_ENV, RAMP_GAP, SendPacer, pacing_enabled
from evaluators.engine.store import Store
from tests.engine_fixtures import correct_reply, write_dataset
from tests.scripted_server import ScriptedServer
from tests.test_engine import _config, _run


def test_first_starts_are_spread_by_the_ramp_gap():
    pacer = SendPacer(concurrency=8)
    waits = [pacer.reserve(now=10.0) for _ in range(4)]
    assert waits == pytest.approx([0, RAMP_GAP, 2 * RAMP_GAP, 3 * RAMP_GAP])


def test_after_answers_the_gap_is_a_share_of_the_latency_over_the_concurrency():
    pacer = SendPacer(concurrency=64)
    pacer.observe(0.2)
    assert pacer.gap() == pytest.approx(LATENCY_SHARE * 0.2 / 64)
    pacer.observe(0.4)  # a moving average: one slow answer moves it a little
    assert pacer.latency == pytest.approx(0.2 * (1 - pacing.LATENCY_WEIGHT) + 0.4 * pacing.LATENCY_WEIGHT)


def test_slow_endpoints_at_low_concurrency_never_wait_long():
    pacer = SendPacer(concurrency=1)
    pacer.observe(30.0)
    assert pacer.gap() == MAX_GAP


def test_no_wait_when_starts_are_already_apart():
    pacer = SendPacer(concurrency=4)
    pacer.observe(0.1)
    assert pacer.reserve(now=1.0) == 0
    assert pacer.reserve(now=2.0) == 0


def test_the_switch(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(PACING_ENV, raising=False)
    assert pacing_enabled()
    for value in ("0", "off", "OFF", "false", "no"):
        monkeypatch.setenv(PACING_ENV, value)
        assert not pacing_enabled()
    monkeypatch.setenv(PACING_ENV, "on")
    assert pacing_enabled()


@pytest.mark.parametrize("http_workers", [0, 1], ids=["in-process", "worker-processes"])
def test_a_runs_requests_reach_the_server_spread_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, http_workers: int):
    monkeypatch.delenv(PACING_ENV, raising=False)
    data = write_dataset(tmp_path / "data", 16)
    arrivals: list[float] = []
    latency = 0.3
    with ScriptedServer(reply=correct_reply, latency=latency, on_request=lambda body: arrivals.append(time.monotonic())) as server:
        outcome = _run(Store(tmp_path / "db.sqlite"), _config(server, data, concurrency=8), http_workers)
    assert outcome.progress.done_count == 16 and outcome.progress.errors == 0
    # The first wave's answers come back within milliseconds of each other; the second wave, sent as
    # they arrive, is spaced by the pacer (the latency is known by then).
    second_wave = sorted(arrivals)[8:]
    gap = min(MAX_GAP, LATENCY_SHARE * latency / 8)
    assert second_wave[-1] - second_wave[0] >= 7 * gap * 0.9
