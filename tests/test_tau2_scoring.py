"""τ²-bench scoring (issue 45): the official reward rule by rule (evaluator.py), pass^k and the average reward
(metrics.py), and the `score`/`report` hooks (report.py).

The core tests use small task records and trajectories written here in the official schema, with fixed EnvChecks
standing in for the environment host (the host replays the official environments; its own tests are
test_tau2_env.py). The parity tests (slow) compare with the official code through tests/tau2_official_venv.py."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import pytest

from evaluators.benchmarks.tau2 import evaluator as ev
from evaluators.benchmarks.tau2.evaluator import TrialVerdict, evaluate_trial
from evaluators.benchmarks.tau2.metrics import TrialRow, domain_metrics, is_successful, max_k_of, pass_hat_k
from evaluators.benchmarks.tau2.official_notes import OfficialNotes, read_notes
from evaluators.benchmarks.tau2.report import score_with, summarize
from evaluators.benchmarks.tau2.source import Source
from evaluators.core.types import Prediction, Sample
from tests import tau2_official_venv
from tests.tau2_fixtures import full_source_root


@dataclass
class FixedEnvCheck:
    """A stand-in for the environment host's EnvCheck (plan contract): fixed answers."""

    db_match: bool | None = True
    env_assertions: list[dict[str, Any]] = field(default_factory=list)
    tool_types: dict[str, str] = field(default_factory=dict)
    replay_problems: list[str] = field(default_factory=list)
    replay_error: str | None = None
    db_diff: dict[str, Any] = field(default_factory=dict)


class EnvChecks:
    """An injected env_check answering a fixed EnvCheck and counting its calls."""

    def __init__(self, check: FixedEnvCheck | None = None):
        self.check = check or FixedEnvCheck()
        self.calls: list[tuple[str, str]] = []

    def __call__(self, domain: str, record: Any, messages: list[dict[str, Any]]) -> FixedEnvCheck:
        self.calls.append((domain, record["id"]))
        return self.check


# Notes of our own in the official notes' shape (the real ones are read from the pinned evaluator files; the parity
# tests below use those).
NOTES = OfficialNotes(premature="Ended early ({reason}).", no_criteria="Fixture: no criteria.",
                      no_env_criteria="Fixture: no env criteria.", no_actions="Fixture: no actions.",
                      no_communicate="Fixture: nothing to communicate.", no_nl="Fixture: no assertions.",
                      communicated="Said {info} in: {content}", not_communicated="Never said {info}.")


def failing_env_check(domain: str, record: Any, messages: list[dict[str, Any]]) -> FixedEnvCheck:
    raise RuntimeError("worker ran out of memory")


# ---- fixtures in the official schema ------------------------------------------------------------------------

AIRLINE_TASK: dict[str, Any] = {
    "id": "7",
    "user_scenario": {"persona": None, "instructions": {"domain": "airline", "reason_for_call": "Cancel.",
                                                        "known_info": None, "unknown_info": None,
                                                        "task_instructions": "Cancel reservation ABC."}},
    "initial_state": None,
    "evaluation_criteria": {
        "actions": [
            {"action_id": "7_0", "name": "get_reservation_details", "arguments": {"reservation_id": "ABC"},
             "info": None},
            {"action_id": "7_1", "name": "cancel_reservation", "arguments": {"reservation_id": "ABC"}, "info": None},
        ],
        "communicate_info": ["1000"],
        "nl_assertions": None,
        "reward_basis": ["DB", "COMMUNICATE"],
    },
    "annotations": {"ignored": True},
}

RETAIL_NL_TASK: dict[str, Any] = {
    "id": "3",
    "user_scenario": {"instructions": "Ask about an order."},
    "evaluation_criteria": {
        "actions": [],
        "communicate_info": [],
        "nl_assertions": ["The agent refuses to refund.", "The agent stays polite."],
        "reward_basis": ["DB", "NL_ASSERTION"],
    },
}

TELECOM_TASK: dict[str, Any] = {
    "id": "[mobile_data_issue]airplane_mode_on[PERSONA:Easy]",
    "user_scenario": {"persona": "Patient.", "instructions": "My phone has no data."},
    "evaluation_criteria": {
        "actions": [{"action_id": "t_0", "requestor": "user", "name": "toggle_airplane_mode", "arguments": {},
                     "compare_args": []},
                    {"action_id": "t_1", "requestor": "assistant", "name": "get_customer_by_phone",
                     "arguments": {"phone_number": "555-0100"}, "compare_args": ["phone_number"]}],
        "env_assertions": [{"env_type": "user", "func_name": "assert_mobile_data_status",
                            "arguments": {"expected_status": True}, "assert_value": True, "message": None}],
        "reward_basis": ["ENV_ASSERTION", "ACTION"],
    },
}

NO_ENV_CRITERIA_TASK: dict[str, Any] = {
    "id": "9", "user_scenario": {"instructions": "Just chat."},
    "evaluation_criteria": {"actions": None, "env_assertions": None, "communicate_info": None,
                            "reward_basis": ["DB"]},
}

NO_CRITERIA_TASK: dict[str, Any] = {"id": "10", "user_scenario": {"instructions": "Chat."},
                                    "evaluation_criteria": None}

GREETING = {"role": "assistant", "content": "Hi! How can I help you today?", "tool_calls": None, "turn_idx": 0}


def call(call_id: str, name: str, arguments: dict[str, Any], requestor: str = "assistant") -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments, "requestor": requestor}


def tool_message(call_id: str, content: str, requestor: str = "assistant", error: bool = False) -> dict[str, Any]:
    return {"role": "tool", "id": call_id, "content": content, "requestor": requestor, "error": error}


def assistant_calls(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": list(calls)}


def text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "content": content, "tool_calls": None}


def airline_messages(final_text: str = "Done: you get a refund of $1,000.") -> list[dict[str, Any]]:
    return [GREETING, text("user", "Cancel ABC please."),
            assistant_calls(call("c1", "get_reservation_details", {"reservation_id": "ABC"})),
            tool_message("c1", "{}"),
            assistant_calls(call("c2", "cancel_reservation", {"reservation_id": "ABC"})),
            tool_message("c2", "{}"),
            text("assistant", final_text), text("user", "Thanks ###STOP###")]


def trial(messages: list[dict[str, Any]], reason: str = "user_stop", number: int = 0,
          judgement: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"trial": number, "seed": 626729, "termination_reason": reason, "error": None, "messages": messages,
            "nl_judgement": judgement, "usage": {}}


def judgement(*met: Any, results: Any = "auto", error: str | None = None) -> dict[str, Any]:
    if results == "auto":
        results = [{"expectedOutcome": f"outcome {i}", "reasoning": f"why {i}", "metExpectation": value}
                   for i, value in enumerate(met)]
    return {"model": "judge-model", "results": results, "error": error}


def evaluate(record: dict[str, Any], one_trial: dict[str, Any], check: Any = None, domain: str = "airline"
             ) -> TrialVerdict:
    return evaluate_trial(domain, record, one_trial, check if check is not None else EnvChecks(), notes=NOTES)


