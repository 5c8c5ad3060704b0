"""τ²-bench's text-track data as typed records: each domain's tasks (what the evaluator needs), its policy text,
its database (kept as parsed JSON/TOML values) and its task splits, read from a checked source (source.py).

Tasks come in task-file order, keeping those whose id is in the chosen split (the official `get_tasks` keeps the
file's order, not the split list's); `limit` then keeps the first N of each domain, as `--num-tasks` does. A task
without `reward_basis` in its criteria gets the official default, DB and COMMUNICATE."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from evaluators.benchmarks.tau2.source import DOMAINS_PREFIX, Source, open_source
from evaluators.core.errors import DataError

DOMAINS = ("airline", "retail", "telecom")
DEFAULT_SPLIT = "base"
SPLIT_FILE = "split_tasks.json"
TASK_FILE = "tasks.json"


class RewardType(StrEnum):
    DB = "DB"
    ENV_ASSERTION = "ENV_ASSERTION"
    NL_ASSERTION = "NL_ASSERTION"
    ACTION = "ACTION"
    COMMUNICATE = "COMMUNICATE"


DEFAULT_REWARD_BASIS: tuple[RewardType, ...] = (RewardType.DB, RewardType.COMMUNICATE)


@dataclass(frozen=True)
class Action:
    """A gold tool call (`requestor` "assistant" or "user"); `compare_args` None: the official comparison uses
    the call's own argument keys."""

    action_id: str
    name: str
    arguments: dict[str, Any]
    requestor: str = "assistant"
    info: str | None = None
    compare_args: tuple[str, ...] | None = None


@dataclass(frozen=True)
class EnvAssertion:
    """A toolkit function called on the final environment (`env_type` "assistant" or "user") and the value it
    must return."""

    env_type: str
    func_name: str
    arguments: dict[str, Any]
    assert_value: bool = True
    message: str | None = None


@dataclass(frozen=True)
class EvaluationCriteria:
    reward_basis: tuple[RewardType, ...] = DEFAULT_REWARD_BASIS
    actions: tuple[Action, ...] = ()
    env_assertions: tuple[EnvAssertion, ...] = ()
    communicate_info: tuple[str, ...] = ()
    nl_assertions: tuple[str, ...] = ()


@dataclass(frozen=True)
class StructuredInstructions:
    domain: str
    reason_for_call: str
    known_info: str | None = None
    unknown_info: str | None = None
    task_instructions: str = ""


@dataclass(frozen=True)
class UserScenario:
    instructions: StructuredInstructions | str
    persona: str | None = None


@dataclass(frozen=True)
class Task:
    domain: str
    id: str
    user_scenario: UserScenario
    evaluation_criteria: EvaluationCriteria | None
    initial_state: dict[str, Any] | None = None  # kept as JSON: initialization data/actions, message history
    description: dict[str, Any] | None = None
    ticket: str | None = None
    user_tools: tuple[str, ...] | None = None  # None: every user tool
    # The task as its file holds it (what the official code validates; the environment worker and uploads read it).
    record: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Domain:
    name: str
    policy: str
    database: dict[str, Any]
    user_database: dict[str, Any] | None = None  # telecom's user-side device state
    splits: dict[str, tuple[str, ...]] = field(default_factory=dict)


def domain_path(domain: str, name: str) -> str:
    return f"{DOMAINS_PREFIX}/{domain}/{name}"


def _check_domain(domain: str) -> None:
    if domain not in DOMAINS:
        raise DataError(f"unknown τ²-bench domain {domain!r}; known: {', '.join(DOMAINS)}")


def _json(source: Source, relative: str) -> Any:
    try:
        return json.loads(source.text(relative))
    except json.JSONDecodeError as exc:
        raise DataError(f"not valid JSON ({exc.msg})", source.where(relative), exc.lineno) from None


def _toml(source: Source, relative: str) -> dict[str, Any]:
    try:
        return tomllib.loads(source.text(relative))
    except tomllib.TOMLDecodeError as exc:
        raise DataError(f"not valid TOML ({exc})", source.where(relative)) from None


