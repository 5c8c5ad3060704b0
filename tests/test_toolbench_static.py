"""ToolBench-Static: parsing, per-step metrics, skip rules, aggregation, data sources, requests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evaluators.benchmarks.toolbench_static import data as tb_data
from evaluators.benchmarks.toolbench_static.checker import score
from evaluators.benchmarks.toolbench_static.metrics import official_argument_f1, official_skip_reason, rouge_l_f, step_metrics
from evaluators.benchmarks.toolbench_static.parse import (
    official_finish_is_answer_or_give_up,
    official_last_action,
    parse_step,
    strict_strips_think_blocks,
)
from evaluators.benchmarks.toolbench_static.prompts import build_request, reference_messages
from evaluators.core.errors import DataError
from evaluators.core.registry import get_benchmark, score_all
from evaluators.core.types import Prediction, Sample, ToolCall
from evaluators.engine.settings import RunRequest
from tests.conftest import real_data
from tests.toolbench_fixtures import CALL, FINISH, GIVE_UP, TOOLS, write_toolbench

PROJECT = Path(__file__).resolve().parents[1]

NAMES = {"get_weather_for_weatherapi", "list_cities_for_weatherapi", "Finish"}


def test_official_last_action():
    assert official_last_action(CALL) == ("get_weather_for_weatherapi", '{"city": "Oslo", "days": 3}')
    assert official_last_action("Action: a\nAction Input: {}\nAction: b\nAction Input: {\"x\": 1}") == ("b", '{"x": 1}')
    assert official_last_action("no action here") == ("none", "{}")
    assert official_last_action("Action Input: {\"x\": 1}") == ("none", '{"x": 1}')
    # the action is cut at the first Action Input after it, the input taken after the last one
    assert official_last_action("Action: f Action Input: 1 Action Input: 2") == ("f", "2")


def test_official_finish_is_answer_or_give_up():
    assert official_finish_is_answer_or_give_up('{"return_type": "give_answer", "final_answer": "yes"}').answer == "yes"
    assert official_finish_is_answer_or_give_up('{"return_type": "give_answer", "final_answer": " . "}').answer == "None"
    assert official_finish_is_answer_or_give_up('{"return_type": "give_answer"}').answer == "None"
    assert official_finish_is_answer_or_give_up('{"return_type": "give_answer", "final_answer": 42}').answer == "42"
    for give_up in ('{"return_type": "give_up_and_restart"}', "{not json", "[1, 2]", '{"final_answer": "x"}'):
        assert official_finish_is_answer_or_give_up(give_up).plan == "give up"


def test_strict_strips_think_blocks():
    text = "<think>Action: wrong\nAction Input: {}</think>" + CALL
    assert parse_step(text).action == "get_weather_for_weatherapi"
    assert strict_strips_think_blocks("<think>a</think>b") == "b"
    assert parse_step("<think>Action: x</think>", strict=True).action == "none"
    assert parse_step("<think>Action: x</think>").action == "x</think>"


def test_official_argument_f1():
    assert official_argument_f1('{"a": 1, "c": 3, "d": 4}', '{"a": 1, "c": 2}') == pytest.approx((0.6, "hard"))
    assert official_argument_f1('{"a": "1"}', '{"a": 1}')[0] == pytest.approx(1.0 * 0.5)
    assert official_argument_f1('{"z": 1}', '{"a": 1}') == (0.0, "hard")  # no shared key: 0/0 -> 0
    assert official_argument_f1("{oops", '{"a": 1}') == (0.0, "hard")
    assert official_argument_f1("[1]", '{"a": 1}') == (0.0, "hard")
    assert official_argument_f1("{}", "{}") == (1.0, "easy")
    assert official_argument_f1('{"a": 1}', "{}") == (0.0, "easy")
    assert official_argument_f1("{}", "not json") == (None, None)


def test_rouge_l_is_over_whitespace_tokens_case_sensitive():
    assert rouge_l_f("The cat sat", "the cat sat") == pytest.approx(2 / 3)
    assert rouge_l_f("It will be sunny in Oslo", "It will be sunny in Oslo") == 1.0
    assert rouge_l_f("", "x") == 0.0


def _step(sample_text: str, prediction: str, strict: bool = False) -> dict:
    reference, predicted = parse_step(sample_text), parse_step(prediction, strict=strict)
    skip = official_skip_reason(reference, predicted, NAMES, strict)
    return {} if skip else step_metrics(reference, predicted, NAMES)


def test_call_step_metrics():
    assert _step(CALL, CALL) == {"plan_em": 1.0, "hallu_rate": 0.0, "act_em": 1.0, "f1": 1.0, "hard_f1": 1.0}
    wrong = _step(CALL, "Action: list_cities_for_weatherapi\nAction Input: {}")
    assert wrong == {"plan_em": 1.0, "hallu_rate": 0.0, "act_em": 0.0, "f1": 0.0, "easy_f1": 0.0, "hard_f1": 0.0}
    hallucinated = _step(CALL, "Action: get_forecast\nAction Input: {}")
    assert hallucinated["hallu_rate"] == 1.0 and hallucinated["act_em"] == 0.0
    empty = _step(CALL, "")
    assert empty["act_em"] == 0.0 and empty["hallu_rate"] == 0.0 and empty["plan_em"] == 1.0


def test_finish_and_give_up_steps():
    finish = _step(FINISH, "Action: Finish\nAction Input: {\"return_type\": \"give_answer\", \"final_answer\": \"it will be sunny\"}")
    assert set(finish) == {"plan_em", "hallu_rate", "rouge_l"} and 0 < finish["rouge_l"] < 1
    assert _step(FINISH, CALL)["plan_em"] == 0.0 and _step(FINISH, CALL)["rouge_l"] == 0.0
    assert _step(GIVE_UP, GIVE_UP) == {"plan_em": 1.0, "hallu_rate": 0.0}


def test_official_give_up_steps_dropped_when_prediction_parses():
    # a give-up reference has no action, so any prediction with an action drops the step ...
    assert _step(GIVE_UP, CALL) == {}
    # ... unless in strict mode, where it counts as a wrong plan
    assert _step(GIVE_UP, CALL, strict=True) == {"plan_em": 0.0, "hallu_rate": 0.0}


def test_reference_action_not_a_tool_is_skipped():
    assert _step("Action: spott\nAction Input: {}", CALL) == {}
    assert _step("Action: invalid_hallucination_function_name\nAction Input: {}", "") == {}


def _sample(target: str) -> Sample:
    from evaluators.benchmarks.toolbench_static.data import parse_tools

    return Sample("out_of_domain_0", "out_of_domain", {"messages": [], "tools": parse_tools(TOOLS, Path("x"), 1)}, target)


def test_official_native_tool_calls_ignored_and_strict_reads_them():
    prediction = Prediction("out_of_domain_0", output="", tool_calls=[ToolCall("get_weather_for_weatherapi", {"city": "Oslo", "days": 3})])
    assert score(_sample(CALL), prediction).metrics["act_em"] == 0.0
    assert score(_sample(CALL), prediction, "strict").metrics["act_em"] == 1.0
    assert score(_sample(CALL), prediction, "strict").metrics["f1"] == 1.0


def test_sample_evidence_and_error_types():
    result = score(_sample(CALL), Prediction("out_of_domain_0", output="Action: get_weather_for_weatherapi\nAction Input: {\"city\": \"Rome\"}"))
    assert result.error_type == "wrong_arguments" and not result.correct
    assert result.decoded["prediction"]["action"] == "get_weather_for_weatherapi"
    assert result.decoded["reference"]["action_input"] == '{"city": "Oslo", "days": 3}'
    assert score(_sample(CALL), None).error_type == "missing_prediction"
    skipped = score(_sample("Action: spott\nAction Input: {}"), Prediction("out_of_domain_0", output=CALL))
    assert skipped.error_type == "skipped" and skipped.detail == "reference action is not a tool" and skipped.metrics == {}


def _write_predictions(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_report_means_over_carriers_and_pooled_overall(tmp_path: Path):
    root = write_toolbench(tmp_path / "tb", ("in_domain", "out_of_domain"))
    benchmark = get_benchmark("toolbench_static")
    samples = benchmark.load(root)
    rows = [{"id": s.id, "output": s.gold} for s in samples if s.subset == "in_domain"]
    rows += [{"id": s.id, "output": ""} for s in samples if s.subset == "out_of_domain"]
    predictions = benchmark.read_predictions(_write_predictions(tmp_path / "p.jsonl", rows), samples)
    report = benchmark.report(samples, score_all(benchmark, samples, predictions)).to_json()
    # in_domain: gold everywhere; the `spott` step is skipped
    assert report["subsets"]["in_domain"]["metrics"] == {
        "act_em": 1.0, "plan_em": 1.0, "f1": 1.0, "easy_f1": 1.0, "hard_f1": 1.0, "hallu_rate": 0.0, "rouge_l": 1.0,
    }
    out = report["subsets"]["out_of_domain"]["metrics"]
    # empty output reads as action "none" (plan `call`): right plan on the 2 call steps, wrong on the
    # finish step; the give-up and `spott` steps are dropped because the prediction has an action
    assert out["act_em"] == 0.0 and out["rouge_l"] == 0.0 and out["plan_em"] == pytest.approx(2 / 3)
    assert report["summary"]["plan_em"] == pytest.approx((4 + 2) / (4 + 3))
    assert report["subsets"]["in_domain"]["n"] == 5


def test_missing_subset_is_unavailable_not_zero(tmp_path: Path):
    root = write_toolbench(tmp_path / "tb")
    benchmark = get_benchmark("toolbench_static")
    samples = benchmark.load(root)
    assert {s.subset for s in samples} == {"out_of_domain"}
    report = benchmark.report(samples, score_all(benchmark, samples, {}), subsets=["in_domain", "out_of_domain"]).to_json()
    assert report["unavailable"] == ["in_domain"] and "in_domain" not in report["subsets"]
    with pytest.raises(DataError, match="none of in_domain.jsonl found"):
        benchmark.load(root, subsets=["in_domain"])


def test_bad_records_name_file_and_line(tmp_path: Path):
    root = write_toolbench(tmp_path / "tb")
    path = root / "out_of_domain.jsonl"
    lines = path.read_text().splitlines()
    record = json.loads(lines[1])
    record["tools"][0]["parameters"] = "{'type': open('x')}"
    path.write_text(lines[0] + "\n" + json.dumps(record) + "\n")
    with pytest.raises(DataError, match=r"out_of_domain\.jsonl, line 2: tools\[0\]\.parameters is not a Python literal"):
        tb_data.load(root)
    path.write_text(json.dumps({"messages": [], "tools": []}) + "\n")
    with pytest.raises(DataError, match="line 1: missing field 'target'"):
        tb_data.load(root)


def test_download_from_the_hub_is_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from tests.fake_hub import FakeHub

    source = write_toolbench(tmp_path / "hubfiles")
    monkeypatch.delenv("TOOLBOARD_DATA_DIR", raising=False)
    with FakeHub({"out_of_domain.jsonl": source / "out_of_domain.jsonl"}) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        samples = tb_data.load(None)
        assert [s.subset for s in samples] == ["out_of_domain"] * 5  # in_domain: not on this hub
        assert "GET out_of_domain.jsonl" in hub.requests and "HEAD in_domain.jsonl" in hub.requests
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert len(tb_data.load(None, subsets=["out_of_domain"])) == 5  # read from the cache


def test_reference_messages_drop_names_and_wrap_observations():
    messages = reference_messages([{"role": "assistant", "content": "x", "name": None},
                                   {"role": "function", "name": "f", "content": "obs é"}])
    assert messages == [{"role": "assistant", "content": "x"},
                        {"role": "user", "content": '{"role": "function", "content": "obs é"}'}]


def test_tools_mode_requests_are_valid_schemas():
    from jsonschema import Draft202012Validator

    request = build_request(_sample(CALL), mode="tools")
    assert [t["function"]["name"] for t in request.tools] == ["get_weather_for_weatherapi", "list_cities_for_weatherapi", "Finish"]
    for tool in request.tools:
        Draft202012Validator.check_schema(tool["function"]["parameters"])
        assert "optional" not in tool["function"]["parameters"]


def test_gold_targets_score_perfectly_on_the_real_derived_data(tmp_path: Path):
    folder = real_data("toolbench_static/derived", "ToolBench-Static data", "out_of_domain.jsonl")
    benchmark = get_benchmark("toolbench_static")
    samples = benchmark.load(folder)
    assert len(samples) == 1547
    predictions = benchmark.read_predictions(
        _write_predictions(tmp_path / "gold.jsonl", [{"id": s.id, "output": s.gold} for s in samples]), samples
    )
    summary = benchmark.report(samples, score_all(benchmark, samples, predictions)).to_json()["summary"]
    assert summary == {"act_em": 1.0, "plan_em": 1.0, "f1": 1.0, "easy_f1": 1.0, "hard_f1": 1.0, "hallu_rate": 0.0, "rouge_l": 1.0}


def _evalscope_messages(record_messages: list[dict]) -> list[dict]:
    """What EvalScope's ToolBenchAdapter sends (specs/toolbench-static.md §1.2), written out here on
    its own: `name` dropped, a function turn becomes a user turn holding its JSON."""
    sent = []
    for message in record_messages:
        if message["role"] == "function":
            content = json.dumps({"role": "function", "content": message["content"]}, ensure_ascii=False)
            sent.append({"role": "user", "content": content})
        else:
            sent.append({"role": message["role"], "content": message["content"]})
    return sent


def _recorded_requests(folder: Path, tmp_path: Path) -> tuple[list[dict], list[Sample]]:
    import asyncio

    from evaluators.engine.runner import execute, start_run
    from evaluators.engine.settings import ModelSettings, RunConfig
    from evaluators.engine.store import Store
    from tests.scripted_server import ScriptedServer

    with ScriptedServer(reply=lambda body: {"content": FINISH}) as server:
        config = RunConfig("toolbench_static", ModelSettings(base_url=server.base_url, model="recorder", api_key_env=""),
                           data_dir=str(folder), concurrency=32, use_cache=False)
        store = Store(tmp_path / "tb.sqlite")
        run_id, samples = start_run(RunRequest(config), store)
        assert asyncio.run(execute(store, run_id, samples)).status == "finished"
        assert store.get_run(run_id).config["request_profile"] is None
        return server.bodies, samples


def _assert_requests_are_evalscopes(bodies: list[dict], samples: list[Sample]) -> None:
    from collections import Counter

    expected = Counter(json.dumps(_evalscope_messages(s.input["messages"]), ensure_ascii=False) for s in samples)
    assert Counter(json.dumps(b["messages"], ensure_ascii=False) for b in bodies) == expected
    # plain chat, as EvalScope sends it: temperature 0, no tools, nothing else
    assert all(set(b) == {"model", "messages", "temperature"} and b["temperature"] == 0.0 for b in bodies)


def test_requests_equal_evalscopes_message_for_message(tmp_path: Path):
    bodies, samples = _recorded_requests(write_toolbench(tmp_path / "data"), tmp_path)
    assert len(bodies) == len(samples) > 0
    _assert_requests_are_evalscopes(bodies, samples)


def test_every_real_step_is_sent_as_evalscope_sends_it(tmp_path: Path):
    folder = real_data("toolbench_static/derived", "ToolBench-Static data", "out_of_domain.jsonl")
    bodies, samples = _recorded_requests(folder, tmp_path)
    assert len(bodies) == len(samples) == 1547
    _assert_requests_are_evalscopes(bodies, samples)


def _in_a_fresh_python(script: str) -> str:
    """Run `script` in a new interpreter (imports start empty there) and return what it printed."""
    done = subprocess.run([sys.executable, "-c", script], cwd=PROJECT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_rouge_loads_without_scipy_and_leaves_the_import_system_as_it_was():
    """nltk (under rouge-score) only tries scipy for collocation measures: it is left out of that import
    (seconds saved), and only while it runs."""
    script = (
        "import sys\n"
        "from evaluators.benchmarks.toolbench_static.metrics import rouge_l_f\n"
        "assert abs(rouge_l_f('a b c d', 'a c d e') - 0.75) < 1e-9\n"
        "assert 'scipy' not in sys.modules and 'nltk' in sys.modules\n"
        "assert not [f for f in sys.meta_path if type(f).__name__ == '_LeftOut']\n"
        "try:\n"
        "    import scipy.stats  # noqa: F401\n"
        "except ModuleNotFoundError as problem:\n"
        "    assert 'left out' not in str(problem), problem\n"
    )
    _in_a_fresh_python(script)


@pytest.mark.slow
def test_scipy_left_out_only_for_the_thread_loading_rouge():
    script = (
        "import threading\n"
        "from evaluators.benchmarks.toolbench_static import metrics\n"
        "outcome = {}\n"
        "with metrics._left_out('scipy'):\n"
        "    def other():\n"
        "        try:\n"
        "            import scipy.special  # noqa: F401\n"
        "            outcome['other'] = 'imported'\n"
        "        except ModuleNotFoundError as problem:\n"
        "            outcome['other'] = str(problem)\n"
        "    thread = threading.Thread(target=other)\n"
        "    thread.start(); thread.join()\n"
        "    try:\n"
        "        import scipy.linalg  # noqa: F401\n"
        "        outcome['mine'] = 'imported'\n"
        "    except ModuleNotFoundError as problem:\n"
        "        outcome['mine'] = str(problem)\n"
        "print(outcome)\n"
    )
    printed = _in_a_fresh_python(script)
    if "No module named 'scipy'" in printed:
        pytest.skip("scipy is not installed here: nothing to leave out")
    assert "'other': 'imported'" in printed, printed
    assert "'mine': 'scipy.linalg is left out while rouge-score loads'" in printed, printed