# ---- premature termination, no criteria ------------------------------------------------------------------------

@pytest.mark.parametrize("reason", ["max_steps", "too_many_errors", "agent_error", "user_error"])
def test_premature_termination_scores_zero_without_components(reason: str) -> None:
    checks = EnvChecks()
    verdict = evaluate(AIRLINE_TASK, trial(airline_messages(), reason), checks)
    assert verdict.reward_info == {
        "reward": 0.0, "db_check": None, "env_assertions": None, "action_checks": None, "nl_assertions": None,
        "communicate_checks": None, "reward_basis": None, "reward_breakdown": None,
        "info": {"note": f"Ended early ({reason})."}}
    assert verdict.rule == ev.PREMATURE_RULE and verdict.failed_rules == [ev.PREMATURE_RULE]
    assert checks.calls == []  # no component runs


def test_agent_stop_is_scored_like_user_stop() -> None:
    verdict = evaluate(AIRLINE_TASK, trial(airline_messages(), "agent_stop"))
    assert verdict.reward == 1.0 and verdict.rule == ev.PRODUCT_RULE


def test_no_evaluation_criteria_scores_one() -> None:
    verdict = evaluate(NO_CRITERIA_TASK, trial([GREETING]))
    assert verdict.reward_info["reward"] == 1.0 and verdict.reward_info["reward_basis"] is None
    assert verdict.reward_info["info"] == {"note": NOTES.no_criteria}
    assert verdict.rule == ev.NO_CRITERIA_RULE


# ---- DB and env assertions (from the EnvCheck) -----------------------------------------------------------------

def test_gold_like_airline_trial_passes_with_official_shape() -> None:
    checks = EnvChecks(FixedEnvCheck(tool_types={"get_reservation_details": "read", "cancel_reservation": "write"}))
    verdict = evaluate(AIRLINE_TASK, trial(airline_messages()), checks)
    info = verdict.reward_info
    assert info["reward"] == 1.0 and verdict.failed_rules == []
    assert checks.calls == [("airline", "7")]
    assert info["db_check"] == {"db_match": True, "db_reward": 1.0}
    assert info["env_assertions"] == []
    assert info["reward_basis"] == ["DB", "COMMUNICATE"]
    assert info["reward_breakdown"] == {"DB": 1.0, "COMMUNICATE": 1.0}
    # ACTION is not in the basis: its checks are kept as diagnostics, with the official Action dump and tool types
    assert [check["tool_type"] for check in info["action_checks"]] == ["read", "write"]
    assert info["action_checks"][0]["action"] == {"action_id": "7_0", "requestor": "assistant",
                                                  "name": "get_reservation_details",
                                                  "arguments": {"reservation_id": "ABC"}, "info": None,
                                                  "compare_args": None}
    assert info["communicate_checks"] == [{"info": "1000", "met": True, "justification":
                                           "Said 1000 in: Done: you get a refund of $1,000."}]
    assert info["nl_assertions"] is None
    assert info["info"] == {"env": None, "nl": None, "communicate": None, "action": None}


def test_db_mismatch_fails_db_matches_gold() -> None:
    verdict = evaluate(AIRLINE_TASK, trial(airline_messages()), EnvChecks(FixedEnvCheck(db_match=False)))
    assert verdict.reward == 0.0 and verdict.failed_rules == [ev.DB_RULE] and verdict.rule == ev.DB_RULE
    assert verdict.reward_info["db_check"] == {"db_match": False, "db_reward": 0.0}
    assert verdict.reward_info["reward_breakdown"] == {"DB": 0.0, "COMMUNICATE": 1.0}


def test_neither_actions_nor_env_assertions_pass_without_the_environment() -> None:
    checks = EnvChecks(FixedEnvCheck(db_match=False))
    verdict = evaluate(NO_ENV_CRITERIA_TASK, trial([GREETING, text("user", "bye ###STOP###")]), checks)
    assert checks.calls == []
    info = verdict.reward_info
    assert info["reward"] == 1.0
    assert info["db_check"] == {"db_match": True, "db_reward": 1.0}
    assert info["env_assertions"] is None
    # the official environment evaluator returns no breakdown here, so DB is absent from the merged one
    assert info["reward_breakdown"] == {}
    assert info["info"]["env"] == {"note": NOTES.no_env_criteria}


def test_empty_action_list_is_compared_with_the_environment() -> None:
    checks = EnvChecks(FixedEnvCheck(db_match=False))
    verdict = evaluate(RETAIL_NL_TASK, trial([GREETING], judgement=judgement(True, True)), checks, "retail")
    assert checks.calls == [("retail", "3")]  # `actions: []` is not null: the agent must change nothing
    assert verdict.reward == 0.0 and verdict.failed_rules == [ev.DB_RULE]


def telecom_messages(user_toggles: bool = True, phone: str = "555-0100") -> list[dict[str, Any]]:
    messages = [GREETING, text("user", "No data."),
                assistant_calls(call("a1", "get_customer_by_phone", {"phone_number": phone})),
                tool_message("a1", "{}")]
    if user_toggles:
        messages += [{"role": "user", "content": None, "tool_calls": [call("u1", "toggle_airplane_mode", {}, "user")]},
                     tool_message("u1", "Airplane mode off", "user")]
    return messages + [text("user", "Works now ###STOP###")]


def assertion_check(met: bool) -> dict[str, Any]:
    return {"env_assertion": TELECOM_TASK["evaluation_criteria"]["env_assertions"][0], "met": met,
            "reward": 1.0 if met else 0.0}


def test_env_assertions_hold_and_user_tool_calls_count_as_actions() -> None:
    checks = EnvChecks(FixedEnvCheck(db_match=False, env_assertions=[assertion_check(True)],
                                     tool_types={"toggle_airplane_mode": "write"}))
    verdict = evaluate(TELECOM_TASK, trial(telecom_messages()), checks, "telecom")
    info = verdict.reward_info
    assert info["reward"] == 1.0  # DB is not in the basis: its mismatch is a diagnostic
    assert info["reward_breakdown"] == {"ENV_ASSERTION": 1.0, "ACTION": 1.0}
    assert info["env_assertions"] == [assertion_check(True)]
    assert [check["tool_type"] for check in info["action_checks"]] == ["write", None]


def test_failed_env_assertion_fails_env_assertions_hold() -> None:
    checks = EnvChecks(FixedEnvCheck(env_assertions=[assertion_check(False)]))
    verdict = evaluate(TELECOM_TASK, trial(telecom_messages()), checks, "telecom")
    assert verdict.reward == 0.0 and verdict.failed_rules == [ev.ENV_ASSERTION_RULE]
    assert verdict.reward_info["reward_breakdown"]["ENV_ASSERTION"] == 0.0


