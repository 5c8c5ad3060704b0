"""Official requests: the prompt texts read from the official files (never executed), requests and
sampling built as the official code builds them, the run's request profile, and the fallback to our
own wording. Fixture files stand in for the official ones here; see test_acebench_official_real.py."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evaluators.benchmarks.acebench.data import load
from evaluators.benchmarks.acebench.official_prompts import (
    OFFICIAL_AGENT_SAMPLING,
    OFFICIAL_SINGLE_TURN_SAMPLING,
    official_format,
    official_prompts_for_data,
)
from evaluators.benchmarks.acebench.official_source import OfficialCode, string_constants
from evaluators.benchmarks.acebench.prompts import build_request
from evaluators.benchmarks.acebench.request_profile import request_profile
from evaluators.core.errors import DataError, ToolboardError
from evaluators.engine.runner import execute, start_run
from evaluators.engine.settings import ModelSettings, RunConfig, RunRequest, fingerprint
from evaluators.engine.store import Store
from evaluators.service.run_request import RunPolicy, build_run_request
from tests.agent_fixtures import write_agent_dataset
from tests.conftest import PROJECT
from tests.official_fixtures import EXECUTION_MARKER, write_official_files
from tests.scripted_server import ScriptedServer

SINGLE_TURN = ("normal_atom_bool", "normal_preference", "special_incomplete", "normal_multi_turn_user_adjust")


@pytest.fixture
def official_data(example_dir: Path, tmp_path: Path) -> Path:
    """The built-in example laid out like the repository: DIR/data_en beside DIR/model_inference."""
    root = tmp_path / "acebench"
    shutil.copytree(example_dir / "data_en", root / "data_en")
    write_official_files(root)
    return root


def _sample(root: Path, subset: str):
    return load(root, language="en", subsets=[subset])[0]


def test_prompt_texts_are_read_with_ast_and_never_executed(official_data: Path):
    constants = string_constants(official_data / "model_inference" / "prompt_en.py")
    assert constants["USER_PROMPT_EN"] == "[en] history:\n{question}"
    assert "NOT_TEXT_EN" not in constants  # only string literals count
    code = OfficialCode(official_data / "model_inference")
    code.check()
    assert code.opening_line("zh") == "[zh] how can I help?"
    build_request(_sample(official_data, "normal_atom_bool"), prompt_style="official")
    assert not (official_data / EXECUTION_MARKER).exists()


def test_a_missing_file_or_constant_is_named(official_data: Path, tmp_path: Path):
    (official_data / "model_inference" / "multi_step" / "APIModel_agent.py").unlink()
    with pytest.raises(DataError, match=r"official prompt file missing \(expected model_inference/multi_step/APIModel_agent.py\)"):
        OfficialCode(official_data / "model_inference").check()
    with pytest.raises(DataError, match="constant SYSTEM_PROMPT_FOR_NORMAL_DATA_FR not found in model_inference/prompt_en.py"):
        OfficialCode(official_data / "model_inference").constant("en", "SYSTEM_PROMPT_FOR_NORMAL_DATA_FR")
    broken = tmp_path / "broken" / "model_inference"
    write_official_files(broken.parent)
    (broken / "prompt_zh.py").write_text("USER_PROMPT_ZH = '''unterminated", encoding="utf-8")
    with pytest.raises(DataError, match="prompt_zh.py: official prompt file cannot be read as Python source"):
        OfficialCode(broken).check()


def test_templates_fill_only_the_fields_the_official_code_fills():
    assert official_format("a {x} {{b}} {y}", x=[{"k": True}], y="z") == "a [{'k': True}] {b} z"
    for template in ("{x.__class__}", "{x[0]}", "{x!r}", "{x:>9}", "{other}", "{}", "{x"):
        with pytest.raises(DataError):
            official_format(template, x=[1])


def test_single_turn_requests_follow_the_official_code(official_data: Path):
    normal = _sample(official_data, "normal_atom_bool")
    request = build_request(normal, prompt_style="official")
    functions = normal.input["functions"]
    assert request.messages == [
        {"role": "system", "content": f"[en] normal rules.\n{normal.input['time']}\nSpecs: {functions}"},
        {"role": "user", "content": f"[en] history:\n{normal.input['question']}"},
    ]
    assert request.sampling == OFFICIAL_SINGLE_TURN_SAMPLING and request.tools is None
    preference = _sample(official_data, "normal_preference")
    system = build_request(preference, prompt_style="official").messages[0]["content"]
    assert system == f"[en] preference rules.\nProfile: {preference.input['profile']}\nSpecs: {preference.input['functions']}"
    special = _sample(official_data, "special_incomplete")
    assert build_request(special, prompt_style="official").messages[0]["content"].startswith("[en] special rules. Time ")
    # the official zh prompts for a zh item
    zh_root = official_data.parent / "zh"
    shutil.copytree(official_data / "model_inference", zh_root / "model_inference")
    shutil.copytree(official_data / "data_en", zh_root / "data_zh")
    zh = load(zh_root, language="zh", subsets=["normal_atom_bool"])[0]
    assert build_request(zh, prompt_style="official").messages[1]["content"].startswith("[zh] history:\n")


def test_official_requests_need_prompt_mode(official_data: Path):
    with pytest.raises(ValueError, match="official requests exist in prompt mode only"):
        build_request(_sample(official_data, "normal_atom_bool"), mode="tools", prompt_style="official")


def _run(store: Store, config: RunConfig, server: ScriptedServer):
    run_id, samples = start_run(RunRequest(config), store)
    outcome = asyncio.run(execute(store, run_id, samples))
    return outcome, store.get_run(run_id)


def _config(server: ScriptedServer, data: Path, subsets=SINGLE_TURN, **model) -> RunConfig:
    settings = ModelSettings(base_url=server.base_url, model="scripted", api_key_env="", **model)
    return RunConfig("acebench", settings, language="en", subsets=subsets, data_dir=str(data), concurrency=4,
                     use_cache=False)


def test_a_run_sends_the_official_requests_with_official_sampling_and_records_them(official_data: Path, tmp_path: Path):
    samples = load(official_data, language="en", subsets=list(SINGLE_TURN))
    expected = sorted(json.dumps(build_request(s, prompt_style="official").messages) for s in samples)
    with ScriptedServer() as server:
        outcome, run = _run(Store(tmp_path / "db.sqlite"), _config(server, official_data), server)
    assert outcome.status == "finished"
    assert sorted(json.dumps(body["messages"]) for body in server.bodies) == expected
    for body in server.bodies:
        assert {k: body[k] for k in ("temperature", "top_p", "max_tokens")} == {"temperature": 0.7, "top_p": 1, "max_tokens": 1200}
    profile = run.config["request_profile"]
    assert run.config["model"]["prompt_style"] == "official" and profile["prompt_style"] == "official"
    assert profile["sampling"] == {"single_turn": {"temperature": 0.7, "top_p": 1, "max_tokens": 1200}}
    assert profile["note"] == "" and "official model_inference/" in profile["source"]


def test_what_the_user_sets_wins_over_official_sampling(official_data: Path, tmp_path: Path):
    with ScriptedServer() as server:
        _, run = _run(Store(tmp_path / "db.sqlite"), _config(server, official_data, temperature=0.0, max_tokens=64), server)
    assert {(b["temperature"], b["top_p"], b["max_tokens"]) for b in server.bodies} == {(0.0, 1, 64)}
    assert run.config["request_profile"]["sampling"]["single_turn"] == {"temperature": 0.0, "top_p": 1, "max_tokens": 64}


def test_the_prompt_style_is_part_of_the_fingerprint():
    def config(style: str | None) -> RunConfig:
        return RunConfig("acebench", ModelSettings(base_url="http://x/v1", model="m", prompt_style=style), language="en")

    official, toolboard, before = (fingerprint(config(s), "d", "v") for s in ("official", "toolboard", None))
    assert len({official, toolboard, before}) == 3
    # settings that send what they always sent keep their fingerprint (temperature 0 when unset)
    for benchmark in ("acebench", "toolbench_static"):
        unset = RunConfig(benchmark, ModelSettings(base_url="http://x/v1", model="m"))
        zero = RunConfig(benchmark, ModelSettings(base_url="http://x/v1", model="m", temperature=0.0))
        assert fingerprint(unset, "d", "v") == fingerprint(zero, "d", "v")


def test_without_the_prompt_files_runs_use_our_wording_and_say_so(example_dir: Path, tmp_path: Path):
    with ScriptedServer() as server:
        _, run = _run(Store(tmp_path / "db.sqlite"), _config(server, example_dir), server)
    profile = run.config["request_profile"]
    assert profile["prompt_style"] == "toolboard" and "official prompt files (model_inference/) are not beside" in profile["note"]
    assert profile["sampling"] == {"single_turn": {"temperature": 0.0}}
    assert {b["temperature"] for b in server.bodies} == {0.0} and not any("top_p" in b for b in server.bodies)
    samples = load(example_dir, language="en", subsets=list(SINGLE_TURN))
    assert sorted(json.dumps(b["messages"]) for b in server.bodies) == sorted(
        json.dumps(build_request(s).messages) for s in samples)


def test_asking_for_official_requests_without_the_files_or_in_tools_mode_is_refused(example_dir: Path, official_data: Path, tmp_path: Path):
    store = Store(tmp_path / "db.sqlite")
    with ScriptedServer() as server:
        with pytest.raises(DataError, match="official prompt files are not here: expected model_inference/prompt_en.py"):
            start_run(RunRequest(_config(server, example_dir, prompt_style="official")), store)
        with pytest.raises(ToolboardError, match="official requests exist in prompt mode only"):
            start_run(RunRequest(_config(server, official_data, prompt_style="official", request_mode="tools")), store)
        _, run = _run(store, _config(server, official_data, request_mode="tools"), server)
    assert run.config["request_profile"]["prompt_style"] == "toolboard"
    assert "native tools mode is our extension" in run.config["request_profile"]["note"]
    assert store.list_runs() == [store.get_run(run.id)]  # the refused runs were never created


def test_a_benchmark_without_prompt_styles_refuses_one(tmp_path: Path):
    raw = {"benchmark": "toolbench_static", "base_url": "http://127.0.0.1:9/v1", "model": "m", "prompt_style": "official"}
    with pytest.raises(ToolboardError, match="toolbench_static has no prompt styles to choose from"):
        build_run_request(raw, RunPolicy())  # the run request's rule, for every front door


def test_official_agent_requests(tmp_path: Path):
    """multi_step: the zh agent prompts even for en items (official_multi_step_agent_defaults_to_zh);
    multi_turn: the agent prompt plus the policies, the simulated user's rules and opening line; both
    with the agent classes' sampling."""
    data = write_agent_dataset(tmp_path / "data")
    write_official_files(data)
    with ScriptedServer(reply=lambda body: {"content": "finish conversation"}) as server:
        outcome, run = _run(Store(tmp_path / "db.sqlite"), _config(server, data, subsets=("agent",)), server)
    assert outcome.status == "finished"
    samples = {s.id: s for s in load(data, language="en", subsets=["agent_multi_step", "agent_multi_turn"])}
    step = next(s for s in samples.values() if s.subset == "agent_multi_step")
    first_step = [{"role": "system", "content": "[zh] multi-step agent rules {literal braces}."},
                  {"role": "user", "content": f"[zh] step apis: {step.input['functions']} history: user:{step.input['question']}\n\n"}]
    assert first_step in [b["messages"] for b in server.bodies]
    turn = next(s for s in samples.values() if s.subset == "agent_multi_turn")
    rules = "phone" if "BaseApi" in turn.input["involved_classes"] else "airline"
    first_user = [{"role": "system", "content": f"[en] {rules} user. Instruction: {turn.input['question']}"},
                  {"role": "user", "content": "[en] how can I help?"}]
    assert first_user in [b["messages"] for b in server.bodies]
    agent_systems = {b["messages"][0]["content"] for b in server.bodies if "multi-turn agent" in b["messages"][0]["content"]}
    assert all(text.startswith("[en] multi-turn agent rules. [en] ") for text in agent_systems) and agent_systems
    assert {(b["temperature"], b["top_p"], b["max_tokens"]) for b in server.bodies} == {(0.001, 1, 1000)}
    profile = run.config["request_profile"]
    assert profile["sampling"] == {"agent": OFFICIAL_AGENT_SAMPLING, "simulated_user": OFFICIAL_AGENT_SAMPLING}
    assert any("`assistant` messages" in d for d in profile["differences"])


