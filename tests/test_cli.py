"""The CLI as a user runs it: a real subprocess, its stdout, stderr and exit code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli


@pytest.mark.slow
def test_list_names_the_benchmark_and_its_subsets():
    result = run_cli("list")
    assert result.returncode == 0
    assert "acebench" in result.stdout and "normal_atom_bool" in result.stdout


@pytest.mark.slow
def test_score_json_follows_the_design_contract(example_dir: Path):
    result = run_cli("score", "acebench", str(example_dir / "predictions.jsonl"), "--data-dir", str(example_dir), "--language", "en", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["benchmark"] == "acebench" and report["language"] == "en" and report["mode"] == "official"
    assert report["subsets"]["normal_atom_bool"] == {"n": 1, "metrics": {"accuracy": 1.0}}
    assert set(report["summary"]) == {"normal", "special", "agent", "overall", "atom", "single", "multi", "api", "pref"}
    assert report["summary"]["overall"] == 0.617
    assert report["errors"]["format_error"] == 1


@pytest.mark.slow
def test_strict_mode_and_subset_groups(example_dir: Path, tmp_path: Path):
    samples_out = tmp_path / "verdicts.jsonl"
    result = run_cli(
        "score", "acebench", str(example_dir / "predictions.jsonl"), "--data-dir", str(example_dir),
        "--subset", "atom", "special_irrelevant", "--mode", "strict", "--json", "--samples", str(samples_out),
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["mode"] == "strict"
    assert set(report["subsets"]) == {
        "normal_atom_bool", "normal_atom_enum", "normal_atom_number", "normal_atom_list",
        "normal_atom_object_short", "normal_atom_object_deep", "special_irrelevant",
    }
    # strict compares numbers: days=7 against 5 now fails
    assert report["subsets"]["normal_atom_number"]["metrics"]["accuracy"] == 0.0
    verdicts = [json.loads(line) for line in samples_out.read_text().splitlines()]
    assert len(verdicts) == 7 and {"sample_id", "correct", "error_type", "rule"} <= set(verdicts[0])


@pytest.mark.slow
def test_text_report_and_demo():
    result = run_cli("demo")
    assert result.returncode == 0, result.stderr
    assert "normal_atom_list_0" in result.stdout and "official_list_ordered_equal" in result.stdout
    assert "overall=0.617" in result.stdout


@pytest.mark.slow
def test_errors_are_one_clear_line_with_exit_code_2(example_dir: Path, tmp_path: Path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "normal_atom_bool_0", "output": 5}\n')
    result = run_cli("score", "acebench", str(bad), "--data-dir", str(example_dir))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "bad.jsonl, line 1: field 'output' must be a string" in result.stderr
    assert run_cli("score", "nope", str(bad)).stderr.startswith("error: unknown benchmark 'nope'")
    assert "unknown subset 'atoms'" in run_cli("score", "acebench", str(bad), "--subset", "atoms").stderr
    assert "unknown language" in run_cli("score", "acebench", str(bad), "--language", "fr").stderr