def test_environment_check_that_raises_leaves_the_trial_unscored() -> None:
    verdict = evaluate(AIRLINE_TASK, trial(airline_messages()), failing_env_check)
    assert verdict.reward is None and verdict.rule == ev.ENV_CHECK_FAILED_RULE
    assert "worker ran out of memory" in (verdict.unscored_reason or "")


# ---- ACTION ----------------------------------------------------------------------------------------------------

def gold(name: str, arguments: dict[str, Any], compare_args: list[str] | None = None) -> ev.Action:
    return ev.Action(action_id="x", name=name, arguments=arguments,
                     compare_args=None if compare_args is None else tuple(compare_args))


def test_action_comparison_uses_the_calls_own_keys_when_compare_args_is_none() -> None:
    action = gold("book", {"flight": "HAT1", "insurance": "no"})
    assert ev.action_matches_call(action, call("1", "book", {"flight": "HAT1"}))  # omitted optional: no penalty
    assert ev.action_matches_call(action, call("1", "book", {"flight": "HAT1", "insurance": "no"}))
    assert not ev.action_matches_call(action, call("1", "book", {"flight": "HAT1", "seat": "1A"}))  # extra key
    assert not ev.action_matches_call(action, call("1", "book", {"flight": "HAT2"}))
    assert not ev.action_matches_call(action, call("1", "cancel", {"flight": "HAT1"}))
    assert ev.action_matches_call(action, call("1", "book", {}))  # no key to compare: the name decides


def test_action_comparison_with_compare_args() -> None:
    action = gold("book", {"flight": "HAT1", "insurance": "no"}, ["flight"])
    assert ev.action_matches_call(action, call("1", "book", {"flight": "HAT1", "insurance": "yes", "x": 1}))
    assert not ev.action_matches_call(action, call("1", "book", {"insurance": "no"}))
    assert ev.action_matches_call(gold("toggle", {}, []), call("1", "toggle", {"anything": 1}))
    # JSON values compare as Python values do (1 == 1.0), as in the official dict equality
    assert ev.action_matches_call(gold("pay", {"amount": 1}), call("1", "pay", {"amount": 1.0}))


def test_every_gold_action_called_in_basis() -> None:
    checks = EnvChecks(FixedEnvCheck(env_assertions=[assertion_check(True)]))
    verdict = evaluate(TELECOM_TASK, trial(telecom_messages(user_toggles=False)), checks, "telecom")
    assert verdict.reward == 0.0 and verdict.failed_rules == [ev.ACTION_RULE]
    assert [check["action_match"] for check in verdict.reward_info["action_checks"]] == [False, True]
    assert [check["action_reward"] for check in verdict.reward_info["action_checks"]] == [0.0, 1.0]


def test_requestor_is_not_compared() -> None:
    messages = telecom_messages(user_toggles=False)
    # the agent, not the user, toggles: the gold action's requestor is "user", still matched
    messages.insert(-1, assistant_calls(call("a2", "toggle_airplane_mode", {})))
    checks = EnvChecks(FixedEnvCheck(env_assertions=[assertion_check(True)]))
    assert evaluate(TELECOM_TASK, trial(messages), checks, "telecom").reward == 1.0


def test_tool_calls_of_tool_messages_are_not_actions() -> None:
    messages = [{"role": "tool", "id": "x", "content": "", "tool_calls": [call("x", "cancel_reservation", {})]}]
    assert ev.tool_calls_of(messages) == []


def test_action_outside_the_basis_does_not_count() -> None:
    messages = airline_messages()
    del messages[4:6]  # the cancel call is gone
    verdict = evaluate(AIRLINE_TASK, trial(messages))
    assert verdict.reward == 1.0  # DB (stubbed equal) and COMMUNICATE pass; ACTION is only a diagnostic
    assert [check["action_match"] for check in verdict.reward_info["action_checks"]] == [True, False]


def test_no_gold_actions_gives_no_action_checks() -> None:
    verdict = evaluate(NO_ENV_CRITERIA_TASK, trial([GREETING]))
    assert verdict.reward_info["action_checks"] is None
    assert verdict.reward_info["info"]["action"] == {"note": NOTES.no_actions}


# ---- COMMUNICATE -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("said, met", [
    ("Your refund is $1,000.", True),  # commas are removed from the message
    ("REFUND: 1000 dollars", True),  # lower-cased
    ("Your refund is $1.000.", False),
    ("Your refund is 100 0.", False),
])
def test_communicate_info_present(said: str, met: bool) -> None:
    verdict = evaluate(AIRLINE_TASK, trial(airline_messages(said)))
    assert verdict.reward_info["communicate_checks"][0]["met"] is met
    assert verdict.reward == (1.0 if met else 0.0)
    assert verdict.failed_rules == ([] if met else [ev.COMMUNICATE_RULE])
    if not met:
        assert verdict.reward_info["communicate_checks"][0]["justification"] == "Never said 1000."


def test_communicate_info_commas_are_kept_in_the_expected_string() -> None:
    record = {**AIRLINE_TASK, "evaluation_criteria": {**AIRLINE_TASK["evaluation_criteria"],
                                                      "communicate_info": ["1,000"]}}
    assert evaluate(record, trial(airline_messages("refund of $1,000"))).reward == 0.0


def test_communicate_reads_only_assistant_text() -> None:
    messages = airline_messages("All done.")
    messages.insert(1, text("user", "I expect 1000 back"))
    messages.insert(2, tool_message("t", "refund 1000"))
    messages.insert(3, {"role": "assistant", "content": "  ", "tool_calls": None})
    verdict = evaluate(AIRLINE_TASK, trial(messages))
    assert verdict.reward == 0.0 and verdict.failed_rules == [ev.COMMUNICATE_RULE]


def test_text_beside_tool_calls_counts_for_communicate() -> None:
    messages = airline_messages("All done.")
    messages[4] = {**messages[4], "content": "Cancelling; your refund is 1000."}
    assert evaluate(AIRLINE_TASK, trial(messages)).reward == 1.0


# ---- NL_ASSERTION ----------------------------------------------------------------------------------------------

def nl_trial(verdicts: dict[str, Any] | None) -> TrialVerdict:
    return evaluate(RETAIL_NL_TASK, trial([GREETING, text("user", "bye ###STOP###")], judgement=verdicts),
                    domain="retail")


def test_nl_assertions_met() -> None:
    verdict = nl_trial(judgement(True, True))
    assert verdict.reward == 1.0
    assert verdict.reward_info["nl_assertions"] == [
        {"nl_assertion": "outcome 0", "met": True, "justification": "why 0"},
        {"nl_assertion": "outcome 1", "met": True, "justification": "why 1"}]
    assert verdict.reward_info["reward_breakdown"] == {"DB": 1.0, "NL_ASSERTION": 1.0}
    assert verdict.reward_info["info"]["nl"] is None


def test_one_unmet_nl_assertion_fails() -> None:
    verdict = nl_trial(judgement(True, False))
    assert verdict.reward == 0.0 and verdict.failed_rules == [ev.NL_RULE]


