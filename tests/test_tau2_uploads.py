"""τ²-bench uploads (issue 45): the official results file of `tau2 run` read into one Prediction per task (the plan's
Trajectory contract), every problem of a file named in one pass (the file, the simulation, the message and its
field), the findings that do not refuse a file said as notes, and nothing of `llm_args` (which may hold API keys)
ever kept. The fixture, tests/fixtures/tau2/results_airline.json, is written for these tests in the official schema
(data_model/simulation.py at a2c0247: 2 airline tasks x 2 trials in completion order, one with a tool call, every
field the runner writes, provider responses and keys in llm_args included). The slow tests read files the official
runner writes against the scripted server (tests/tau2_official_venv.py; skipped with the reason when its venv cannot
be built)."""

from __future__ import annotations

import copy
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from evaluators.benchmarks.tau2 import uploads
from evaluators.benchmarks.tau2.data import parse_task
from evaluators.benchmarks.tau2.samples import load, task_sample
from evaluators.benchmarks.tau2.uploads import (
    EXCLUDED_TRIALS,
    RECORDED_REWARD,
    RECORDED_RUN,
    TASK_DIFFERS,
    TRIALS,
    match_predictions,
    read_predictions,
    read_results,
    subset_of_upload,
)
from evaluators.core.errors import PredictionsError
from evaluators.core.predictions import ParsedPredictions, parse_predictions
from evaluators.core.types import Sample
from tests import scripted_server
from tests.scripted_server import ScriptedServer
from tests.tau2_official_venv import official_venv, run_official_scripted

FIXTURE = Path(__file__).parent / "fixtures" / "tau2" / "results_airline.json"
SECRETS = ("sk-FIXTURE-SECRET-user", "sk-FIXTURE-SECRET-agent")


def pinned_task(domain: str, task_id: str) -> dict[str, Any]:
    """A task record as tasks.json writes it (defaults left out), the same task as the fixture embeds."""
    return {
        "id": task_id,
        "description": {"purpose": "fixture", "relevant_policies": None, "notes": None},
        "user_scenario": {"persona": None, "instructions": {
            "task_instructions": f"Ask for task {task_id}.", "domain": domain, "reason_for_call": "Ask about baggage.",
            "known_info": "You are ann_1.", "unknown_info": None}},
        "initial_state": None,
        "evaluation_criteria": {"actions": [{"action_id": f"{task_id}_0", "name": "get_user_details",
                                             "arguments": {"user_id": "ann_1"}, "info": None}],
                                "communicate_info": ["327"], "nl_assertions": None,
                                "reward_basis": ["DB", "COMMUNICATE"]},
    }


def sample(domain: str, task_id: str) -> Sample:
    """The sample of a task, as the benchmark's load makes it."""
    return task_sample(parse_task(domain, pinned_task(domain, task_id), "tasks.json", 0), Path("/nonexistent/source"))


SAMPLES = [sample("airline", "0"), sample("airline", "1"), sample("airline", "2")]


def results() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(FIXTURE.read_text())
    return document


