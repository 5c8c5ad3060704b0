"""The oracle (gold answers written as model text, tests/bfcl_oracle.py) scores the official ceilings on the real
BFCL data (spec §7): 100% except the gold answers the official checker itself rejects."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluators.benchmarks.bfcl.checker import score
from evaluators.benchmarks.bfcl.data import load
from evaluators.core.types import Prediction, Sample
from tests.bfcl_oracle import oracle_text
from tests.conftest import BfclOfficial

# category -> (items, ids the oracle fails)
CEILINGS: dict[str, tuple[int, set[str]]] = {
    "simple_python": (400, set()),
    "multiple": (200, set()),
    "parallel": (200, set()),
    "parallel_multiple": (200, set()),
    "live_simple": (258, {"live_simple_106-63-0", "live_simple_112-68-0"}),
    "live_multiple": (1053, {"live_multiple_862-181-3", "live_multiple_964-207-0"}),
    "live_parallel": (16, set()),
    "live_parallel_multiple": (24, set()),
    "simple_java": (100, {f"simple_java_{n}" for n in (1, 35, 36, 65, 67, 68, 85)}),
    "simple_javascript": (50, set()),
}


@pytest.fixture(scope="module")
def bfcl_dir(bfcl_official: BfclOfficial) -> Path:
    return bfcl_official.data_dir


def oracle_prediction(sample: Sample) -> Prediction:
    return Prediction(sample_id=sample.id, output=oracle_text(sample.subset, sample.input["function"], sample.gold))


@pytest.mark.slow
@pytest.mark.parametrize("category", list(CEILINGS))
def test_oracle_reaches_the_official_ceiling(bfcl_dir: Path, category: str):
    samples = load(bfcl_dir, subsets=[category])
    total, failing = CEILINGS[category]
    assert len(samples) == total
    verdicts = {sample.id: score(sample, oracle_prediction(sample), "official") for sample in samples}
    failed = {sample_id for sample_id, verdict in verdicts.items() if not verdict.correct}
    assert failed == failing, {sample_id: (verdicts[sample_id].rule, verdicts[sample_id].detail) for sample_id in failed ^ failing}


def test_the_ceiling_failures_fail_for_the_documented_reasons(bfcl_dir: Path):
    samples = {s.id: s for s in load(bfcl_dir, subsets=["live_simple", "live_multiple"])}
    rules = {sample_id: score(samples[sample_id], oracle_prediction(samples[sample_id]), "official").rule
             for sample_id in ("live_simple_106-63-0", "live_simple_112-68-0", "live_multiple_862-181-3",
                               "live_multiple_964-207-0")}
    assert rules == {
        # a required array whose allowed-values list is empty: nothing can be given
        "live_simple_106-63-0": "official_required_from_doc",
        "live_simple_112-68-0": "official_required_from_doc",
        # the gold lists a parameter the doc does not have
        "live_multiple_862-181-3": "official_unlisted_optional_param_is_unexpected",
        # the doc requires a parameter the gold does not list
        "live_multiple_964-207-0": "official_required_from_doc",
    }


@pytest.mark.slow
def test_a_required_parameter_allowed_only_empty_passes_only_when_given_empty(bfcl_dir: Path):
    sample = next(s for s in load(bfcl_dir, subsets=["live_multiple"]) if s.id == "live_multiple_507-149-4")
    with_empty = oracle_prediction(sample)
    assert "=''" in (with_empty.output or "")
    assert score(sample, with_empty, "official").correct
    (gold_call,) = sample.gold
    name, params = next(iter(gold_call.items()))
    left_out = {param: allowed for param, allowed in params.items() if allowed != [""]}
    without = Prediction(sample_id=sample.id, output=oracle_text(sample.subset, sample.input["function"],
                                                                 [{name: left_out}]))
    assert score(sample, without, "official").rule == "official_required_from_doc"


@pytest.mark.parametrize("category", ["irrelevance", "live_irrelevance"])
def test_irrelevance_empty_list_is_always_right_and_a_call_always_wrong(bfcl_dir: Path, category: str):
    samples = load(bfcl_dir, subsets=[category])
    assert all(score(s, Prediction(sample_id=s.id, output="[]"), "official").correct for s in samples)
    for sample in samples:
        name = sample.input["function"][0]["name"] if sample.input["function"] else "lookup"
        call = Prediction(sample_id=sample.id, output=f"[{name}(query='anything')]")
        assert score(sample, call, "official").error_type == "contains_call", sample.id


def test_relevance_needs_any_call(bfcl_dir: Path):
    samples = load(bfcl_dir, subsets=["live_relevance"])
    assert len(samples) == 16
    for sample in samples:
        name = sample.input["function"][0]["name"]
        assert score(sample, Prediction(sample_id=sample.id, output=f"[{name}(anything=1)]"), "official").correct
        assert score(sample, Prediction(sample_id=sample.id, output="[]"), "official").error_type == "no_call"