class _Fields:
    """Reads one task's fields, naming the file, the task id and the field in every error."""

    def __init__(self, where: object, task_id: str):
        self.where = str(where)
        self.task_id = task_id

    def error(self, path: str, message: str) -> DataError:
        return DataError(f"task {self.task_id!r}: field {path} {message}", self.where)

    def get(self, record: Any, path: str, key: str, kind: type | tuple[type, ...], required: bool = False) -> Any:
        if not isinstance(record, dict):
            raise self.error(path, "must be an object")
        value = record.get(key)
        if value is None:
            if required:
                raise self.error(f"{path}.{key}", "is missing")
            return None
        if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
            names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
            raise self.error(f"{path}.{key}", f"must be {names}, not {type(value).__name__}")
        return value

    def strings(self, record: Any, path: str, key: str) -> tuple[str, ...]:
        items = self.get(record, path, key, list) or []
        for index, item in enumerate(items):
            if not isinstance(item, str):
                raise self.error(f"{path}.{key}[{index}]", f"must be a string, not {type(item).__name__}")
        return tuple(items)

    def objects(self, record: Any, path: str, key: str) -> list[tuple[str, dict[str, Any]]]:
        items = self.get(record, path, key, list) or []
        result = []
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                raise self.error(f"{path}.{key}[{index}]", f"must be an object, not {type(item).__name__}")
            result.append((f"{path}.{key}[{index}]", item))
        return result


def _action(fields: _Fields, path: str, record: dict[str, Any]) -> Action:
    requestor = fields.get(record, path, "requestor", str) or "assistant"
    if requestor not in ("assistant", "user"):
        raise fields.error(f"{path}.requestor", f"must be 'assistant' or 'user', not {requestor!r}")
    compare = record.get("compare_args")
    return Action(
        action_id=fields.get(record, path, "action_id", str, required=True),
        name=fields.get(record, path, "name", str, required=True),
        arguments=fields.get(record, path, "arguments", dict, required=True),
        requestor=requestor,
        info=fields.get(record, path, "info", str),
        compare_args=None if compare is None else fields.strings(record, path, "compare_args"),
    )


def _env_assertion(fields: _Fields, path: str, record: dict[str, Any]) -> EnvAssertion:
    env_type = fields.get(record, path, "env_type", str, required=True)
    if env_type not in ("assistant", "user"):
        raise fields.error(f"{path}.env_type", f"must be 'assistant' or 'user', not {env_type!r}")
    assert_value = record.get("assert_value", True)
    if not isinstance(assert_value, bool):
        raise fields.error(f"{path}.assert_value", f"must be a boolean, not {type(assert_value).__name__}")
    return EnvAssertion(
        env_type=env_type,
        func_name=fields.get(record, path, "func_name", str, required=True),
        arguments=fields.get(record, path, "arguments", dict, required=True),
        assert_value=assert_value,
        message=fields.get(record, path, "message", str),
    )


def _criteria(fields: _Fields, record: dict[str, Any]) -> EvaluationCriteria | None:
    criteria = fields.get(record, "task", "evaluation_criteria", dict)
    if criteria is None:
        return None
    path = "evaluation_criteria"
    basis_raw = criteria.get("reward_basis")
    if basis_raw is None:
        basis = DEFAULT_REWARD_BASIS
    else:
        names = fields.strings(criteria, path, "reward_basis")
        known = {member.value for member in RewardType}
        for index, name in enumerate(names):
            if name not in known:
                raise fields.error(f"{path}.reward_basis[{index}]", f"is {name!r}, not one of {', '.join(known)}")
        basis = tuple(RewardType(name) for name in names)
    return EvaluationCriteria(
        reward_basis=basis,
        actions=tuple(_action(fields, where, item) for where, item in fields.objects(criteria, path, "actions")),
        env_assertions=tuple(_env_assertion(fields, where, item)
                             for where, item in fields.objects(criteria, path, "env_assertions")),
        communicate_info=fields.strings(criteria, path, "communicate_info"),
        nl_assertions=fields.strings(criteria, path, "nl_assertions"),
    )


def _scenario(fields: _Fields, record: dict[str, Any]) -> UserScenario:
    scenario = fields.get(record, "task", "user_scenario", dict, required=True)
    path = "user_scenario"
    raw = scenario.get("instructions")
    instructions: StructuredInstructions | str
    if isinstance(raw, str):
        instructions = raw
    elif isinstance(raw, dict):
        inner = f"{path}.instructions"
        instructions = StructuredInstructions(
            domain=fields.get(raw, inner, "domain", str, required=True),
            reason_for_call=fields.get(raw, inner, "reason_for_call", str, required=True),
            known_info=fields.get(raw, inner, "known_info", str),
            unknown_info=fields.get(raw, inner, "unknown_info", str),
            task_instructions=fields.get(raw, inner, "task_instructions", str, required=True),
        )
    else:
        raise fields.error(f"{path}.instructions", "must be a string or an object")
    return UserScenario(instructions=instructions, persona=fields.get(scenario, path, "persona", str))


