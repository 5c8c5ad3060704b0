"""Our BFCL multi-turn scoring against the official one, run for real: the pinned `bfcl-eval` wheel's evaluation
runner in its venv (tests/bfcl_official_venv.py; skipped with the reason when it cannot be built) scores the same
result files (`{"id", "result": [[step text, ...], ...]}`) as `evaluators.benchmarks.bfcl.checker.score` does
through the environment host.

Prediction sets over all 800 items of the 4 categories: the oracle (the ground truth written as step texts) and
MUTATION_ROUNDS sets of seeded mutations of it (tests/bfcl_multi_turn_mutations.py: a dropped call, a changed
argument, a swapped turn, an extra step, an early stop), each a complete run for the official runner. Compared per
set: every item's verdict and error type, each category's correct count, the official data_multi_turn.csv
figures (within their two-decimal percentages)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pytest

from evaluators.benchmarks.bfcl.categories import MULTI_TURN
from evaluators.benchmarks.bfcl.checker import score
from evaluators.benchmarks.bfcl.data import load
from evaluators.benchmarks.bfcl.multi_turn import env_host
from evaluators.benchmarks.bfcl.multi_turn.env_host import EnvironmentHost
from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV
from evaluators.core.types import Prediction, Sample, SampleScore
from tests.bfcl_multi_turn_mutations import (
    MUTATIONS,
    ODD_SHAPES,
    ORACLE,
    Turns,
    mutated_answer,
    odd_answer,
    oracle_answer,
)
from tests.bfcl_official_venv import OfficialSetResult, read_official, run_official_on_sets
from tests.conftest import BfclOfficial

MUTATION_ROUNDS = 6
ODD = "odd_shapes"
ITEMS = 800
CATEGORY_COLUMNS = {"multi_turn_base": "Base", "multi_turn_miss_func": "Miss Func",
                    "multi_turn_miss_param": "Miss Param",
                    "multi_turn_long_context": "Long Context"}
OVERALL_COLUMN = "Multi Turn Overall Acc"
CSV_TOLERANCE = 0.0005
SETS = [ORACLE, *(f"mutated_{r}" for r in range(MUTATION_ROUNDS)), ODD]


@dataclass
class ScoredSet:
    answers: dict[str, Turns]
    kinds: dict[str, str]
    ours: dict[str, SampleScore]
    official: OfficialSetResult


@pytest.fixture(scope="module")
def samples(bfcl_official: BfclOfficial) -> list[Sample]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
        patch.delenv("TOOLBOARD_DATA_DIR", raising=False)
        return load(subsets=list(MULTI_TURN))


@pytest.fixture(scope="module")
def host(bfcl_official: BfclOfficial):
    """`score` runs the checker on the process's shared host: this one while the module runs."""
    host = EnvironmentHost(workers=2, wheel=bfcl_official.wheel)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(env_host, "_shared", host)
        yield host
    host.shutdown()


def _prediction_sets(samples: list[Sample]) -> dict[str, tuple[dict[str, Turns], dict[str, str]]]:
    sets = {ORACLE: ({s.id: oracle_answer(s) for s in samples}, {s.id: ORACLE for s in samples})}
    for round_ in range(MUTATION_ROUNDS):
        answers = {s.id: mutated_answer(s, round_) for s in samples}
        sets[f"mutated_{round_}"] = ({i: turns for i, (_, turns) in answers.items()},
                                     {i: kind for i, (kind, _) in answers.items()})
    odd = {s.id: odd_answer(s) for s in samples}
    sets[ODD] = ({i: result for i, (_, result) in odd.items()}, {i: kind for i, (kind, _) in odd.items()})
    return sets


