"""BFCL format sensitivity against the official code, run for real in its venv (tests/bfcl_official_venv.py; skipped
with the reason when it cannot be built):

(a) the items and the requests: the official `load_dataset_entry("format_sensitivity")` gives our 5,200 ids in our
    order and `load_ground_truth_entry` our answers, and for every item the official prompting handler's messages
    (`system_prompt_pre_processing_chat_model` -> `formulate_system_prompt`, all 26 configurations over all 200
    items) equal ours byte for byte; and the official handler's `inference_single_turn_prompting` against the
    scripted server sends the same request bodies as our `solve` (messages, temperature, store) over items of every
    category under every configuration, and gets the same texts back;
(b) the verdicts: the official `format_sensitivity_runner` and `evaluators.benchmarks.bfcl.checker.score` on the
    same result files, an oracle set (the gold written in each configuration's return format and tag) and
    MUTATION_ROUNDS seeded mutation sets (tests/bfcl_format_sensitivity_answers.py: wrong values and names, answers
    in another return format, missing or open tags, prose and fences, invalid JSON, malformed XML, values their
    type cannot read, empty answers): every item's verdict and error type, each configuration's counts and the
    header's statistics (max delta, standard deviation, variance) equal.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evaluators.benchmarks.bfcl.categories import FORMAT_SENSITIVITY
from evaluators.benchmarks.bfcl.checker import score
from evaluators.benchmarks.bfcl.data import load
from evaluators.benchmarks.bfcl.format_sensitivity.data import CONFIGURATIONS
from evaluators.benchmarks.bfcl.format_sensitivity.report import (
    configuration_counts,
    official_format_sensitivity_statistics,
)
from evaluators.benchmarks.bfcl.item_requests import build_request
from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV
from evaluators.core.types import Prediction, Sample, SampleScore
from tests.bfcl_format_sensitivity_answers import TEXT_CHANGES, mutated_answer, oracle_answer
from tests.bfcl_official_venv import (
    OfficialSetResult,
    read_official,
    run_official_format_sensitivity,
    run_official_format_sensitivity_prompts,
    run_official_on_sets,
)
from tests.conftest import BfclOfficial
from tests.scripted_server import ScriptedServer

pytestmark = pytest.mark.slow

MUTATION_ROUNDS = 3
ORACLE = "oracle"
SETS = [ORACLE, *(f"mutated_{r}" for r in range(MUTATION_ROUNDS))]
ITEMS = 200 * 26
# The oracle's failures the official checker itself makes (the same on both sides): the JSON parser's pattern stops
# at the first `}]` of a nested list of objects (simple_python_96's `conditions`), so its JSON answers decode to no
# call; and the single-turn ceilings of live_simple / live_multiple that are among the 200 items, if any.
HEADER_STATISTICS = ("accuracy_max_delta", "accuracy_std", "accuracy_variance")


@pytest.fixture(scope="module")
def samples(bfcl_official: BfclOfficial) -> list[Sample]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
        patch.delenv("TOOLBOARD_DATA_DIR", raising=False)
        return load(subsets=[FORMAT_SENSITIVITY])


@pytest.fixture(scope="module")
def official_prompts(official_checker, tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_official_format_sensitivity_prompts(official_checker, tmp_path_factory.mktemp("bfcl_format_prompts"))


def test_the_official_loader_gives_our_items_in_our_order_with_our_answers(samples: list[Sample], official_prompts: dict):
    assert len(samples) == ITEMS
    assert [sample.id for sample in samples] == official_prompts["ids"]
    assert [sample.gold for sample in samples] == official_prompts["answers"]
    assert Counter(sample.id.split(":")[1] for sample in samples) == dict.fromkeys(CONFIGURATIONS, 200)


def test_every_request_equals_the_official_handlers_for_all_26_configurations(samples: list[Sample],
                                                                             official_prompts: dict,
                                                                             bfcl_official: BfclOfficial):
    differ = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
        for sample in samples:
            if build_request(sample).messages != official_prompts["messages"][sample.id]:
                differ.append(sample.id)
    assert not differ, f"{len(differ)} of {ITEMS} requests differ, e.g. {differ[:5]}"


MODEL = "org/scripted-model"


def _canonical(raw: bytes) -> tuple[bytes, dict[str, Any]]:
    """A body as compared: its messages in the SDK's encoding (compact, non-ASCII as is, key order kept), its other
    fields as values."""
    body = json.loads(raw)
    messages = body.pop("messages")
    return json.dumps(messages, ensure_ascii=False, separators=(",", ":")).encode(), body


def test_the_official_handler_sends_our_request_bodies_and_reads_our_texts(samples: list[Sample], official_checker,
                                                                         bfcl_official: BfclOfficial, tmp_path: Path):
    """The first item of each original category under all 26 configurations (208 requests), answered with the gold
    in the configuration's format (a wrong answer for every fifth item)."""
    from evaluators.benchmarks.bfcl.solve import solve
    from evaluators.engine.client import ChatClient
    from evaluators.engine.settings import ModelSettings

    firsts: dict[str, str] = {}
    for sample in samples:
        firsts.setdefault(sample.meta["original_category"], sample.meta["original_id"])
    chosen = [s for s in samples if s.meta["original_id"] in firsts.values()]
    assert len(chosen) == 8 * 26
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
        # an answer per (system prompt, last message): unique among the chosen items
        answers = {(build_request(s).messages[0]["content"], s.input["question"][0][-1]["content"]):
                   oracle_answer(s) if index % 5 else "I would rather not." for index, s in enumerate(chosen)}
        assert len(answers) == len(chosen)

        def reply(body: dict[str, Any]) -> dict[str, Any]:
            messages = body["messages"]
            return {"content": answers[(messages[0]["content"], messages[-1]["content"])]}

        with ScriptedServer(reply=reply) as server:
            official = run_official_format_sensitivity(official_checker, tmp_path / "official", server.base_url,
                                                       MODEL, [s.id for s in chosen])
            official_bodies, server.raw_bodies = server.raw_bodies, []

            async def ours() -> dict[str, Any]:
                client = ChatClient(ModelSettings(base_url=server.base_url, model=MODEL), use_cache=False)
                try:
                    return {s.id: await solve(s, {"model": client}, {"request_mode": "prompt"}) for s in chosen}
                finally:
                    await client.close()

            predictions = asyncio.run(ours())
            our_bodies = server.raw_bodies
    assert len(our_bodies) == len(official_bodies) == len(chosen)
    for sample, mine, theirs in zip(chosen, our_bodies, official_bodies):
        assert _canonical(mine) == _canonical(theirs), sample.id
    assert {s.id: predictions[s.id].output for s in chosen} == official


