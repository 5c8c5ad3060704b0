"""The multi-turn checker's rules one by one on real items (the full comparison with the official runner is
test_bfcl_multi_turn_parity.py): the inference error, force termination, skipped steps, empty turns, the state and
response checks with their evidence, the unchecked holdout turns and strict_multi_turn_irrelevance, a checker
crash, and a worker past its limits."""

from __future__ import annotations

import json

import pytest

from evaluators.benchmarks.bfcl.checker import score
from evaluators.benchmarks.bfcl.data import load
from evaluators.benchmarks.bfcl.multi_turn import env_host
from evaluators.benchmarks.bfcl.multi_turn.checker import check, decode_turns, strict_multi_turn_irrelevance
from evaluators.benchmarks.bfcl.multi_turn.checker import score as score_multi_turn
from evaluators.benchmarks.bfcl.multi_turn.env_host import EnvironmentHost
from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV
from evaluators.core.types import Prediction, Sample
from tests.bfcl_multi_turn_mutations import oracle_answer, oracle_calls
from tests.conftest import BfclOfficial


@pytest.fixture(scope="module")
def samples(bfcl_official: BfclOfficial) -> dict[str, Sample]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
        patch.delenv("TOOLBOARD_DATA_DIR", raising=False)
        return {s.id: s for s in load(subsets=["multi_turn_base", "multi_turn_miss_func"])}


@pytest.fixture(scope="module", autouse=True)
def host(bfcl_official: BfclOfficial):
    """`score` runs the checker on the process's shared host: this one while the module runs."""
    host = EnvironmentHost(workers=1, call_seconds=2.0, wheel=bfcl_official.wheel)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(env_host, "_shared", host)
        yield host
    host.shutdown()


def _score(sample: Sample, turns, mode: str = "official"):
    return score(sample, Prediction(sample_id=sample.id, extra={"turns": turns}), mode)


@pytest.mark.slow
def test_the_oracle_passes_with_its_evidence(samples: dict[str, Sample]):
    sample = samples["multi_turn_base_0"]
    result = _score(sample, oracle_answer(sample))
    assert result.correct and result.rule == "official_multi_turn_all_turns_pass"
    metadata = result.metadata
    assert metadata is not None and metadata["failed_turn"] is None
    assert len(metadata["turn_states"]) == len(sample.gold)
    assert metadata["turn_states"][-1]["model"] == metadata["turn_states"][-1]["ground_truth"]
    json.dumps(metadata)
    assert result.decoded == decode_turns(oracle_answer(sample))


@pytest.mark.parametrize(("extra", "error_type", "rule"), [
    ({}, "multi_turn:inference_error", "official_multi_turn_inference_error"),
    ({"turns": "the request failed"}, "multi_turn:inference_error", "official_multi_turn_inference_error"),
    ({"turns": [["ls()"]]}, "multi_turn:force_terminated", "official_multi_turn_force_terminated"),
])
def test_results_that_are_not_the_turns(samples: dict[str, Sample], extra, error_type: str, rule: str):
    sample = samples["multi_turn_base_0"]
    result = score(sample, Prediction(sample_id=sample.id, extra=extra), "official")
    assert (result.correct, result.error_type, result.rule) == (False, error_type, rule)


def test_no_prediction_or_a_failed_request(samples: dict[str, Sample]):
    sample = samples["multi_turn_base_0"]
    assert score(sample, None).error_type == "missing"
    failed = score(sample, Prediction(sample_id=sample.id, error="HTTP 500"))
    assert failed.error_type == "request_error" and not failed.correct


@pytest.mark.slow  # over half a second in the fast loop
def test_undecodable_and_empty_steps_are_skipped(samples: dict[str, Sample]):
    sample = samples["multi_turn_base_0"]
    turns = oracle_answer(sample)
    turns[0] = ["Let me look.", "[]", "cd(folder={})", *turns[0], None]
    assert _score(sample, turns).correct


def test_an_empty_turn_fails_at_that_turn(samples: dict[str, Sample]):
    sample = samples["multi_turn_base_0"]
    turns = oracle_answer(sample)
    turns[1] = ["I would rather not."]
    result = _score(sample, turns)
    assert (result.error_type, result.rule) == ("multi_turn:empty_turn_model_response", "official_multi_turn_empty_turn")
    assert result.metadata["failed_turn"] == 1 and result.detail == "Model response list is empty for turn 1"


