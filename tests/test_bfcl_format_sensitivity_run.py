"""BFCL format sensitivity run from the CLI against the scripted server (real HTTP, a real SQLite store): a `--limit`
subset ends with every item scored and the official statistics in the report; native tools mode is refused before
any request; a run of every category leaves format sensitivity out; an upload of an official result file is scored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROJECT
from tests.scripted_server import ScriptedServer

RUN_SECONDS = 300
CONFIGURATIONS = 26


@pytest.fixture
def wheel_env(bfcl_official: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV

    monkeypatch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
    monkeypatch.delenv("TOOLBOARD_DATA_DIR", raising=False)
    env = {**os.environ, "TOOLBOARD_HOME": str(tmp_path / "home"), WHEEL_PATH_ENV: str(bfcl_official.wheel)}
    env.pop("TOOLBOARD_DATA_DIR", None)
    return env


def _oracle_by_system_prompt(samples: list[Any]) -> Any:
    """Answers each request with the item's gold written in the format its system prompt asks for."""
    from evaluators.benchmarks.bfcl.item_requests import build_request
    from tests.bfcl_format_sensitivity_answers import oracle_answer

    answers = {build_request(sample).messages[0]["content"]: oracle_answer(sample) for sample in samples}

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        return {"content": answers.get(body["messages"][0]["content"], "I cannot help.")}

    return reply


def _run(server: ScriptedServer, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "evaluators", "run", "bfcl", "--base-url", server.base_url, "--model",
            "org/scripted-model", "--api-key-env", "", "--concurrency", "4", "--json", *extra]
    return subprocess.run(args, cwd=PROJECT, env=env, capture_output=True, text=True, timeout=RUN_SECONDS)


@pytest.mark.slow
def test_a_limited_format_sensitivity_run_ends_scored_with_the_official_statistics(wheel_env: dict[str, str]):
    from evaluators.benchmarks.bfcl.data import load
    from evaluators.engine.store import Store

    samples = load(subsets=["format_sensitivity"], limit=2 * CONFIGURATIONS)
    # The second item is answered wrongly under the XML configurations: the statistics move.
    wrong = {s.id for s in samples[CONFIGURATIONS:] if "xml" in s.id.split(":")[1].split("&")[0]}
    oracle = _oracle_by_system_prompt([s for s in samples if s.id not in wrong])
    with ScriptedServer(reply=oracle) as server:
        done = _run(server, wheel_env, "--subset", "format_sensitivity", "--limit", str(2 * CONFIGURATIONS))
    assert done.returncode == 0, done.stderr[-3000:]
    assert server.requests == 2 * CONFIGURATIONS
    first = server.bodies[0]
    assert first["temperature"] == 0.001 and first["store"] is False and "tools" not in first
    report = json.loads(done.stdout)
    subset = report["subsets"]["format_sensitivity"]
    assert subset["n"] == 2 * CONFIGURATIONS
    metrics = subset["metrics"]
    assert metrics["accuracy"] == pytest.approx((2 * CONFIGURATIONS - len(wrong)) / (2 * CONFIGURATIONS), abs=1e-4)
    xml = "ret_fmt=verbose_xml&tool_call_tag=True&func_doc_fmt=json&prompt_fmt=plaintext&style=classic"
    python = "ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=markdown&style=classic"
    assert (metrics[f"correct[{xml}]"], metrics[f"total[{xml}]"], metrics[f"accuracy[{xml}]"]) == (1, 2, 0.5)
    assert (metrics[f"correct[{python}]"], metrics[f"total[{python}]"], metrics[f"accuracy[{python}]"]) == (2, 2, 1.0)
    assert sum(1 for key in metrics if key.startswith("accuracy[")) == CONFIGURATIONS
    # 12 of 26 configurations at 50%, 14 at 100%: max delta 50 points, sample stdev 25.42 points
    assert report["summary"]["format_sensitivity_max_delta"] == 0.5
    assert report["summary"]["format_sensitivity_std"] == 0.2542
    assert report["summary"]["overall"] is None
    store = Store(Path(wheel_env["TOOLBOARD_HOME"]) / "toolboard.db")
    try:
        predictions = store.load_predictions(report["run_id"])
    finally:
        store.close()
    assert len(predictions) == 2 * CONFIGURATIONS and all(p.error is None for p in predictions.values())


@pytest.mark.slow
def test_native_tools_mode_is_refused_for_format_sensitivity_before_any_request(wheel_env: dict[str, str]):
    with ScriptedServer() as server:
        done = _run(server, wheel_env, "--subset", "format_sensitivity", "--limit", "1", "--request-mode", "tools")
    assert done.returncode != 0 and server.requests == 0
    assert "format sensitivity runs in prompt mode only (the official generator drops it for function-calling " \
           "models" in done.stderr + done.stdout


@pytest.mark.slow
def test_an_official_result_file_is_scored_as_an_upload(wheel_env: dict[str, str], tmp_path: Path):
    """The official layout (`BFCL_v4_format_sensitivity_result.json`, `{"id", "result"}` per line) of the oracle:
    every item but simple_python_96's six JSON answers (the official JSON parser's own ceiling) right; Max Delta is
    the JSON configurations' half point."""
    from evaluators.benchmarks.bfcl.data import load
    from evaluators.core.registry import get_benchmark
    from evaluators.service.offline_scoring import score_predictions_file
    from tests.bfcl_format_sensitivity_answers import oracle_answer

    samples = load(subsets=["format_sensitivity"])
    path = tmp_path / "BFCL_v4_format_sensitivity_result.json"
    path.write_text("".join(json.dumps({"id": s.id, "result": oracle_answer(s)}) + "\n" for s in samples),
                    encoding="utf-8")
    scored = score_predictions_file(get_benchmark("bfcl"), path, None, None, ["format_sensitivity"], "official")
    report = scored.report
    assert report.subsets["format_sensitivity"].n == 5200 and not report.missing
    assert report.subsets["format_sensitivity"].metrics["accuracy"] == round(5194 / 5200, 4)
    assert report.summary["format_sensitivity_max_delta"] == 0.005
    assert report.errors == {"simple_function_checker:wrong_count": 6}
    # the Upload tab's path: the file's own subsets are found from its ids and scored alike
    from evaluators.service.submissions import check_read, read_upload

    submission = check_read(read_upload(path), "bfcl")
    assert submission.ok and submission.subsets == ["format_sensitivity"]
    assert submission.reports["official"].to_json() == report.to_json()


@pytest.mark.slow
def test_list_shows_format_sensitivity_and_its_statistics():
    from tests.conftest import run_cli

    done = run_cli("list")
    assert done.returncode == 0, done.stderr
    bfcl = done.stdout.split("\nbfcl: ", 1)[1].split("\nstepeval_audio", 1)[0]
    assert "format sensitivity (26 prompt formats, outside Overall) run when named" in bfcl
    assert "web_search_no_snippet, format_sensitivity\n" in bfcl
    assert "overall, format_sensitivity_max_delta, format_sensitivity_std\n" in bfcl
