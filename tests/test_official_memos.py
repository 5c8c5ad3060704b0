"""The official code's answers kept beside its venv (tests/tau2_official_venv.answer_memo and scripted_run_memo,
tests/bfcl_official_venv.score_memo and memo_path) are named by everything the answer depends on: another payload,
other result files, other scripts or another build of the venv is asked again; a τ² run against a server is kept only
when the server's answers are scripted; the fresh switch keeps nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import bfcl_official_venv, tau2_official_venv


def _tau2_venv(folder: Path, marker: str) -> tau2_official_venv.OfficialVenv:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / tau2_official_venv.MARKER).write_text(marker, encoding="utf-8")
    return tau2_official_venv.OfficialVenv(folder)


def test_a_tau2_answer_is_kept_by_mode_payload_and_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(tau2_official_venv.FRESH_ENV, raising=False)
    venv = _tau2_venv(tmp_path / "a", '{"archive_sha256": "1"}')
    memo = tau2_official_venv.answer_memo
    first = memo(venv, "evaluate", [{"domain": "retail", "b": 1, "a": 2}])
    assert first is not None and first.parent == venv.folder / "answers"
    assert memo(venv, "evaluate", [{"a": 2, "domain": "retail", "b": 1}]) == first  # the same payload, keys reordered
    assert memo(venv, "evaluate", [{"domain": "retail", "b": 1, "a": 3}]) != first
    assert memo(venv, "metrics", [{"domain": "retail", "b": 1, "a": 2}]) != first
    assert memo(_tau2_venv(tmp_path / "b", '{"archive_sha256": "2"}'), "evaluate",
                [{"domain": "retail", "b": 1, "a": 2}]).name != first.name  # type: ignore[union-attr]
    assert memo(venv, "run", {"domain": "retail"}) is None  # talks to a server: never kept
    monkeypatch.setenv(tau2_official_venv.FRESH_ENV, "1")
    assert memo(venv, "evaluate", [{"domain": "retail", "b": 1, "a": 2}]) is None


def test_a_tau2_run_against_a_scripted_server_is_kept_by_its_payload_and_scripts_not_the_servers_port(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(tau2_official_venv.FRESH_ENV, raising=False)
    venv = _tau2_venv(tmp_path / "a", '{"archive_sha256": "1"}')
    script = tmp_path / "script.py"
    script.write_text("def reply(body): return {'content': 'hi'}\n", encoding="utf-8")
    memo = tau2_official_venv.scripted_run_memo
    payload = {"domain": "airline", "base_url": "http://127.0.0.1:4001/v1", "task_ids": ["0"], "num_trials": 2}
    first = memo(venv, payload, [script])
    assert first is not None and memo(venv, {**payload, "base_url": "http://127.0.0.1:4999/v1"}, [script]) == first
    assert memo(venv, {**payload, "num_trials": 1}, [script]) != first
    script.write_text("def reply(body): return {'content': 'hello'}\n", encoding="utf-8")
    assert memo(venv, payload, [script]) != first  # another script answers otherwise: asked again
    monkeypatch.setenv(tau2_official_venv.FRESH_ENV, "1")
    assert memo(venv, payload, [script]) is None


def test_bfcl_scores_are_kept_by_result_files_categories_and_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(bfcl_official_venv.FRESH_ENV, raising=False)
    venv = bfcl_official_venv.OfficialVenv(tmp_path / "venv")
    venv.folder.mkdir()
    (venv.folder / bfcl_official_venv.MARKER).write_text('{"wheel": "1"}', encoding="utf-8")
    sets = []
    for name in ("oracle", "mutated"):
        bfcl_official_venv.write_result_files(tmp_path / name, {"simple_python": [(f"{name}_0", "[f(x=1)]")]})
        sets.append(tmp_path / name)
    memo = bfcl_official_venv.score_memo
    first = memo(venv, sets, ["simple_python"])
    assert first is not None and memo(venv, sets, ["simple_python"]) == first
    assert memo(venv, sets, ["simple_python", "multiple"]) != first
    assert memo(venv, sets[::-1], ["simple_python"]) != first  # the sets' order is their folders' order
    bfcl_official_venv.write_result_files(tmp_path / "mutated", {"simple_python": [("mutated_0", "[f(x=2)]")]})
    assert memo(venv, sets, ["simple_python"]) != first
    (venv.folder / bfcl_official_venv.ADDON_MARKER).write_text('["addon==1"]', encoding="utf-8")
    changed_build = memo(venv, sets, ["simple_python"])
    bfcl_official_venv.write_result_files(tmp_path / "mutated", {"simple_python": [("mutated_0", "[f(x=1)]")]})
    assert changed_build != first and memo(venv, sets, ["simple_python"]) != first
    monkeypatch.setenv(bfcl_official_venv.FRESH_ENV, "1")
    assert memo(venv, sets, ["simple_python"]) is None


def test_a_bfcl_answer_is_kept_by_its_kind_and_inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(bfcl_official_venv.FRESH_ENV, raising=False)
    venv = bfcl_official_venv.OfficialVenv(tmp_path / "venv")
    venv.folder.mkdir()
    (venv.folder / bfcl_official_venv.MARKER).write_text('{"wheel": "1"}', encoding="utf-8")
    memo = bfcl_official_venv.memo_path
    first = memo(venv, "multi-turn-ground-truth", [b"model", b"ids"])
    assert first is not None and first.parent == venv.folder / "answers"
    assert memo(venv, "multi-turn-ground-truth", [b"model", b"ids"]) == first
    assert memo(venv, "scores", [b"model", b"ids"]) != first
    assert memo(venv, "multi-turn-ground-truth", [b"modelids"]) != first  # parts are told apart by their lengths
    (venv.folder / bfcl_official_venv.MARKER).write_text('{"wheel": "2"}', encoding="utf-8")
    assert memo(venv, "multi-turn-ground-truth", [b"model", b"ids"]) != first
    monkeypatch.setenv(bfcl_official_venv.FRESH_ENV, "1")
    assert memo(venv, "multi-turn-ground-truth", [b"model", b"ids"]) is None