def test_a_state_mismatch_names_the_differences(samples: dict[str, Sample]):
    sample = samples["multi_turn_base_0"]
    calls = oracle_calls(sample)
    turns = [[f"[{', '.join(turn)}]"] for turn in calls]
    turns[0] = ["[cd(folder='document'), mkdir(dir_name='temporary')]"]
    result = _score(sample, turns)
    assert result.error_type == "multi_turn:instance_state_mismatch"
    assert result.rule == "official_multi_turn_state_check"
    assert result.metadata["failed_turn"] == 0 and "root" in result.metadata["differences"]
    json.dumps(result.metadata)


def test_a_missing_result_fails_the_response_check(samples: dict[str, Sample]):
    """A read-only call left out changes no state but its result is missing."""
    for sample in samples.values():
        calls = oracle_calls(sample)
        reads = [(t, i) for t, turn in enumerate(calls) for i, call in enumerate(turn)
                 if call.startswith(("ls(", "cat(", "grep(", "pwd(")) and len(turn) > 1]
        if reads:
            break
    turn, index = reads[0]
    calls[turn].pop(index)
    result = _score(sample, [[f"[{', '.join(c)}]"] if c else ["No call."] for c in calls])
    assert result.error_type == "multi_turn:execution_response_mismatch", result.detail
    assert result.rule == "official_multi_turn_response_check" and result.metadata["missing_items"]


def test_holdout_turns_are_unchecked_officially_and_strict_fails_calls_there(samples: dict[str, Sample]):
    sample = samples["multi_turn_miss_func_0"]
    turns = oracle_answer(sample)
    holdout = next(index for index, turn in enumerate(sample.gold) if not turn)
    turns[holdout] = ["pwd()", "I need a function I do not have."]
    official = _score(sample, turns)
    assert official.correct
    strict = _score(sample, turns, "strict")
    assert not strict.correct and strict.rule == "strict_multi_turn_irrelevance"
    assert strict.error_type == "multi_turn:irrelevance_error:decoder_success"
    assert strict.metadata["failed_turn"] == holdout
    assert _score(sample, oracle_answer(sample), "strict").correct
    assert strict_multi_turn_irrelevance([[], [["ls()"]]], [["ls()"], []]) == 1
    assert strict_multi_turn_irrelevance([[["a()"]], []], [["ls()"], []]) is None


def test_a_turn_that_cannot_be_iterated_is_a_checker_crash(samples: dict[str, Sample]):
    sample = samples["multi_turn_base_0"]
    turns = oracle_answer(sample)
    turns[0] = 7
    result = _score(sample, turns)
    assert result.error_type == "multi_turn:checker_crash"
    assert result.rule == "official_multi_turn_checker_crash_scores_wrong"


def test_builtin_names_are_counted_as_deviations(samples: dict[str, Sample]):
    sample = samples["multi_turn_base_0"]
    turns = oracle_answer(sample)
    turns[0] = ["print(value='hello')", *turns[0]]
    result = _score(sample, turns)
    assert result.metadata["deviations"] == {"deviation_builtin_names_undefined": 1}


def test_check_runs_decoded_turns(samples: dict[str, Sample], host: EnvironmentHost):
    sample = samples["multi_turn_base_0"]
    result = check(sample, decode_turns(oracle_answer(sample)), "org/model", host)
    assert result["valid"] and len(result["turn_states"]) == len(sample.gold)


@pytest.mark.slow
def test_a_check_past_the_time_limit_fails_the_item_and_the_host_serves_on(samples: dict[str, Sample],
                                                                           bfcl_official: BfclOfficial):
    sample = next(s for s in samples.values() if "MathAPI" in s.input["involved_classes"])
    host = EnvironmentHost(workers=1, call_seconds=1.0, wheel=bfcl_official.wheel)
    try:
        turns = oracle_answer(sample)
        turns[0] = ["square_root(number=2, precision=10000000)", *turns[0]]
        result = score_multi_turn(sample, Prediction(sample_id=sample.id, extra={"turns": turns}), host=host)
        assert (result.error_type, result.rule) == ("multi_turn:environment_limit", "bounded_environment_limit")
        assert score_multi_turn(sample, Prediction(sample_id=sample.id, extra={"turns": oracle_answer(sample)}),
                                host=host).correct
    finally:
        host.shutdown()
