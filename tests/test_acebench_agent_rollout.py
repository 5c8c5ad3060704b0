"""Agent rollouts through the engine against scripted model and user servers (fixture data)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evaluators.engine.runner import execute, start_run
from evaluators.engine.settings import Endpoint, ModelSettings, RunConfig, RunRequest, fingerprint
from evaluators.engine.store import Store
from tests.agent_fixtures import ITEMS, milestone_plans, write_agent_dataset
from tests.conftest import PROJECT
from tests.scripted_server import ScriptedServer

PLANS = milestone_plans()
DONE = "All done, anything else?"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_agent_dataset(tmp_path / "data")


def _item_of(text: str) -> str:
    """The fixture item a prompt is about: its id is found through the question text."""
    return next(item["id"] for item in ITEMS if item["question"] in text or f"[{item['id']}]" in text)


def is_user_simulator(body: dict[str, Any]) -> bool:
    return "You play a user talking to an agent" in body["messages"][0]["content"]


def simulated_user(body: dict[str, Any], finish: bool = True) -> dict[str, Any]:
    """Opens with the item's id; says `finish conversation` once the agent reports it is done."""
    item_id = _item_of(body["messages"][0]["content"])
    last = body["messages"][-1]["content"]
    if finish and last == DONE:
        return {"content": "Thanks.\nfinish conversation"}
    return {"content": f"Please help me with [{item_id}]."}


def milestone_agent(body: dict[str, Any]) -> dict[str, Any]:
    """Replays the item's milestones one per turn, then reports it is done."""
    prompt = body["messages"][-1]["content"]
    item_id = _item_of(prompt)
    executed = prompt.count("\nexecution result:") + prompt.count("\nexecution:")
    plan = PLANS[item_id]
    if executed < len(plan):
        return {"content": plan[executed]}
    return {"content": "finish conversation" if item_id.startswith("agent_multi_step") else DONE}


def _run(data: Path, tmp_path: Path, server: ScriptedServer, subsets: tuple[str, ...], **kwargs):
    model = ModelSettings(base_url=server.base_url, model="scripted", api_key_env="", timeout=5.0)
    config = RunConfig("acebench", model, language="en", subsets=subsets, data_dir=str(data), concurrency=4, **kwargs)
    store = Store(tmp_path / "db.sqlite")
    run_id, samples = start_run(RunRequest(config), store)
    outcome = asyncio.run(execute(store, run_id, samples))
    return outcome, store.load_predictions(run_id)


def test_multi_step_model_replaying_milestones_reaches_the_gold_state(data: Path, tmp_path: Path):
    with ScriptedServer(reply=milestone_agent) as server:
        outcome, predictions = _run(data, tmp_path, server, ("agent_multi_step",))
    assert outcome.report.to_json()["subsets"]["agent_multi_step"]["metrics"] == {"accuracy": 1.0, "process_accuracy": 1.0}
    prediction = predictions["agent_multi_step_0"]
    assert prediction.extra["process"] == PLANS["agent_multi_step_0"]
    assert prediction.extra["result"] == ITEMS[0]["gold"]
    roles = [m["role"] for m in prediction.extra["transcript"]]
    assert roles == ["user"] + ["agent", "execution"] * 4 + ["agent"] and prediction.extra["stop"] == "finish"
    assert prediction.extra["transcript"][2]["content"] == "[{'status': True, 'message': 'Wi-Fi has been turned on'}]"


def test_multi_step_model_that_never_calls_stops_at_the_message_limit(data: Path, tmp_path: Path):
    with ScriptedServer(reply=lambda body: {"content": "Could you tell me more?"}) as server:
        outcome, predictions = _run(data, tmp_path, server, ("agent_multi_step",))
    prediction = predictions["agent_multi_step_1"]
    assert len(prediction.extra["transcript"]) == 1 + 40 and prediction.extra["stop"] == "message_limit"
    assert prediction.extra["transcript"][2]["content"].startswith("Please do not ask me any questions")
    assert len(prediction.extra["process"]) == 20 and prediction.extra["result"] == []
    assert outcome.report.to_json()["subsets"]["agent_multi_step"]["metrics"]["accuracy"] == 0.0


