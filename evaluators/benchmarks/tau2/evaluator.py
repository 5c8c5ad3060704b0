"""One trial's reward, as the official evaluator computes it under `EvaluationType.ALL`
(docs/tau2-notes.md §5), in the official `RewardInfo.model_dump(mode="json")` shape so a result can be compared
field by field with the official one. Each part is a named rule:

- premature_termination_scores_zero: a trial that did not end by user_stop or agent_stop scores 0.0 with no
  component checked (reward_basis null, the official note naming the reason).
- no_evaluation_criteria_scores_one: a task without evaluation criteria scores 1.0.
- db_matches_gold: the agent (and user) database hashes after replaying the trajectory equal those after the gold
  actions (from the environment host's EnvCheck); a task with neither actions nor env assertions passes unchecked.
- env_assertions_hold: every env assertion holds on the replayed environment (EnvCheck).
- every_gold_action_called: every gold action is matched by some tool call of any assistant or user message, in
  any order, compared as `Action.compare_with_tool_call` does (compare_args None: the call's own argument keys;
  the requestor is not compared).
- communicate_info_present: every communicate_info string is in some assistant text, lower-cased, with commas
  removed from the message only.
- nl_assertions_met: every verdict of the judge is met; no assertions -> 1.0 without a judge; the judge's empty or
  missing `results` -> 1.0 (official); deviations: a judge answer that could not be read scores 0 under
  `judge_error` (the official code raises and re-runs the simulation), and a task that needs the judge when none
  was given gets no reward at all (`judge_needed`).
- reward_is_product_of_basis: the reward is the product of the components listed in the task's reward_basis; the
  other components are kept as diagnostics, never counted.
Beyond the official code: an environment check that raised gives no reward (`env_check_failed`), never a score;
an uploaded trial ended by `infrastructure_error` has no reward (`infrastructure_error_excluded`; the official file
holds no reward info for it) and the metrics leave it out.

The notes written into `info` and the communicate checks' justifications are the official ones, read from the
pinned evaluator files (official_notes.py), so results compare equal field by field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from evaluators.benchmarks.tau2.data import Action, RewardType, Task, parse_task
from evaluators.benchmarks.tau2.official_notes import OfficialNotes

STOP_REASONS = ("user_stop", "agent_stop")

PREMATURE_RULE = "premature_termination_scores_zero"
NO_CRITERIA_RULE = "no_evaluation_criteria_scores_one"
DB_RULE = "db_matches_gold"
ENV_ASSERTION_RULE = "env_assertions_hold"
ACTION_RULE = "every_gold_action_called"
COMMUNICATE_RULE = "communicate_info_present"
NL_RULE = "nl_assertions_met"
PRODUCT_RULE = "reward_is_product_of_basis"
JUDGE_ERROR_RULE = "judge_error"
JUDGE_NEEDED_RULE = "judge_needed"
ENV_CHECK_FAILED_RULE = "env_check_failed"
INFRASTRUCTURE_RULE = "infrastructure_error_excluded"
INFRASTRUCTURE_ERROR = "infrastructure_error"
# The rules after which a trial has no reward (None): not a verdict on the agent.
UNSCORED_RULES = (JUDGE_NEEDED_RULE, ENV_CHECK_FAILED_RULE, INFRASTRUCTURE_RULE)

# The rule that decides each component of the reward basis, in the order the official code multiplies them.
BASIS_RULES: dict[RewardType, str] = {
    RewardType.DB: DB_RULE,
    RewardType.ENV_ASSERTION: ENV_ASSERTION_RULE,
    RewardType.ACTION: ACTION_RULE,
    RewardType.NL_ASSERTION: NL_RULE,
    RewardType.COMMUNICATE: COMMUNICATE_RULE,
}



class EnvCheckLike(Protocol):
    """What the environment host's EnvCheck gives (plan, "The environment host"): the DB comparison, the env
    assertions' results (official EnvAssertionCheck dumps), the tool types by name, and replay notes."""

    @property
    def db_match(self) -> bool | None: ...

    @property
    def env_assertions(self) -> Sequence[Mapping[str, Any]]: ...

    @property
    def tool_types(self) -> Mapping[str, str]: ...

    @property
    def replay_problems(self) -> Sequence[str]: ...

    # Also read when present: `replay_error` (str | None: the replay raised) and `db_diff` ({"db"/"user_db":
    # [{"path", "gold", "predicted"}]}), kept as evidence.