@pytest.mark.parametrize("results", [[], None])
def test_empty_or_missing_judge_results_pass_as_officially(results: Any) -> None:
    verdict = nl_trial(judgement(results=results))
    assert verdict.reward == 1.0 and verdict.reward_info["nl_assertions"] == []


def test_judge_needed_and_absent_gives_no_reward() -> None:
    verdict = nl_trial(None)
    assert verdict.reward is None and verdict.rule == ev.JUDGE_NEEDED_RULE
    assert "no judge" in (verdict.unscored_reason or "")
    assert "no judge" in verdict.reward_info["info"]["nl"]["note"]


def test_judge_error_scores_zero_and_is_named() -> None:
    verdict = nl_trial(judgement(error="not JSON: ```json ...```"))
    assert verdict.reward == 0.0 and verdict.rule == ev.JUDGE_ERROR_RULE
    assert "not JSON" in verdict.reward_info["info"]["nl"]["note"]


@pytest.mark.parametrize("results", [
    [{"expectedOutcome": "a", "reasoning": "b"}],  # no metExpectation
    [{"expectedOutcome": "a", "reasoning": "b", "metExpectation": "maybe"}],
    ["not an object"],
])
def test_judge_answer_outside_the_official_shape_is_a_judge_error(results: Any) -> None:
    assert nl_trial(judgement(results=results)).rule == ev.JUDGE_ERROR_RULE


def test_judge_verdict_strings_coerced_as_pydantic_does() -> None:
    verdict = nl_trial(judgement("true", "yes"))
    assert verdict.reward == 1.0 and [c["met"] for c in verdict.reward_info["nl_assertions"]] == [True, True]


def test_no_nl_assertions_pass_without_a_judge() -> None:
    record = {**RETAIL_NL_TASK, "evaluation_criteria": {**RETAIL_NL_TASK["evaluation_criteria"],
                                                        "nl_assertions": None}}
    verdict = evaluate(record, trial([GREETING], judgement=None), domain="retail")
    assert verdict.reward == 1.0 and verdict.reward_info["nl_assertions"] == []
    assert verdict.reward_info["info"]["nl"] == {"note": NOTES.no_nl}


def test_nl_outside_the_basis_is_not_run() -> None:
    record = {**AIRLINE_TASK, "evaluation_criteria": {**AIRLINE_TASK["evaluation_criteria"],
                                                      "nl_assertions": ["Polite."]}}
    verdict = evaluate(record, trial(airline_messages(), judgement=None))
    assert verdict.reward == 1.0
    assert verdict.reward_info["nl_assertions"] is None and verdict.reward_info["info"]["nl"] is None


# ---- the product --------------------------------------------------------------------------------------------

def test_reward_is_product_of_basis_and_every_failed_rule_is_named() -> None:
    verdict = evaluate(AIRLINE_TASK, trial(airline_messages("bye")), EnvChecks(FixedEnvCheck(db_match=False)))
    assert verdict.reward == 0.0
    assert verdict.failed_rules == [ev.DB_RULE, ev.COMMUNICATE_RULE]  # in the official order of multiplication


def test_default_reward_basis_when_absent() -> None:
    criteria = {key: value for key, value in AIRLINE_TASK["evaluation_criteria"].items() if key != "reward_basis"}
    verdict = evaluate({**AIRLINE_TASK, "evaluation_criteria": criteria}, trial(airline_messages()))
    assert verdict.reward_info["reward_basis"] == ["DB", "COMMUNICATE"]


def test_infrastructure_error_trial_has_no_reward() -> None:
    verdict = evaluate(AIRLINE_TASK, {"trial": 0, "termination_reason": "infrastructure_error", "messages": [],
                                      "error": "API down"})
    assert verdict.reward is None and verdict.rule == ev.INFRASTRUCTURE_RULE


# ---- metrics ---------------------------------------------------------------------------------------------------

def rows_of(successes: dict[str, int], trials: int = 4) -> list[TrialRow]:
    return [TrialRow(task, 1.0 if index < count else 0.0) for task, count in successes.items()
            for index in range(trials)]


def test_is_successful_tolerance() -> None:
    assert is_successful(1.0) and is_successful(1 - 1e-6) and is_successful(1 + 1e-6)
    assert not is_successful(1 - 2e-6) and not is_successful(0.0)


def test_pass_hat_k_formula() -> None:
    assert pass_hat_k(4, 3, 2) == 3 / 6
    assert pass_hat_k(4, 1, 2) == 0.0
    with pytest.raises(ValueError):
        pass_hat_k(2, 2, 3)


def test_pass_hat_k_on_the_official_fixture() -> None:
    figures = domain_metrics(rows_of({"a": 3, "b": 1, "c": 4}), requested_k=4)
    assert figures.max_k == 4 and figures.notes == []
    assert [round(figures.pass_hat_ks[k] or 0, 3) for k in (1, 2, 3, 4)] == [0.667, 0.5, 0.417, 0.333]
    assert figures.avg_reward == pytest.approx(8 / 12)
    assert figures.tasks == 3 and figures.trials == 12


def test_mixed_trial_counts_lower_k_and_say_so() -> None:
    rows = rows_of({"a": 3, "c": 4}) + [TrialRow("b", 1.0), TrialRow("b", 0.0)]
    figures = domain_metrics(rows, requested_k=4)
    assert figures.max_k == 2 and sorted(figures.pass_hat_ks) == [1, 2]
    assert "pass^k is reported up to k = 2" in figures.notes[0]
    # each task with its own n: a 3/4, b 1/2, c 4/4
    assert figures.pass_hat_ks[1] == pytest.approx((3 / 4 + 1 / 2 + 1) / 3)
    assert figures.pass_hat_ks[2] == pytest.approx((3 / 6 + 0 + 1) / 3)
    assert max_k_of([4, 4, 5], 4) == (4, None)  # more trials than requested never raise k


def test_infrastructure_errors_are_left_out_as_pandas_2_does() -> None:
    rows = rows_of({"a": 3, "b": 1, "c": 4})
    rows[8] = TrialRow("c", None, "infrastructure_error")  # one of task c's trials (docs/tau2-notes.md §6.2)
    figures = domain_metrics(rows, requested_k=4)
    assert figures.max_k == 3 and figures.infrastructure_errors == 1 and figures.trials == 11
    assert [round(figures.pass_hat_ks[k] or 0, 3) for k in (1, 2, 3)] == [0.667, 0.5, 0.417]
    assert figures.avg_reward == pytest.approx(7 / 11)


def test_unscored_trials_withhold_pass_hat_k_but_not_avg_reward() -> None:
    rows = rows_of({"a": 4}) + [TrialRow("b", None)] * 4
    figures = domain_metrics(rows, requested_k=4)
    assert figures.pass_hat_ks == {1: None, 2: None, 3: None, 4: None}
    assert figures.avg_reward == 1.0 and figures.unscored == 4
    assert any("no reward" in note for note in figures.notes)