def written(tmp_path: Path, document: Any, name: str = "results.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document, indent=2))
    return path


def simulation(document: dict[str, Any], task_id: str, trial: int) -> dict[str, Any]:
    found: dict[str, Any] = next(s for s in document["simulations"] if s["task_id"] == task_id and s["trial"] == trial)
    return found


def test_a_results_file_reads_into_one_prediction_per_task_with_its_trials_in_order() -> None:
    predictions, summary = match_predictions(FIXTURE, SAMPLES)
    assert summary.errors == [] and summary.notes == []
    assert (summary.lines_read, summary.matched, summary.missing) == (4, 2, ["airline_2"])
    assert sorted(predictions) == ["airline_0", "airline_1"]
    first = predictions["airline_0"]
    assert first.error is None
    assert first.output == "As a gold member you may check 327 bags."  # trial 0's last agent text
    assert first.extra is not None
    assert first.extra["user_model"] == "openai/user-model" and first.extra["judge_model"] is None
    assert first.extra["split"] == "base"
    assert first.extra[RECORDED_RUN] == {"domain": "airline", "agent_model": "openai/agent-model", "num_trials": 2,
                                         "max_steps": 200, "max_errors": 10, "seed": 300}
    trials = first.extra[TRIALS]
    assert [(t["trial"], t["seed"], t["termination_reason"], t[RECORDED_REWARD]) for t in trials] == [
        (0, 626729, "user_stop", 1.0), (1, 373753, "agent_stop", 0.0)]
    assert trials[0]["error"] is None and trials[0]["nl_judgement"] is None
    assert trials[0]["messages"] == [
        {"role": "assistant", "content": "Hi! How can I help you today?", "tool_calls": None, "turn_idx": 0},
        {"role": "user", "content": "Hi, I am ann_1. How many bags may I check?", "tool_calls": None, "turn_idx": 1},
        {"role": "assistant", "content": None, "turn_idx": 2, "tool_calls": [
            {"id": "call_1", "name": "get_user_details", "arguments": {"user_id": "ann_1"}, "requestor": "assistant"}]},
        {"role": "tool", "id": "call_1", "content": "{\"user_id\": \"ann_1\", \"membership\": \"gold\"}",
         "requestor": "assistant", "error": False, "turn_idx": 3},
        {"role": "assistant", "content": "As a gold member you may check 327 bags.", "tool_calls": None, "turn_idx": 4},
        {"role": "user", "content": "Thanks! ###STOP###", "tool_calls": None, "turn_idx": 5},
    ]
    # two agent replies with usage in trial 0, one in trial 1 (the greeting has none, as the official agent's)
    assert trials[0]["usage"] == {"agent": {"prompt_tokens": 240, "completion_tokens": 14, "cost": 0.0},
                                  "user": {"prompt_tokens": 240, "completion_tokens": 14, "cost": 0.0}}
    assert first.usage == {"prompt_tokens": 360, "completion_tokens": 21}
    second = predictions["airline_1"].extra
    assert second is not None
    assert [(t["trial"], t[RECORDED_REWARD]) for t in second[TRIALS]] == [(0, 0.0), (1, 1.0)]


def test_secrets_and_bulky_parts_are_dropped_while_reading_and_never_reach_a_prediction(tmp_path: Path) -> None:
    parsed = read_results(FIXTURE)
    held = json.dumps(parsed.rows[0].data)
    assert not any(secret in held for secret in SECRETS)
    assert "llm_args" not in held and "raw_data" not in held and "A stand-in policy text" not in held
    # the embedded task definitions are kept whole (they are compared with the pinned ones)
    assert parsed.rows[0].data["tasks"][0]["issues"] is None
    predictions, _ = match_predictions(parsed, SAMPLES)
    kept = json.dumps([prediction.extra for prediction in predictions.values()])
    assert not any(secret in kept for secret in SECRETS) and "api_base" not in kept and "llm_args" not in kept
    # the same through the generic reader (a one-line file reaches the matcher whole, llm_args and all)
    compact = tmp_path / "results.json"
    compact.write_text(json.dumps(results()))
    predictions, summary = match_predictions(parse_predictions(compact), SAMPLES)
    assert summary.errors == [] and sorted(predictions) == ["airline_0", "airline_1"]
    kept = json.dumps([prediction.extra for prediction in predictions.values()])
    assert not any(secret in kept for secret in SECRETS)


def problems_of(tmp_path: Path, document: Any) -> list[str]:
    _, summary = match_predictions(written(tmp_path, document), SAMPLES)
    return summary.errors


def mutated(change: Any) -> dict[str, Any]:
    document = results()
    change(document)
    return document


def _unknown_task(document: dict[str, Any]) -> None:
    simulation(document, "1", 1)["task_id"] = "7"


def _trial_twice(document: dict[str, Any]) -> None:
    simulation(document, "1", 0)["trial"] = 1


def _arguments_as_text(document: dict[str, Any]) -> None:
    simulation(document, "0", 0)["messages"][2]["tool_calls"][0]["arguments"] = "{\"user_id\": \"ann_1\"}"


def _system_role(document: dict[str, Any]) -> None:
    simulation(document, "0", 1)["messages"][1]["role"] = "system"


def _tool_error_text(document: dict[str, Any]) -> None:
    simulation(document, "0", 0)["messages"][3]["error"] = "no"


def _content_list(document: dict[str, Any]) -> None:
    simulation(document, "1", 0)["messages"][2]["content"] = [{"type": "text", "text": "No."}]


def _call_without_name(document: dict[str, Any]) -> None:
    del simulation(document, "0", 0)["messages"][2]["tool_calls"][0]["name"]


def _bad_reason(document: dict[str, Any]) -> None:
    simulation(document, "1", 0)["termination_reason"] = "finished"


def _no_messages(document: dict[str, Any]) -> None:
    simulation(document, "1", 0)["messages"] = None


def _answer_swapped(document: dict[str, Any]) -> None:
    simulation(document, "0", 0)["messages"][3]["id"] = "call_9"


def _answer_missing(document: dict[str, Any]) -> None:
    del simulation(document, "0", 0)["messages"][3]


def _stray_answer(document: dict[str, Any]) -> None:
    messages = simulation(document, "0", 0)["messages"]
    messages[2]["tool_calls"] = None
    messages[2]["content"] = "Let me look."


@pytest.mark.parametrize("change, expected", [
    (_answer_swapped, "results.json: simulations[1] (task '0', trial 0): messages[2].tool_calls[0] ('call_1') must be "
                      "answered by the next message, a tool message with its id, as the official replay requires; "
                      "messages[3] is a tool message answering 'call_9'"),
    (_answer_missing, "results.json: simulations[1] (task '0', trial 0): messages[2].tool_calls[0] ('call_1') must be "
                      "answered by the next message, a tool message with its id, as the official replay requires; "
                      "messages[3] is an assistant message"),
    (_stray_answer, "results.json: simulations[1] (task '0', trial 0): messages[3] is a tool message (answering "
                    "'call_1') that follows no tool call: the official replay refuses it"),
    (_unknown_task, "results.json: simulations[0] (task '7', trial 1): unknown task '7': not a task of airline's base "
                    "split being scored"),
    (_trial_twice, "results.json: simulations[2] (task '1', trial 1): trial 1 of task '1' appears twice (first at "
                   "results.json: simulations[0] (task '1', trial 1))"),
    (_arguments_as_text, "results.json: simulations[1] (task '0', trial 0): messages[2].tool_calls[0].arguments must "
                         "be an object (the official file keeps the parsed arguments), got a string"),
    (_system_role, "results.json: simulations[3] (task '0', trial 1): messages[1].role must be 'assistant', 'user' "
                   "or 'tool', got 'system'"),
    (_tool_error_text, "results.json: simulations[1] (task '0', trial 0): messages[3].error must be a boolean, got "
                       "a string"),
    (_content_list, "results.json: simulations[2] (task '1', trial 0): messages[2].content must be a string or "
                    "null, got a list"),
    (_call_without_name, "results.json: simulations[1] (task '0', trial 0): messages[2].tool_calls[0].name must be "
                         "a non-empty string, got null"),
    (_bad_reason, "results.json: simulations[2]: termination_reason must be one of the official reasons"),
    (_no_messages, "results.json: simulations[2] (task '1', trial 0): messages must be a list (the text trajectory), "
                   "got null"),
])
def test_each_bad_simulation_is_named_with_its_message_and_field(tmp_path: Path, change: Any, expected: str) -> None:
    problems = problems_of(tmp_path, mutated(change))
    assert len(problems) == 1 and problems[0].startswith(expected), problems


def test_a_premature_ending_after_a_call_is_read_as_the_official_evaluator_never_replays_it(tmp_path: Path) -> None:
    def cut(document: dict[str, Any]) -> None:
        ended = simulation(document, "0", 0)
        ended["messages"] = ended["messages"][:3]
        ended["termination_reason"] = "max_steps"

    predictions, summary = match_predictions(written(tmp_path, mutated(cut)), SAMPLES)
    assert summary.errors == []
    extra = predictions["airline_0"].extra
    assert extra is not None and extra[TRIALS][0]["termination_reason"] == "max_steps"
    assert extra[TRIALS][0]["messages"][-1]["tool_calls"][0]["id"] == "call_1"


def test_every_problem_of_a_file_is_listed_in_one_pass(tmp_path: Path) -> None:
    def several(document: dict[str, Any]) -> None:
        for change in (_unknown_task, _arguments_as_text, _system_role, _content_list):
            change(document)
        # two problems in one simulation: one entry naming both
        simulation(document, "1", 0)["messages"][1]["turn_idx"] = "1"

    path = written(tmp_path, mutated(several))
    predictions, summary = match_predictions(path, SAMPLES)
    assert [problem.split(":")[1].strip() for problem in summary.errors] == [
        "simulations[0] (task '7', trial 1)", "simulations[1] (task '0', trial 0)",
        "simulations[2] (task '1', trial 0)", "simulations[3] (task '0', trial 1)"]
    assert "messages[1].turn_idx must be an integer or null" in summary.errors[2]
    assert "messages[2].content must be a string or null" in summary.errors[2]
    assert summary.unknown == ["airline_7"]
    with pytest.raises(PredictionsError, match=r"4 problem\(s\) in the predictions") as raised:
        read_predictions(path, SAMPLES)
    assert "simulations[3] (task '0', trial 1): messages[1].role" in str(raised.value)


@pytest.mark.parametrize("content, expected", [
    ("{\"timestamp\": 1, \"info\": {", "results.json: not a results file: invalid JSON: Expecting property name"),
    ("[{\"id\": \"airline_0\", \"output\": \"hi\"}]", "not a results file of `tau2 run`: the file must be one JSON "
                                                     "object with timestamp, info, tasks, simulations, got a list"),
])
def test_a_file_that_is_not_json_or_not_a_list_of_simulations_is_refused(tmp_path: Path, content: str,
                                                                          expected: str) -> None:
    path = tmp_path / "results.json"
    path.write_text(content)
    try:
        _, summary = match_predictions(path, SAMPLES)
        problems = summary.errors
    except PredictionsError as exc:
        problems = [str(exc)]
    assert len(problems) == 1 and expected in problems[0], problems


@pytest.mark.parametrize("change, expected", [
    (lambda d: d.pop("simulations"), "results.json: not a results file of `tau2 run`: no 'simulations' at the top "
                                     "level (it has 'timestamp', 'info', 'tasks', 'simulation_index')"),
    (lambda d: d.update(simulations=[]), "results.json: the file holds no simulation"),
    (lambda d: d.update(simulations={}), "results.json: field 'simulations' must be a list, got an object"),
    (lambda d: d["info"]["environment_info"].update(domain_name="mock"),
     "results.json: info.environment_info.domain_name must be one of airline, retail, telecom"),
    (lambda d: d["info"]["user_info"].update(llm=None),
     "results.json: info.user_info.llm must be the user simulator's model (a string), got null"),
])
def test_a_file_not_of_the_official_shape_is_refused_with_the_reason(tmp_path: Path, change: Any,
                                                                      expected: str) -> None:
    predictions, summary = match_predictions(written(tmp_path, mutated(change)), SAMPLES)
    assert predictions == {} and len(summary.errors) == 1 and summary.errors[0].startswith(expected)


def test_a_binary_or_oversized_file_is_refused_before_parsing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    picture = tmp_path / "results.json"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)
    with pytest.raises(PredictionsError, match="not a text file: a results file is JSON"):
        match_predictions(picture, SAMPLES)
    monkeypatch.setattr(uploads, "MAX_UNPACKED_BYTES", 1000)
    with pytest.raises(PredictionsError, match="at most 0.000954 MB is read"):
        match_predictions(FIXTURE, SAMPLES)
    monkeypatch.setattr(uploads, "MAX_UNPACKED_BYTES", 10_000_000)
    monkeypatch.setattr(uploads, "MAX_PARSED_BYTES", 20_000)
    with pytest.raises(PredictionsError, match="more than 0.0191 MB once parsed"):
        match_predictions(FIXTURE, SAMPLES)