# env_check(domain, task record, messages) -> the host's EnvCheck (an object with those attributes, or a mapping).
EnvChecker = Callable[[str, Mapping[str, Any], list[dict[str, Any]]], "EnvCheckLike | Mapping[str, Any]"]


@dataclass
class TrialVerdict:
    """One trial scored: the official RewardInfo dump (its `reward` None when the trial cannot be scored),
    the rules of the reward basis that scored 0, and why there is no reward when there is none."""

    reward_info: dict[str, Any]
    failed_rules: list[str] = field(default_factory=list)
    unscored_reason: str | None = None
    replay_problems: list[str] = field(default_factory=list)
    db_differences: list[dict[str, Any]] = field(default_factory=list)

    @property
    def reward(self) -> float | None:
        value = self.reward_info.get("reward")
        return None if value is None else float(value)

    @property
    def rule(self) -> str:
        """The rule that decided the trial: why it has no reward, else the first failed rule, else the product
        rule (a pass, or no criteria)."""
        if self.unscored_reason is not None:
            return next((rule for rule in self.failed_rules if rule in UNSCORED_RULES), JUDGE_NEEDED_RULE)
        if self.reward_info.get("reward_basis") is None and not self.failed_rules:
            return NO_CRITERIA_RULE
        return self.failed_rules[0] if self.failed_rules else PRODUCT_RULE


def _reward_info(reward: float | None, **fields: Any) -> dict[str, Any]:
    """A RewardInfo dump with the official defaults for the fields not given (reward_basis defaults to [DB])."""
    info: dict[str, Any] = {
        "reward": reward, "db_check": None, "env_assertions": None, "action_checks": None, "nl_assertions": None,
        "communicate_checks": None, "reward_basis": [RewardType.DB.value], "reward_breakdown": None, "info": None,
    }
    info.update(fields)
    return info


@dataclass
class Component:
    """One evaluator's part of the reward (as the official per-evaluator RewardInfo): its reward, its
    breakdown entries (None: nothing to merge) and its note."""

    reward: float | None
    breakdown: dict[str, float] | None
    info: dict[str, Any] | None
    failed: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------- the messages