def test_absent_tasks_count_as_failures_at_every_k() -> None:
    figures = domain_metrics(rows_of({"a": 4}), requested_k=4, absent_tasks=1)
    assert figures.pass_hat_ks == {1: 0.5, 2: 0.5, 3: 0.5, 4: 0.5} and figures.tasks == 2


# ---- score and report -------------------------------------------------------------------------------------------

def sample_of(record: dict[str, Any], domain: str) -> Sample:
    return Sample(id=f"{domain}_{record['id']}", subset=domain,
                  input={"domain": domain, "task_id": record["id"], "split": "base"}, gold=record,
                  meta={"trials": None})


def prediction_of(sample: Sample, trials: list[dict[str, Any]]) -> Prediction:
    return Prediction(sample.id, output="last text", extra={"trials": trials, "user_model": "user-model",
                                                            "judge_model": None, "split": "base"})


def airline_trials(outcomes: list[str]) -> list[dict[str, Any]]:
    """One trial per outcome: "pass", "silent" (no communicate text) or a premature termination reason."""
    made = []
    for number, outcome in enumerate(outcomes):
        if outcome == "pass":
            made.append(trial(airline_messages(), number=number))
        elif outcome == "silent":
            made.append(trial(airline_messages("Cancelled."), number=number))
        else:
            made.append(trial(airline_messages()[:3], outcome, number))
    return made


def test_score_all_trials_pass() -> None:
    sample = sample_of(AIRLINE_TASK, "airline")
    result = score_with(sample, prediction_of(sample, airline_trials(["pass"] * 4)), "official", EnvChecks(), NOTES)
    assert result.correct and result.error_type is None and result.rule == ev.PRODUCT_RULE
    assert result.metrics == {"successes": 4.0, "trials": 4.0, "reward": 1.0}
    assert [info["reward"] for info in result.metadata["trials"]] == [1.0] * 4  # type: ignore[index]
    assert result.metadata["user_model"] == "user-model"  # type: ignore[index]


def test_score_names_the_failing_rule() -> None:
    sample = sample_of(AIRLINE_TASK, "airline")
    result = score_with(sample, prediction_of(sample, airline_trials(["pass", "silent", "max_steps", "pass"])),
                        "official", EnvChecks(), NOTES)
    assert not result.correct and result.error_type == ev.COMMUNICATE_RULE
    assert result.metrics == {"successes": 2.0, "trials": 4.0, "reward": 0.5}
    verdicts = result.metadata["verdicts"]  # type: ignore[index]
    assert [row["rule"] for row in verdicts] == [ev.PRODUCT_RULE, ev.COMMUNICATE_RULE, ev.PREMATURE_RULE,
                                                 ev.PRODUCT_RULE]
    assert "trial 2: max_steps, reward 0" in result.detail


def test_score_without_a_usable_prediction() -> None:
    sample = sample_of(AIRLINE_TASK, "airline")
    assert score_with(sample, None, "official", EnvChecks(), NOTES).error_type == "missing_prediction"
    failed = Prediction(sample.id, error="HTTP 500 after retries")
    result = score_with(sample, failed, "official", EnvChecks(), NOTES)
    assert not result.correct and result.error_type == "request_error" and "HTTP 500" in result.detail
    empty = Prediction(sample.id, extra={"trials": []})
    assert score_with(sample, empty, "official", EnvChecks(), NOTES).error_type == "no_trials_recorded"


def test_official_and_strict_modes_score_alike() -> None:
    sample = sample_of(AIRLINE_TASK, "airline")
    prediction = prediction_of(sample, airline_trials(["pass", "silent"]))
    official = score_with(sample, prediction, "official", EnvChecks(), NOTES)
    strict = score_with(sample, prediction, "strict", EnvChecks(), NOTES)
    assert official == strict


def run_report(domains: dict[str, list[tuple[dict[str, Any], Prediction | None | list[dict[str, Any]]]]],
               mode: str = "official", subsets: list[str] | None = None) -> Any:
    samples, scores = [], []
    for domain, items in domains.items():
        for record, given in items:
            sample = sample_of(record, domain)
            prediction = prediction_of(sample, given) if isinstance(given, list) else given
            samples.append(sample)
            scores.append(score_with(sample, prediction, mode, EnvChecks(), NOTES))
    return summarize(samples, scores, mode, None, subsets)


def retail_trials(verdicts: list[dict[str, Any] | None]) -> list[dict[str, Any]]:
    return [trial([GREETING, text("user", "bye ###STOP###")], number=n, judgement=v) for n, v in enumerate(verdicts)]


def renamed(record: dict[str, Any], task_id: str) -> dict[str, Any]:
    return {**record, "id": task_id}


def test_report_per_domain_and_summary() -> None:
    report = run_report({
        "airline": [(renamed(AIRLINE_TASK, "1"), airline_trials(["pass", "pass", "pass", "silent"])),
                    (renamed(AIRLINE_TASK, "2"), airline_trials(["pass", "max_steps", "silent", "silent"])),
                    (renamed(AIRLINE_TASK, "3"), airline_trials(["pass"] * 4))],
        "retail": [(RETAIL_NL_TASK, retail_trials([judgement(True, True)] * 4))],
    }, subsets=["airline", "retail", "telecom"])
    airline = report.subsets["airline"]
    assert airline.n == 3
    assert [round(airline.metrics[f"pass_{k}"], 3) for k in (1, 2, 3, 4)] == [0.667, 0.5, 0.417, 0.333]
    assert airline.metrics["avg_reward"] == pytest.approx(8 / 12)
    assert airline.metrics["termination_user_stop"] == 11 and airline.metrics["termination_max_steps"] == 1
    assert airline.metrics["failed_communicate_info_present"] == 3
    assert airline.metrics["failed_premature_termination_scores_zero"] == 1
    assert report.subsets["retail"].metrics["pass_4"] == 1.0
    assert report.summary["pass_1"] == pytest.approx((2 / 3 + 1) / 2)
    assert report.summary["avg_reward"] == pytest.approx((8 / 12 + 1) / 2)
    assert report.errors == {ev.COMMUNICATE_RULE: 1, ev.PREMATURE_RULE: 1}  # each task by its first failed trial
    assert report.unavailable == ["telecom"] and report.benchmark == "tau2"
    assert "notes" not in report.summary


def test_report_keeps_intervals_of_the_means() -> None:
    report = run_report({
        "airline": [(renamed(AIRLINE_TASK, "1"), airline_trials(["pass", "pass", "pass", "silent"])),
                    (renamed(AIRLINE_TASK, "2"), airline_trials(["pass", "silent", "silent", "silent"]))],
        "retail": [(RETAIL_NL_TASK, retail_trials([None]))],
    })
    airline = report.intervals["subsets"]["airline"]
    # pass^1 is the mean of the tasks' 3/4 and 1/4: spread 1/4 over 2 tasks, se = 0.25 / sqrt(2)
    low, high = airline["pass_1"]
    assert low == pytest.approx(0.5 - 1.959963984540054 * 0.25 / 2 ** 0.5) and high == pytest.approx(1 - low)
    assert "avg_reward" in airline and "pass_1" not in report.intervals["subsets"]["retail"]
    assert "pass_1" not in report.intervals["summary"]  # retail has none: no overall pass^1 either


