"""The official τ²-bench oracle for tests (tests/tau2_official_venv.py): its venv builds from the reference archive
with the pinned packages and checked data, and each driver mode gives what docs/tau2-notes.md verified by hand
(tool counts, gold trajectories scoring 1.0, the judge's quirks, pass^k of the §6.1 fixture, a real official run
against the scripted server). Skipped with the reason where the venv cannot be built (no Python 3.12, no
../shared/reference archive, no package index)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from evaluators.benchmarks.tau2 import source
from tests import tau2_official_venv as oracle
from tests.scripted_server import ScriptedServer
from tests.tau2_official_venv import PINNED_REQUIREMENTS, OfficialVenv, official_venv, run_official

pytestmark = pytest.mark.slow

DOMAINS = ("airline", "retail", "telecom")
# docs/tau2-notes.md §2.8: the per-trial seeds of seed 300.
TRIAL_SEEDS = (626729, 373753, 361454, 1567)


@pytest.fixture(scope="module")
def venv() -> OfficialVenv:
    return official_venv()


def test_a_venv_that_cannot_be_built_skips_with_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(oracle.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(oracle, "ARCHIVE", tmp_path / "absent.tar.gz")
    with pytest.raises(pytest.skip.Exception, match="the reference archive .*absent.tar.gz is absent"):
        official_venv()
    monkeypatch.setattr(oracle, "ARCHIVE", tmp_path / "stand-in.tar.gz")
    oracle.ARCHIVE.write_bytes(b"never built: there is no interpreter")
    monkeypatch.setattr(oracle, "PYTHON_CANDIDATES", (str(tmp_path / "python3.12"), "no-such-python3.12"))
    with pytest.raises(pytest.skip.Exception, match="no Python 3.12 interpreter"):
        official_venv()


def test_only_a_folder_whose_marker_names_this_build_is_complete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The marker is written last: a folder without it (a build that died) or with another build's is rebuilt."""
    archive = tmp_path / "archive.tar.gz"
    archive.write_bytes(b"stand-in archive")
    monkeypatch.setattr(oracle, "ARCHIVE", archive)
    venv = OfficialVenv(tmp_path / "built")
    venv.python.parent.mkdir(parents=True)
    venv.python.write_text("", encoding="utf-8")
    venv.data_dir.mkdir()
    assert not oracle._is_complete(venv)
    (venv.folder / oracle.MARKER).write_text(json.dumps(oracle._expected_marker()), encoding="utf-8")
    assert oracle._is_complete(venv)
    monkeypatch.setattr(oracle, "PINNED_REQUIREMENTS", (*PINNED_REQUIREMENTS[:-1], "zipp==0.0.1"))
    assert not oracle._is_complete(venv)
    monkeypatch.undo()
    monkeypatch.setattr(oracle, "ARCHIVE", archive)
    archive.write_bytes(b"another archive")
    assert not oracle._is_complete(venv)


def base_tasks(venv: OfficialVenv, domain: str) -> list[dict[str, Any]]:
    """The domain's base split in task-file order (as the official get_tasks keeps them), from the venv's data."""
    folder = venv.data_dir / "tau2" / "domains" / domain
    base = set(json.loads((folder / "split_tasks.json").read_text(encoding="utf-8"))["base"])
    return [task for task in json.loads((folder / "tasks.json").read_text(encoding="utf-8")) if task["id"] in base]


def test_the_venv_holds_exactly_the_pinned_packages_and_the_pinned_data(venv: OfficialVenv):
    listed = subprocess.run([str(venv.python), "-m", "pip", "list", "--format", "json", "--disable-pip-version-check"],
                            capture_output=True, text=True, timeout=120, check=True)
    installed = {entry["name"].lower().replace("_", "-"): entry["version"] for entry in json.loads(listed.stdout)}
    for requirement in PINNED_REQUIREMENTS:
        name, version = requirement.split("==")
        assert installed.get(name.lower().replace("_", "-")) == version, requirement
    assert installed["tau2"] == "1.0.1"
    assert installed["pandas"] == "2.2.3"  # the plan's decision 6
    # every file the project pins is in the data folder with its pinned blob id (the two absent from the archive
    # came from the wheel)
    for relative, blob in source.BLOB_IDS.items():
        assert source.blob_id((venv.data_dir.parent / relative).read_bytes()) == blob, relative
    assert (venv.data_dir / "tau2" / "user_simulator" / "simulation_guidelines.md").is_file()


def test_schemas_give_the_official_tool_counts(venv: OfficialVenv):
    schemas = run_official("schemas", None)
    assert {domain: len(schemas[domain]["agent"]) for domain in DOMAINS} == {"airline": 14, "retail": 16, "telecom": 13}
    assert schemas["airline"]["user"] is None and schemas["retail"]["user"] is None
    assert len(schemas["telecom"]["user"]) == 30
    # the official openai_schema shape, in definition order (airline's get_flight_status is defined last)
    last = schemas["airline"]["agent"][-1]
    assert last["type"] == "function" and last["function"]["name"] == "get_flight_status"
    assert last["function"]["parameters"]["title"] == "parameters"