def test_multi_turn_with_the_tested_model_as_user_ends_on_finish_conversation(data: Path, tmp_path: Path):
    def reply(body: dict[str, Any]) -> dict[str, Any]:
        return simulated_user(body) if is_user_simulator(body) else milestone_agent(body)

    with ScriptedServer(reply=reply) as server:
        outcome, predictions = _run(data, tmp_path, server, ("agent_multi_turn",))
    assert outcome.report.to_json()["subsets"]["agent_multi_turn"]["metrics"]["accuracy"] == 1.0
    prediction = predictions["agent_multi_turn_1"]
    roles = [m["role"] for m in prediction.extra["transcript"]]
    assert roles == ["user", "agent", "execution", "agent", "execution", "agent", "user"]
    assert prediction.extra["transcript"][-1]["content"].endswith("finish conversation") and prediction.extra["stop"] == "finish"
    assert prediction.extra["process"] == PLANS["agent_multi_turn_1"]


def test_multi_turn_user_simulator_on_its_own_endpoint(data: Path, tmp_path: Path):
    with ScriptedServer(reply=simulated_user) as user_server, ScriptedServer(reply=milestone_agent) as model_server:
        user = Endpoint(base_url=user_server.base_url, model="user-llm", api_key_env="")
        outcome, predictions = _run(data, tmp_path, model_server, ("agent_multi_turn",), roles={"user": user})
        assert all(is_user_simulator(body) for body in user_server.bodies)
        assert not any(is_user_simulator(body) for body in model_server.bodies)
        assert {body["model"] for body in user_server.bodies} == {"user-llm"}
    assert outcome.report.to_json()["subsets"]["agent_multi_turn"]["metrics"]["accuracy"] == 1.0


def test_multi_turn_that_never_finishes_stops_at_the_message_limit(data: Path, tmp_path: Path):
    def reply(body: dict[str, Any]) -> dict[str, Any]:
        return simulated_user(body, finish=False) if is_user_simulator(body) else {"content": "What else?"}

    with ScriptedServer(reply=reply) as server:
        _, predictions = _run(data, tmp_path, server, ("agent_multi_turn",))
    prediction = predictions["agent_multi_turn_0"]
    assert len(prediction.extra["transcript"]) == 1 + 40 and prediction.extra["stop"] == "message_limit"
    assert prediction.extra["process"] == [] and prediction.extra["result"] == []


def test_user_role_settings_load_and_fingerprint():
    model = ModelSettings(base_url="http://x/v1", model="m")
    plain = RunConfig("acebench", model)
    old = plain.to_json()
    old.pop("roles"), old.pop("options")  # a config stored before the fields existed
    assert RunConfig.from_json(old) == plain
    user = RunConfig("acebench", model, roles={"user": Endpoint("http://y/v1", "judge-user")})
    assert RunConfig.from_json(json.loads(json.dumps(user.to_json()))) == user
    assert fingerprint(plain, "d", "v") != fingerprint(user, "d", "v")
    identity = {"benchmark": "acebench", "language": None, "data_version": "d", "evaluator_version": "v",
                "generation": model.generation(), "roles": {"user": {"model": "judge-user"}}}
    import hashlib

    assert fingerprint(user, "d", "v") == hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]


