"""Uploads of BFCL multi-turn results (issue 30): the official result file's lines (`result` per turn and step, the
token and latency metadata per turn and step) and this tool's predictions format (`turns` with the rollout's
evidence) both become the contract's Prediction; every problem of a file is listed in one pass, each with its line
and field. Small fixtures in the official shape (bfcl_eval's base_handler `write` and the multi-turn inference
loop's metadata), no real data."""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest

from evaluators.benchmarks.bfcl.multi_turn.evidence import INITIAL_STATE, STOP, TRANSCRIPT, TURNS
from evaluators.benchmarks.bfcl.predictions import category_of_upload_id, match_predictions, read_predictions
from evaluators.core.errors import PredictionsError
from evaluators.core.predictions import raise_on_errors
from evaluators.core.types import Sample


def _sample(sample_id: str, turns: int = 2) -> Sample:
    category = sample_id.rpartition("_")[0]
    return Sample(sample_id, category, input={"question": [[{"role": "user", "content": f"turn {i}"}] for i in range(turns)]},
                  gold=[["ls()"] for _ in range(turns)], meta={"category": category, "language": "python"})


SAMPLES = [_sample("multi_turn_base_0"), _sample("multi_turn_base_1"), _sample("multi_turn_miss_func_3", 3),
           _sample("multi_turn_long_context_12"),
           Sample("simple_python_0", "simple_python", input={}, gold=[], meta={"category": "simple_python"})]

# An official result line as the prompt-mode multi-turn loop leaves it: per turn, per step.
OFFICIAL_LINE: dict[str, Any] = {
    "id": "multi_turn_base_0",
    "result": [["[ls()]", "The folder holds a.txt."], ["[cd(folder='docs')]", None, "Done."]],
    "input_token_count": [[100, 120], [150, 160, 170]],
    "output_token_count": [[5, 9], [7, 0, 3]],
    "latency": [[0.5, 0.25], [1.0, 0.125, 0.125]],
    "inference_log": [{"begin_of_turn_query": [{"role": "user", "content": "turn 0"}], "step_0": []}],
}
OWN_LINE: dict[str, Any] = {
    "id": "multi_turn_base_1", "output": None,
    "turns": [["[ls()]", "a.txt"], ["[cd(folder='docs')]"]],
    "transcript": [{"query": [{"role": "user", "content": "turn 0"}],
                    "steps": [{"text": "[ls()]", "calls": ["ls()"], "decode_error": None, "results": ["a.txt"]},
                              {"text": "a.txt", "calls": None, "decode_error": "no call", "results": []}],
                    "state": {"GorillaFileSystem": {"root": {"name": "root"}}}}],
    "initial_state": {"GorillaFileSystem": {"root": {"name": "root"}}},
    "stop": "completed",
}


def _write(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows), encoding="utf-8")
    return path


def test_an_official_result_line_becomes_the_turns_with_usage_and_latency_summed(tmp_path: Path):
    predictions = read_predictions(_write(tmp_path / "BFCL_v4_multi_turn_base_result.json", [OFFICIAL_LINE]), SAMPLES)
    prediction = predictions["multi_turn_base_0"]
    # a reply with no content (null) is kept as an empty text, as the rollout keeps it
    assert prediction.extra == {TURNS: [["[ls()]", "The folder holds a.txt."], ["[cd(folder='docs')]", "", "Done."]]}
    assert prediction.usage == {"prompt_tokens": 700, "completion_tokens": 24}
    assert prediction.latency == 2.0 and prediction.output is None and prediction.tool_calls is None
    assert prediction.source_line == 1


def test_the_official_metadata_is_optional_and_read_as_the_official_summary_reads_it(tmp_path: Path):
    line = {"id": "multi_turn_base_0", "result": [["[ls()]"], []],
            "input_token_count": [[10, "n/a", None]], "latency": "not a list"}
    prediction = read_predictions(_write(tmp_path / "p.jsonl", [line]), SAMPLES)["multi_turn_base_0"]
    # numbers only (as eval_runner_helper's record_cost_latency), a shape it skips is skipped
    assert prediction.usage == {"prompt_tokens": 10, "completion_tokens": 0} and prediction.latency is None
    bare = read_predictions(_write(tmp_path / "q.jsonl", [{"id": "multi_turn_base_0", "result": [[], []]}]), SAMPLES)
    assert bare["multi_turn_base_0"].usage is None and bare["multi_turn_base_0"].extra == {TURNS: [[], []]}