def test_an_infrastructure_error_is_noted_and_left_out(tmp_path: Path) -> None:
    def infrastructure(document: dict[str, Any]) -> None:
        failed = simulation(document, "0", 1)
        failed.update(termination_reason="infrastructure_error", messages=[], reward_info=None,
                      info={"error": "Connection refused", "error_type": "APIConnectionError",
                            "error_traceback": "...", "failed_after_attempts": 3})

    predictions, summary = match_predictions(written(tmp_path, mutated(infrastructure)), SAMPLES)
    assert summary.errors == []
    assert summary.notes == [
        "results.json: simulations[3] (task '0', trial 1): ended in infrastructure_error (no trajectory); left out of "
        "the scores, as the official metrics do",
        "task airline_0: 1 scored trial(s) of the run's 2; pass^k stops at the smallest count"]
    extra = predictions["airline_0"].extra
    assert extra is not None and [t["trial"] for t in extra[TRIALS]] == [0]
    assert extra[EXCLUDED_TRIALS] == [{"trial": 1, "seed": 373753, "termination_reason": "infrastructure_error",
                                       "error": "Connection refused"}]
    assert predictions["airline_0"].error is None


def test_a_task_whose_every_trial_is_an_infrastructure_error_gets_an_error(tmp_path: Path) -> None:
    def infrastructure(document: dict[str, Any]) -> None:
        for trial in (0, 1):
            simulation(document, "1", trial).update(termination_reason="infrastructure_error", messages=[],
                                                    reward_info=None)

    predictions, summary = match_predictions(written(tmp_path, mutated(infrastructure)), SAMPLES)
    assert summary.errors == [] and summary.matched == 2
    failed = predictions["airline_1"]
    assert failed.extra is not None and failed.extra[TRIALS] == [] and failed.output is None
    assert failed.error == ("every trial of this task ended in infrastructure_error in the uploaded file (2); no "
                            "trajectory to score")


