"""Our BFCL agentic scoring against the official one, run for real: the pinned `bfcl-eval` wheel's evaluation runner
in its venv (tests/bfcl_official_venv.py; skipped with the reason when it cannot be built) scores the same result
files (`{"id", "result": [[step text, ...]]}`) as `evaluators.benchmarks.bfcl.checker.score` does.

Prediction sets over all 665 items of the 5 categories: the oracle (a ground-truth answer inside a sentence, after a
call step) and MUTATION_ROUNDS sets of seeded mutations (a wrong answer, the answer glued to punctuation, an empty
last message, a call as the last step, a non-list result, extra turns, a final text that parses as a call, 21 call
steps). Compared per set: every item's verdict and error type, each category's correct count, and the official
data_agentic.csv figures (within their two-decimal percentages). The official evaluation re-runs no environment, so
the venv needs nothing beyond what the other parity tests install."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pytest

from evaluators.benchmarks.bfcl.categories import AGENTIC, MEMORY, WEB_SEARCH
from evaluators.benchmarks.bfcl.checker import score
from evaluators.benchmarks.bfcl.data import load
from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV
from evaluators.core.types import Prediction, Sample, SampleScore
from tests.bfcl_official_venv import OfficialSetResult, read_official, run_official_on_sets
from tests.conftest import BfclOfficial

MUTATION_ROUNDS = 3
ORACLE = "oracle"
SETS = [ORACLE, *(f"mutated_{r}" for r in range(MUTATION_ROUNDS))]
ITEMS = 3 * 155 + 2 * 100
CALL = "[core_memory_retrieve_all()]"
CATEGORY_COLUMNS = {"web_search_base": "Web Search Base", "web_search_no_snippet": "Web Search No Snippet",
                    "memory_kv": "Memory KV", "memory_vector": "Memory Vector",
                    "memory_rec_sum": "Memory Recursive Summarization"}
CSV_TOLERANCE = 0.0005


def oracle_answer(sample: Sample) -> list[list[str]]:
    return [[CALL, f"After looking it up: the answer is {sample.gold[0]}, as requested."]]


def _glued(sample: Sample) -> list[list[str]]:
    return [[f"Answer:{sample.gold[0]}.Done"]]


MUTATIONS = {
    "wrong_answer": lambda s: [["I could not find it; perhaps Zebulon Quixote."]],
    "glued_punctuation": _glued,
    "empty_last_message": lambda s: [[f"It is {s.gold[0]}.", ""]],
    "call_last": lambda s: [[f"It is {s.gold[0]}.", CALL]],
    "call_only_last": lambda s: [[CALL, CALL]],
    "non_list_result": lambda s: "Error during inference: rate limit",
    "extra_turns": lambda s: [[f"It is {s.gold[0]}."], [f"It is {s.gold[0]}."]],
    "parses_as_call": lambda s: [["Michael(x=1)"]],
    "twenty_one_calls": lambda s: [[CALL] * 21],
    "bracketed_answer": lambda s: [[f"[{s.gold[-1]}]"]],
    "dollar_or_dash": lambda s: [[f"Total: {s.gold[-1]}"]],
    "oracle": oracle_answer,
}


def mutated_answer(sample: Sample, round_: int) -> tuple[str, Any]:
    rng = random.Random(f"{sample.id}/{round_}")
    kind = rng.choice(sorted(MUTATIONS))
    return kind, MUTATIONS[kind](sample)


@dataclass
class ScoredSet:
    kinds: dict[str, str]
    ours: dict[str, SampleScore]
    official: OfficialSetResult


@pytest.fixture(scope="module")
def samples(bfcl_official: BfclOfficial) -> list[Sample]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
        patch.delenv("TOOLBOARD_DATA_DIR", raising=False)
        return load(subsets=list(AGENTIC))


@pytest.fixture(scope="module")
def scored_sets(samples: list[Sample], official_checker, tmp_path_factory: pytest.TempPathFactory) -> dict[str, ScoredSet]:
    work = tmp_path_factory.mktemp("bfcl_agentic_parity")
    sets: dict[str, tuple[dict[str, Any], dict[str, str]]] = {
        ORACLE: ({s.id: oracle_answer(s) for s in samples}, dict.fromkeys((s.id for s in samples), ORACLE))}
    for round_ in range(MUTATION_ROUNDS):
        answers = {s.id: mutated_answer(s, round_) for s in samples}
        sets[f"mutated_{round_}"] = ({i: result for i, (_, result) in answers.items()},
                                     {i: kind for i, (kind, _) in answers.items()})
    run_official_on_sets(official_checker, work, samples, {name: answers for name, (answers, _) in sets.items()},
                         list(AGENTIC))
    scored = {}
    for name, (answers, kinds) in sets.items():
        ours = {s.id: score(s, Prediction(sample_id=s.id, extra={"turns": answers[s.id]}), "official") for s in samples}
        scored[name] = ScoredSet(kinds, ours, read_official(work / name))
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
                       sum(1 for s in scored.ours.values() if s.subset == category)) for category in AGENTIC}
    assert ours == scored.official.counts
    table = scored.official.agentic
    accuracy = {category: correct / total for category, (correct, total) in ours.items()}
    for category, column in CATEGORY_COLUMNS.items():
        assert accuracy[category] == pytest.approx(table[column], abs=CSV_TOLERANCE), column
    web = sum(accuracy[c] for c in WEB_SEARCH) / 2
    memory = sum(accuracy[c] for c in MEMORY) / 3
    assert web == pytest.approx(table["Web Search Summary"], abs=CSV_TOLERANCE)
    assert memory == pytest.approx(table["Memory Summary"], abs=CSV_TOLERANCE)
    assert (web + memory) / 2 == pytest.approx(table["Agentic Overall Acc"], abs=CSV_TOLERANCE)


def test_the_oracle_passes_every_item_on_both_sides(scored_sets: dict[str, ScoredSet]):
    oracle = scored_sets[ORACLE]
    assert oracle.official.counts == {**{c: (155, 155) for c in MEMORY}, **{c: (100, 100) for c in WEB_SEARCH}}
    assert all(s.correct for s in oracle.ours.values())


def test_every_mutation_kind_is_used_and_every_error_type_occurs(scored_sets: dict[str, ScoredSet]):
    kinds = Counter(kind for name, scored in scored_sets.items() if name != ORACLE for kind in scored.kinds.values())
    assert set(MUTATIONS) <= set(kinds)
    errors = Counter(s.error_type for scored in scored_sets.values() for s in scored.ours.values() if not s.correct)
    assert {"agentic:inference_error", "agentic:no_last_message", "agentic:answer_not_found"} <= set(errors)