def test_a_failed_inference_is_kept_to_be_scored_wrong_not_refused(tmp_path: Path):
    """The official runner writes `"result": "Error during inference: ..."` for an item whose inference raised, and its
    checker fails any `result` that is not a list (multi_turn:inference_error): the text is kept as the turns."""
    line = {"id": "multi_turn_base_0", "result": "Error during inference: Request timed out.", "traceback": "..."}
    predictions, summary = match_predictions(_write(tmp_path / "p.jsonl", [line]), SAMPLES)
    assert not summary.errors and summary.matched == 1
    assert predictions["multi_turn_base_0"].extra == {TURNS: "Error during inference: Request timed out."}


def test_this_tools_predictions_format_keeps_the_rollouts_evidence(tmp_path: Path):
    prediction = read_predictions(_write(tmp_path / "p.jsonl", [OWN_LINE]), SAMPLES)["multi_turn_base_1"]
    assert prediction.extra == {TURNS: OWN_LINE["turns"], TRANSCRIPT: OWN_LINE["transcript"],
                                INITIAL_STATE: OWN_LINE["initial_state"], STOP: "completed"}
    assert prediction.output is None and prediction.usage is None


def test_single_and_multi_turn_lines_together_in_a_zip_of_result_files(tmp_path: Path):
    bundle = tmp_path / "results.zip"
    with zipfile.ZipFile(bundle, "w") as archive:
        archive.writestr("model/multi_turn/BFCL_v4_multi_turn_base_result.json", json.dumps(OFFICIAL_LINE) + "\n")
        archive.writestr("model/multi_turn/BFCL_v4_multi_turn_miss_func_result.json",
                         json.dumps({"id": "multi_turn_miss_func_3", "result": [["[ls()]"], [], ["ok"]]}) + "\n")
        archive.writestr("model/non_live/BFCL_v4_simple_python_result.json",
                         json.dumps({"id": "simple_python_0", "result": "[f(x=1)]"}) + "\n")
    predictions, summary = match_predictions(bundle, SAMPLES)
    assert not summary.errors and summary.matched == 3
    assert predictions["simple_python_0"].output == "[f(x=1)]"
    assert predictions["multi_turn_miss_func_3"].extra == {TURNS: [["[ls()]"], [], ["ok"]]}
    assert sorted(summary.missing) == ["multi_turn_base_1", "multi_turn_long_context_12"]


def test_ids_of_the_four_categories_are_known_before_they_are_loaded():
    assert category_of_upload_id("multi_turn_long_context_12") == "multi_turn_long_context"
    assert category_of_upload_id("live_simple_3-1-0") == "live_simple"
    assert category_of_upload_id("multi_turn_composite_0") is None and category_of_upload_id("memory_0") is None
    # the agentic categories are subsets now; the memory prerequisite conversations are set aside, as officially
    assert category_of_upload_id("memory_kv_0-customer-0") == "memory_kv"
    assert category_of_upload_id("memory_kv_prereq_3-customer-3") == "memory_kv_prereq"


def test_a_multi_turn_line_scored_against_single_turn_items_only_is_counted_apart(tmp_path: Path):
    single = [sample for sample in SAMPLES if sample.subset == "simple_python"]
    path = _write(tmp_path / "p.jsonl", [OFFICIAL_LINE, {"id": "simple_python_0", "result": "[f()]"}])
    predictions, summary = match_predictions(path, single)
    assert list(predictions) == ["simple_python_0"] and summary.other_subsets == 1 and not summary.errors