def test_a_task_whose_embedded_definition_differs_is_noted_and_scored_against_the_pinned_one(tmp_path: Path) -> None:
    def edited(document: dict[str, Any]) -> None:
        document["tasks"][1]["evaluation_criteria"]["communicate_info"] = ["328"]
        document["tasks"][1]["user_scenario"]["persona"] = "Impatient."

    predictions, summary = match_predictions(written(tmp_path, mutated(edited)), SAMPLES)
    assert summary.errors == []
    assert summary.notes == ["task airline_1: the definition embedded in the file differs from the pinned one "
                             "(user_scenario, evaluation_criteria); scored against the pinned one"]
    extra = predictions["airline_1"].extra
    assert extra is not None and extra[TASK_DIFFERS] == ["user_scenario", "evaluation_criteria"]
    assert predictions["airline_0"].extra is not None and TASK_DIFFERS not in predictions["airline_0"].extra


def test_the_embedded_task_written_with_every_default_is_the_pinned_one() -> None:
    document = results()
    assert uploads.task_differences("airline", document["tasks"][0], pinned_task("airline", "0")) == []
    unreadable = uploads.task_differences("airline", {"id": "0"}, pinned_task("airline", "0"))
    assert unreadable == ["(unreadable: the results file: task '0': field task.user_scenario is missing)"]