def tool_calls_of(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Every tool call of the assistant and user messages, in trajectory order (ActionEvaluator.extract_tool_calls:
    both roles, so a telecom user's calls count)."""
    calls: list[Mapping[str, Any]] = []
    for message in messages:
        if message.get("role") in ("assistant", "user") and message.get("tool_calls") is not None:
            calls.extend(message["tool_calls"])
    return calls


def action_matches_call(action: Action, call: Mapping[str, Any]) -> bool:
    """Action.compare_with_tool_call: same name; the compared keys are compare_args, or when it is None the call's
    own argument keys (an omitted optional argument is not penalised, an extra one is); no key to compare -> a
    match; the requestor is not compared."""
    if action.name != call.get("name"):
        return False
    arguments = call.get("arguments") or {}
    keys = set(arguments) if action.compare_args is None else set(action.compare_args)
    if not keys:
        return True
    called = {key: value for key, value in arguments.items() if key in keys}
    gold = {key: value for key, value in action.arguments.items() if key in keys}
    return called == gold


def action_dump(action: Action) -> dict[str, Any]:
    """The official Action.model_dump(mode="json"): every field, defaults filled, unknown keys dropped."""
    return {"action_id": action.action_id, "requestor": action.requestor, "name": action.name,
            "arguments": action.arguments, "info": action.info,
            "compare_args": None if action.compare_args is None else list(action.compare_args)}


def has_text_content(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, str) and bool(content.strip())


# ---------------------------------------------------------------------------------------------- the components


def action_component(task: Task, messages: Sequence[Mapping[str, Any]], tool_types: Mapping[str, str] | None,
                     notes: OfficialNotes) -> tuple[Component, list[dict[str, Any]] | None]:
    """every_gold_action_called: (component, action_checks); no gold actions -> 1.0 and no checks."""
    criteria = task.evaluation_criteria
    actions = criteria.actions if criteria is not None else ()
    if not actions:
        return Component(1.0, {RewardType.ACTION.value: 1.0}, {"note": notes.no_actions}), None
    calls = tool_calls_of(messages)
    checks = []
    for action in actions:
        matched = any(action_matches_call(action, call) for call in calls)
        checks.append({"action": action_dump(action), "action_match": matched, "action_reward": 1.0 if matched else 0.0,
                       "tool_type": (tool_types or {}).get(action.name)})
    reward = 1.0 if all(check["action_match"] for check in checks) else 0.0
    return Component(reward, {RewardType.ACTION.value: reward}, None, [] if reward else [ACTION_RULE]), checks


def communicate_component(task: Task, messages: Sequence[Mapping[str, Any]], notes: OfficialNotes
                          ) -> tuple[Component, list[dict[str, Any]] | None]:
    """communicate_info_present: (component, communicate_checks); no strings -> 1.0 and no checks."""
    criteria = task.evaluation_criteria
    wanted = criteria.communicate_info if criteria is not None else ()
    if not wanted:
        return Component(1.0, {RewardType.COMMUNICATE.value: 1.0}, {"note": notes.no_communicate}), None
    checks = []
    for info in wanted:
        said = next((message for message in messages if message.get("role") == "assistant"
                     and has_text_content(message) and info.lower() in message["content"].lower().replace(",", "")),
                    None)
        justification = (notes.not_communicated_for(info) if said is None
                         else notes.communicated_for(info, said["content"]))
        checks.append({"info": info, "met": said is not None, "justification": justification})
    reward = 1.0 if all(check["met"] for check in checks) else 0.0
    return Component(reward, {RewardType.COMMUNICATE.value: reward}, None, [] if reward else [COMMUNICATE_RULE]), checks


# pydantic's lax bool: the strings and numbers the official NLAssertionCheck(met=...) accepts.
_TRUE_TEXTS = {"1", "on", "t", "true", "y", "yes"}
_FALSE_TEXTS = {"0", "off", "f", "false", "n", "no"}


def _as_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE_TEXTS | _FALSE_TEXTS:
        return value.strip().lower() in _TRUE_TEXTS
    raise ValueError(f"metExpectation is {value!r}, not a boolean")


def nl_checks_of(results: Sequence[Any]) -> list[dict[str, Any]]:
    """The judge's results as official NLAssertionCheck dumps (the judge's own echo of each assertion);
    a result the official model would refuse raises ValueError."""
    checks = []
    for index, result in enumerate(results):
        if not isinstance(result, Mapping):
            raise ValueError(f"results[{index}] is not an object")
        for key in ("expectedOutcome", "metExpectation", "reasoning"):
            if key not in result:
                raise ValueError(f"results[{index}] has no {key!r}")
        if not isinstance(result["expectedOutcome"], str) or not isinstance(result["reasoning"], str):
            raise ValueError(f"results[{index}]: expectedOutcome and reasoning must be strings")
        checks.append({"nl_assertion": result["expectedOutcome"], "met": _as_bool(result["metExpectation"]),
                       "justification": result["reasoning"]})
    return checks


def nl_component(task: Task, judgement: Mapping[str, Any] | None, notes: OfficialNotes
                 ) -> tuple[Component, list[dict[str, Any]]]:
    """nl_assertions_met: (component, nl_assertions). Called only when NL_ASSERTION is in the basis, as officially."""
    criteria = task.evaluation_criteria
    assertions = criteria.nl_assertions if criteria is not None else ()
    if not assertions:
        return Component(1.0, {RewardType.NL_ASSERTION.value: 1.0}, {"note": notes.no_nl}), []
    if judgement is None:
        reason = f"the task has {len(assertions)} NL assertion(s) and no judge was given"
        return Component(None, None, {"note": reason}, [JUDGE_NEEDED_RULE]), []
    if not isinstance(judgement, Mapping):
        judgement = {"error": f"the judgement is {type(judgement).__name__}, not an object"}
    error = judgement.get("error")
    results = judgement.get("results")
    checks: list[dict[str, Any]] = []
    if error is None:
        try:
            # A missing or empty `results` passes, as officially (`result_data.get("results", [])`).
            checks = nl_checks_of(results or [])
        except ValueError as exc:
            error = f"the judge's answer does not fit the official shape: {exc}"
    if error is not None:
        note = {"note": f"judge error: {error}", "judge_model": judgement.get("model")}
        return Component(0.0, {RewardType.NL_ASSERTION.value: 0.0}, note, [JUDGE_ERROR_RULE]), []
    reward = 1.0 if all(check["met"] for check in checks) else 0.0
    return Component(reward, {RewardType.NL_ASSERTION.value: reward}, None, [] if reward else [NL_RULE]), checks


def _env_part(check: EnvCheckLike | Mapping[str, Any], name: str, default: Any) -> Any:
    if isinstance(check, Mapping):
        return check.get(name, default)
    return getattr(check, name, default)


@dataclass
class EnvPart:
    """The environment evaluator's part: its component, the official db_check and env_assertions dumps, the tool
    types for the action checks, and the evidence (replay notes, where the end DB differs from the gold one)."""

    component: Component
    db_check: dict[str, Any] | None = None
    env_assertions: list[dict[str, Any]] | None = None
    tool_types: dict[str, str] | None = None
    replay_problems: list[str] = field(default_factory=list)
    db_differences: list[dict[str, Any]] = field(default_factory=list)


def db_differences_of(db_diff: Any) -> list[dict[str, Any]]:
    """The host's DB diff ({"db"/"user_db": [{"path", "gold", "predicted"}]}) as state differences (core/state_diff's
    {"kind", "path", "before" = expected, "after" = reached})."""
    if not isinstance(db_diff, Mapping):
        return []
    return [{"kind": "changed", "path": f"{side}{entry.get('path', '')}", "before": entry.get("gold"),
             "after": entry.get("predicted")}
            for side, entries in db_diff.items() if isinstance(entries, list)
            for entry in entries if isinstance(entry, Mapping)]


def has_env_criteria(record: Mapping[str, Any]) -> bool:
    """Whether the environment is consulted for the task: it has gold actions or env assertions (an empty list
    counts; both null, or no criteria, does not)."""
    criteria = record.get("evaluation_criteria") or {}
    return criteria.get("actions") is not None or criteria.get("env_assertions") is not None


def env_component(task: Task, record: Mapping[str, Any], domain: str, messages: list[dict[str, Any]],
                  env_check: EnvChecker, notes: OfficialNotes) -> EnvPart:
    """db_matches_gold and env_assertions_hold. Neither actions nor env assertions (both null in the record; an
    empty list is not null) -> 1.0, db_match true, no breakdown, and the environment is not consulted (the tool
    types the official code reads from a fresh environment only type gold actions, and there are none)."""
    if not has_env_criteria(record):
        return EnvPart(Component(1.0, None, {"note": notes.no_env_criteria}), {"db_match": True, "db_reward": 1.0})
    try:
        check = env_check(domain, record, messages)
    except Exception as exc:  # the environment worker's failure is no verdict on the agent
        reason = f"the environment check failed: {type(exc).__name__}: {exc}"
        return EnvPart(Component(None, None, {"note": reason}, [ENV_CHECK_FAILED_RULE]), replay_problems=[reason])
    db_match = _env_part(check, "db_match", None)
    db_reward = 1.0 if db_match else 0.0
    assertion_checks = [dict(item) for item in _env_part(check, "env_assertions", None) or []]
    assertion_reward = 1.0
    for item in assertion_checks:
        assertion_reward *= float(item.get("reward", 1.0 if item.get("met") else 0.0))
    basis = task.evaluation_criteria.reward_basis if task.evaluation_criteria is not None else ()
    reward = 1.0
    breakdown: dict[str, float] = {}
    failed = []
    if RewardType.DB in basis:
        breakdown[RewardType.DB.value] = db_reward
        reward *= db_reward
        if not db_reward:
            failed.append(DB_RULE)
    if RewardType.ENV_ASSERTION in basis:
        breakdown[RewardType.ENV_ASSERTION.value] = assertion_reward
        reward *= assertion_reward
        if not assertion_reward:
            failed.append(ENV_ASSERTION_RULE)
    problems = [str(item) for item in _env_part(check, "replay_problems", None) or []]
    replay_error = _env_part(check, "replay_error", None)
    if replay_error:
        problems.append(f"the replay failed: {replay_error}")
    return EnvPart(Component(reward, breakdown, None, failed), {"db_match": bool(db_match), "db_reward": db_reward},
                   assertion_checks, dict(_env_part(check, "tool_types", None) or {}) or None, problems,
                   db_differences_of(_env_part(check, "db_diff", None)))


# ---------------------------------------------------------------------------------------------- the trial


def evaluate_trial(domain: str, record: Mapping[str, Any], trial: Mapping[str, Any], env_check: EnvChecker,
                   task: Task | None = None, *, notes: OfficialNotes) -> TrialVerdict:
    """evaluate_simulation(..., EvaluationType.ALL) for one trial of the plan's Trial shape; `record` is the task
    as in tasks.json (parsed here unless `task` is given), `notes` the official texts of the pinned source."""
    reason = trial.get("termination_reason")
    if reason == INFRASTRUCTURE_ERROR:
        why = f"ended by {INFRASTRUCTURE_ERROR}: {trial.get('error') or 'no detail'}"
        return TrialVerdict(_reward_info(None, reward_basis=None, info={"note": why}), [INFRASTRUCTURE_RULE], why)
    if reason not in STOP_REASONS:
        return TrialVerdict(_reward_info(0.0, reward_basis=None, info={"note": notes.premature_for(reason)}),
                            [PREMATURE_RULE])
    task = task or parse_task(domain, dict(record), "task record", 0)
    criteria = task.evaluation_criteria
    if criteria is None:
        return TrialVerdict(_reward_info(1.0, reward_basis=None, info={"note": notes.no_criteria}))
    messages = list(trial.get("messages") or [])
    env_part = env_component(task, record, domain, messages, env_check, notes)
    env = env_part.component
    action, action_checks = action_component(task, messages, env_part.tool_types, notes)
    communicate, communicate_checks = communicate_component(task, messages, notes)
    basis = list(criteria.reward_basis)
    nl: Component | None = None
    nl_checks: list[dict[str, Any]] | None = None
    if RewardType.NL_ASSERTION in basis:
        nl, nl_checks = nl_component(task, trial.get("nl_judgement"), notes)
    # reward_is_product_of_basis: in the official order env, action, NL, communicate, each only when listed.
    parts: list[tuple[set[RewardType], Component | None]] = [
        ({RewardType.DB, RewardType.ENV_ASSERTION}, env), ({RewardType.ACTION}, action),
        ({RewardType.NL_ASSERTION}, nl), ({RewardType.COMMUNICATE}, communicate)]
    reward: float | None = 1.0
    breakdown: dict[str, float] = {}
    failed: list[str] = []
    unscored: str | None = None
    for bases, component in parts:
        if component is None or not bases & set(basis):
            continue
        breakdown.update(component.breakdown or {})
        failed.extend(component.failed)
        if component.reward is None:
            unscored = unscored or str((component.info or {}).get("note"))
            reward = None
        elif reward is not None:
            reward *= component.reward
    if unscored is not None:
        reward = None
    info = {"env": env.info, "nl": nl.info if nl is not None else None, "communicate": communicate.info,
            "action": action.info}
    reward_info = _reward_info(
        reward, db_check=env_part.db_check, env_assertions=env_part.env_assertions, action_checks=action_checks,
        nl_assertions=nl_checks, communicate_checks=communicate_checks, reward_basis=[b.value for b in basis],
        reward_breakdown=breakdown, info=info)
    return TrialVerdict(reward_info, failed, unscored, env_part.replay_problems, env_part.db_differences)


# ---------------------------------------------------------------------------------------------- what Explore shows


def _basis_note(reward_type: RewardType, basis: Sequence[str]) -> str:
    return "" if reward_type.value in basis else " (diagnostic: not in the reward basis)"


def _component_checks(info: Mapping[str, Any], basis: Sequence[str]) -> list[dict[str, Any]]:
    checks: list[dict[str, Any]] = []
    db_check = info.get("db_check")
    if db_check is not None:
        checks.append({"rule": DB_RULE, "met": bool(db_check.get("db_match")), "detail": (
            "the database matches the gold one" if db_check.get("db_match") else
            "the database differs from the gold actions' end state") + _basis_note(RewardType.DB, basis)})
    assertions = info.get("env_assertions") or []
    if assertions:
        unmet = [str((item.get("env_assertion") or {}).get("func_name")) for item in assertions if not item.get("met")]
        checks.append({"rule": ENV_ASSERTION_RULE, "met": not unmet, "detail": (
            f"not holding: {', '.join(unmet)}" if unmet else f"{len(assertions)} assertion(s) hold")
            + _basis_note(RewardType.ENV_ASSERTION, basis)})
    actions = info.get("action_checks")
    if actions is not None:
        missed = [f"{item['action']['name']}({item['action']['arguments']})" for item in actions
                  if not item.get("action_match")]
        checks.append({"rule": ACTION_RULE, "met": not missed, "detail": (
            f"not called: {'; '.join(missed)}" if missed else f"all {len(actions)} gold action(s) called")
            + _basis_note(RewardType.ACTION, basis)})
    communicated = info.get("communicate_checks")
    if communicated is not None:
        unsaid = [item["info"] for item in communicated if not item.get("met")]
        checks.append({"rule": COMMUNICATE_RULE, "met": not unsaid, "detail": (
            f"never said: {', '.join(map(repr, unsaid))}" if unsaid else "every required piece of information said")
            + _basis_note(RewardType.COMMUNICATE, basis)})
    return checks


def dialogue_checks(verdict: TrialVerdict) -> dict[str, Any]:
    """One trial's checks as Explore shows them inside its dialogue (core/declarations.py DIALOGUE_CHECKS): each
    rule met or not with why, and where the end database differs from the gold one."""
    info = verdict.reward_info
    note = str((info.get("info") or {}).get("note") or "")
    basis = info.get("reward_basis")
    checks: list[dict[str, Any]] = []
    if basis is None:
        rule = verdict.failed_rules[0] if verdict.failed_rules else NO_CRITERIA_RULE
        checks.append({"rule": rule, "met": None if rule == INFRASTRUCTURE_RULE else not verdict.failed_rules,
                       "detail": note})
        return {"reward": verdict.reward, "checks": checks, "state_differences": verdict.db_differences}
    checks.extend(_component_checks(info, basis))
    nl_info = (info.get("info") or {}).get("nl") or {}
    if RewardType.NL_ASSERTION.value in basis:
        if JUDGE_NEEDED_RULE in verdict.failed_rules:
            checks.append({"rule": JUDGE_NEEDED_RULE, "met": None, "detail": str(nl_info.get("note"))})
        elif JUDGE_ERROR_RULE in verdict.failed_rules:
            checks.append({"rule": JUDGE_ERROR_RULE, "met": False, "detail": str(nl_info.get("note"))})
        else:
            unmet = [item["nl_assertion"] for item in info.get("nl_assertions") or [] if not item.get("met")]
            checks.append({"rule": NL_RULE, "met": not unmet, "detail": (
                f"judged unmet: {'; '.join(unmet)}" if unmet else "the judge found every assertion met"
                if info.get("nl_assertions") else str(nl_info.get("note") or "the judge returned no results"))})
    if ENV_CHECK_FAILED_RULE in verdict.failed_rules:
        checks.append({"rule": ENV_CHECK_FAILED_RULE, "met": None, "detail": str(verdict.unscored_reason)})
    reward = verdict.reward
    checks.append({"rule": PRODUCT_RULE, "met": None if reward is None else reward == 1.0,
                   "detail": f"reward {'none' if reward is None else f'{reward:g}'}: the product over "
                             f"{', '.join(basis) or 'nothing'}"})
    for problem in verdict.replay_problems:
        checks.append({"rule": "replay", "met": None, "detail": problem})
    return {"reward": reward, "checks": checks, "state_differences": verdict.db_differences}