BAD_LINES: list[tuple[Any, str]] = [
    ({"id": "multi_turn_base_0", "result": [["[ls()]", 3], "[cd(folder='x')]"]},
     "line 1: result[0][1] (turn 0, step 1) must be the model's raw text (a string), got a number; result[1] (turn 1) "
     "must be a list of the model's step texts, got a string"),
    ({"id": "multi_turn_base_1", "result": [[[{"ls": "{}"}]]]},
     "line 2: result[0][0] (turn 0, step 0) is a list of {name: arguments} calls (the official FC layout): "
     "multi-turn items are read in prompt mode only"),
    ({"id": "multi_turn_miss_func_3", "result": {"turn": 0}},
     "line 3: field 'result' must be a list of turns, each a list of the model's step texts, got an object; or a "
     "string, the official runner's record of a failed inference"),
    ({"id": "multi_turn_long_context_12", "output": "[ls()]"},
     "line 4: field 'output' must be null or absent: a multi-turn item's model text is per turn and step, in 'turns' "
     "(or 'result'); a multi-turn or agentic item needs 'result'"),
    ({"id": "multi_turn_composite_0", "result": [["[ls()]"]]},
     "line 5: unknown id 'multi_turn_composite_0': no item of the data being scored has it"),
    ({"id": "multi_turn_base_2", "result": [["[ls()]"]]},
     "line 6: unknown id 'multi_turn_base_2'"),
    ("{not json",
     "line 7: "),
]


def test_every_bad_multi_turn_line_is_named_in_one_pass(tmp_path: Path):
    path = _write(tmp_path / "p.jsonl", [row for row, _ in BAD_LINES])
    predictions, summary = match_predictions(path, SAMPLES)
    assert not predictions and len(summary.errors) == len(BAD_LINES)
    for error, (_, expected) in zip(summary.errors, BAD_LINES):
        assert expected in error, error
    with pytest.raises(PredictionsError, match=f"{len(BAD_LINES)} problem\\(s\\) in the predictions"):
        raise_on_errors(summary, path)


OWN_FORMAT_BAD_LINES: list[tuple[dict[str, Any], str]] = [
    ({"id": "multi_turn_base_0", "turns": "[ls()]"},
     "field 'turns' must be a list of turns, each a list of the model's step texts, got a string"),
    ({"id": "multi_turn_base_1", "turns": [["[ls()]"]], "result": [["[ls()]"]]},
     "has both 'turns' (this tool's predictions format) and 'result' (the official result file's layout): give one"),
    ({"id": "multi_turn_miss_func_3", "turns": [[]], "tool_calls": [{"name": "ls", "arguments": {}}]},
     "field 'tool_calls' must be null or absent: multi-turn items are read in prompt mode only"),
    ({"id": "multi_turn_long_context_12", "turns": [["a"]], "stop": "tired", "initial_state": [],
      "transcript": [{"query": "hi", "steps": [{"text": 1}], "state": []}, 7]},
     "transcript[0].query must be a list of messages, got a string; transcript[0].state must be an object (class name "
     "-> its attributes), got a list; transcript[0].steps[0] must be an object with the step's 'text' (a string); "
     "transcript[1] must be an object with 'query', 'steps' and 'state', got a number; field 'initial_state' must be "
     "an object (class name -> its attributes), got a list; and 1 more"),
]


def test_bad_lines_of_this_tools_format_name_their_fields(tmp_path: Path):
    path = _write(tmp_path / "p.jsonl", [row for row, _ in OWN_FORMAT_BAD_LINES])
    predictions, summary = match_predictions(path, SAMPLES)
    assert not predictions and len(summary.errors) == len(OWN_FORMAT_BAD_LINES)
    for line, (error, (_, expected)) in enumerate(zip(summary.errors, OWN_FORMAT_BAD_LINES), 1):
        assert f"p.jsonl, line {line}: " in error and expected in error, error


def test_a_single_turn_item_still_refuses_a_per_turn_result(tmp_path: Path):
    path = _write(tmp_path / "p.jsonl", [{"id": "simple_python_0", "result": [["[f()]"]]}])
    _, summary = match_predictions(path, SAMPLES)
    assert summary.errors == [f"{path}, line 1: result[0] must be one {{name: arguments}} object (the official FC layout)"]


# ---- a result file the official inference loop wrote --------------------------------------------------------