def test_gold_trajectories_score_one_and_replay_as_plain_cases(venv: OfficialVenv):
    chosen = [(domain, task) for domain in DOMAINS for task in base_tasks(venv, domain)[:3]]
    gold = run_official("evaluate", [{"kind": "gold", "domain": domain, "task": task} for domain, task in chosen])
    assert [answer["reward_info"]["reward"] for answer in gold] == [1.0] * 9
    for (_, task), answer in zip(chosen, gold):
        messages = answer["messages"]
        assert messages[0]["role"] == "assistant" and messages[0]["content"]  # the official greeting
        assert messages[-1]["role"] == "user" and "###STOP###" in messages[-1]["content"]
        assert [m["turn_idx"] for m in messages] == list(range(len(messages)))
        calls = [call for m in messages for call in m["tool_calls"] or []]
        assert [call["name"] for call in calls] == [a["name"] for a in task["evaluation_criteria"]["actions"] or []]
        results = [m for m in messages if m["role"] == "tool"]
        assert [m["id"] for m in results] == [call["id"] for call in calls]
        assert answer["reward_info"]["reward_basis"] == task["evaluation_criteria"]["reward_basis"]
    # the same messages given back in the contract's shape score the same
    plain = run_official("evaluate", [
        {"domain": domain, "task": task, "termination_reason": "user_stop", "messages": answer["messages"],
         "nl_verdicts": [True] * len(task["evaluation_criteria"]["nl_assertions"] or [])}
        for (domain, task), answer in zip(chosen, gold)])
    assert plain == [answer["reward_info"] for answer in gold]


def test_the_stubbed_judge_reproduces_the_official_quirks(venv: OfficialVenv):
    """docs/tau2-notes.md §5.5: empty results pass, one unmet assertion fails, a fenced answer raises; a premature
    termination scores 0 without any component."""
    task = next(task for task in base_tasks(venv, "retail")
                if task["evaluation_criteria"]["nl_assertions"] and "NL_ASSERTION" in task["evaluation_criteria"]["reward_basis"])
    count = len(task["evaluation_criteria"]["nl_assertions"])
    (gold,) = run_official("evaluate", [{"kind": "gold", "domain": "retail", "task": task}])
    assert gold["reward_info"]["reward"] == 1.0
    assert [check["met"] for check in gold["reward_info"]["nl_assertions"]] == [True] * count

    def case(**judge: Any) -> dict[str, Any]:
        return {"domain": "retail", "task": task, "termination_reason": judge.pop("termination", "user_stop"),
                "messages": gold["messages"], **judge}

    empty, unmet, fenced, premature, unjudged = run_official("evaluate", [
        case(nl_verdicts=[]), case(nl_verdicts=[True] * (count - 1) + [False]),
        case(raw='```json\n{"results": []}\n```'), case(termination="max_steps", nl_verdicts=None),
        case(nl_verdicts=None)])
    assert empty["reward"] == 1.0 and empty["nl_assertions"] == []
    assert unmet["reward"] == 0.0 and unmet["reward_breakdown"]["NL_ASSERTION"] == 0.0
    assert unmet["reward_breakdown"]["DB"] == 1.0
    assert fenced == {"error": {"type": "JSONDecodeError", "message": "Expecting value: line 1 column 1 (char 0)"}}
    assert premature["reward"] == 0.0 and premature["reward_basis"] is None
    assert "prematurely" in premature["info"]["note"]
    assert unjudged["error"]["type"] == "RuntimeError"


def test_gold_cases_take_other_actions_and_another_final_text(venv: OfficialVenv):
    """The gold case kind as a mutation tool (§5.7): airline without the communicated facts fails COMMUNICATE, and
    without its writes fails DB; the trajectory's tool calls are the ones given."""
    tasks = base_tasks(venv, "airline")
    told = next(task for task in tasks if task["evaluation_criteria"]["communicate_info"])
    writes = next(task for task in tasks if any(action["name"].startswith(("book_", "cancel_", "update_"))
                                               for action in task["evaluation_criteria"]["actions"] or []))
    silent, idle = run_official("evaluate", [{"kind": "gold", "domain": "airline", "task": told, "final_text": "Done."},
                                             {"kind": "gold", "domain": "airline", "task": writes, "actions": []}])
    assert silent["reward_info"]["reward"] == 0.0 and silent["reward_info"]["reward_breakdown"]["COMMUNICATE"] == 0.0
    assert silent["messages"][-2] == {"role": "assistant", "content": "Done.", "tool_calls": None,
                                      "turn_idx": len(silent["messages"]) - 2}
    assert idle["reward_info"]["reward"] == 0.0 and idle["reward_info"]["db_check"]["db_match"] is False
    assert not any(m["tool_calls"] for m in idle["messages"])


