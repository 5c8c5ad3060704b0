"""Our BFCL scoring against the official one, run for real: the pinned `bfcl-eval` wheel's evaluation runner in
a venv of its own (tests/bfcl_official_venv.py; built once, cached outside the project, skipped with the
reason when it cannot be built) scores the same prediction sets as `evaluators.benchmarks.bfcl.checker.score` and
`evaluators.benchmarks.bfcl.report.summarize`.

Prediction sets over all 3,641 items of the 13 categories of the real data: the exact oracle (the gold written
as model text; it must reach the official ceilings on both sides) and MUTATION_ROUNDS sets of seeded mutations
of it (tests/bfcl_mutations.py), each a complete run for the official runner. Compared per set: every item's
verdict (the runner's score files list the failed items), each category's correct count, and each category
accuracy and the five summaries against the runner's CSV tables (within their two-decimal percentages)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pytest

from evaluators.benchmarks.bfcl.categories import SINGLE_TURN as CATEGORIES
from evaluators.benchmarks.bfcl.checker import score
from evaluators.benchmarks.bfcl.data import load
from evaluators.benchmarks.bfcl.report import summarize
from evaluators.core.types import Prediction, Report, Sample, SampleScore
from tests.bfcl_mutations import (
    CALL_CHANGES,
    PYTHON_TEXT_CHANGES,
    SOURCE_TEXT_CHANGES,
    detection_candidates,
    mutated_answer,
    oracle_answer,
)
from tests.bfcl_official_venv import OfficialSetResult, read_official, run_official_on_sets
from tests.conftest import BfclOfficial

MUTATION_ROUNDS = 8
ITEMS = 3641
ORACLE = "oracle"
# The oracle's correct items per category where the official checker itself rejects gold answers (spec §7).
ORACLE_CEILINGS = {"simple_java": 93, "live_simple": 256, "live_multiple": 1051}
# Our summary key -> the official CSV table and column that print it.
SUMMARY_COLUMNS = {
    "non_live_simple_ast": ("overall", "Non-Live Simple AST"),
    "non_live_ast": ("overall", "Non-Live AST Acc"),
    "live_ast": ("overall", "Live Acc"),
    "irrelevance_detection": ("overall", "Irrelevance Detection"),
    "relevance_detection": ("overall", "Relevance Detection"),
}
CATEGORY_COLUMNS = {
    "simple_python": ("non_live", "Python Simple AST"), "simple_java": ("non_live", "Java Simple AST"),
    "simple_javascript": ("non_live", "JavaScript Simple AST"), "multiple": ("non_live", "Multiple AST"),
    "parallel": ("non_live", "Parallel AST"), "parallel_multiple": ("non_live", "Parallel Multiple AST"),
    "irrelevance": ("non_live", "Irrelevance Detection"), "live_simple": ("live", "Python Simple AST"),
    "live_multiple": ("live", "Python Multiple AST"), "live_parallel": ("live", "Python Parallel AST"),
    "live_parallel_multiple": ("live", "Python Parallel Multiple AST"),
    "live_irrelevance": ("live", "Irrelevance Detection"), "live_relevance": ("live", "Relevance Detection"),
}
# The tables print percentages with two decimals.
CSV_TOLERANCE = 0.0005


@dataclass
class ScoredSet:
    texts: dict[str, str]
    kinds: dict[str, str]
    ours: dict[str, SampleScore]
    report: Report
    official: OfficialSetResult


@pytest.fixture(scope="module")
def samples(bfcl_official: BfclOfficial) -> list[Sample]:
    return load(bfcl_official.data_dir)


def _prediction_sets(samples: list[Sample]) -> dict[str, tuple[dict[str, str], dict[str, str]]]:
    """Set name -> (id -> text, id -> what was changed)."""
    sets = {ORACLE: ({s.id: oracle_answer(s) for s in samples}, {s.id: "oracle" for s in samples})}
    for round_ in range(MUTATION_ROUNDS):
        answers = {s.id: mutated_answer(s, round_) for s in samples}
        sets[f"mutated_{round_}"] = ({i: text for i, (_, text) in answers.items()}, {i: kind for i, (kind, _) in answers.items()})
    return sets


@pytest.fixture(scope="module")
def scored_sets(samples: list[Sample], official_checker, tmp_path_factory: pytest.TempPathFactory) -> dict[str, ScoredSet]:
    work = tmp_path_factory.mktemp("bfcl_parity")
    sets = _prediction_sets(samples)
    run_official_on_sets(official_checker, work, samples, {name: texts for name, (texts, _) in sets.items()},
                         list(CATEGORIES))
    scored = {}
    for name, (texts, kinds) in sets.items():
        ours = {s.id: score(s, Prediction(sample_id=s.id, output=texts[s.id]), "official") for s in samples}
        report = summarize(samples, list(ours.values()), "official")
        scored[name] = ScoredSet(texts, kinds, ours, report, read_official(work / name))
    return scored


def _disagreements(scored: ScoredSet) -> list[str]:
    found = []
    for sample_id, ours in scored.ours.items():
        official_correct = sample_id not in scored.official.failed
        if ours.correct != official_correct:
            found.append(f"{sample_id} [{scored.kinds[sample_id]}] official={official_correct} "
                         f"({scored.official.failed.get(sample_id)}) ours={ours.correct} ({ours.rule}: {ours.detail}) "
                         f"text={scored.texts[sample_id][:200]!r}")
    return found


def test_the_oracle_reaches_the_official_ceilings_on_both_sides(scored_sets: dict[str, ScoredSet], samples: list[Sample]):
    totals = Counter(s.subset for s in samples)
    assert sum(totals.values()) == ITEMS
    expected = {category: (ORACLE_CEILINGS.get(category, totals[category]), totals[category]) for category in CATEGORIES}
    oracle = scored_sets[ORACLE]
    assert oracle.official.counts == expected
    ours = Counter(s.subset for s in oracle.ours.values() if s.correct)
    assert {category: (ours[category], totals[category]) for category in CATEGORIES} == expected


@pytest.mark.parametrize("name", [ORACLE, *(f"mutated_{r}" for r in range(MUTATION_ROUNDS))])
def test_every_item_gets_the_official_verdict(scored_sets: dict[str, ScoredSet], name: str):
    scored = scored_sets[name]
    assert sum(total for _, total in scored.official.counts.values()) == len(scored.ours)
    disagreements = _disagreements(scored)
    assert not disagreements, f"{len(disagreements)} of {len(scored.ours)} items differ:\n" + "\n".join(disagreements[:40])


@pytest.mark.parametrize("name", [ORACLE, *(f"mutated_{r}" for r in range(MUTATION_ROUNDS))])
def test_category_accuracies_and_summaries_match_the_official_tables(scored_sets: dict[str, ScoredSet], name: str):
    scored = scored_sets[name]
    ours_counts = {category: (sum(1 for s in scored.ours.values() if s.subset == category and s.correct),
                              sum(1 for s in scored.ours.values() if s.subset == category)) for category in CATEGORIES}
    assert ours_counts == scored.official.counts
    tables = {"overall": scored.official.overall, "non_live": scored.official.non_live, "live": scored.official.live}
    for category, (table, column) in CATEGORY_COLUMNS.items():
        ours = scored.report.subsets[category].metrics["accuracy"]
        assert ours == pytest.approx(tables[table][column], abs=CSV_TOLERANCE), (category, column)
    for key, (table, column) in SUMMARY_COLUMNS.items():
        assert scored.report.summary[key] == pytest.approx(tables[table][column], abs=CSV_TOLERANCE), (key, column)


def test_the_mutated_sets_hold_both_verdicts_in_every_category(scored_sets: dict[str, ScoredSet]):
    """The mutations are not all fatal: each category of each round has right and wrong answers officially."""
    for name, scored in scored_sets.items():
        if name == ORACLE:
            continue
        for category, (correct, total) in scored.official.counts.items():
            assert 0 < correct < total, (name, category, correct, total)


def test_the_mutated_sets_use_every_kind_of_change(scored_sets: dict[str, ScoredSet]):
    used = {part for name, scored in scored_sets.items() if name != ORACLE for kind in scored.kinds.values()
            for part in kind.split("+")}
    kinds = {*CALL_CHANGES, *PYTHON_TEXT_CHANGES, *SOURCE_TEXT_CHANGES, *detection_candidates([], "f")}
    assert kinds - used == set()