def test_report_without_a_judge_withholds_pass_hat_k_and_says_why() -> None:
    report = run_report({
        "airline": [(AIRLINE_TASK, airline_trials(["pass"] * 2))],
        "retail": [(RETAIL_NL_TASK, retail_trials([None, None]))],
    })
    retail = report.subsets["retail"].metrics
    assert retail["pass_1"] is None and retail["pass_2"] is None and retail["unscored_trials"] == 2
    assert retail["avg_reward"] is None
    assert report.subsets["airline"].metrics["pass_2"] == 1.0
    assert report.subsets["airline"].metrics["pass_3"] is None  # declared, beyond the 2 trials run
    assert report.summary["pass_1"] is None
    assert "retail: 2 trial(s) have no reward" in report.summary["notes"]
    assert report.errors == {ev.JUDGE_NEEDED_RULE: 1}


def test_report_counts_missing_tasks_as_failures() -> None:
    report = run_report({"airline": [(renamed(AIRLINE_TASK, "1"), airline_trials(["pass"] * 4)),
                                     (renamed(AIRLINE_TASK, "2"), None)]})
    metrics = report.subsets["airline"].metrics
    assert metrics["pass_1"] == 0.5 and metrics["pass_4"] == 0.5 and report.subsets["airline"].n == 2
    assert report.missing == ["airline_2"]
    assert "1 task(s) have no trial" in report.summary["notes"]


def test_an_uploads_infrastructure_errors_are_counted_and_left_out() -> None:
    sample = sample_of(AIRLINE_TASK, "airline")
    prediction = prediction_of(sample, airline_trials(["pass"] * 3))
    prediction.extra["excluded_trials"] = [  # type: ignore[index]
        {"trial": 3, "seed": 1567, "termination_reason": "infrastructure_error", "error": "API down"}]
    result = score_with(sample, prediction, "official", EnvChecks(), NOTES)
    assert result.correct and result.metrics == {"successes": 3.0, "trials": 3.0, "reward": 1.0}
    other = sample_of(renamed(AIRLINE_TASK, "8"), "airline")
    report = summarize([sample, other], [result, score_with(other, prediction_of(other, airline_trials(["pass"] * 4)),
                                                            "official", EnvChecks(), NOTES)])
    metrics = report.subsets["airline"].metrics
    assert metrics["termination_infrastructure_error"] == 1 and metrics["pass_3"] == 1.0 and metrics["pass_4"] is None
    assert "infrastructure_error were left out" in report.summary["notes"]
    assert "reported up to k = 3" in report.summary["notes"]


def with_agent_usage(trials: list[dict[str, Any]], *counts: tuple[Any, Any]) -> list[dict[str, Any]]:
    return [{**made, "usage": {"agent": {"requests": 3, "prompt_tokens": prompt, "completion_tokens": completion},
                               "user": {"requests": 3, "prompt_tokens": 999, "completion_tokens": 999}}}
            for made, (prompt, completion) in zip(trials, counts)]


def test_the_agents_tokens_are_counted_over_the_trials_that_reported_usage() -> None:
    sample = sample_of(AIRLINE_TASK, "airline")
    # a trial whose answers reported no usage (zeros) and one with a count that is not a number are not priced
    trials = with_agent_usage(airline_trials(["pass"] * 4), (100, 20), (300, 40), (0, 0), ("many", 1))
    result = score_with(sample, prediction_of(sample, trials), "official", EnvChecks(), NOTES)
    assert {name: result.metrics[name] for name in ("agent_prompt_tokens", "agent_completion_tokens",
                                                    "priced_trials")} == {
        "agent_prompt_tokens": 400.0, "agent_completion_tokens": 60.0, "priced_trials": 2.0}  # the user's left out
    other = sample_of(renamed(AIRLINE_TASK, "2"), "airline")
    unpriced = score_with(other, prediction_of(other, airline_trials(["pass"] * 2)), "official", EnvChecks(), NOTES)
    assert "priced_trials" not in unpriced.metrics  # no usage recorded at all
    domain = summarize([sample, other], [result, unpriced]).subsets["airline"].metrics
    assert (domain["agent_prompt_tokens"], domain["agent_completion_tokens"], domain["priced_trials"]) == (400, 60, 2)


def test_report_more_trials_than_declared() -> None:
    report = run_report({"airline": [(AIRLINE_TASK, airline_trials(["pass"] * 5))]})
    assert report.subsets["airline"].metrics["pass_5"] == 1.0 and report.summary["pass_5"] == 1.0


def test_report_modes_agree() -> None:
    items = {"airline": [(AIRLINE_TASK, airline_trials(["pass", "silent", "pass"]))]}
    official, strict = run_report(items, "official"), run_report(items, "strict")
    assert official.subsets == strict.subsets and official.summary == strict.summary


def test_pass_hat_k_matches_brute_force_over_subsets() -> None:
    """pass^k = the share of k-subsets of a task's trials that all succeed (the formula's meaning)."""
    outcomes = [True, False, True, True, False]
    for k in range(1, 6):
        subsets = list(itertools.combinations(outcomes, k))
        assert pass_hat_k(5, sum(outcomes), k) == pytest.approx(sum(all(s) for s in subsets) / len(subsets))


# ---- what Explore shows ------------------------------------------------------------------------------------------

def test_dialogue_checks_name_each_rule_and_the_db_differences() -> None:
    check = FixedEnvCheck(db_match=False, db_diff={"db": [{"path": "/reservations/ABC/status", "gold": "cancelled",
                                                           "predicted": "active"}]})
    checks = EnvChecks(check)
    verdict = evaluate(AIRLINE_TASK, trial(airline_messages("bye")), checks)
    shown = ev.dialogue_checks(verdict)
    assert shown["reward"] == 0.0
    rules = {item["rule"]: item for item in shown["checks"]}
    assert rules[ev.DB_RULE]["met"] is False
    assert rules[ev.ACTION_RULE]["met"] is True and "diagnostic" in rules[ev.ACTION_RULE]["detail"]
    assert rules[ev.COMMUNICATE_RULE]["met"] is False and "'1000'" in rules[ev.COMMUNICATE_RULE]["detail"]
    assert rules[ev.PRODUCT_RULE]["met"] is False
    assert shown["state_differences"] == [{"kind": "changed", "path": "db/reservations/ABC/status",
                                           "before": "cancelled", "after": "active"}]


def test_dialogue_checks_of_premature_and_unjudged_trials() -> None:
    premature = ev.dialogue_checks(evaluate(AIRLINE_TASK, trial([GREETING], "max_steps")))
    assert premature["checks"] == [{"rule": ev.PREMATURE_RULE, "met": False,
                                    "detail": "Ended early (max_steps)."}]
    unjudged = ev.dialogue_checks(nl_trial(None))
    rules = {item["rule"]: item for item in unjudged["checks"]}
    assert unjudged["reward"] is None and rules[ev.JUDGE_NEEDED_RULE]["met"] is None
    assert rules[ev.PRODUCT_RULE]["met"] is None


