"""τ²-bench end to end, as a user runs it: `python -m evaluators run tau2 … --trials 2 --limit 3` against a scripted
server playing the agent, the user simulator and the judge (three model names on one server), on the real pinned
tasks and the official environments in their workers; the report's pass^1 and pass^2; the run on the board beside
the published rows; a second run answered from the cache; and an official results file scored with `score`.

The scripted agent plays each task's gold assistant actions in order, then says the facts the task wants
communicated; the scripted user opens with the task's reference, then stops once the agent is done; the judge says
every assertion is met. So airline and retail tasks succeed (their rewards rest on the database, actions, what was
said and the judge), and telecom tasks fail (their assertions need the user's own actions on the phone, which this
user never takes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from evaluators.benchmarks.tau2 import data
from evaluators.core.registry import get_benchmark
from tests.scripted_server import ScriptedServer
from tests.tau2_fixtures import AGENT, PROJECT, USER, GoldPlayer, full_source_root

JUDGE = "judge-model"


def run_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evaluators", *args], cwd=PROJECT, capture_output=True, text=True,
                          timeout=900, env=env)


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["TOOLBOARD_HOME"] = str(tmp_path / "home")
    env.pop("TOOLBOARD_DATA_DIR", None)
    return env


@pytest.mark.slow
def test_a_cli_run_of_two_trials_of_three_tasks_per_domain_is_scored_and_on_the_board(cli_env: dict[str, str]):
    root = full_source_root()
    samples = get_benchmark("tau2").load(root, limit=3)
    assert [s.subset for s in samples] == ["airline"] * 3 + ["retail"] * 3 + ["telecom"] * 3
    player = GoldPlayer(samples)
    with ScriptedServer(reply=player.reply, latency=0.02) as server:  # a latency, so that requests overlap
        args = ("run", "tau2", "--base-url", server.base_url, "--model", AGENT, "--data-dir", str(root),
                "--limit", "3", "--trials", "2", "--role", f"user={server.base_url},{USER}",
                "--role", f"judge={server.base_url},{JUDGE}", "--concurrency", "8", "--json")
        result = run_cli(cli_env, *args)
        assert result.returncode == 0, result.stderr[-3000:]
        sent = server.requests
        # each trial is its own conversation: the two official trial seeds, in the agent's and the user's requests
        seeds = {(body["model"], body.get("seed")) for body in server.bodies}
        assert {(AGENT, 626729), (AGENT, 373753), (USER, 626729), (USER, 373753)} <= seeds
        assert all(body.get("temperature") == 0.0 for body in server.bodies)
        # agent, user and judge on one server share the run's limit of requests in flight
        assert server.max_in_flight <= 8
        again = run_cli(cli_env, *args)
        assert again.returncode == 0, again.stderr[-3000:]
        assert server.requests == sent  # the second run is answered from the cache, trial by trial
    report = json.loads(result.stdout)
    figures = {domain: report["subsets"][domain]["metrics"] for domain in data.DOMAINS}
    assert {domain: report["subsets"][domain]["n"] for domain in data.DOMAINS} == dict.fromkeys(data.DOMAINS, 3)
    for domain in data.DOMAINS:
        assert figures[domain]["pass_1"] is not None and figures[domain]["pass_2"] is not None, domain
    assert figures["airline"]["pass_1"] == figures["airline"]["pass_2"] == 1.0
    assert figures["retail"]["pass_1"] == figures["retail"]["pass_2"] == 1.0
    assert figures["telecom"]["pass_1"] == figures["telecom"]["pass_2"] == 0.0
    assert report["summary"]["pass_1"] == pytest.approx(2 / 3)
    for domain in data.DOMAINS:  # the agent's tokens (the server reports 10 prompt + 5 completion per answer)
        assert figures[domain]["priced_trials"] == 6, domain
        assert figures[domain]["agent_prompt_tokens"] == 2 * figures[domain]["agent_completion_tokens"] > 0

    from evaluators.engine.store import Store
    from evaluators.publish.board_table import board_rows

    store = Store(Path(cli_env["TOOLBOARD_HOME"]) / "toolboard.db")
    try:
        frame = board_rows("tau2", store)
    finally:
        store.close()
    # the two runs are one experiment: the board shows the newest, noting the repeat
    rows = frame[frame["run_id"] == json.loads(again.stdout)["run_id"]]
    assert set(rows["view"]) == {"overall", *data.DOMAINS}
    overall = rows[rows["view"] == "overall"].iloc[0]
    assert overall["pass_1"] == pytest.approx(2 / 3) and overall["user_model"] == USER
    # the agent model has no list price: no cost per trajectory, and the row's cost note says why
    assert pd.isna(overall["cost"]) and "no listed price" in overall["cost_note"]
    assert len(frame[frame["run_id"].isna() | (frame["run_id"] == "")]) > 0  # beside the published rows


@pytest.mark.slow
def test_an_official_results_file_is_scored_by_re_evaluating_every_trajectory(cli_env: dict[str, str],
                                                                               tmp_path: Path):
    """A results.json written by the official runner (`tau2 run`, in its own venv) against the same scripted
    participants: `score` re-evaluates each trajectory and finds the recorded rewards; the Upload tab's check reads
    the same file whole."""
    from evaluators.benchmarks.tau2 import prompts
    from evaluators.service.submissions import check_submission
    from tests import scripted_server, tau2_fixtures
    from tests.tau2_official_venv import run_official_scripted

    root = full_source_root()
    samples = get_benchmark("tau2").load(root, subsets=["airline"], limit=2)
    with ScriptedServer(reply=GoldPlayer(samples).reply) as server:
        # GoldPlayer finds a task by its scenario as our prompts and data modules read it: kept by their text too
        results, _ = run_official_scripted(
            {"domain": "airline", "base_url": server.base_url, "agent_model": AGENT, "user_model": USER,
             "task_ids": [s.input["task_id"] for s in samples], "num_trials": 2},
            server, [Path(module.__file__) for module in (tau2_fixtures, scripted_server, prompts, data)])
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results, indent=2))
    recorded = {(f"airline_{sim['task_id']}", sim["trial"]): sim["reward_info"]["reward"]
                for sim in results["simulations"]}
    assert len(recorded) == 4 and set(recorded.values()) == {1.0}

    verdicts = tmp_path / "verdicts.jsonl"
    done = run_cli(cli_env, "score", "tau2", str(path), "--data-dir", str(root), "--subset", "airline", "--json",
                   "--samples", str(verdicts))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    airline = report["subsets"]["airline"]
    # the file holds 2 of airline's 50 tasks: the other 48 are missing, counted as failures (as any partial upload)
    assert airline["n"] == 50 and report["missing"] == 48
    assert airline["metrics"]["pass_1"] == airline["metrics"]["pass_2"] == pytest.approx(2 / 50)
    assert airline["metrics"]["termination_user_stop"] == 4 and report["summary"]["user_model"] == f"openai/{USER}"
    assert airline["metrics"]["recorded_reward_differs"] == 0 and "recorded_reward_differs" not in report["summary"]
    scored = {(row["sample_id"], trial["trial"]): trial["reward"]
              for row in map(json.loads, verdicts.read_text().splitlines())
              if row["metadata"] for trial in row["metadata"]["verdicts"]}
    assert scored == recorded

    submission = check_submission(path, "tau2", data_dir=root)
    assert submission.ok, submission.validation()
    assert list(submission.reports["official"].subsets) == ["airline"]
    assert submission.reports["official"].subsets["airline"].metrics["pass_1"] == pytest.approx(2 / 50)

    # a file whose recorded reward is not what its trajectory earns: reported per task and trial, ours kept
    results["simulations"][0]["reward_info"]["reward"] = 0.0
    path.write_text(json.dumps(results, indent=2))
    done = run_cli(cli_env, "score", "tau2", str(path), "--data-dir", str(root), "--subset", "airline", "--json")
    report = json.loads(done.stdout)
    first = results["simulations"][0]
    assert report["subsets"]["airline"]["metrics"]["recorded_reward_differs"] == 1
    assert report["summary"]["recorded_reward_differs"] == (f"airline_{first['task_id']} trial {first['trial']}: "
                                                            "recorded 0, ours 1")
    assert report["subsets"]["airline"]["metrics"]["pass_1"] == pytest.approx(2 / 50)