def parse_task(domain: str, record: Any, where: object, index: int) -> Task:
    """One task of a task file; a bad field is a DataError naming the file, the task id and the field."""
    if not isinstance(record, dict):
        raise DataError(f"task #{index} must be an object, not {type(record).__name__}", str(where))
    task_id = record.get("id")
    if not isinstance(task_id, str) or not task_id:
        raise DataError(f"task #{index}: field id must be a non-empty string", str(where))
    fields = _Fields(where, task_id)
    user_tools = record.get("user_tools")
    return Task(
        domain=domain,
        id=task_id,
        user_scenario=_scenario(fields, record),
        evaluation_criteria=_criteria(fields, record),
        initial_state=fields.get(record, "task", "initial_state", dict),
        description=fields.get(record, "task", "description", dict),
        ticket=fields.get(record, "task", "ticket", str),
        user_tools=None if user_tools is None else fields.strings(record, "task", "user_tools"),
        record=record,
    )


def read_splits(source: Source, domain: str) -> dict[str, tuple[str, ...]]:
    relative = domain_path(domain, SPLIT_FILE)
    raw = _json(source, relative)
    if not isinstance(raw, dict):
        raise DataError("must be an object of split name -> task ids", source.where(relative))
    splits = {}
    for name, ids in raw.items():
        if not isinstance(ids, list) or not all(isinstance(item, str) for item in ids):
            raise DataError(f"split {name!r} must be a list of task ids", source.where(relative))
        splits[name] = tuple(ids)
    return splits


def read_tasks(source: Source, domain: str) -> list[Task]:
    """Every task of the domain's task file, in file order."""
    _check_domain(domain)
    relative = domain_path(domain, TASK_FILE)
    raw = _json(source, relative)
    if isinstance(raw, dict) and "tasks" in raw:
        raw = raw["tasks"]
    if not isinstance(raw, list):
        raise DataError("must be a list of tasks", source.where(relative))
    tasks = [parse_task(domain, record, source.where(relative), index) for index, record in enumerate(raw)]
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise DataError(f"task {task.id!r} appears twice", source.where(relative))
        seen.add(task.id)
    return tasks


def split_tasks(source: Source, domain: str, split: str | None = DEFAULT_SPLIT) -> list[Task]:
    """The split's tasks in task-file order (`split` None: the whole file)."""
    tasks = read_tasks(source, domain)
    if split is None:
        return tasks
    splits = read_splits(source, domain)
    where = source.where(domain_path(domain, SPLIT_FILE))
    if split not in splits:
        raise DataError(f"no split {split!r} for {domain}; known: {', '.join(splits)}", where)
    wanted = set(splits[split])
    unknown = wanted - {task.id for task in tasks}
    if unknown:
        raise DataError(f"split {split!r} names task ids absent from {TASK_FILE}: {', '.join(sorted(unknown)[:3])}",
                        where)
    return [task for task in tasks if task.id in wanted]


def read_policy(source: Source, domain: str) -> str:
    """The policy text the agent receives: the file as is, or for telecom its main policy and technical support
    manual, each wrapped in its tag, joined by newlines as the official environment builds it."""
    _check_domain(domain)
    if domain != "telecom":
        return source.text(domain_path(domain, "policy.md"))
    main = source.text(domain_path(domain, "main_policy.md"))
    manual = source.text(domain_path(domain, "tech_support_manual.md"))
    return (f"<main_policy>\n{main}\n</main_policy>\n"
            f"<tech_support_policy>\n{manual}\n</tech_support_policy>")


def read_domain(source: Source, domain: str) -> Domain:
    """A domain's policy, database(s) and splits."""
    _check_domain(domain)
    if domain == "telecom":
        database = _toml(source, domain_path(domain, "db.toml"))
        user_database: dict[str, Any] | None = _toml(source, domain_path(domain, "user_db.toml"))
    else:
        relative = domain_path(domain, "db.json")
        database = _json(source, relative)
        if not isinstance(database, dict):
            raise DataError("must be a JSON object", source.where(relative))
        user_database = None
    return Domain(name=domain, policy=read_policy(source, domain), database=database, user_database=user_database,
                  splits=read_splits(source, domain))


def load(
    domains: Sequence[str] | None = None,
    split: str | None = DEFAULT_SPLIT,
    limit: int | None = None,
    data_dir: str | Path | None = None,
    source: Source | None = None,
) -> list[Task]:
    """The tasks of the chosen domains (all three by default, in the order airline, retail, telecom), each
    domain's in the official order; `limit` keeps the first N of each."""
    chosen = list(domains or DOMAINS)
    for domain in chosen:
        _check_domain(domain)
    source = source or open_source(data_dir)
    tasks: list[Task] = []
    for domain in DOMAINS:
        if domain in chosen:
            rows = split_tasks(source, domain, split)
            tasks.extend(rows[:limit] if limit else rows)
    return tasks