def test_replay_error_is_kept_as_evidence() -> None:
    check = FixedEnvCheck(db_match=False, replay_problems=["tool result differs"],
                          replay_error="ValueError: ids out of order")
    verdict = evaluate(AIRLINE_TASK, trial(airline_messages()), EnvChecks(check))
    assert verdict.replay_problems == ["tool result differs", "the replay failed: ValueError: ids out of order"]


def test_score_metadata_holds_dialogue_checks_in_trial_order() -> None:
    sample = sample_of(AIRLINE_TASK, "airline")
    result = score_with(sample, prediction_of(sample, airline_trials(["pass", "silent"])), "official", EnvChecks(), NOTES)
    shown = result.metadata["dialogue_checks"]  # type: ignore[index]
    assert [item["reward"] for item in shown] == [1.0, 0.0]


# ---- parity with the official code (slow: the official venv, tests/tau2_official_venv.py) -----------------------
#
# The official evaluator runs on the gold trajectories of every base task and on the mutations of
# docs/tau2-notes.md §5.7; ours must give the same RewardInfo field by field. Replay is lenient on both sides (as
# `tau2 evaluate-trajs` and our scoring do). Twice: with the environment host's EnvCheck (the whole reward), and
# with the EnvCheck read from the official answer (everything but the environment's own replay: actions,
# communicate, NL, the product, the shape), which tells a difference of the scorer from one of the host.

MUTATIONS = ("drop_last_write", "drop_first_read", "drop_communicate", "swap_writes", "wrong_argument")


def oracle_module() -> Any:
    """The oracle module, its venv built (the calling test is skipped with the reason when it cannot be)."""
    tau2_official_venv.official_venv()
    return tau2_official_venv


def base_records(domain: str) -> list[dict[str, Any]]:
    from evaluators.benchmarks.tau2 import data
    from evaluators.benchmarks.tau2.source import open_source

    venv = oracle_module().official_venv()
    return [task.record for task in data.load([domain], source=open_source(venv.folder))]


def official_env_parts(official: dict[str, Any]) -> FixedEnvCheck:
    """The EnvCheck the official answer implies (its DB match, env assertions and the gold actions' tool types)."""
    db_check = official.get("db_check") or {}
    tool_types = {check["action"]["name"]: check["tool_type"] for check in official.get("action_checks") or []
                  if check.get("tool_type")}
    return FixedEnvCheck(db_match=db_check.get("db_match"), env_assertions=list(official.get("env_assertions") or []),
                         tool_types=tool_types)


def stub_judgement(record: dict[str, Any], verdicts: list[bool] | None) -> dict[str, Any] | None:
    """What the oracle's stub judge answers, as the plan's Judgement."""
    if verdicts is None:
        return None
    assertions = (record.get("evaluation_criteria") or {}).get("nl_assertions") or []
    return {"model": "stub", "error": None, "results": [
        {"expectedOutcome": assertion, "reasoning": "scripted verdict", "metExpectation": verdict}
        for assertion, verdict in zip(assertions, verdicts)]}


def mutate(kind: str, record: dict[str, Any], messages: list[dict[str, Any]], action_checks: list[dict[str, Any]]
           ) -> list[dict[str, Any]] | None:
    """A §5.7 mutation of a gold trajectory (greeting, user line, a call and its result per gold action, final
    text, stop), or None when the task has nothing to mutate that way."""
    import copy

    messages = copy.deepcopy(messages)
    pairs = [(2 + 2 * index, check.get("tool_type")) for index, check in enumerate(action_checks)]
    writes = [start for start, kind_ in pairs if kind_ == "write"]
    reads = [start for start, kind_ in pairs if kind_ == "read"]
    if kind == "drop_last_write" and writes:
        del messages[writes[-1]:writes[-1] + 2]
    elif kind == "drop_first_read" and reads:
        del messages[reads[0]:reads[0] + 2]
    elif kind == "drop_communicate" and (record.get("evaluation_criteria") or {}).get("communicate_info"):
        messages[-2]["content"] = "Done."
    elif kind == "swap_writes" and len(writes) >= 2:
        first, second = writes[0], writes[1]
        messages[first:first + 2], messages[second:second + 2] = messages[second:second + 2], messages[first:first + 2]
    elif kind == "wrong_argument" and any(messages[start]["tool_calls"][0]["arguments"] for start, _ in pairs):
        start = next(start for start in writes + [s for s, _ in pairs] if messages[start]["tool_calls"][0]["arguments"])
        arguments = messages[start]["tool_calls"][0]["arguments"]
        key = next(iter(arguments))
        value = arguments[key]
        arguments[key] = (not value if isinstance(value, bool) else value + 1 if isinstance(value, int | float)
                          else f"{value}_wrong" if isinstance(value, str) else "wrong")
    else:
        return None
    return messages


# Every base task with TOOLBOARD_TAU2_PARITY=all (all three domains take about 40 minutes of CPU here: the official
# evaluator rebuilds the environment three times per case); else a fixed sample that still holds every kind of task.
PARITY_ALL = "TOOLBOARD_TAU2_PARITY"
SAMPLE_EVERY = 10


def parity_records(domain: str) -> list[dict[str, Any]]:
    """The base tasks the parity tests compare: all of them, or every SAMPLE_EVERY-th plus the first of each kind
    (with NL assertions, communicate info, ACTION in the basis, no gold actions, a user-side gold action)."""
    import os

    records = base_records(domain)
    if os.environ.get(PARITY_ALL) == "all":
        return records

    def criteria(record: dict[str, Any]) -> dict[str, Any]:
        return record.get("evaluation_criteria") or {}

    kinds = [lambda r: bool(criteria(r).get("nl_assertions")), lambda r: bool(criteria(r).get("communicate_info")),
             lambda r: "ACTION" in (criteria(r).get("reward_basis") or []), lambda r: criteria(r).get("actions") == [],
             lambda r: any(a.get("requestor") == "user" for a in criteria(r).get("actions") or [])]
    chosen = {index for index in range(0, len(records), SAMPLE_EVERY)}
    for kind in kinds:
        chosen |= {next((i for i, record in enumerate(records) if kind(record)), 0)}
    return [records[index] for index in sorted(chosen)]


