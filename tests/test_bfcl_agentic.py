"""BFCL's agentic categories (memory kv / vector / rec_sum, web search base / no_snippet): the official agentic
checker's rules one by one (with the quirks of the notes' §6.1), the data as the official loader reads it, uploads
of official result files through the CLI's `score`, the summaries, and the refusal of a run that asks for them.
Small fixtures written here; the real data through the `bfcl_official` wheel."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from evaluators.benchmarks.bfcl.agentic.checker import (
    ANSWER_NOT_FOUND_MESSAGE,
    INFERENCE_ERROR_MESSAGE,
    NO_LAST_MESSAGE,
    official_agentic_answer_found,
    official_agentic_inference_error,
    official_agentic_last_non_call_step,
    official_agentic_message_text,
    official_agentic_no_last_message,
    official_agentic_standardize,
)
from evaluators.benchmarks.bfcl.agentic.data import official_agentic_id
from evaluators.benchmarks.bfcl.categories import AGENTIC, MEMORY, WEB_SEARCH, category_of_id
from evaluators.benchmarks.bfcl.checker import score
from evaluators.benchmarks.bfcl.data import load
from evaluators.benchmarks.bfcl.predictions import read_predictions
from evaluators.benchmarks.bfcl.report import OVERALL_LACKS, summaries, summarize
from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV
from evaluators.core.errors import DataError, PredictionsError, ToolboardError
from evaluators.core.registry import get_benchmark
from evaluators.core.selection import runnable_subsets
from evaluators.core.types import Prediction, Sample, SampleScore
from tests.conftest import BfclOfficial, run_cli


def _sample(sample_id: str = "memory_kv_0-customer-0", gold: list[str] | None = None) -> Sample:
    category = sample_id.rsplit("_", 1)[0]
    return Sample(sample_id, category, input={"question": [[{"role": "user", "content": "What is my first name?"}]]},
                  gold=gold or ["Michael"], meta={"category": category, "language": "python"})


def _score(result: Any, gold: list[str] | None = None, sample_id: str = "memory_kv_0-customer-0") -> SampleScore:
    return score(_sample(sample_id, gold), Prediction(sample_id, extra={"turns": result}))


# ---- categories ----------------------------------------------------------------------------------------------


def test_the_official_ids_map_to_the_agentic_categories():
    assert category_of_id("memory_kv_0-customer-0") == "memory_kv"
    assert category_of_id("memory_rec_sum_154-notetaker-24") == "memory_rec_sum"
    assert category_of_id("memory_vector_80-student-0") == "memory_vector"
    assert category_of_id("web_search_no_snippet_7") == "web_search_no_snippet"
    assert category_of_id("web_search_base_99") == "web_search_base"
    # prerequisite conversations, and the un-prefixed ids of the shared files, are no category
    assert category_of_id("memory_kv_prereq_3-customer-3") is None
    assert category_of_id("memory_0-customer-0") is None and category_of_id("web_search_0") is None
    # multi-turn and single-turn unchanged
    assert category_of_id("multi_turn_base_7") == "multi_turn_base" and category_of_id("live_simple_1-1-0") == "live_simple"


def test_official_agentic_id_replaces_the_shared_word():
    assert official_agentic_id("memory_0-customer-0", "memory", "memory_kv") == "memory_kv_0-customer-0"
    assert official_agentic_id("web_search_3", "web_search", "web_search_no_snippet") == "web_search_no_snippet_3"


# ---- the rules -----------------------------------------------------------------------------------------------


def test_official_agentic_inference_error():
    assert official_agentic_inference_error("Error during inference: timeout")
    assert official_agentic_inference_error([["a"], ["b"]]) and official_agentic_inference_error([])
    assert official_agentic_inference_error({"0": ["a"]})
    assert not official_agentic_inference_error([["Michael"]])
    for result in ("Error during inference: boom", [["Michael"], ["Michael"]], [], None):
        verdict = _score(result)
        assert not verdict.correct and verdict.error_type == "agentic:inference_error"
        assert verdict.detail == INFERENCE_ERROR_MESSAGE


def test_official_agentic_last_non_call_step():
    steps = ["Let me look.", "[core_memory_retrieve_all()]", "Your name is Michael."]
    assert official_agentic_last_non_call_step(steps)[0] == "Your name is Michael."
    # a call as the final step: the last text before it is the answer
    assert official_agentic_last_non_call_step(["It is Michael.", "[core_memory_retrieve_all()]"])[0] == "It is Michael."
    assert _score([["It is Michael.", "[core_memory_retrieve_all()]"]]).correct
    # an empty decode counts as a text ("[]"), a None step as an undecodable one
    assert official_agentic_last_non_call_step(["Michael", "[]"])[0] == "[]"
    assert official_agentic_last_non_call_step(["Michael", None])[0] is None


def test_official_agentic_no_last_message_empty_none_and_21_call_steps():
    assert official_agentic_no_last_message("") and official_agentic_no_last_message(None)
    assert not official_agentic_no_last_message("0")
    calls = ["[archival_memory_key_search(query='name', k=3)]"] * 21
    for result in ([calls], [["Michael", ""]], [["Michael", None]], [[""]], [[]]):
        verdict = _score(result)
        assert verdict.error_type == "agentic:no_last_message" and verdict.detail == NO_LAST_MESSAGE, result


def test_a_final_text_that_parses_as_a_call_is_no_answer():
    """`Michael(x=1)` decodes to a call: the official checker finds no last message."""
    verdict = _score([["Michael(x=1)"]])
    assert verdict.error_type == "agentic:no_last_message"
    # a bare word is wrapped into `[Michael]`, which is no call: it stays the answer
    assert _score([["Michael"]]).correct


def test_official_agentic_standardize_keeps_whitespace():
    assert official_agentic_standardize("It's 10 AM - 12 PM, (Mr. Smith)!") == 'it"s 10 am  12 pm mr smith!'
    assert official_agentic_standardize("a_b*c^d/e") == "abcde"


def test_official_agentic_answer_found_word_boundaries():
    assert official_agentic_answer_found("His name is **Michael**.", ["Michael"])
    assert not official_agentic_answer_found("Michaelson called", ["Michael"])
    # punctuation removal glues the words around it
    assert not official_agentic_answer_found("Mr.Michael.", ["Michael"])
    assert official_agentic_answer_found("Mr. Michael.", ["Michael"])
    # `\b` before `$` needs a word character before it
    assert not official_agentic_answer_found("It was $49.99", ["$49.99"])
    assert official_agentic_answer_found("It was $49.99", ["$49.99", "49.99"])
    assert official_agentic_answer_found("It was4$49.99", ["$49.99"])
    # two spaces around a removed dash: the answer must keep its spaces
    assert official_agentic_answer_found("Open 10 AM - 12 PM daily", ["10 AM - 12 PM"])
    assert not official_agentic_answer_found("Open 10 AM-12 PM daily", ["10 AM - 12 PM"])
    assert not official_agentic_answer_found("Open 10 AM - 12 PM daily", ["10 AM-12 PM"])
    # quotes: ' becomes ", and a quote at an answer's edge needs a word character beside it, as `$` does
    assert official_agentic_answer_found("The book is 'Dune'", ["Dune"])
    assert not official_agentic_answer_found('The book is "Dune"', ["'Dune'"])
    assert official_agentic_answer_found("It's Dune", ['it"s'])


def test_official_agentic_message_text():
    assert official_agentic_message_text(["first", "second"]) == "first"
    assert official_agentic_message_text(42) == "42" and official_agentic_message_text("x") == "x"


def test_answer_not_found_keeps_the_official_message_and_the_evidence():
    verdict = _score([["[core_memory_retrieve_all()]", "I do not know, Mr.Michael."]])
    assert not verdict.correct and verdict.error_type == "agentic:answer_not_found"
    assert verdict.detail == ANSWER_NOT_FOUND_MESSAGE and verdict.rule == "official_agentic_answer_not_found"
    assert verdict.metadata == {"last_message": "I do not know, Mr.Michael.",
                                "standardized_message": "i do not know mrmichael",
                                "standardized_answers": ["michael"]}
    assert verdict.decoded == [["core_memory_retrieve_all()"]]


def test_the_answer_inside_a_sentence_and_a_fence_passes():
    assert _score([["```\n{'answer': 'Zhang Yiming', 'context': 'per Forbes'}\n```"]], ["Zhang Yiming"],
                  "web_search_base_0").correct


def test_missing_and_failed_predictions():
    sample = _sample()
    assert score(sample, None).error_type == "missing"
    assert score(sample, Prediction(sample.id, error="timeout")).error_type == "request_error"


def test_strict_mode_applies_the_official_rules():
    sample = _sample()
    for result in ([["Mr.Michael."]], [["Michael"]], [[""]]):
        official, strict = (score(sample, Prediction(sample.id, extra={"turns": result}), mode) for mode in
                            ("official", "strict"))
        assert (official.correct, official.error_type) == (strict.correct, strict.error_type)


# ---- report --------------------------------------------------------------------------------------------------


def _counts(**accuracy: float) -> dict[str, tuple[int, int]]:
    sizes = {**dict.fromkeys(MEMORY, 155), **dict.fromkeys(WEB_SEARCH, 100)}
    return {name: (round(value * sizes[name]), sizes[name]) for name, value in accuracy.items()}


def test_web_search_memory_and_agentic_are_unweighted_means():
    figures = summaries(_counts(web_search_base=0.5, web_search_no_snippet=0.3, memory_kv=0.2, memory_vector=0.4,
                                memory_rec_sum=0.6))
    assert figures["web_search"] == pytest.approx(0.4)
    assert figures["memory"] == pytest.approx((31 + 62 + 93) / 3 / 155)
    assert figures["agentic"] == pytest.approx((0.4 + figures["memory"]) / 2)
    assert figures["overall"] is None  # no single-turn or multi-turn parts


def test_a_partial_agentic_upload_names_what_it_lacks():
    figures = summaries(_counts(web_search_base=0.5, web_search_no_snippet=0.3, memory_kv=0.2))
    assert figures["web_search"] == pytest.approx(0.4) and figures["memory"] is None and figures["agentic"] is None
    samples = [_sample("web_search_base_0", ["x"]), _sample("memory_kv_0-customer-0", ["x"])]
    scores = [SampleScore(s.id, s.subset, True) for s in samples]
    report = summarize(samples, scores, subsets=["web_search_base", "memory_kv"])
    assert report.summary["web_search"] is None and report.summary["agentic"] is None
    assert report.summary[OVERALL_LACKS] == "non-live AST, live AST, irrelevance, multi-turn, web search, memory"
    assert report.subsets["memory_kv"].metrics == {"accuracy": 1.0}


def test_overall_when_every_part_is_present():
    from evaluators.benchmarks.bfcl.categories import MULTI_TURN, SINGLE_TURN

    counts = {name: (1, 2) for name in SINGLE_TURN + MULTI_TURN} | {name: (1, 2) for name in AGENTIC}
    figures = summaries(counts)
    assert figures["agentic"] == 0.5 and figures["overall"] == pytest.approx(0.5)


def test_the_board_declares_the_agentic_columns():
    benchmark = get_benchmark("bfcl")
    layout = benchmark.board_layout()
    assert {"agentic", "web_search", "memory"} <= set(layout.columns)
    assert set(AGENTIC) <= set(layout.detail_columns)
    assert benchmark.metric("agentic").made_of == (("web_search", 0.5), ("memory", 0.5))
    assert benchmark.metric("web_search").share_of_items and benchmark.metric("memory").share_of_items


# ---- runs are refused ----------------------------------------------------------------------------------------


def _without_vector_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from evaluators.benchmarks.bfcl.agentic import vector_extra

    monkeypatch.setattr(vector_extra, "MODULES", (("toolboard_no_such_module_for_tests", "torch"),
                                                  *vector_extra.MODULES[1:]))


def _config(*subsets: str, request_mode: str = "prompt") -> Any:
    class _Model:
        prompt_style = None

    _Model.request_mode = request_mode  # type: ignore[attr-defined]

    class _Config:
        model = _Model()
        data_dir = None
        options: dict[str, str] = {}

    _Config.subsets = subsets  # type: ignore[attr-defined]
    return _Config()


def test_every_agentic_category_is_runnable_and_memory_vector_leaves_a_full_run_without_its_extra(
        monkeypatch: pytest.MonkeyPatch):
    benchmark = get_benchmark("bfcl")
    assert benchmark.upload_only == ()
    assert runnable_subsets(benchmark, ["memory"]) == list(MEMORY)
    assert runnable_subsets(benchmark, ["web_search"]) == list(WEB_SEARCH)
    assert runnable_subsets(benchmark, ["agentic"]) == list(AGENTIC)
    _without_vector_extra(monkeypatch)
    assert "memory_vector" in benchmark.unavailable_now()  # type: ignore[misc]
    every = runnable_subsets(benchmark, None)
    assert set(MEMORY) & set(every) == {"memory_kv", "memory_rec_sum"}
    assert runnable_subsets(benchmark, ["all"]) == every


def test_the_evaluate_form_offers_the_agentic_categories():
    from ui.run_form import subset_choices

    offered = {key for _, key in subset_choices("bfcl")}
    assert {"multi_turn", "simple_python", "multi_turn_base", *WEB_SEARCH, "web_search", *MEMORY, "memory"} <= offered
    assert {key for _, key in subset_choices("acebench")} >= {"normal_atom_bool"}


def test_a_memory_vector_run_without_its_extra_is_refused_before_it_starts_with_the_pip_command(
        monkeypatch: pytest.MonkeyPatch):
    from evaluators.benchmarks.bfcl.solve import request_profile, run_problem

    _without_vector_extra(monkeypatch)
    for subsets in (("memory_vector",), ("memory",), ("simple_python", "agentic")):
        problem = run_problem(_config(*subsets))
        assert problem is not None and problem.startswith("bfcl: memory_vector needs the optional extra"), subsets
        # torch among the packages named missing (all four are, in an installation without the extra)
        assert re.search(r"\([^)]*\btorch\b[^)]* missing\)", problem), problem
        assert "pip install -r requirements-memory-vector.txt" in problem
        with pytest.raises(ToolboardError, match="requirements-memory-vector.txt"):
            request_profile(_config(*subsets))  # type: ignore[arg-type]
    assert run_problem(_config("memory_kv", "memory_rec_sum")) is None
    assert run_problem(_config()) is None  # every category: memory_vector is left out
    assert run_problem(_config("memory_kv", request_mode="tools")) is not None  # prompt mode only


@pytest.mark.slow
def test_list_shows_the_agentic_categories_and_how_they_are_used():
    done = run_cli("list")
    assert done.returncode == 0
    assert "memory_vector" in done.stdout and "scored from uploads only" not in done.stdout.split("bfcl", 1)[1]
    assert "option web_search_backend: serpapi | recorded (default serpapi)" in done.stdout


# ---- data folder and uploads -----------------------------------------------------------------------------------


MEMORY_ITEMS = [("memory_0-customer-0", "customer", "What is my first name?", ["Michael"]),
                ("memory_1-customer-1", "customer", "How old am I?", ["35", "thirty five"]),
                ("memory_2-student-0", "student", "What is my major?", ["Physics"])]
WEB_ITEMS = [("web_search_0", "Who founded ByteDance?", ["Zhang Yiming"]),
             ("web_search_1", "What did the jacket cost?", ["$49.99", "49.99"])]


def _lines(rows: list[Any]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def write_agentic_folder(folder: Path) -> Path:
    (folder / "possible_answer").mkdir(parents=True)
    (folder / "BFCL_v4_memory.json").write_text(_lines([
        {"id": i, "question": [[{"role": "user", "content": q}]], "involved_classes": ["MemoryAPI"], "scenario": s}
        for i, s, q, _ in MEMORY_ITEMS]), encoding="utf-8")
    (folder / "possible_answer" / "BFCL_v4_memory.json").write_text(_lines([
        {"id": i, "ground_truth": g, "source": "..."} for i, _, _, g in MEMORY_ITEMS]), encoding="utf-8")
    (folder / "BFCL_v4_web_search.json").write_text(_lines([
        {"id": i, "question": [[{"role": "user", "content": q}]], "involved_classes": ["WebSearchAPI"]}
        for i, q, _ in WEB_ITEMS]), encoding="utf-8")
    (folder / "possible_answer" / "BFCL_v4_web_search.json").write_text(_lines([
        {"id": i, "ground_truth": g, "source": [], "num_hops": 2} for i, _, g in WEB_ITEMS]), encoding="utf-8")
    return folder


def test_the_folder_is_read_as_the_official_loader_reads_it(tmp_path: Path):
    samples = load(write_agentic_folder(tmp_path / "data"), subsets=list(AGENTIC))
    assert [s.id for s in samples if s.subset == "memory_rec_sum"] == [
        "memory_rec_sum_0-customer-0", "memory_rec_sum_1-customer-1", "memory_rec_sum_2-student-0"]
    assert [s.id for s in samples if s.subset == "web_search_no_snippet"] == ["web_search_no_snippet_0",
                                                                                 "web_search_no_snippet_1"]
    first = samples[0]
    assert first.gold == ["Michael"] and first.meta["answer_id"] == "memory_0-customer-0"
    assert first.input == {"question": [[{"role": "user", "content": "What is my first name?"}]], "scenario": "customer"}


def test_answers_out_of_order_are_refused(tmp_path: Path):
    folder = write_agentic_folder(tmp_path / "data")
    answers = folder / "possible_answer" / "BFCL_v4_web_search.json"
    answers.write_text("".join(reversed(answers.read_text(encoding="utf-8").splitlines(keepends=True))), encoding="utf-8")
    with pytest.raises(DataError, match="pairs them by position"):
        load(folder, subsets=["web_search_base"])


def _official_result_file(folder: Path, category: str, rows: list[Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"BFCL_v4_{category}_result.json"
    path.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.mark.slow  # over half a second in the fast loop
def test_an_official_result_folder_is_scored_through_the_cli(tmp_path: Path):
    data = write_agentic_folder(tmp_path / "data")
    results = tmp_path / "result" / "my-model"
    for category in MEMORY:
        _official_result_file(results, category, [
            {"id": f"{category}_0-customer-0", "result": [["[core_memory_retrieve_all()]", "Your name is Michael."]],
             "input_token_count": [[10, 20]], "output_token_count": [[3, 4]], "latency": [[0.5, 0.5]]},
            {"id": f"{category}_1-customer-1", "result": [["You are thirty-five."]]},  # glued: "thirtyfive"
            {"id": f"{category}_2-student-0", "result": "Error during inference: rate limited"},
        ])
    _official_result_file(results, "memory_kv_prereq", [{"id": "memory_kv_prereq_0-customer-0", "result": [["ok"]]}])
    for category in WEB_SEARCH:
        _official_result_file(results, category, [
            {"id": f"{category}_0", "result": [["[search_engine_query(keywords='ByteDance founder')]",
                                                 "The founder is Zhang Yiming."]]},
            {"id": f"{category}_1", "result": [["It cost $49.99."]]},
        ])
    scored = run_cli("score", "bfcl", str(results), "--data-dir", str(data), "--subset", "agentic", "--json")
    assert scored.returncode == 0, scored.stderr
    report = json.loads(scored.stdout)
    accuracy = {name: subset["metrics"]["accuracy"] for name, subset in report["subsets"].items()}
    assert accuracy == {**dict.fromkeys(MEMORY, 0.3333), **dict.fromkeys(WEB_SEARCH, 1.0)}
    assert report["summary"]["web_search"] == 1.0 and report["summary"]["memory"] == 0.3333
    assert report["summary"]["agentic"] == round((1 + 1 / 3) / 2, 4) and report["summary"]["overall"] is None
    assert report["summary"][OVERALL_LACKS] == "non-live AST, live AST, irrelevance, multi-turn"
    assert report["errors"] == {"agentic:answer_not_found": 3, "agentic:inference_error": 3}


def _read(tmp_path: Path, rows: list[Any]) -> dict[str, Prediction]:
    path = _official_result_file(tmp_path, "memory_kv", rows)
    samples = load(write_agentic_folder(tmp_path / "data"), subsets=["memory_kv"])
    return read_predictions(path, samples)


def test_bad_lines_are_refused_with_their_line_and_field(tmp_path: Path):
    with pytest.raises(PredictionsError) as refused:
        _read(tmp_path, [
            {"id": "memory_kv_0-customer-0", "result": [["Michael"]]},
            "{not json",
            {"id": "memory_kv_1-customer-1", "result": 5},
            {"id": "memory_kv_2-student-0", "result": [[{"core_memory_retrieve_all": {}}]]},
            {"id": "memory_kv_9-nobody-0", "result": [["x"]]},
        ])
    message = str(refused.value)
    assert "line 2" in message
    assert "line 3" in message and "field 'result' must be a list of turns" in message
    assert "line 4" in message and "result[0][0] (turn 0, step 0)" in message
    assert "line 5: unknown id 'memory_kv_9-nobody-0'" in message


def test_odd_but_official_shapes_fail_only_their_own_item(tmp_path: Path):
    predictions = _read(tmp_path, [
        {"id": "memory_kv_0-customer-0", "result": [["Michael"]]},
        {"id": "memory_kv_1-customer-1", "result": [["35"], ["35"]]},  # extra turn
        {"id": "memory_kv_2-student-0", "result": [["Physics", None]]},  # a reply without content last
    ])
    samples = {s.id: s for s in load(tmp_path / "data", subsets=["memory_kv"])}
    verdicts = {i: score(samples[i], p) for i, p in predictions.items()}
    assert verdicts["memory_kv_0-customer-0"].correct
    assert verdicts["memory_kv_1-customer-1"].error_type == "agentic:inference_error"
    assert verdicts["memory_kv_2-student-0"].error_type == "agentic:no_last_message"


# ---- the real data -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_samples(bfcl_official: BfclOfficial) -> list[Sample]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
        patch.delenv("TOOLBOARD_DATA_DIR", raising=False)
        return load(subsets=list(AGENTIC))


def test_the_wheel_holds_every_agentic_category_at_its_size(real_samples: list[Sample]):
    sizes = {category: sum(1 for s in real_samples if s.subset == category) for category in AGENTIC}
    assert sizes == {**dict.fromkeys(MEMORY, 155), **dict.fromkeys(WEB_SEARCH, 100)}
    # the official runner pairs results sorted by id with the data by position: the data is in id order
    for category in AGENTIC:
        numbers = [int(s.id[len(category) + 1:].split("-")[0]) for s in real_samples if s.subset == category]
        assert numbers == list(range(len(numbers)))
    assert real_samples[0].id == "memory_kv_0-customer-0" and real_samples[0].gold == ["Michael"]
    assert all(category_of_id(s.id) == s.subset for s in real_samples)


def test_every_ground_truth_inside_a_sentence_passes(real_samples: list[Sample]):
    for sample in real_samples:
        verdict = score(sample, Prediction(sample.id, extra={"turns": [[f"The answer is {sample.gold[0]} indeed."]]}))
        assert verdict.correct, (sample.id, sample.gold)