@pytest.fixture(scope="module")
def scored_sets(samples: list[Sample], official_checker, host: EnvironmentHost,
                tmp_path_factory: pytest.TempPathFactory) -> dict[str, ScoredSet]:
    work = tmp_path_factory.mktemp("bfcl_multi_turn_parity")
    sets = _prediction_sets(samples)
    run_official_on_sets(official_checker, work, samples, {name: answers for name, (answers, _) in sets.items()},
                         list(MULTI_TURN))
    scored = {}
    for name, (answers, kinds) in sets.items():
        ours = {s.id: score(s, Prediction(sample_id=s.id, extra={"turns": answers[s.id]}), "official")
                for s in samples}
        scored[name] = ScoredSet(answers, kinds, ours, read_official(work / name))
    return scored


@pytest.mark.parametrize("name", SETS)
def test_every_item_gets_the_official_verdict_and_error_type(scored_sets: dict[str, ScoredSet], name: str):
    scored = scored_sets[name]
    assert sum(total for _, total in scored.official.counts.values()) == ITEMS == len(scored.ours)
    found = []
    for sample_id, ours in scored.ours.items():
        official_error = scored.official.failed.get(sample_id)
        official_correct = official_error is None
        if ours.correct != official_correct or (not ours.correct and ours.error_type != official_error):
            found.append(f"{sample_id} [{scored.kinds[sample_id]}] official={official_correct} ({official_error}) "
                         f"ours={ours.correct} ({ours.error_type}, {ours.rule}: {ours.detail[:200]})")
    assert not found, f"{len(found)} of {ITEMS} items differ:\n" + "\n".join(found[:40])


@pytest.mark.parametrize("name", SETS)
def test_category_accuracies_match_the_official_table(scored_sets: dict[str, ScoredSet], name: str):
    scored = scored_sets[name]
    ours = {category: (sum(1 for s in scored.ours.values() if s.subset == category and s.correct),
                       sum(1 for s in scored.ours.values() if s.subset == category)) for category in MULTI_TURN}
    assert ours == scored.official.counts
    table = scored.official.multi_turn
    accuracies = {category: correct / total for category, (correct, total) in ours.items()}
    for category, column in CATEGORY_COLUMNS.items():
        assert accuracies[category] == pytest.approx(table[column], abs=CSV_TOLERANCE), column
    overall = sum(accuracies.values()) / len(accuracies)
    assert overall == pytest.approx(table[OVERALL_COLUMN], abs=CSV_TOLERANCE)


def test_every_set_holds_both_verdicts_in_every_category(scored_sets: dict[str, ScoredSet]):
    for name, scored in scored_sets.items():
        if name == ORACLE:
            continue
        for category, (correct, total) in scored.official.counts.items():
            assert 0 < correct < total, (name, category, correct, total)


def test_the_oracle_passes_every_item_on_both_sides(scored_sets: dict[str, ScoredSet]):
    oracle = scored_sets[ORACLE]
    assert oracle.official.counts == {category: (200, 200) for category in MULTI_TURN}
    assert all(s.correct for s in oracle.ours.values())


def test_every_mutation_kind_is_used_and_fails_somewhere(scored_sets: dict[str, ScoredSet]):
    kinds = Counter(kind for name, scored in scored_sets.items() if name != ORACLE for kind in scored.kinds.values())
    assert set(MUTATIONS) | set(ODD_SHAPES) <= set(kinds)
    failed = {scored.kinds[i] for name, scored in scored_sets.items() if name != ORACLE
              for i, s in scored.ours.items() if not s.correct}
    assert set(MUTATIONS) | {"text_result", "turn_as_text"} <= failed
    # Steps that are not texts are skipped as undecodable, officially and here: the oracle's calls still pass.
    odd = scored_sets[ODD]
    assert all(odd.ours[i].correct for i, kind in odd.kinds.items() if kind == "null_and_number_steps")


def test_no_call_needed_what_the_interpreter_leaves_out(scored_sets: dict[str, ScoredSet]):
    """The documented deviations (builtins read as undefined names, unsupported expressions) never occur in
    these answers: the interpreter ran every call as eval would."""
    deviations: Counter[str] = Counter()
    for scored in scored_sets.values():
        for result in scored.ours.values():
            deviations.update((result.metadata or {}).get("deviations") or {})
    assert not deviations