def test_official_prompts_are_found_one_level_up_from_data_all(official_data: Path, tmp_path: Path):
    checkout = tmp_path / "checkout"
    shutil.copytree(official_data / "data_en", checkout / "data_all" / "data_en")
    shutil.copytree(official_data / "model_inference", checkout / "model_inference")
    prompts = official_prompts_for_data(checkout / "data_all" / "data_en")
    assert prompts.code.root == checkout / "model_inference"


def _cli(*args: str, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "TOOLBOARD_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "evaluators", *args], cwd=PROJECT, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.slow
def test_cli_prompt_style(official_data: Path, example_dir: Path, tmp_path: Path):
    with ScriptedServer() as server:
        common = ("run", "acebench", "--base-url", server.base_url, "--model", "m", "--api-key-env", "",
                  "--subset", "normal_atom_bool", "--json")
        ran = _cli(*common, "--data-dir", str(official_data), home=tmp_path)
        assert ran.returncode == 0, ran.stderr
        assert "requests: official prompts (Single-turn: temperature=0.7, top_p=1, max_tokens=1200)" in ran.stderr
        json.loads(ran.stdout)
        own = _cli(*common, "--data-dir", str(example_dir), home=tmp_path)
        assert own.returncode == 0 and "not the official requests: the official prompt files" in own.stderr
        refused = _cli(*common, "--data-dir", str(example_dir), "--prompt-style", "official", home=tmp_path)
        assert refused.returncode == 2 and "expected model_inference/prompt_en.py" in refused.stderr
        other = _cli("run", "toolbench_static", "--base-url", server.base_url, "--model", "m", "--prompt-style", "toolboard",
                     home=tmp_path)
        assert other.returncode == 2 and "has no prompt styles" in other.stderr


def test_broken_official_files_fall_back_in_auto_and_stop_a_resumed_official_run(official_data: Path, tmp_path: Path):
    store = Store(tmp_path / "db.sqlite")
    with ScriptedServer() as server:
        run_id, _ = start_run(RunRequest(_config(server, official_data)), store)
        (official_data / "model_inference" / "multi_turn" / "APIModel_user.py").unlink()
        # a run that was started with the official prompts stops with one clear error when they are gone
        with pytest.raises(DataError, match="multi_turn/APIModel_user.py"):
            asyncio.run(execute(store, run_id))
        assert store.prediction_states(run_id) == {}
        # a new run in auto mode falls back to our wording and says why
        _, run = _run(store, _config(server, official_data), server)
    profile = run.config["request_profile"]
    assert profile["prompt_style"] == "toolboard" and "could not be read" in profile["note"]
    # the note is shown to visitors: it says where the data came from in words, never the server's folder
    assert "(a local folder)" in profile["note"] and "multi_turn/APIModel_user.py" in profile["note"]
    assert str(official_data) not in profile["note"] and str(tmp_path) not in profile["note"]


def test_the_note_of_data_without_official_files_names_no_folder(example_dir: Path):
    config = RunConfig("acebench", ModelSettings(base_url="http://127.0.0.1:9/v1", model="m"), data_dir=str(example_dir))
    note = request_profile(config).note
    assert note == "the official prompt files (model_inference/) are not beside the data (a local folder): own prompts used"


def test_requests_reuse_the_official_texts_once_read(official_data: Path):
    """A run checks the official files as it starts; its requests then reuse the texts already read
    instead of looking for the files again on every request."""
    first = build_request(_sample(official_data, "normal_atom_bool"), prompt_style="official")
    (official_data / "model_inference" / "prompt_en.py").unlink()
    again = build_request(_sample(official_data, "normal_atom_bool"), prompt_style="official")
    assert again.messages == first.messages