def fixture_results(successes: dict[str, list[int]]) -> list[dict[str, Any]]:
    return [{"task_id": task_id, "trial": trial, "reward": float(success), "termination_reason": "user_stop"}
            for task_id, row in successes.items() for trial, success in enumerate(row)]


def test_metrics_give_the_official_pass_hat_k(venv: OfficialVenv):
    """docs/tau2-notes.md §6.1 and §6.2: 3 tasks x 4 trials with 3/4, 1/4, 4/4 successes; then one trial an
    infrastructure error, which pandas 2.2.3 drops (max k lowered to 3)."""
    results = fixture_results({"0": [1, 1, 1, 0], "1": [1, 0, 0, 0], "2": [1, 1, 1, 1]})
    metrics = run_official("metrics", {"results": results, "num_trials": 4})
    assert metrics["pandas_version"] == "2.2.3"
    assert {k: round(v, 3) for k, v in metrics["pass_hat_ks"].items()} == {"1": 0.667, "2": 0.5, "3": 0.417, "4": 0.333}
    assert round(metrics["avg_reward"], 3) == 0.667 and metrics["max_k"] == 4
    results[-1] = {"task_id": "2", "trial": 3, "reward": None, "termination_reason": "infrastructure_error"}
    dropped = run_official("metrics", {"results": results, "num_trials": 4})
    assert dropped["max_k"] == 3 and dropped["infra_error_count"] == 1
    assert {k: round(v, 3) for k, v in dropped["pass_hat_ks"].items()} == {"1": 0.667, "2": 0.5, "3": 0.417}


def test_the_official_run_against_the_scripted_server(venv: OfficialVenv):
    """The official orchestrator, agent and user simulator over real HTTP: the user speaks first (its request is
    the first the server sees), the agent answers with text, the user stops; results.json as the official run
    writes it."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        if body["model"] == "agent-model":
            return {"content": "I can help with that."}
        if len(body["messages"]) <= 2:  # the system prompt and the greeting: the user's opening line
            return {"content": "I need to change my flight."}
        return {"content": "Thanks. ###STOP###"}

    task_id = base_tasks(venv, "airline")[0]["id"]
    with ScriptedServer(reply=reply) as server:
        results = run_official("run", {"domain": "airline", "base_url": server.base_url, "agent_model": "agent-model",
                                       "user_model": "user-model", "task_ids": [task_id], "num_trials": 1})
        bodies = list(server.bodies)
    assert [body["model"] for body in bodies] == ["user-model", "agent-model", "user-model"]
    (simulation,) = results["simulations"]
    assert simulation["termination_reason"] == "user_stop"
    assert simulation["task_id"] == task_id and simulation["seed"] == TRIAL_SEEDS[0]
    assert [m["role"] for m in simulation["messages"]] == ["assistant", "user", "assistant", "user"]
    assert simulation["messages"][2]["content"] == "I can help with that."
    assert simulation["reward_info"] is not None
    assert results["info"]["agent_info"]["llm"] == "openai/agent-model"
    assert results["info"]["agent_info"]["llm_args"] == {"temperature": 0.0}
    assert [task["id"] for task in results["tasks"]] == [task_id]
    # the agent's request as §8 describes it: the airline tools, tool_choice auto, the trial seed, temperature 0
    agent = bodies[1]
    assert len(agent["tools"]) == 14 and agent["tool_choice"] == "auto"
    assert agent["seed"] == TRIAL_SEEDS[0] and agent["temperature"] == 0.0
    assert "tools" not in bodies[0] and bodies[0]["seed"] == TRIAL_SEEDS[0]
    # the run saved its results.json in the call's own folder, never under the shared data folder
    assert not (venv.data_dir / "simulations").exists()


def test_an_official_run_of_two_trials_to_the_step_limit(venv: OfficialVenv):
    """A user that never stops runs to max_steps (given in the payload) in each trial, trial-major with the official
    per-trial seeds; premature terminations score 0."""
    task_id = base_tasks(venv, "retail")[0]["id"]
    with ScriptedServer(reply=lambda body: {"content": "Tell me more."}) as server:
        results = run_official("run", {"domain": "retail", "base_url": server.base_url, "agent_model": "agent-model",
                                       "user_model": "user-model", "task_ids": [task_id], "num_trials": 2,
                                       "max_steps": 4})
        seeds = [body["seed"] for body in server.bodies]
    simulations = sorted(results["simulations"], key=lambda simulation: simulation["trial"])
    assert [(s["trial"], s["seed"], s["termination_reason"]) for s in simulations] == [
        (0, TRIAL_SEEDS[0], "max_steps"), (1, TRIAL_SEEDS[1], "max_steps")]
    assert [s["reward_info"]["reward"] for s in simulations] == [0.0, 0.0]
    assert results["info"]["max_steps"] == 4 and results["info"]["num_trials"] == 2
    assert seeds == [TRIAL_SEEDS[0]] * 4 + [TRIAL_SEEDS[1]] * 4