def parity_cases(domain: str) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(label, task record, oracle case) for the parity tasks' gold trajectories and their mutations, plus premature
    terminations and unmet NL verdicts; the gold trajectories come from the oracle itself."""
    oracle = oracle_module()
    records = parity_records(domain)
    golds = oracle.run_official("evaluate", [{"kind": "gold", "domain": domain, "task": record,
                                              "strict_replay": False} for record in records])
    cases = []
    for record, gold_answer in zip(records, golds):
        assert gold_answer["reward_info"]["reward"] == 1.0, (record["id"], gold_answer["reward_info"])
        messages = gold_answer["messages"]
        assertions = (record.get("evaluation_criteria") or {}).get("nl_assertions") or []
        base = {"domain": domain, "task": record, "termination_reason": "user_stop", "strict_replay": False,
                "nl_verdicts": [True] * len(assertions)}
        cases.append((f"{record['id']} gold", record, {**base, "messages": messages}))
        for kind in MUTATIONS:
            mutated = mutate(kind, record, messages, gold_answer["reward_info"].get("action_checks") or [])
            if mutated is not None:
                cases.append((f"{record['id']} {kind}", record, {**base, "messages": mutated}))
        if assertions:
            cases.append((f"{record['id']} nl unmet", record,
                          {**base, "messages": messages, "nl_verdicts": [False] + [True] * (len(assertions) - 1)}))
            cases.append((f"{record['id']} nl empty", record, {**base, "messages": messages, "nl_verdicts": []}))
    first = records[0]
    for reason in ("max_steps", "too_many_errors", "agent_error"):
        cases.append((f"{first['id']} {reason}", first, {"domain": domain, "task": first, "termination_reason": reason,
                                                         "messages": golds[0]["messages"], "nl_verdicts": None,
                                                         "strict_replay": False}))
    return cases


def compare_with_official(domain: str, env_checks_of: dict[str, Any]) -> tuple[int, dict[str, list[str]]]:
    """Our reward info against the official one for every parity case, once per way of getting the environment's
    part (`env_checks_of`: name -> official answer -> env check); the official evaluation runs once."""
    cases = parity_cases(domain)
    notes = read_notes(Source(full_source_root()))
    answers = oracle_module().run_official("evaluate", [case for _, _, case in cases])
    mismatches: dict[str, list[str]] = {name: [] for name in env_checks_of}
    for (label, record, case), official in zip(cases, answers):
        assert "error" not in official, (label, official)
        one_trial = {"trial": 0, "termination_reason": case["termination_reason"], "messages": case["messages"],
                     "nl_judgement": stub_judgement(record, case["nl_verdicts"])}
        for name, env_check_of in env_checks_of.items():
            ours = evaluate_trial(domain, record, one_trial, env_check_of(official), notes=notes).reward_info
            if ours != official:
                fields = [key for key in official if ours.get(key) != official[key]]
                mismatches[name].append(f"{label}: {fields}: ours {[ours.get(k) for k in fields]} official "
                                        f"{[official[k] for k in fields]}")
    return len(cases), mismatches


@pytest.mark.slow
@pytest.mark.parametrize("domain", ["airline", "retail", "telecom"])
def test_reward_info_equals_official_on_gold_and_mutations(domain: str) -> None:
    """Field by field, twice: with the environment's part read from the official answer (the evaluator's own rules
    alone), and with it from the environment host's replay (the whole reward)."""
    from evaluators.benchmarks.tau2.report import official_env_check

    root = full_source_root()
    count, mismatches = compare_with_official(domain, {
        "official environment part": lambda official: EnvChecks(official_env_parts(official)),
        "environment host": lambda official: lambda d, record, messages: official_env_check(
            d, record, messages, source_root=root)})
    for name, found in mismatches.items():
        assert not found, f"{name}: {len(found)} of {count} differ:\n" + "\n".join(found[:10])


def random_table(seed: int) -> tuple[list[dict[str, Any]], int]:
    import random

    rng = random.Random(seed)
    trials = rng.randint(1, 5)
    rows = []
    for task in range(rng.randint(1, 8)):
        count = trials if rng.random() < 0.7 else rng.randint(1, trials)
        for number in range(count):
            reason = rng.choices(["user_stop", "max_steps", "infrastructure_error"], [0.8, 0.1, 0.1])[0]
            reward = (None if reason == "infrastructure_error" else 0.0 if reason == "max_steps"
                      else rng.choice([0.0, 1.0, 1.0, 0.5, 1 - 1e-7]))
            rows.append({"task_id": f"t{task}", "trial": number, "reward": reward, "termination_reason": reason})
    if all(row["termination_reason"] == "infrastructure_error" for row in rows):
        rows[0].update(termination_reason="user_stop", reward=1.0)
    return rows, trials


@pytest.mark.slow
def test_metrics_equal_official_on_random_tables() -> None:
    oracle = oracle_module()
    # Tables with infrastructure errors, tasks with fewer trials than asked (k lowered), and full ones.
    for seed in (0, 3, 5, 6, 9):
        rows, trials = random_table(seed)
        official = oracle.run_official("metrics", {"results": rows, "num_trials": trials})
        ours = domain_metrics([TrialRow(row["task_id"], row["reward"], row["termination_reason"]) for row in rows],
                              requested_k=trials)
        assert ours.max_k == official["max_k"], (seed, rows)
        assert {str(k): v for k, v in ours.pass_hat_ks.items()} == pytest.approx(official["pass_hat_ks"]), seed
        assert ours.avg_reward == pytest.approx(official["avg_reward"]), seed
        assert ours.infrastructure_errors == official["infra_error_count"], seed
        assert official["pandas_version"].startswith("2."), "the oracle must pin pandas 2.x (plan decision 6)"


def test_score_asks_the_environment_host_once_for_both_modes(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """The default env check goes to the host's shared instance with the sample's pinned source, lenient replay;
    a second mode's scoring of the same trajectory reuses the check. The host here is a stand-in module."""
    import sys
    import types

    from evaluators.benchmarks.tau2 import report
    from evaluators.benchmarks.tau2.report import score
    from evaluators.benchmarks.tau2.samples import SOURCE_ROOT

    monkeypatch.setattr(report, "notes_of", lambda sample: NOTES)  # the folder below holds empty code files

    calls: list[dict[str, Any]] = []

    class StandInHost:
        def evaluate_env(self, domain: str, record: dict[str, Any], messages: list[dict[str, Any]],
                         strict: bool = False, *, source_root: Any) -> FixedEnvCheck:
            calls.append({"domain": domain, "task": record["id"], "strict": strict, "root": source_root})
            return FixedEnvCheck(db_match=False)

    stand_in = types.ModuleType("evaluators.benchmarks.tau2.env_host")
    stand_in.shared_check_host = StandInHost  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "evaluators.benchmarks.tau2.env_host", stand_in)
    from evaluators.benchmarks.tau2.source import CODE_BLOB_IDS

    for relative in CODE_BLOB_IDS:  # a folder that holds the code files is the workers' source root as it is
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).touch()
    record = renamed(AIRLINE_TASK, f"cache-{tmp_path.name}")  # a key no other test has filled
    sample = sample_of(record, "airline")
    sample.input[SOURCE_ROOT] = str(tmp_path)
    prediction = prediction_of(sample, airline_trials(["pass"]))
    first, second = score(sample, prediction, "official"), score(sample, prediction, "strict")
    assert first.rule == second.rule == ev.DB_RULE
    assert calls == [{"domain": "airline", "task": record["id"], "strict": False, "root": tmp_path}]
