"""The built-in ACEBench example is whole: its agent items have the environment's default states beside
them (example/scenarios/en/, written for the example), so a run or a replay of them works like the others,
and the gold calls reach the gold end state."""

from __future__ import annotations

import json
from pathlib import Path

from evaluators.benchmarks.acebench.agent.scenarios import default_states
from evaluators.benchmarks.acebench.checker import score
from evaluators.benchmarks.acebench.data import load
from evaluators.benchmarks.acebench.evidence import agent_prediction
from tests.acebench_fixtures import EXAMPLE_DIR
from tests.conftest import run_cli

GOLD_CALLS = {"agent_multi_turn_0": ["[turn_on_wifi()]",
                                     "[send_message(sender_name='Ana', receiver_name='Ben', message='I will be late.')]"],
              "agent_multi_step_0": ["[turn_on_wifi()]"]}


def test_the_example_has_a_default_state_for_every_environment_class():
    states = default_states(EXAMPLE_DIR / "data_en", "en")
    assert states["MessageApi"]["wifi"] is False  # inherited from BaseApi, as the constructor calls it first
    assert set(states["MessageApi"]["user_list"]) == {"Ana", "Ben"}


def test_the_examples_gold_calls_replay_to_its_gold_end_states_and_score_right(tmp_path: Path):
    calls = tmp_path / "calls.jsonl"
    calls.write_text("".join(json.dumps({"id": id_, "calls": lines}) + "\n" for id_, lines in GOLD_CALLS.items()),
                     encoding="utf-8")
    done = run_cli("replay", "acebench", "--data-dir", str(EXAMPLE_DIR), "--language", "en", "--calls", str(calls))
    assert done.returncode == 0, done.stderr
    states = {line["id"]: line["state"] for line in map(json.loads, done.stdout.splitlines())}
    samples = {s.id: s for s in load(str(EXAMPLE_DIR), "en", ["agent_multi_turn", "agent_multi_step"])}
    assert set(states) == set(samples) == set(GOLD_CALLS)
    for sample_id, state in states.items():
        verdict = score(samples[sample_id], agent_prediction(sample_id, state, GOLD_CALLS[sample_id]), "official")
        assert verdict.correct, (sample_id, verdict.detail)
