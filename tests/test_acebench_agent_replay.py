"""`python -m evaluators replay acebench`: agent messages through an item's environment, no model."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from evaluators.benchmarks.acebench.agent.replay import replay_messages
from evaluators.benchmarks.acebench.checker import score
from evaluators.benchmarks.acebench.data import load
from evaluators.benchmarks.acebench.evidence import agent_prediction
from tests.agent_fixtures import ITEMS, write_agent_dataset
from tests.conftest import PROJECT


def _replay(data: Path, calls: Path, tmp_path: Path, language: str = "en") -> subprocess.CompletedProcess:
    env = {**os.environ, "TOOLBOARD_HOME": str(tmp_path / "home")}
    return subprocess.run([sys.executable, "-m", "evaluators", "replay", "acebench", "--data-dir", str(data), "--language", language,
                           "--calls", str(calls)], cwd=PROJECT, env=env, capture_output=True, text=True, timeout=120)


def test_replay_prints_the_end_state_of_each_line(tmp_path: Path):
    data = write_agent_dataset(tmp_path / "data")
    calls = tmp_path / "calls.jsonl"
    calls.write_text("".join(json.dumps({"id": item["id"], "calls": item["milestones"]}) + "\n" for item in ITEMS)
                     + json.dumps({"id": "agent_multi_turn_0", "calls": ["Which title?"]}) + "\n")
    done = _replay(data, calls, tmp_path)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [row["id"] for row in rows] == [item["id"] for item in ITEMS] + ["agent_multi_turn_0"]
    assert [row["state"] for row in rows[:-1]] == [item["gold"] for item in ITEMS]
    assert rows[-1]["state"] == []  # a message to the user executes nothing


@pytest.mark.slow
def test_replay_errors_name_the_line(tmp_path: Path):
    data = write_agent_dataset(tmp_path / "data")
    calls = tmp_path / "calls.jsonl"
    calls.write_text(json.dumps({"id": "agent_multi_step_0", "calls": []}) + "\n" + json.dumps({"id": "agent_multi_step_9", "calls": []}) + "\n")
    done = _replay(data, calls, tmp_path)
    assert done.returncode == 2 and "calls.jsonl, line 2: unknown agent item id 'agent_multi_step_9'" in done.stderr
    calls.write_text('{"id": "agent_multi_step_0", "calls": ["[f()]"]}\n{"id": oops}\n')
    done = _replay(data, calls, tmp_path)
    assert done.returncode == 2 and "calls.jsonl, line 2: invalid JSON" in done.stderr
    calls.write_text('{"id": "agent_multi_step_0", "calls": "[f()]"}\n')
    assert "line 1: field 'calls' must be a list of strings" in _replay(data, calls, tmp_path).stderr


_INNER_APOSTROPHE = re.compile(r"(?<=\w)'(?=\w)")


@pytest.mark.parametrize("language", ["en", "zh"])
def test_real_first_milestones_reach_the_reference_scores(real_acebench_dir: Path, language: str):
    """The first milestone list of every item (inner apostrophes escaped), scored against the gold:
    the counts the reference environment gives too (some milestones are wrong or incomplete)."""
    samples = load(real_acebench_dir, language=language, subsets=["agent_multi_turn", "agent_multi_step"])
    correct = {"agent_multi_turn": 0, "agent_multi_step": 0}
    for sample in samples:
        milestones = sample.meta["mile_stone"]
        first = milestones[0] if milestones and isinstance(milestones[0], list) else milestones
        calls = [_INNER_APOSTROPHE.sub(r"\\'", m) for m in first]
        state = replay_messages(sample, calls).saved_state()
        correct[sample.subset] += score(sample, agent_prediction(sample.id, state, calls), "official").correct
    assert correct == {"en": {"agent_multi_turn": 29, "agent_multi_step": 6}, "zh": {"agent_multi_turn": 29, "agent_multi_step": 8}}[language]