@dataclass
class ScoredSet:
    texts: dict[str, str]
    kinds: dict[str, str]
    ours: dict[str, SampleScore]
    official: OfficialSetResult


@pytest.fixture(scope="module")
def scored_sets(samples: list[Sample], official_checker, tmp_path_factory: pytest.TempPathFactory) -> dict[str, ScoredSet]:
    work = tmp_path_factory.mktemp("bfcl_format_parity")
    sets = {ORACLE: ({s.id: oracle_answer(s) for s in samples}, dict.fromkeys((s.id for s in samples), ORACLE))}
    for round_ in range(MUTATION_ROUNDS):
        answers = {s.id: mutated_answer(s, round_) for s in samples}
        sets[f"mutated_{round_}"] = ({i: text for i, (_, text) in answers.items()},
                                     {i: kind for i, (kind, _) in answers.items()})
    run_official_on_sets(official_checker, work, samples, {name: texts for name, (texts, _) in sets.items()},
                         [FORMAT_SENSITIVITY])
    scored = {}
    for name, (texts, kinds) in sets.items():
        ours = {s.id: score(s, Prediction(sample_id=s.id, output=texts[s.id]), "official") for s in samples}
        scored[name] = ScoredSet(texts, kinds, ours, read_official(work / name))
    return scored


@pytest.mark.parametrize("name", SETS)
def test_every_item_gets_the_official_verdict_and_error_type(scored_sets: dict[str, ScoredSet], name: str):
    scored = scored_sets[name]
    assert scored.official.counts[FORMAT_SENSITIVITY][1] == ITEMS == len(scored.ours)
    found = []
    for sample_id, ours in scored.ours.items():
        official_error = scored.official.failed.get(sample_id)
        official_correct = official_error is None
        if ours.correct != official_correct or (not ours.correct and ours.error_type != official_error):
            found.append(f"{sample_id} [{scored.kinds[sample_id]}] official={official_correct} ({official_error}) "
                         f"ours={ours.correct} ({ours.error_type}, {ours.rule}: {ours.detail[:200]}) "
                         f"text={scored.texts[sample_id][:300]!r}")
    assert not found, f"{len(found)} of {ITEMS} items differ:\n" + "\n".join(found[:30])


@pytest.mark.parametrize("name", SETS)
def test_each_configuration_and_the_header_statistics_match(scored_sets: dict[str, ScoredSet], name: str):
    scored = scored_sets[name]
    header = scored.official.headers[FORMAT_SENSITIVITY]
    counts = configuration_counts(list(scored.ours.values()))
    assert {config: (header[config]["correct_count"], header[config]["total_count"]) for config in CONFIGURATIONS} \
        == counts
    assert list(counts) == list(CONFIGURATIONS)
    ours = official_format_sensitivity_statistics(counts)
    assert {key: header[key] for key in HEADER_STATISTICS} == {key: ours[key] for key in HEADER_STATISTICS}
    assert scored.official.counts[FORMAT_SENSITIVITY][0] == sum(correct for correct, _ in counts.values())


def test_the_oracle_fails_only_where_the_official_checker_does(scored_sets: dict[str, ScoredSet]):
    oracle = scored_sets[ORACLE]
    failed = Counter((s.sample_id.split(":")[-1], s.error_type) for s in oracle.ours.values() if not s.correct)
    assert failed == {("simple_python_96", "simple_function_checker:wrong_count"): 6}, failed


def test_the_mutated_sets_use_every_change_and_meet_every_decoder_outcome(scored_sets: dict[str, ScoredSet]):
    kinds = {part for name, scored in scored_sets.items() if name != ORACLE for kind in scored.kinds.values()
             for part in kind.split("+")}
    assert set(TEXT_CHANGES) <= kinds
    assert {f"written_as_{fmt}" for fmt in ("python", "json", "verbose_xml", "concise_xml")} <= kinds
    errors = Counter(s.error_type for name, scored in scored_sets.items() if name != ORACLE
                     for s in scored.ours.values() if not s.correct)
    assert {"ast_decoder:decoder_failed", "ast_decoder:decoder_wrong_output_format",
            "simple_function_checker:wrong_count", "parallel_function_checker_no_order:cannot_find_match",
            "value_error:string"} <= set(errors), errors
    for name, scored in scored_sets.items():
        if name != ORACLE:
            correct, total = scored.official.counts[FORMAT_SENSITIVITY]
            assert 0 < correct < total
