"""BFCL whole, from the CLI against the scripted server: a run of the agentic group (`--subset agentic`, web search
on the recorded backend, the three memory stores after their prerequisite conversations) and a run of every
category each end with every item scored; the run of every category reports the official Overall, as the published
rows have it. The data folder is the pinned wheel's data, with the small memory set of test_bfcl_memory_run.py (two
scenarios, short prerequisite chains) in place of the real one, so that the chains cost seconds."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROJECT
from tests.engine_fixtures import stored_predictions
from tests.scripted_server import ScriptedServer
from tests.test_bfcl_memory_run import FACTS, write_memory_folder
from tests.web_search_fixtures import write_recording

RUN_SECONDS = 600
TOOL_RESULTS = "[{'role': 'tool'"


def _reply(body: dict[str, Any]) -> dict[str, Any]:
    """Web search: a search, a fetch of the recorded page, then an answer; a memory fact: noted; anything else a
    text that is no call (a single-turn item then fails its decode, a multi-turn turn ends): every item is scored,
    whatever its verdict."""
    messages = body["messages"]
    steps_done = sum(1 for m in messages if m["role"] == "user" and m["content"].startswith(TOOL_RESULTS))
    if "search_engine_query" in messages[0]["content"]:
        if steps_done == 0:
            return {"content": "[search_engine_query(keywords='company founder', max_results=2)]"}
        if steps_done == 1:
            return {"content": "[fetch_url_content(url='https://site1.example/page', mode='truncate')]"}
    if messages[-1]["content"] in FACTS:
        return {"content": "Noted."}
    return {"content": "I do not know."}


@pytest.fixture
def whole_env(bfcl_official: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, str], Path]:
    """The environment of a run (its own home, the pinned wheel, the recording) and a data folder laid out like the
    wheel's data, its memory files replaced by the small set."""
    from evaluators.benchmarks.bfcl.agentic.vector_extra import VECTOR_INSTALL, vector_extra_missing
    from evaluators.benchmarks.bfcl.wheel import DATA_PREFIX, WHEEL_PATH_ENV

    if vector_extra_missing():
        pytest.skip(f"a run of every agentic category needs memory_vector's optional extra: {VECTOR_INSTALL}")
    monkeypatch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
    folder = tmp_path / "data"
    with zipfile.ZipFile(bfcl_official.wheel) as wheel:
        for name in wheel.namelist():
            if name.startswith(DATA_PREFIX) and not name.endswith("/"):
                target = folder / name.removeprefix(DATA_PREFIX)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(wheel.read(name))
    shutil.rmtree(folder / "memory_prereq_conversation")
    for name in ("BFCL_v4_memory.json", "possible_answer/BFCL_v4_memory.json"):
        (folder / name).unlink()
    shutil.copytree(write_memory_folder(tmp_path / "memory-set", bfcl_official.wheel), folder, dirs_exist_ok=True)
    env = {**os.environ, "TOOLBOARD_HOME": str(tmp_path / "home"), WHEEL_PATH_ENV: str(bfcl_official.wheel),
           "TOOLBOARD_BFCL_WEB_SEARCH_RECORDING": str(write_recording(tmp_path))}
    for name in ("SERPAPI_API_KEY", "TOOLBOARD_SERPAPI_URL"):
        env.pop(name, None)
    return env, folder


def _run(env: dict[str, str], folder: Path, *subsets: str) -> dict[str, Any]:
    with ScriptedServer(reply=_reply) as server:
        args = [sys.executable, "-m", "evaluators", "run", "bfcl", *(("--subset", *subsets) if subsets else ()),
                "--limit", "1", "--data-dir", str(folder), "--option", "web_search_backend=recorded",
                "--base-url", server.base_url, "--model", "org/scripted-model", "--api-key-env", "",
                "--concurrency", "8", "--json"]
        done = subprocess.run(args, cwd=PROJECT, env=env, capture_output=True, text=True, timeout=RUN_SECONDS)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.mark.slow
def test_a_run_of_the_agentic_group_with_the_recorded_backend_scores_every_item(whole_env: tuple[dict[str, str], Path]):
    from evaluators.benchmarks.bfcl.categories import AGENTIC

    env, folder = whole_env
    report = _run(env, folder, "agentic")
    assert {name: subset["n"] for name, subset in report["subsets"].items()} == {name: 1 for name in AGENTIC}
    assert report["summary"]["agentic"] is not None and report["summary"]["overall"] is None
    predictions = stored_predictions(Path(env["TOOLBOARD_HOME"]), report["run_id"])
    assert len(predictions) == len(AGENTIC) and all(p.error is None for p in predictions.values())
    searched = [p for p in predictions.values() if p.extra.get("transcript") and "WebSearchAPI" in json.dumps(p.extra)]
    assert searched and all("Ada Example" in json.dumps(p.extra["transcript"]) for p in searched)  # the recorded page


@pytest.mark.slow
def test_a_run_of_every_category_scores_every_item_and_reports_overall(whole_env: tuple[dict[str, str], Path]):
    from evaluators.benchmarks.bfcl.categories import CATEGORIES, FORMAT_SENSITIVITY

    env, folder = whole_env
    report = _run(env, folder)
    # every scoring category, one item each; format sensitivity (outside Overall, 5,200 requests) only when named
    assert {name: subset["n"] for name, subset in report["subsets"].items()} == {
        name: 1 for name in CATEGORIES if name != FORMAT_SENSITIVITY}
    summary = report["summary"]
    assert summary["overall"] is not None and not summary.get("overall_lacks")
    for part in ("non_live_ast", "live_ast", "multi_turn", "agentic", "web_search", "memory"):
        assert summary[part] is not None, part
    # the board shows the complete run with its headline and its agentic figures, as it shows the published rows
    from evaluators.engine.store import Store
    from evaluators.publish.board_table import board_rows

    store = Store(Path(env["TOOLBOARD_HOME"]) / "toolboard.db")
    try:
        frame = board_rows("bfcl", store)
    finally:
        store.close()
    [row] = frame[frame["run_id"] == report["run_id"]].to_dict("records")
    for column in ("overall", "agentic", "memory", "web_search"):
        assert row[column] == pytest.approx(summary[column], abs=1e-4), column
