"""One τ²-bench conversation (the tested agent, the simulated user, the domain's tools) played as the official
half-duplex orchestrator plays it, and `solve`: a task's k trials, each judged on its NL assertions when the task
needs that. See docs/tau2-notes.md §2-5 for the behaviour followed and the pointers into the official code.

The loop (orchestrator `run`/`step`/`_check_termination`): the agent's fixed greeting opens the trajectory and goes
to the user, so the user simulator's request comes first. Each step moves one message: the user or the agent
answers (a message with tool calls goes to the environment, text to the other side), or the environment executes
every call of the message in order, one tool message each, and returns the results to the caller. After each step
the environment syncs its tools, and, unless calls are pending, the step count (max_steps) and the error count
(max_errors: every tool result with an error, the user's too, never reset) are checked, in that order, so they can
end even a conversation the user has just stopped. The user stops by writing a stop token in a text message; the
agent's `###STOP###` stops nothing (the official text agent has no stop).

Deviations (plan decision 2): an answer the official code would raise on (tool-call arguments that are not a JSON
object, a message with neither text nor tool calls) ends the trajectory at once with `agent_error` or `user_error`
and the reason, where the official runner retries the whole simulation and then records `infrastructure_error`.
A request that fails after the engine's retries raises RequestFailed out of `solve` (the task is re-runnable)."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from evaluators.benchmarks.tau2 import data
from evaluators.benchmarks.tau2.env_checks import check_ahead, environment_root_of
from evaluators.benchmarks.tau2.env_host import EnvironmentLimit, shared_host
from evaluators.benchmarks.tau2.evaluator import has_env_criteria
from evaluators.benchmarks.tau2.messages import (
    ASSISTANT,
    USER,
    Message,
    agent_request_messages,
    conversation_lines,
    text_message,
    tool_call,
    tool_message,
    user_request_messages,
)
from evaluators.benchmarks.tau2.prompts import OfficialPrompts, read_prompts, scenario_text
from evaluators.benchmarks.tau2.run_rules import BOARD_TRIALS, trials_of
from evaluators.benchmarks.tau2.samples import SOURCE_ROOT
from evaluators.benchmarks.tau2.source import Source, open_source
from evaluators.core.types import ChatRequest, Prediction, Sample
from evaluators.engine.client import ChatResult, PlayingRole

# The official defaults `tau2 run` uses (config.py): steps and tool errors per conversation, the seed the per-trial
# seeds are drawn from.
MAX_STEPS = 200
MAX_ERRORS = 10
SEED = 300
SEED_RANGE = (0, 1_000_000)
# The official agent and user (and judge) request temperature.
TEMPERATURE = 0.0

USER_STOP = "user_stop"
AGENT_STOP = "agent_stop"  # never reached by the official text agent; kept for the evaluator's sake
MAX_STEPS_REACHED = "max_steps"
TOO_MANY_ERRORS = "too_many_errors"
AGENT_ERROR = "agent_error"
USER_ERROR = "user_error"
# A tool call that took the environment worker past its time or memory limit (e.g. a huge `calculate`): the session
# is over, so is the trajectory (the official code has no limits; ours, named, scored as any early end).
ENVIRONMENT_LIMIT = "environment_limit"
ENDS_WITHOUT_SYNC = (AGENT_ERROR, USER_ERROR, ENVIRONMENT_LIMIT)
# Ends the evaluator scores (the rest terminate prematurely: reward 0, no component evaluated).
SCORED_ENDS = (USER_STOP, AGENT_STOP)

Trial = dict[str, Any]
Judgement = dict[str, Any]


class Session(Protocol):
    """An open environment session (env_host): the official tool schemas, in the official order."""

    agent_tools: list[dict[str, Any]]
    user_tools: list[dict[str, Any]] | None


class ToolResult(Protocol):
    content: str
    error: bool


class EnvHost(Protocol):
    """What the conversation needs of the environment host (contract in docs: the plan's env_host)."""

    def open_async(self, domain: str, task_record: dict[str, Any], source_root: Path) -> Awaitable[Any]: ...

    def call_async(self, session: Any, call_id: str, name: str, requestor: str,
                   arguments: dict[str, Any]) -> Awaitable[Any]: ...

    def step_end_async(self, session: Any) -> Awaitable[None]: ...

    def close_async(self, session: Any) -> Awaitable[None]: ...


@dataclass(frozen=True)
class DomainSetting:
    """What every conversation of a domain shares: its name, the policy the agent is given, the official texts,
    and the pinned source folder the environment host builds the domain from."""

    domain: str
    policy: str
    prompts: OfficialPrompts
    source_root: Path


@dataclass(frozen=True)
class Limits:
    max_steps: int = MAX_STEPS
    max_errors: int = MAX_ERRORS


def domain_setting(source: Source, domain: str, environment_root: Path | None = None) -> DomainSetting:
    """The domain's setting read from `source` (policy and texts checked by their blob ids), its environments
    built from `environment_root` (default: `source`'s own folder); once per folder."""
    root = environment_root or source.root
    key = (str(source.root), str(root), domain, tuple(sorted(source.blob_ids.items())))
    if key not in _SETTINGS:
        _SETTINGS[key] = DomainSetting(domain, data.read_policy(source, domain), read_prompts(source), root)
    return _SETTINGS[key]


_SETTINGS: dict[tuple[str, str, str, tuple[tuple[str, str], ...]], DomainSetting] = {}


def trial_seeds(count: int, seed: int = SEED) -> list[int]:
    """The official per-trial seeds: `random.seed(seed)`, then one `randint(0, 1_000_000)` per trial."""
    draw = random.Random(seed)
    return [draw.randint(*SEED_RANGE) for _ in range(count)]


# ---- one answer ------------------------------------------------------------------------------------------------

@dataclass
class Reply:
    """A participant's answer read as the official `generate` reads it; `problem` says why it cannot be used."""

    content: str | None
    calls: list[dict[str, Any]] | None
    problem: str | None = None


def read_reply(result: ChatResult, requestor: str, position: int) -> Reply:
    """The answer's text and tool calls (ids, names and arguments from the raw message as the server sent it).
    A call without an id gets `call_<position>_<index>` (deterministic: a rerun from the cache repeats it)."""
    who = "agent" if requestor == ASSISTANT else "user"
    raw = result.message
    if raw is not None:
        raw_calls = raw.get("tool_calls") or []
    else:  # an answer cached before raw messages were kept: its parsed calls, without ids
        raw_calls = [{"function": {"name": c.name, "arguments": c.arguments}} for c in result.tool_calls or []]
    calls = []
    for index, raw_call in enumerate(raw_calls if isinstance(raw_calls, list) else []):
        function = raw_call.get("function") if isinstance(raw_call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(function, dict) or not isinstance(name, str):
            return Reply(result.text, None, f"the {who}'s tool call #{index + 1} has no function name")
        text = function.get("arguments")
        try:
            arguments = json.loads(text) if isinstance(text, str) else None
        except json.JSONDecodeError as exc:
            return Reply(result.text, None, f"the {who}'s call to {name!r} has arguments that are not JSON "
                                            f"({exc.msg}): {_short(text)}")
        if not isinstance(arguments, dict):
            return Reply(result.text, None, f"the {who}'s call to {name!r} has arguments that are not a JSON "
                                            f"object: {_short(text)}")
        call_id = raw_call.get("id")
        if not isinstance(call_id, str) or not call_id:
            call_id = f"call_{position}_{index}"
        calls.append(tool_call(call_id, name, arguments, requestor))
    if not calls and (result.text is None or not result.text.strip()):
        return Reply(result.text, None, f"the {who} sent an empty message (no text, no tool calls)")
    return Reply(result.text, calls or None)


def _short(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


# ---- one trajectory --------------------------------------------------------------------------------------------

def user_client(clients: Mapping[str, Any]) -> Any:
    """The simulated user's client: the run's `user` role, else the tested model playing it."""
    return clients.get("user") or PlayingRole(clients["model"], "user")


class _Conversation:
    """The orchestrator's state for one trajectory."""

    def __init__(self, task: data.Task, setting: DomainSetting, seed: int, agent: Any, user: Any, host: EnvHost,
                 session: Any, limits: Limits):
        self.setting, self.seed, self.agent, self.user, self.host, self.session = setting, seed, agent, user, host, session
        self.limits = limits
        self.user_tools = session.user_tools or None  # an empty list of user tools is none (official build_user)
        self.agent_system = setting.prompts.agent_system_prompt(setting.policy)
        self.user_system = setting.prompts.user_system_prompt(scenario_text(task.user_scenario),
                                                              with_tools=self.user_tools is not None)
        self.trajectory: list[Message] = [text_message(ASSISTANT, setting.prompts.greeting, None, 0)]
        self.to_role = USER  # whom the last message goes to: "user", "assistant" or "env"
        self.from_role = ASSISTANT
        self.steps = 0
        self.errors = 0
        self.reason: str | None = None
        self.problem: str | None = None
        self.usage = {side: {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0} for side in ("agent", "user")}

    async def play(self) -> None:
        while self.reason is None:
            await self.step()
            if self.reason in ENDS_WITHOUT_SYNC:
                return
            await self.host.step_end_async(self.session)
            self.check_termination()

    async def step(self) -> None:
        if self.to_role == "env":
            await self.execute(self.trajectory[-1]["tool_calls"])
        else:
            await self.answer(self.to_role)
        self.steps += 1

    async def answer(self, role: str) -> None:
        if role == USER:
            request = ChatRequest(user_request_messages(self.user_system, self.trajectory), tools=self.user_tools,
                                  tool_choice="auto" if self.user_tools else None, sampling=self.sampling())
            result = await self.user.complete(request)
        else:
            request = ChatRequest(agent_request_messages(self.agent_system, self.trajectory),
                                  tools=self.session.agent_tools or None,
                                  tool_choice="auto" if self.session.agent_tools else None, sampling=self.sampling())
            result = await self.agent.complete(request)
        self.count(role, result)
        reply = read_reply(result, role, len(self.trajectory))
        if reply.problem is not None:
            self.reason, self.problem = (USER_ERROR if role == USER else AGENT_ERROR), reply.problem
            return
        self.trajectory.append(text_message(role, reply.content, reply.calls, len(self.trajectory)))
        if role == USER and reply.calls is None and self.setting.prompts.is_stop(reply.content):
            self.reason = USER_STOP
        self.from_role = role
        self.to_role = "env" if reply.calls else (ASSISTANT if role == USER else USER)

    async def execute(self, calls: Sequence[dict[str, Any]]) -> None:
        """Every call of the message in order; each result is a tool message of its own, back to the caller."""
        for call in calls:
            try:
                result = await self.host.call_async(self.session, call["id"], call["name"], call["requestor"],
                                                    call["arguments"])
            except EnvironmentLimit as exc:
                self.reason = ENVIRONMENT_LIMIT
                self.problem = f"the {call['requestor']}'s call {call['name']!r} took the environment past its limits: {exc}"
                return
            self.errors += bool(result.error)
            self.trajectory.append(tool_message(call, result.content, bool(result.error), len(self.trajectory)))
        self.to_role, self.from_role = self.from_role, "env"

    def check_termination(self) -> None:
        """As `_check_termination`: not while calls are pending; max_steps, then max_errors (which wins)."""
        if self.to_role == "env":
            return
        if self.steps >= self.limits.max_steps:
            self.reason = MAX_STEPS_REACHED
        if self.errors >= self.limits.max_errors:
            self.reason = TOO_MANY_ERRORS

    def sampling(self) -> dict[str, Any]:
        # The seed is part of the body, hence of the response cache's key: trials differ even at temperature 0.
        return {"temperature": TEMPERATURE, "seed": self.seed}

    def count(self, role: str, result: ChatResult) -> None:
        side = self.usage["user" if role == USER else "agent"]
        side["requests"] += 1
        for name in ("prompt_tokens", "completion_tokens"):
            side[name] += int(result.usage.get(name) or 0)


async def play_trial(task_record: dict[str, Any], setting: DomainSetting, trial: int, seed: int,
                     clients: Mapping[str, Any], host: EnvHost, limits: Limits = Limits()) -> Trial:
    """One conversation of the task (`task_record` as in tasks.json), the agent played by `clients["model"]`,
    the user by `clients["user"]` (else the tested model). The plan's Trial dict, without its judgement."""
    task = data.parse_task(setting.domain, task_record, "the sample's task", 0)
    session = await host.open_async(setting.domain, task_record, setting.source_root)
    try:
        # The orchestrator's initialize() ends with a sync, after the initial state is applied.
        await host.step_end_async(session)
        conversation = _Conversation(task, setting, seed, clients["model"], user_client(clients), host, session,
                                     limits)
        await conversation.play()
    finally:
        await host.close_async(session)
    return {"trial": trial, "seed": seed, "termination_reason": conversation.reason, "error": conversation.problem,
            "messages": conversation.trajectory, "nl_judgement": None, "usage": conversation.usage}


# ---- the NL judge ----------------------------------------------------------------------------------------------

def needs_judge(task_record: dict[str, Any], domain: str) -> bool:
    """The official evaluator calls the judge when NL_ASSERTION is in the reward basis and the task lists
    assertions (an empty list passes without a call)."""
    criteria = data.parse_task(domain, task_record, "the sample's task", 0).evaluation_criteria
    return bool(criteria and data.RewardType.NL_ASSERTION in criteria.reward_basis and criteria.nl_assertions)


def judge_request(prompts: OfficialPrompts, trajectory: Sequence[Message], assertions: Sequence[str]) -> ChatRequest:
    """The official NL evaluator's request: its system prompt, and the whole conversation and the assertions
    in its user prompt; temperature 0, no tools, no seed."""
    return ChatRequest([{"role": "system", "content": prompts.judge_system},
                        {"role": "user", "content": prompts.judge_prompt(conversation_lines(trajectory), assertions)}],
                       sampling={"temperature": TEMPERATURE})


def parse_judgement(text: str | None, model: str) -> Judgement:
    """The judge's answer as the official evaluator reads it: bare `json.loads`, then each item of `results`
    (missing: none, which passes) with its expectedOutcome and reasoning strings and metExpectation as pydantic
    reads a bool. What the official code would raise on is `error` (plan decision 3), with `results` None."""
    try:
        answer = json.loads(text) if isinstance(text, str) else None
        if not isinstance(answer, dict):
            raise ValueError("the answer is not a JSON object" if text is not None else "the answer has no text")
        items = answer.get("results", [])
        if not isinstance(items, list):
            raise ValueError("`results` is not a list")
        results = [_judged(item) for item in items]
    except ValueError as exc:  # JSONDecodeError is a ValueError
        return {"model": model, "results": None, "error": f"{exc}; the answer: {_short(text)}"}
    return {"model": model, "results": results, "error": None}


# pydantic's lax reading of a bool (strings case-insensitive)
_TRUE = {"1", "on", "t", "true", "y", "yes"}
_FALSE = {"0", "off", "f", "false", "n", "no"}


def _judged(item: Any) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise ValueError("an item of `results` is not an object")
    outcome, reasoning, met = item.get("expectedOutcome"), item.get("reasoning"), item.get("metExpectation")
    if not isinstance(outcome, str) or not isinstance(reasoning, str):
        raise ValueError("an item of `results` lacks the expectedOutcome or reasoning string")
    if isinstance(met, bool):
        value = met
    elif isinstance(met, int | float) and met in (0, 1):
        value = bool(met)
    elif isinstance(met, str) and met.strip().lower() in _TRUE | _FALSE:
        value = met.strip().lower() in _TRUE
    else:
        raise ValueError(f"an item's metExpectation is not a boolean: {_short(met)}")
    return {"expectedOutcome": outcome, "reasoning": reasoning, "metExpectation": value}


async def judge_trial(task_record: dict[str, Any], setting: DomainSetting, trial: Trial, judge: Any) -> Judgement | None:
    """The judgement of one trial, or None when none is due: no judge, a task that needs none, or a trajectory
    that ended early (the official evaluator scores those 0 without evaluating anything)."""
    if judge is None or trial["termination_reason"] not in SCORED_ENDS or not needs_judge(task_record, setting.domain):
        return None
    criteria = data.parse_task(setting.domain, task_record, "the sample's task", 0).evaluation_criteria
    assert criteria is not None
    result = await judge.complete(judge_request(setting.prompts, trial["messages"], criteria.nl_assertions))
    return parse_judgement(result.text, model_name(judge))


def check_env_ahead(task_record: dict[str, Any], setting: DomainSetting, trial: Trial) -> None:
    """The trial's environment check, started now for the scorer when the evaluator will ask for it: a trajectory
    it scores whose task has gold actions or environment assertions."""
    if trial["termination_reason"] not in SCORED_ENDS or not has_env_criteria(task_record):
        return
    check_ahead(setting.domain, task_record, trial["messages"], source_root=setting.source_root)


def model_name(client: Any) -> str:
    return str(client.settings.model)


# ---- a task's trials --------------------------------------------------------------------------------------------

async def play_task(sample: Sample, clients: Mapping[str, Any], trials: int, source: Source, host: EnvHost,
                    limits: Limits = Limits(), environment_root: Path | None = None) -> Prediction:
    """The task's `trials` conversations (concurrently: the clients limit what is in flight), each judged when
    due, its environment check started for the scorer as it ends (env_checks.py). A RequestFailed of any of them
    cancels the others and propagates."""
    domain = str(sample.input["domain"])
    setting = domain_setting(source, domain, environment_root)
    task_record = sample.gold
    judge = clients.get("judge")

    async def one(trial: int, seed: int) -> Trial:
        played = await play_trial(task_record, setting, trial, seed, clients, host, limits)
        check_env_ahead(task_record, setting, played)
        played["nl_judgement"] = await judge_trial(task_record, setting, played, judge)
        return played

    played = await _all_or_none([one(trial, seed) for trial, seed in enumerate(trial_seeds(trials))])
    # The tested model's tokens over every trial (the user simulator's are in each trial's own usage).
    usage = {name: sum(trial["usage"]["agent"][name] for trial in played)
             for name in ("prompt_tokens", "completion_tokens")}
    return Prediction(sample.id, output=_last_agent_text(played[0]["messages"]) if played else None, usage=usage,
                      extra={"trials": played, "user_model": model_name(user_client(clients)),
                             "judge_model": model_name(judge) if judge is not None else None,
                             "split": sample.input.get("split", data.DEFAULT_SPLIT)})


async def _all_or_none(work: list[Awaitable[Trial]]) -> list[Trial]:
    """Every result, in order; on the first failure the rest are cancelled and the failure raised as itself."""
    tasks = [asyncio.ensure_future(item) for item in work]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _last_agent_text(messages: Sequence[Message]) -> str | None:
    texts = [m["content"] for m in messages if m["role"] == ASSISTANT and not m.get("tool_calls") and m["content"]]
    return texts[-1] if texts else None


def default_host() -> EnvHost:
    """The shared environment host (env_host.py, which runs the official domain code in worker processes)."""
    host: EnvHost = shared_host()
    return host


def sample_source(sample: Sample, options: Mapping[str, Any]) -> Source:
    """The pinned source the sample was loaded from (its `source_root`), else the one `options["data_dir"]`,
    TOOLBOARD_DATA_DIR or the cache gives; every file read from it is checked by its blob id."""
    root = sample.input.get(SOURCE_ROOT)
    return Source(Path(root)) if root else open_source(options.get("data_dir"))


async def solve(sample: Sample, clients: Mapping[str, Any], options: Mapping[str, Any]) -> Prediction:
    """The task's trials (`options["trials"]`, default 4, with the official seeds) against the sample's pinned
    source and the shared environment host, which builds the environments from the folder the scorer's replays
    use (env_checks.source_root_of)."""
    source = sample_source(sample, options)
    return await play_task(sample, clients, trials_of(options), source, default_host(),
                           environment_root=environment_root_of(source))


def expected_requests(sample: Sample) -> int:
    """A rough count of a task's requests, for the start order only: per trial a user and an agent turn for each
    gold action and a few more to open and close, four trials."""
    criteria = sample.gold.get("evaluation_criteria") if isinstance(sample.gold, dict) else None
    actions = criteria.get("actions") if isinstance(criteria, dict) else None
    return BOARD_TRIALS * (2 * len(actions or []) + 6)
