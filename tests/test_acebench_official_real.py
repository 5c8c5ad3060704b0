"""Over the real ACEBench data and the official request files in ../shared/data/acebench: every
request a run sends, as recorded by a loopback server, equals what the official code builds for the
item (the reference is assembled by tests/official_reference.py, never by importing official code)."""

from __future__ import annotations

import ast
import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from evaluators.benchmarks.acebench.official_prompts import OFFICIAL_AGENT_SAMPLING, OFFICIAL_SINGLE_TURN_SAMPLING
from evaluators.core.jsonl import read_json_lines
from evaluators.engine.runner import execute, start_run
from evaluators.engine.settings import ModelSettings, RunConfig, RunRequest
from evaluators.engine.store import Store
from tests.official_reference import OfficialReference
from tests.scripted_server import ScriptedServer

SAMPLING = ("temperature", "top_p", "max_tokens")


def _rows(root: Path, language: str, prefix: str) -> list[dict[str, Any]]:
    rows = []
    for path in sorted((root / f"data_{language}").glob(f"data_{prefix}*.json")):
        rows += [row for _, row in read_json_lines(path)]
    return rows


def _record_run(root: Path, language: str, subsets: tuple[str, ...], tmp_path: Path, reply=None) -> list[dict[str, Any]]:
    with ScriptedServer(reply=reply) as server:
        settings = ModelSettings(base_url=server.base_url, model="recorder", api_key_env="")
        config = RunConfig("acebench", settings, language=language, subsets=subsets, data_dir=str(root),
                           concurrency=32, use_cache=False)
        store = Store(tmp_path / f"{language}.sqlite")
        run_id, samples = start_run(RunRequest(config), store)
        outcome = asyncio.run(execute(store, run_id, samples))
        assert outcome.status == "finished" and store.run_totals(run_id)["errors"] == 0
        assert store.get_run(run_id).config["request_profile"]["prompt_style"] == "official"
        return server.bodies


@pytest.mark.parametrize("language,count", [("en", 973), ("zh", 967)])
def test_every_single_turn_request_equals_the_official_one(real_acebench_dir: Path, tmp_path: Path, language: str, count: int):
    reference = OfficialReference(real_acebench_dir)
    rows = _rows(real_acebench_dir, language, "normal") + _rows(real_acebench_dir, language, "special")
    expected = Counter(json.dumps(reference.single_turn(row, language), ensure_ascii=False) for row in rows)
    bodies = _record_run(real_acebench_dir, language, ("normal", "special"), tmp_path)
    sent = Counter(json.dumps(body["messages"], ensure_ascii=False) for body in bodies)
    assert len(rows) == count and sum(sent.values()) == count
    assert sent == expected  # byte for byte, one request per item
    assert all({k: body[k] for k in SAMPLING} == OFFICIAL_SINGLE_TURN_SAMPLING for body in bodies)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_first_agent_and_simulated_user_requests_equal_the_official_ones(real_acebench_dir: Path, tmp_path: Path, language: str):
    reference = OfficialReference(real_acebench_dir)
    opening = "finish conversation"
    bodies = _record_run(real_acebench_dir, language, ("agent",), tmp_path, reply=lambda body: {"content": opening})
    sent = [json.dumps(body["messages"], ensure_ascii=False) for body in bodies]
    steps = _rows(real_acebench_dir, language, "agent_multi_step")
    turns = _rows(real_acebench_dir, language, "agent_multi_turn")
    assert len(steps) == 20 and len(turns) == 30
    for row in steps:
        assert json.dumps(reference.first_multi_step_agent(row), ensure_ascii=False) in sent, row["id"]
    for row in turns:
        assert json.dumps(reference.first_user(row, language), ensure_ascii=False) in sent, row["id"]
        assert json.dumps(reference.first_multi_turn_agent(row, language, opening), ensure_ascii=False) in sent, row["id"]
    assert all({k: body[k] for k in SAMPLING} == OFFICIAL_AGENT_SAMPLING for body in bodies)


def _call_defaults(tree: ast.Module, option: str) -> Any:
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument"
                and node.args and getattr(node.args[0], "value", None) == option):
            return next(ast.literal_eval(k.value) for k in node.keywords if k.arg == "default")
    raise AssertionError(option)


def _init_defaults(path: Path, cls: str) -> dict[str, Any]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    klass = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    init = next(n for n in klass.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    names = [a.arg for a in init.args.args][-len(init.args.defaults):]
    return {name: ast.literal_eval(value) for name, value in zip(names, init.args.defaults)}


def test_official_sampling_constants_are_the_official_defaults(real_acebench_dir: Path):
    generate = ast.parse((real_acebench_dir / "generate.py").read_text(encoding="utf-8"))
    cli = {key: _call_defaults(generate, f"--{key.replace('_', '-')}") for key in SAMPLING}
    assert cli == OFFICIAL_SINGLE_TURN_SAMPLING
    code = real_acebench_dir / "model_inference"
    for path, cls in ((code / "multi_turn" / "APIModel_agent.py", "APIAgent_turn"),
                      (code / "multi_step" / "APIModel_agent.py", "APIAgent_step"),
                      (code / "multi_turn" / "APIModel_user.py", "APIUSER")):
        defaults = _init_defaults(path, cls)
        assert {key: defaults[key] for key in SAMPLING} == OFFICIAL_AGENT_SAMPLING, cls
    assert _init_defaults(code / "multi_step" / "APIModel_agent.py", "APIAgent_step")["language"] == "zh"


def test_the_official_loop_builds_its_agents_and_user_without_sampling_or_a_multi_step_language(real_acebench_dir: Path):
    tree = ast.parse((real_acebench_dir / "model_inference" / "apimodel_inference.py").read_text(encoding="utf-8"))
    built = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("APIAgent_turn", "APIAgent_step", "APIUSER"):
            built[node.func.id] = {k.arg for k in node.keywords}
    assert set(built) == {"APIAgent_turn", "APIAgent_step", "APIUSER"}
    assert not any(keywords & set(SAMPLING) for keywords in built.values())
    assert "language" not in built["APIAgent_step"] and "language" in built["APIAgent_turn"]