@pytest.mark.slow
def test_cli_run_agent_multi_step_end_to_end(data: Path, tmp_path: Path):
    env = {**os.environ, "TOOLBOARD_HOME": str(tmp_path / "home")}
    with ScriptedServer(reply=milestone_agent) as server:
        done = subprocess.run(
            [sys.executable, "-m", "evaluators", "run", "acebench", "--subset", "agent_multi_step", "--data-dir", str(data),
             "--base-url", server.base_url, "--model", "scripted", "--api-key-env", "", "--json"],
            cwd=PROJECT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["subsets"]["agent_multi_step"] == {"n": 2, "metrics": {"accuracy": 1.0, "process_accuracy": 1.0}}


def test_cli_user_flags_need_a_benchmark_with_a_simulated_user(tmp_path: Path):
    env = {**os.environ, "TOOLBOARD_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "evaluators", "run", "toolbench_static", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
         "--user-model", "u"], cwd=PROJECT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "toolbench_static has no role 'user'" in done.stderr


def test_the_explore_view_shows_an_agent_sample_as_a_transcript(data: Path, tmp_path: Path):
    from evaluators.service.explore import sample_detail
    from ui.context import AppContext
    from ui.explore_tab import detail_html

    with ScriptedServer(reply=milestone_agent) as server:
        model = ModelSettings(base_url=server.base_url, model="scripted", api_key_env="", timeout=5.0)
        config = RunConfig("acebench", model, language="en", subsets=("agent_multi_step",), data_dir=str(data))
        store = Store(tmp_path / "db.sqlite")
        run_id, samples = start_run(RunRequest(config), store)
        asyncio.run(execute(store, run_id, samples))
    detail = sample_detail(store, run_id, "agent_multi_step_0")
    evidence = {item["key"]: item for item in detail["evidence"]}
    assert [turn["role"] for turn in evidence["transcript"]["value"]][:3] == ["user", "agent", "execution"]
    assert evidence["transcript"]["render"] == "transcript" and evidence["result"]["title"] == "End state (agent)"
    context = AppContext(store=store)
    try:
        page = detail_html(context, run_id, "agent_multi_step_0", "official")
    finally:
        context.close()
    assert "<h4>Transcript</h4>" in page and "turn-agent" in page and "turn-execution" in page
    assert "[{&#x27;status&#x27;: True" in page  # execution results are shown escaped
    assert "End state (agent)" in page and "Gold answer" in page


@pytest.mark.slow
def test_cli_role_flag_gives_the_simulated_user_its_own_endpoint(data: Path, tmp_path: Path):
    env = {**os.environ, "TOOLBOARD_HOME": str(tmp_path / "home"), "TOOLBOARD_TEST_USER_KEY": "sk-user"}
    with ScriptedServer(reply=simulated_user) as user_server, ScriptedServer(reply=milestone_agent) as model_server:
        done = subprocess.run(
            [sys.executable, "-m", "evaluators", "run", "acebench", "--subset", "agent_multi_turn", "--data-dir", str(data),
             "--base-url", model_server.base_url, "--model", "scripted", "--api-key-env", "",
             "--role", f"user={user_server.base_url},user-llm,TOOLBOARD_TEST_USER_KEY", "--json"],
            cwd=PROJECT, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert user_server.bodies and all(is_user_simulator(body) for body in user_server.bodies)
        assert {body["model"] for body in user_server.bodies} == {"user-llm"}
        assert user_server.headers_seen[0]["authorization"] == "Bearer sk-user"
        assert not any(is_user_simulator(body) for body in model_server.bodies)
    assert json.loads(done.stdout)["subsets"]["agent_multi_turn"]["metrics"]["accuracy"] == 1.0


@pytest.mark.slow
def test_cli_list_names_each_benchmarks_roles_and_options():
    done = subprocess.run([sys.executable, "-m", "evaluators", "list"], cwd=PROJECT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert "role user: Simulated user" in done.stdout and "role judge: Parameter judge" in done.stdout
    assert "option modality: text | audio (default text)" in done.stdout


def test_the_tested_model_playing_the_user_keeps_its_own_request_as_evidence(data: Path, tmp_path: Path):
    with ScriptedServer(reply=lambda body: simulated_user(body) if is_user_simulator(body) else milestone_agent(body)) as server:
        outcome, _ = _run(data, tmp_path, server, ("agent_multi_turn",))
    store = Store(tmp_path / "db.sqlite")
    kept = [store.load_sample_evidence(outcome.run_id, f"agent_multi_turn_{i}").request for i in (0, 1)]
    # the simulated user's prompts went through the same client, but each sample keeps the agent's request
    assert all(one["body"] is not None and not is_user_simulator(one["body"]) for one in kept)
    assert sum(one["requests"] for one in kept) == sum(1 for body in server.bodies if not is_user_simulator(body))
