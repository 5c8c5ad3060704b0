"""Scoring while a run goes happens on the scoring thread, never on the event loop; the order samples start in."""

from __future__ import annotations

import dataclasses
import math
import threading
from pathlib import Path

import pytest

from evaluators.core.registry import get_benchmark
from evaluators.core.types import Sample
from evaluators.engine import runner
from evaluators.engine.runner import ROLLOUT_SAMPLES_PER_SLOT, longest_first, samples_at_once, score_run
from evaluators.engine.store import Store
from tests.engine_fixtures import correct_reply, run_to_end, scripted_run_config, write_dataset
from tests.scripted_server import ScriptedServer


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_dataset(tmp_path / "data", 30)


def _with_score(monkeypatch: pytest.MonkeyPatch, score) -> None:
    benchmark = get_benchmark("acebench")
    patched = dataclasses.replace(benchmark, score=score)
    monkeypatch.setattr(runner, "get_benchmark", lambda name: patched if name == "acebench" else get_benchmark(name))


def test_samples_are_scored_off_the_event_loop_with_the_same_verdicts(data: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch):
    real = get_benchmark("acebench").score
    threads: list[str] = []

    def score(sample, prediction, mode="official", **options):
        threads.append(threading.current_thread().name)
        return real(sample, prediction, mode, **options)

    _with_score(monkeypatch, score)
    with ScriptedServer(reply=correct_reply) as server:
        store = Store(tmp_path / "db.sqlite")
        outcome = run_to_end(store, scripted_run_config(server, data))
    assert outcome.status == "finished" and outcome.progress.scored == outcome.progress.done_count == 30
    assert threads and all(name.startswith("toolboard-score") for name in threads)
    # The verdicts made on the thread are those the stored predictions score to afresh.
    kept = store.load_scores(outcome.run_id, "official")
    assert outcome.report is not None and score_run(store, outcome.run_id).to_json() == outcome.report.to_json()
    assert store.load_scores(outcome.run_id, "official") == kept and len(kept) == 30


def test_a_verdict_that_raises_on_the_thread_is_raised_by_the_run(data: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch):
    real = get_benchmark("acebench").score

    def score(sample, prediction, mode="official", **options):
        if sample.id == "normal_atom_bool_3":
            raise RuntimeError("checker broke")
        return real(sample, prediction, mode, **options)

    _with_score(monkeypatch, score)
    with ScriptedServer(reply=correct_reply) as server, pytest.raises(RuntimeError, match="checker broke"):
        run_to_end(Store(tmp_path / "db.sqlite"), scripted_run_config(server, data))


def _sample(sample_id: str, turns: int) -> Sample:
    return Sample(id=sample_id, subset="s", input={"turns": turns}, gold=None)


def test_longest_expected_rollouts_start_first_alike_ones_in_order():
    samples = [_sample("a", 1), _sample("b", 3), _sample("c", 2), _sample("d", 3), _sample("e", 1)]
    benchmark = dataclasses.replace(get_benchmark("acebench"), expected_requests=lambda s: s.input["turns"])
    assert [s.id for s in longest_first(samples, benchmark)] == ["b", "d", "c", "a", "e"]
    assert longest_first(samples, get_benchmark("acebench")) == samples  # no estimate: the order as given


def test_rollouts_are_solved_more_at_once_than_the_requests_allowed_in_flight():
    # the endpoint still sees at most `concurrency` (RequestLimit; test_tau2_run checks the server's peak)
    rollouts = dataclasses.replace(get_benchmark("acebench"), expected_requests=lambda s: s.input["turns"])
    assert samples_at_once(rollouts, 8) == math.ceil(8 * ROLLOUT_SAMPLES_PER_SLOT) > 8
    assert samples_at_once(get_benchmark("acebench"), 8) == 8  # one request per sample: no more at once


def test_bfcl_expects_two_requests_a_turn_for_multi_turn_items():
    bfcl = get_benchmark("bfcl")
    assert bfcl.expected_requests is not None
    three_turns = Sample(id="multi_turn_base_0", subset="multi_turn_base", input={"question": [[], [], []]}, gold=[])
    single = Sample(id="simple_python_0", subset="simple_python", input={}, gold=[])
    assert bfcl.expected_requests(three_turns) == 6 and bfcl.expected_requests(single) == 1