def retail_results() -> dict[str, Any]:
    """The fixture as a retail run's file (one file per domain, as the official runner writes)."""
    document = results()
    document["info"]["environment_info"]["domain_name"] = "retail"
    for task in document["tasks"]:
        task["user_scenario"]["instructions"]["domain"] = "retail"
    return document


def test_a_zip_of_one_file_per_domain_is_one_upload(tmp_path: Path) -> None:
    bundle = tmp_path / "run.zip"
    with zipfile.ZipFile(bundle, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("airline/results.json", FIXTURE.read_text())
        archive.writestr("retail/results.json", json.dumps(retail_results(), indent=2))
        archive.writestr("README.md", "not read")
    both = SAMPLES + [sample("retail", "0"), sample("retail", "1")]
    predictions, summary = match_predictions(bundle, both)
    assert summary.errors == [] and summary.notes == []
    assert sorted(predictions) == ["airline_0", "airline_1", "retail_0", "retail_1"]
    assert summary.lines_read == 8 and summary.missing == ["airline_2"]
    # checked against airline alone, the retail file's simulations are counted apart, not refused
    predictions, summary = match_predictions(bundle, SAMPLES)
    assert sorted(predictions) == ["airline_0", "airline_1"] and summary.other_subsets == 4 and summary.errors == []


def test_files_of_one_upload_must_be_of_one_run(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    written(folder, results(), "airline.json")
    other = retail_results()
    other["info"]["user_info"]["llm"] = "openai/another-user-model"
    written(folder, other, "retail.json")
    _, summary = match_predictions(folder, SAMPLES + [sample("retail", "0")])
    assert summary.errors == [
        "run/retail.json: models (user 'openai/another-user-model', agent 'openai/agent-model') differ from those of "
        "run/airline.json (user 'openai/user-model', agent 'openai/agent-model'); one upload is one run"]


def test_the_same_trial_in_two_files_is_a_duplicate(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    written(folder, results(), "part1.json")
    again = results()
    again["simulations"] = [simulation(again, "0", 1)]
    written(folder, again, "part2.json")
    _, summary = match_predictions(folder, SAMPLES)
    assert summary.duplicates == ["airline_0"]
    assert summary.errors == ["run/part2.json: simulations[0] (task '0', trial 1): trial 1 of task '0' appears twice "
                              "(first at run/part1.json: simulations[3] (task '0', trial 1))"]


def test_the_generic_reader_takes_the_indented_file_whole_as_the_service_does() -> None:
    # The service reads every upload with the generic reader: an indented object is one row, matched as read_results'
    parsed = parse_predictions(FIXTURE)
    assert len(parsed.rows) == 1 and subset_of_upload(parsed.rows[0].data) == "airline"
    predictions, summary = match_predictions(parsed, SAMPLES)
    expected, expected_summary = match_predictions(read_results(FIXTURE), SAMPLES)
    assert summary.errors == expected_summary.errors == [] and set(predictions) == set(expected)
    assert all(predictions[key].extra["trials"] == expected[key].extra["trials"] for key in expected)


def test_the_subset_of_a_parsed_file_is_its_domain() -> None:
    assert subset_of_upload(read_results(FIXTURE).rows[0].data) == "airline"
    assert subset_of_upload({"info": {"environment_info": {"domain_name": "mock"}}}) is None
    assert subset_of_upload([1, 2]) is None


def test_a_results_file_is_never_changed_by_reading_it() -> None:
    before = FIXTURE.read_bytes()
    document = results()
    kept = copy.deepcopy(document)
    match_predictions(ParsedPredictions("results.json", (uploads.Row("results.json", 1, document),), 0), SAMPLES)
    assert document == kept and FIXTURE.read_bytes() == before


# ---- a real file: the official runner against the scripted server (tests/tau2_official_venv.py) ----------------

# The scripted replies are this file's functions: a kept official run is named by this file's text.
SCRIPT_SOURCES = [Path(__file__), Path(scripted_server.__file__)]

def _scripted_dialogue(agent_call: dict[str, Any]) -> Any:
    """Replies of the scripted server: the user opens and stops at its second turn; the agent first calls
    `agent_call` (name, arguments), then answers with text."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        if body["model"] == "agent-model":
            if not any(message.get("role") == "tool" for message in body["messages"]):
                return {"tool_calls": [{"id": "call_gold_0", "type": "function", "function": {
                    "name": agent_call["name"], "arguments": json.dumps(agent_call["arguments"])}}]}
            return {"content": "It is done."}
        if len(body["messages"]) <= 2:  # the user's system prompt and the greeting: its opening line
            return {"content": "I need help with my booking."}
        return {"content": "Thanks. ###STOP###"}

    return reply


@pytest.mark.slow
def test_a_results_file_written_by_the_official_runner_reads_into_the_contract(tmp_path: Path) -> None:
    """The official `run_domain` (2 trials of the first airline base task with gold actions, the agent calling the task's first gold
    action) writes results.json; it reads into the contract with no problem and no note (its embedded task, written
    with every default, is the pinned one), each trial's messages as the file holds them."""

    venv = official_venv()
    airline = load(data_dir=venv.folder, subsets=["airline"])
    first = next(sample for sample in airline if sample.gold["evaluation_criteria"]["actions"])
    gold_call = first.gold["evaluation_criteria"]["actions"][0]
    with ScriptedServer(reply=_scripted_dialogue(gold_call)) as server:
        produced, _ = run_official_scripted(
            {"domain": "airline", "base_url": server.base_url, "agent_model": "agent-model", "user_model": "user-model",
             "task_ids": [first.input["task_id"]], "num_trials": 2}, server, SCRIPT_SOURCES)
    path = tmp_path / "results.json"
    path.write_text(json.dumps(produced, indent=2))
    predictions, summary = match_predictions(path, airline)
    assert summary.errors == [] and summary.notes == [] and summary.matched == 1
    assert list(predictions) == [first.id]
    extra = predictions[first.id].extra
    assert extra is not None and extra["user_model"] == "openai/user-model"
    assert extra[RECORDED_RUN] == {"domain": "airline", "agent_model": "openai/agent-model", "num_trials": 2,
                                   "max_steps": 200, "max_errors": 10, "seed": 300}
    recorded = {s["trial"]: s for s in produced["simulations"]}
    assert [(t["trial"], t["seed"], t["termination_reason"]) for t in extra[TRIALS]] == [
        (0, 626729, "user_stop"), (1, 373753, "user_stop")]
    for trial in extra[TRIALS]:
        official = recorded[trial["trial"]]
        assert trial[RECORDED_REWARD] == official["reward_info"]["reward"]
        assert [m["role"] for m in trial["messages"]] == ["assistant", "user", "assistant", "tool", "assistant", "user"]
        call = trial["messages"][2]["tool_calls"][0]
        assert (call["id"], call["name"], call["arguments"], call["requestor"]) == (
            "call_gold_0", gold_call["name"], gold_call["arguments"], "assistant")
        answer = trial["messages"][3]
        assert (answer["id"], answer["requestor"], answer["error"]) == ("call_gold_0", "assistant", False)
        assert answer["content"] == official["messages"][3]["content"]
        assert [m["turn_idx"] for m in trial["messages"]] == list(range(6))
    assert predictions[first.id].output == "It is done."
    assert "llm_args" not in json.dumps(extra) and "raw_data" not in json.dumps(extra)


@pytest.mark.slow
def test_a_telecom_results_file_with_a_user_tool_call_reads_into_the_contract(tmp_path: Path) -> None:
    """The official run of the first telecom base task (initialisation actions, env assertions, user tools): the user
    simulator calls its `check_status_bar` tool once; the call and its answer are the user's (requestor "user"), and
    the embedded task is the pinned one."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        if body["model"] == "agent-model":
            return {"content": "Please check your status bar."}
        if len(body["messages"]) <= 2:
            return {"content": "My mobile data does not work."}
        if not any(message.get("role") == "tool" for message in body["messages"]):
            return {"tool_calls": [{"id": "call_user_0", "type": "function",
                                    "function": {"name": "check_status_bar", "arguments": "{}"}}]}
        return {"content": "Thanks. ###STOP###"}

    venv = official_venv()
    telecom = load(data_dir=venv.folder, subsets=["telecom"])
    first = telecom[0]
    with ScriptedServer(reply=reply) as server:
        produced, _ = run_official_scripted(
            {"domain": "telecom", "base_url": server.base_url, "agent_model": "agent-model", "user_model": "user-model",
             "task_ids": [first.input["task_id"]], "num_trials": 1}, server, SCRIPT_SOURCES)
    path = tmp_path / "results.json"
    path.write_text(json.dumps(produced, indent=2))
    predictions, summary = match_predictions(path, telecom)
    assert summary.errors == [] and summary.notes == [] and list(predictions) == [first.id]
    extra = predictions[first.id].extra
    assert extra is not None
    (trial,) = extra[TRIALS]
    assert [m["role"] for m in trial["messages"]] == ["assistant", "user", "assistant", "user", "tool", "user"]
    call = trial["messages"][3]["tool_calls"][0]
    assert (call["id"], call["name"], call["arguments"], call["requestor"]) == ("call_user_0", "check_status_bar", {},
                                                                                "user")
    answer = trial["messages"][4]
    assert (answer["id"], answer["requestor"]) == ("call_user_0", "user") and answer["content"]
    assert trial[RECORDED_REWARD] == produced["simulations"][0]["reward_info"]["reward"]