# Runs in the official venv: the official chat-completions handler in prompt mode against the scripted server (no
# registry model pairs them; the registry's prompt models use the Responses API), through the official multi-turn
# inference loop (the wheel's own items, environments and step limit), its result written by the
# official `write`.
OFFICIAL_INFERENCE = r'''
import os, sys
from pathlib import Path
stand_ins, root, out, model, ids = sys.argv[1:6]
sys.path.append(stand_ins)
os.environ["BFCL_PROJECT_ROOT"] = root
Path(root).mkdir(parents=True, exist_ok=True)
from bfcl_eval._llm_response_generation import multi_threaded_inference
from bfcl_eval.model_handler.api_inference.openai_completion import OpenAICompletionsHandler
from bfcl_eval.utils import load_dataset_entry

handler = OpenAICompletionsHandler(model_name=model, temperature=0.001, registry_name=model, is_fc_model=False)
wanted = ids.split(",")
for entry in load_dataset_entry("multi_turn_base"):
    if entry["id"] in wanted:
        handler.write(multi_threaded_inference(handler, entry, False, False), result_dir=Path(out))
'''
FAILING_QUERY = "I am alex."  # multi_turn_base_1's first query starts so: its first request is refused


def _scripted_model(body: dict[str, Any]) -> dict[str, Any]:
    """A call at each new user query; after the call's results, a reply with no content (null), ending the turn."""
    last = body["messages"][-1]
    return {} if str(last.get("content", "")).startswith("[{") else {"content": "[ls()]"}


def test_a_result_file_the_official_inference_loop_wrote_is_read(tmp_path: Path):
    from tests.bfcl_official_venv import DRIVER_FLAGS, VenvUnavailable, _subprocess_env, official_venv
    from tests.scripted_server import Fault, ScriptedServer, prompt_key

    try:
        venv = official_venv()
    except VenvUnavailable as reason:
        pytest.skip(f"the official bfcl-eval 2026.3.23 venv could not be built: {reason}")
    refused: set[str] = set()

    def note(body: dict[str, Any]) -> None:
        if any(str(m.get("content", "")).startswith(FAILING_QUERY) for m in body["messages"]):
            refused.add(prompt_key(body))

    script = tmp_path / "official_inference.py"
    script.write_text(OFFICIAL_INFERENCE, encoding="utf-8")
    with ScriptedServer(reply=_scripted_model, on_request=note,
                        fault=lambda key, attempt: Fault(status=400, message="scripted refusal") if key in refused else None
                        ) as server:
        env = {**_subprocess_env(), "OPENAI_BASE_URL": server.base_url}
        done = subprocess.run([str(venv.python), *DRIVER_FLAGS, str(script), str(venv.stand_ins), str(tmp_path / "root"),
                               str(tmp_path / "result"), "scripted-model", "multi_turn_base_0,multi_turn_base_1"],
                              capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    (written,) = (tmp_path / "result").rglob("BFCL_v4_multi_turn_base_result.json")
    lines = [json.loads(line) for line in written.read_text(encoding="utf-8").splitlines()]
    assert [line["id"] for line in lines] == ["multi_turn_base_0", "multi_turn_base_1"]
    assert {"input_token_count", "output_token_count", "latency", "inference_log"} <= set(lines[0])
    assert lines[0]["result"] == [["[ls()]", None]] * 4  # a reply with no content is written as null

    predictions, summary = match_predictions(written, SAMPLES)
    assert not summary.errors and summary.matched == 2
    ran, failed = predictions["multi_turn_base_0"], predictions["multi_turn_base_1"]
    assert ran.extra == {TURNS: [["[ls()]", ""]] * 4}
    assert ran.usage == {"prompt_tokens": 8 * 10, "completion_tokens": 8 * 5}  # 2 steps in each of 4 turns
    assert ran.latency == pytest.approx(sum(sum(turn) for turn in lines[0]["latency"]))
    assert isinstance(failed.extra[TURNS], str) and failed.extra[TURNS].startswith("Error during inference: ")
    assert "scripted refusal" in failed.extra[TURNS]


def test_a_runs_exported_predictions_are_read_back_as_they_were(tmp_path: Path):
    """This tool's predictions format is what a run's predictions export writes: the turns and the rollout's
    evidence as fields of their own."""
    from evaluators.engine.store import Store
    from evaluators.service.run_records import prediction_lines
    from tests.test_explore_multi_turn import SAMPLE_ID, _prediction, store_multi_turn_run

    store = Store(tmp_path / "db.sqlite")
    run_id = store_multi_turn_run(store)
    exported = tmp_path / "predictions.jsonl"
    exported.write_text("".join(line + "\n" for line in prediction_lines(store, run_id)), encoding="utf-8")
    predictions, summary = match_predictions(exported, [_sample(SAMPLE_ID, 3)])
    assert not summary.errors and predictions[SAMPLE_ID].extra == _prediction().extra
