"""τ²-bench conversations (issue 45): the official texts read from the pinned source, the trajectory and the
requests each side is sent, the orchestrator's limits and ends, the trials' seeds and the NL judge.

The conversations run over real HTTP against the scripted server (agent, user and judge told apart by model name)
with `FakeEnvironmentHost`, a test double of the environment host (env_host.py) that answers tool calls from a
table. The official texts come from small stand-in files written here in the official files' shape (so the `ast`
extraction runs on them) and checked by a stand-in blob-id table; the slow tests read the real reference archive
(../shared/reference) and skip when it is absent."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from evaluators.benchmarks.tau2 import data, env_checks, rollout, source
from evaluators.benchmarks.tau2.board import OFFICIAL_JUDGE_MODEL
from evaluators.benchmarks.tau2.env_host import EnvironmentLimit
from evaluators.benchmarks.tau2.messages import agent_view, user_view
from evaluators.benchmarks.tau2.prompts import read_prompts, scenario_text
from evaluators.benchmarks.tau2.samples import SOURCE_ROOT
from evaluators.core.errors import DataError
from evaluators.core.types import Sample
from evaluators.engine.client import ChatClient, RequestFailed
from evaluators.engine.settings import ModelSettings
from evaluators.engine.store import Store
from tests.scripted_server import Fault, ScriptedServer

PROJECT = Path(__file__).resolve().parent.parent
REFERENCE_ARCHIVE = PROJECT.parent / "shared" / "reference" / "tau2-bench-a2c0247.tar.gz"
OFFICIAL_SEEDS = [626729, 373753, 361454, 1567]
GREETING = "Hello, fixture speaking."
STOP = "###STOP###"
DEFAULT_LIMITS = rollout.Limits()

# ---- stand-in official files (the official files' shape, our own words) ----------------------------------------

AGENT_PY = '''
from x import y

AGENT_INSTRUCTION = """
Act as the fixture agent.
Follow the <policy>.
""".strip()

SYSTEM_PROMPT = """
<instructions>
{agent_instruction}
</instructions>
<policy>
{domain_policy}
</policy>
""".strip()
'''
ORCHESTRATOR_PY = f'''
DEFAULT_FIRST_AGENT_MESSAGE = AssistantMessage(
    role="assistant", content="{GREETING}", cost=0.0
)
'''
USER_PY = '''
SYSTEM_PROMPT = """
{global_user_sim_guidelines_with_persona}

<scenario>
{instructions}
</scenario>
""".strip()
'''
USER_BASE_PY = '''
STOP = "###STOP###"
TRANSFER = "###TRANSFER###"
OUT_OF_SCOPE = "###OUT-OF-SCOPE###"
'''
JUDGE_PY = '''
class NLAssertionsEvaluator(EvaluatorBase):
    @classmethod
    def evaluate_nl_assertions(cls, trajectory, nl_assertions):
        trajectory_str = "\\n".join([f"{message.role}: {message.content}" for message in trajectory])
        system_prompt = """
        Grade the fixture conversation.
        """

        user_prompt = f"""
        conv:
        {trajectory_str}

        expected:
        {nl_assertions}
        """
'''
PROMPT_FILES = {
    "src/tau2/agent/llm_agent.py": AGENT_PY,
    "src/tau2/orchestrator/orchestrator.py": ORCHESTRATOR_PY,
    "src/tau2/user/user_simulator.py": USER_PY,
    "src/tau2/user/user_simulator_base.py": USER_BASE_PY,
    "src/tau2/evaluator/evaluator_nl_assertions.py": JUDGE_PY,
    "data/tau2/user_simulator/simulation_guidelines.md": "# Plain user guidelines\nTalk.\n",
    "data/tau2/user_simulator/simulation_guidelines_tools.md": "# Tool user guidelines\nTalk and use tools.\n",
}
POLICY_FILES = {
    "data/tau2/domains/airline/policy.md": "Airline fixture policy.",
    "data/tau2/domains/retail/policy.md": "Retail fixture policy.",
    "data/tau2/domains/telecom/main_policy.md": "Main.",
    "data/tau2/domains/telecom/tech_support_manual.md": "Manual.",
}


@pytest.fixture
def fixture_source(tmp_path: Path) -> source.Source:
    files = {**PROMPT_FILES, **POLICY_FILES}
    for relative, text in files.items():
        (tmp_path / "repo" / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "repo" / relative).write_text(text, encoding="utf-8")
    return source.Source(tmp_path / "repo", {k: source.blob_id(v.encode()) for k, v in files.items()})


def airline_task(nl_assertions: list[str] | None = None, persona: str | None = None) -> dict[str, Any]:
    basis = ["DB", "NL_ASSERTION"] if nl_assertions else ["DB", "COMMUNICATE"]
    return {
        "id": "7",
        "user_scenario": {"persona": persona, "instructions": {
            "domain": "airline", "reason_for_call": "Cancel a trip.\nIt rains.", "known_info": "You are Ann.",
            "unknown_info": None, "task_instructions": "Insist once."}},
        "evaluation_criteria": {"actions": [{"action_id": "a", "name": "get_user_details",
                                             "arguments": {"user_id": "ann"}}],
                                "nl_assertions": nl_assertions, "reward_basis": basis},
    }


TELECOM_TASK = {"id": "[x]y", "user_scenario": {"instructions": "Fix my phone."},
                "evaluation_criteria": {"reward_basis": ["ENV_ASSERTION"]}}

AGENT_TOOLS = [{"type": "function", "function": {"name": "get_user_details", "description": "d",
                                                 "parameters": {"type": "object", "properties": {}}}}]
USER_TOOLS = [{"type": "function", "function": {"name": "check_status_bar", "description": "s",
                                                "parameters": {"type": "object", "properties": {}}}}]


# ---- the environment host's test double ------------------------------------------------------------------------

@dataclass
class FakeSession:
    domain: str
    agent_tools: list[dict[str, Any]]
    user_tools: list[dict[str, Any]] | None


@dataclass
class FakeResult:
    content: str
    error: bool


@dataclass
class FakeEnvironmentHost:
    """A test double of env_host's API: tools answered from `answers` (name -> (content, error)); unknown names
    are errors. Records calls, syncs and closes."""

    answers: dict[str, tuple[str, bool]] = field(default_factory=dict)
    user_tools: list[dict[str, Any]] | None = field(default_factory=lambda: USER_TOOLS)  # telecom's
    calls: list[tuple[str, str, str, dict[str, Any]]] = field(default_factory=list)
    opened: int = 0
    closed: int = 0
    syncs: int = 0
    beyond_limits: tuple[str, ...] = ()  # tools whose call takes the worker past its limits (it is killed)
    checked: list[tuple[str, str, int]] = field(default_factory=list)  # evaluate_env: (domain, task id, messages)

    async def open_async(self, domain: str, task_record: dict[str, Any], source_root: Path) -> FakeSession:
        assert source_root.is_dir()
        self.opened += 1
        return FakeSession(domain, AGENT_TOOLS, self.user_tools if domain == "telecom" else None)

    async def call_async(self, session: FakeSession, call_id: str, name: str, requestor: str,
                         arguments: dict[str, Any]) -> FakeResult:
        self.calls.append((call_id, name, requestor, arguments))
        if name in self.beyond_limits:
            raise EnvironmentLimit("environment_limit: the worker ran past its time limit")
        content, error = self.answers.get(name, (f"Error: Tool '{name}' not found.", True))
        return FakeResult(content, error)

    async def step_end_async(self, session: FakeSession) -> None:
        self.syncs += 1

    async def close_async(self, session: FakeSession) -> None:
        self.closed += 1

    def evaluate_env(self, domain: str, task_record: dict[str, Any], messages: list[dict[str, Any]],
                     strict: bool = False, *, source_root: Path) -> dict[str, Any]:
        """As the check host's (env_checks.py asks it from a thread of its own)."""
        self.checked.append((domain, str(task_record["id"]), len(messages)))
        return {"db_match": True, "env_assertions": [], "tool_types": {"get_user_details": "read"},
                "replay_problems": [f"checked {len(self.checked)}"], "replay_error": None, "db_diff": {}}


@pytest.fixture(autouse=True)
def check_host(monkeypatch: pytest.MonkeyPatch) -> FakeEnvironmentHost:
    """The host the finished trials' environment checks go to (env_checks.py): a test double here, so no test
    starts real workers on a fixture folder."""
    checks = FakeEnvironmentHost()
    monkeypatch.setattr(env_checks, "_host", lambda: checks)
    return checks


# ---- scripted participants -------------------------------------------------------------------------------------

Script = Callable[[dict[str, Any]], dict[str, Any]]


def call(name: str, arguments: Any, call_id: str | None = "c1") -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, separators=(",", ":"))
    made: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": text}}
    if call_id is not None:
        made["id"] = call_id
    return made


def turns(body: dict[str, Any]) -> int:
    """How many times this side has spoken so far (its own messages are the assistant's in its request)."""
    return sum(m["role"] == "assistant" for m in body["messages"][1:]) - (body["model"] == "agent-m")


def served(agent: Script, user: Script, judge: Script | None = None) -> Script:
    def reply(body: dict[str, Any]) -> dict[str, Any]:
        return {"agent-m": agent, "user-m": user, "judge-m": judge or (lambda b: {"content": "{}"})}[body["model"]](body)
    return reply


def clients_for(server: ScriptedServer, store: Store | None = None, judge: bool | str = False
                ) -> dict[str, ChatClient]:
    """The agent, the user and (`judge`: True, or the judge's model name) the judge, on `server`."""
    def client(model: str, role: str) -> ChatClient:
        settings = ModelSettings(base_url=server.base_url, model=model, api_key_env="", timeout=10.0)
        return ChatClient(settings, store=store, use_cache=store is not None, concurrency=4, role=role)

    clients = {"model": client("agent-m", "model"), "user": client("user-m", "user")}
    if judge:
        clients["judge"] = client(judge if isinstance(judge, str) else "judge-m", "judge")
    return clients


def play(fixture_source: source.Source, script: Script, task: dict[str, Any] | None = None, domain: str = "airline",
         host: FakeEnvironmentHost | None = None, trials: int = 1, store: Store | None = None, judge: bool | str = False,
         limits: rollout.Limits = DEFAULT_LIMITS, fault: Any = None,
         server: ScriptedServer | None = None) -> tuple[Any, ScriptedServer]:
    """A task's trials through play_task; the prediction and the server (its bodies as received). `server`:
    one already serving (its script is used), else a new one for `script`."""
    task = task or airline_task()
    sample = Sample(f"{domain}_{task['id']}", domain, {"domain": domain, "task_id": task["id"], "split": "base"}, task)

    async def go(server: ScriptedServer) -> Any:
        clients = clients_for(server, store, judge)
        try:
            return await rollout.play_task(sample, clients, trials, fixture_source, host or FakeEnvironmentHost(),
                                           limits)
        finally:
            for client in clients.values():
                await client.close()

    if server is not None:
        return asyncio.run(go(server)), server
    with ScriptedServer(reply=script, fault=fault) as new_server:
        prediction = asyncio.run(go(new_server))
    return prediction, new_server


def bodies(server: ScriptedServer, model: str) -> list[dict[str, Any]]:
    return [body for body in server.bodies if body["model"] == model]


# ---- texts -----------------------------------------------------------------------------------------------------

def test_official_texts_are_read_from_the_pinned_files(fixture_source: source.Source):
    prompts = read_prompts(fixture_source)
    assert prompts.greeting == GREETING
    assert prompts.stop_tokens == ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
    assert prompts.agent_system_prompt("P {x}") == ("<instructions>\nAct as the fixture agent.\nFollow the <policy>."
                                                    "\n</instructions>\n<policy>\nP {x}\n</policy>")
    assert prompts.user_system_prompt("S", with_tools=False) == "# Plain user guidelines\nTalk.\n\n\n<scenario>\nS\n</scenario>"
    assert prompts.user_system_prompt("S", with_tools=True).startswith("# Tool user guidelines\n")
    assert prompts.judge_system == "\n        Grade the fixture conversation.\n        "
    assert prompts.judge_prompt("a: b\nuser: None", ["x's", "y"]) == (
        "\n        conv:\n        a: b\nuser: None\n\n        expected:\n        [\"x's\", 'y']\n        ")
    assert prompts.is_stop("ok ###TRANSFER### bye") and not prompts.is_stop("###stop###") and not prompts.is_stop(None)


def test_a_changed_prompt_file_is_refused(fixture_source: source.Source):
    path = fixture_source.where("src/tau2/user/user_simulator_base.py")
    path.write_text(USER_BASE_PY.replace("###STOP###", "###END###"))
    with pytest.raises(DataError, match="user_simulator_base.py has git blob id"):
        read_prompts(source.Source(fixture_source.root, dict(fixture_source.blob_ids)))


def test_the_scenario_text_follows_the_official_layout():
    structured = data.parse_task("airline", airline_task(persona="Calm.\nShort answers."), "t", 0).user_scenario
    assert scenario_text(structured) == (
        "Persona:\n\tCalm.\n\tShort answers.\nInstructions:\n"
        "\tDomain: airline\n\tReason for call:\n\t\tCancel a trip.\n\t\tIt rains.\n\tKnown info:\n\t\tYou are Ann.\n"
        "\tTask instructions:\n\t\tInsist once.")
    plain = data.parse_task("telecom", TELECOM_TASK, "t", 0).user_scenario
    assert scenario_text(plain) == "Instructions:\n\tFix my phone."


def test_the_official_seeds():
    assert rollout.trial_seeds(4) == OFFICIAL_SEEDS


# ---- one conversation -----------------------------------------------------------------------------------------

def agent_that_looks_up_then_answers(body: dict[str, Any]) -> dict[str, Any]:
    if turns(body) == 0:
        return {"content": "Let me check.", "tool_calls": [call("get_user_details", {"user_id": "Añn"}, "c1"),
                                                           call("get_reservation", {"id": 1}, "c2")]}
    return {"content": "Your trip is cancelled."}


def user_that_asks_then_stops(body: dict[str, Any]) -> dict[str, Any]:
    return {"content": "Cancel my trip please."} if turns(body) == 0 else {"content": f"Thanks. {STOP}"}


def test_a_conversation_with_tool_calls_ends_on_the_users_stop(fixture_source: source.Source):
    host = FakeEnvironmentHost({"get_user_details": ('{"name": "Ann"}', False)})
    prediction, server = play(fixture_source, served(agent_that_looks_up_then_answers, user_that_asks_then_stops),
                              host=host)
    [trial] = prediction.extra["trials"]
    assert trial["termination_reason"] == "user_stop" and trial["error"] is None and trial["seed"] == 626729
    assert trial["messages"] == [
        {"role": "assistant", "content": GREETING, "tool_calls": None, "turn_idx": 0},
        {"role": "user", "content": "Cancel my trip please.", "tool_calls": None, "turn_idx": 1},
        {"role": "assistant", "content": "Let me check.", "turn_idx": 2, "tool_calls": [
            {"id": "c1", "name": "get_user_details", "arguments": {"user_id": "Añn"}, "requestor": "assistant"},
            {"id": "c2", "name": "get_reservation", "arguments": {"id": 1}, "requestor": "assistant"}]},
        {"role": "tool", "content": '{"name": "Ann"}', "id": "c1", "requestor": "assistant",
         "error": False, "turn_idx": 3},
        {"role": "tool", "content": "Error: Tool 'get_reservation' not found.", "id": "c2",
         "requestor": "assistant", "error": True, "turn_idx": 4},
        {"role": "assistant", "content": "Your trip is cancelled.", "tool_calls": None, "turn_idx": 5},
        {"role": "user", "content": f"Thanks. {STOP}", "tool_calls": None, "turn_idx": 6},
    ]
    assert host.calls == [("c1", "get_user_details", "assistant", {"user_id": "Añn"}),
                          ("c2", "get_reservation", "assistant", {"id": 1})]
    assert host.opened == host.closed == 1 and host.syncs == 1 + 5  # after initialisation and after every step
    assert prediction.output == "Your trip is cancelled."
    assert prediction.extra["user_model"] == "user-m" and prediction.extra["judge_model"] is None
    assert trial["usage"] == {"agent": {"requests": 2, "prompt_tokens": 20, "completion_tokens": 10},
                              "user": {"requests": 2, "prompt_tokens": 20, "completion_tokens": 10}}
    assert prediction.usage == {"prompt_tokens": 20, "completion_tokens": 10}
    # the user simulator speaks first, then the agent, and so on
    assert [body["model"] for body in server.bodies] == ["user-m", "agent-m", "agent-m", "user-m"]


def test_the_requests_each_side_is_sent(fixture_source: source.Source):
    host = FakeEnvironmentHost({"get_user_details": ('{"name": "Ann"}', False)})
    _, server = play(fixture_source, served(agent_that_looks_up_then_answers, user_that_asks_then_stops), host=host)
    prompts = read_prompts(fixture_source)
    first_user, second_user = bodies(server, "user-m")
    first_agent, second_agent = bodies(server, "agent-m")
    scenario = scenario_text(data.parse_task("airline", airline_task(), "t", 0).user_scenario)
    # the user: no tools, the greeting as the user's message, the roles flipped, never the agent's tool calls
    assert first_user == {"model": "user-m", "temperature": 0.0, "seed": 626729, "messages": [
        {"role": "system", "content": prompts.user_system_prompt(scenario, with_tools=False)},
        {"role": "user", "content": GREETING}]}
    assert second_user["messages"][1:] == [
        {"role": "user", "content": GREETING}, {"role": "assistant", "content": "Cancel my trip please."},
        {"role": "user", "content": "Your trip is cancelled."}]
    # the agent: its system prompt with the policy, its tools with tool_choice auto, the greeting as its own
    assert first_agent == {"model": "agent-m", "temperature": 0.0, "seed": 626729, "tools": AGENT_TOOLS,
                           "tool_choice": "auto", "messages": [
                               {"role": "system", "content": prompts.agent_system_prompt("Airline fixture policy.")},
                               {"role": "assistant", "content": GREETING},
                               {"role": "user", "content": "Cancel my trip please."}]}
    # its calls echoed with the extra `name` and re-serialised arguments; one tool message per result
    assert second_agent["messages"][3:] == [
        {"role": "assistant", "content": "Let me check.", "tool_calls": [
            {"id": "c1", "name": "get_user_details", "type": "function",
             "function": {"name": "get_user_details", "arguments": '{"user_id": "A\\u00f1n"}'}},
            {"id": "c2", "name": "get_reservation", "type": "function",
             "function": {"name": "get_reservation", "arguments": '{"id": 1}'}}]},
        {"role": "tool", "content": '{"name": "Ann"}', "tool_call_id": "c1"},
        {"role": "tool", "content": "Error: Tool 'get_reservation' not found.", "tool_call_id": "c2"}]


def test_telecom_users_call_their_own_tools_unseen_by_the_agent(fixture_source: source.Source):
    def user(body: dict[str, Any]) -> dict[str, Any]:
        if turns(body) == 0:
            return {"content": None, "tool_calls": [call("check_status_bar", {}, "u1")]}
        return {"content": "No signal."} if turns(body) == 1 else {"content": STOP}

    host = FakeEnvironmentHost({"check_status_bar": ("Airplane mode ✈️", False)})
    prediction, server = play(fixture_source, served(lambda body: {"content": "Turn airplane mode off."}, user),
                              task=TELECOM_TASK, domain="telecom", host=host)
    [trial] = prediction.extra["trials"]
    assert [(m["role"], m.get("requestor")) for m in trial["messages"]] == [
        ("assistant", None), ("user", None), ("tool", "user"), ("user", None), ("assistant", None), ("user", None)]
    assert trial["messages"][1]["tool_calls"] == [{"id": "u1", "name": "check_status_bar", "arguments": {},
                                                   "requestor": "user"}]
    assert host.calls == [("u1", "check_status_bar", "user", {})]
    users = bodies(server, "user-m")
    assert all(body["tools"] == USER_TOOLS and body["tool_choice"] == "auto" for body in users)
    assert users[0]["messages"][0]["content"].startswith("# Tool user guidelines")
    assert users[1]["messages"][1:] == [
        {"role": "user", "content": GREETING},
        {"role": "assistant", "tool_calls": [{"id": "u1", "name": "check_status_bar", "type": "function",
                                              "function": {"name": "check_status_bar", "arguments": "{}"}}]},
        {"role": "tool", "content": "Airplane mode ✈️", "tool_call_id": "u1"}]
    [agent] = bodies(server, "agent-m")
    assert agent["messages"][1:] == [{"role": "assistant", "content": GREETING}, {"role": "user", "content": "No signal."}]
    assert agent["messages"][0]["content"].endswith("<policy>\n<main_policy>\nMain.\n</main_policy>\n"
                                                    "<tech_support_policy>\nManual.\n</tech_support_policy>\n</policy>")


def test_a_telecom_task_whose_user_has_no_tools_gets_the_plain_guidelines(fixture_source: source.Source):
    """An empty list of user tools is none (official build_user: `... or None`)."""
    _, server = play(fixture_source, served(lambda body: {"content": "?"}, lambda body: {"content": STOP}),
                     task=TELECOM_TASK, domain="telecom", host=FakeEnvironmentHost(user_tools=[]))
    [user] = server.bodies
    assert "tools" not in user and "tool_choice" not in user
    assert user["messages"][0]["content"].startswith("# Plain user guidelines")


def test_an_agent_message_with_text_and_a_call_is_hidden_from_the_user():
    trajectory = [
        {"role": "assistant", "content": "Hi", "tool_calls": None},
        {"role": "user", "content": "Help", "tool_calls": None},
        {"role": "assistant", "content": "Looking", "tool_calls": [{"id": "a", "name": "f", "arguments": {},
                                                                    "requestor": "assistant"}]},
        {"role": "tool", "content": "r", "id": "a", "requestor": "assistant", "error": False},
        {"role": "user", "content": None, "tool_calls": [{"id": "u", "name": "g", "arguments": {}, "requestor": "user"}]},
        {"role": "tool", "content": "s", "id": "u", "requestor": "user", "error": False},
    ]
    assert [m["content"] for m in user_view(trajectory)] == ["Hi", "Help", None, "s"]
    assert [m["content"] for m in agent_view(trajectory)] == ["Hi", "Help", "Looking", "r"]


# ---- limits and ends -------------------------------------------------------------------------------------------

def test_a_user_that_never_stops_runs_to_max_steps_and_the_agents_stop_token_stops_nothing(
        fixture_source: source.Source):
    prediction, server = play(fixture_source, served(lambda body: {"content": f"Bye. {STOP}"},
                                                     lambda body: {"content": "And another thing."}))
    [trial] = prediction.extra["trials"]
    assert trial["termination_reason"] == "max_steps" and trial["error"] is None
    assert len(trial["messages"]) == 1 + rollout.MAX_STEPS and len(server.bodies) == rollout.MAX_STEPS


def test_max_steps_waits_for_the_pending_tool_results(fixture_source: source.Source):
    agent = lambda body: {"tool_calls": [call("get_user_details", {}, "c1"), call("get_user_details", {}, "c2")]}  # noqa: E731
    host = FakeEnvironmentHost({"get_user_details": ("{}", False)})
    prediction, _ = play(fixture_source, served(agent, lambda body: {"content": "Go on."}), host=host,
                         limits=rollout.Limits(max_steps=2))
    [trial] = prediction.extra["trials"]
    # step 1 the user, step 2 the agent's calls: the limit is reached with calls pending, so they are answered
    assert trial["termination_reason"] == "max_steps"
    assert [m["role"] for m in trial["messages"]] == ["assistant", "user", "assistant", "tool", "tool"]


def test_ten_tool_errors_end_the_conversation_as_too_many_errors(fixture_source: source.Source):
    agent = lambda body: {"tool_calls": [call("no_such_tool", {}, f"c{turns(body)}")]}  # noqa: E731
    prediction, _ = play(fixture_source, served(agent, lambda body: {"content": "Hello?"}))
    [trial] = prediction.extra["trials"]
    assert trial["termination_reason"] == "too_many_errors"
    assert len(trial["messages"]) == 22 and sum(m.get("error") is True for m in trial["messages"]) == rollout.MAX_ERRORS


def test_the_users_own_tool_errors_count_too(fixture_source: source.Source):
    user = lambda body: {"tool_calls": [call("broken_phone_tool", {}, f"u{turns(body)}")]}  # noqa: E731
    prediction, _ = play(fixture_source, served(lambda body: {"content": "?"}, user), task=TELECOM_TASK,
                         domain="telecom")
    [trial] = prediction.extra["trials"]
    assert trial["termination_reason"] == "too_many_errors"
    assert len(trial["messages"]) == 1 + 2 * rollout.MAX_ERRORS
    assert all(m["requestor"] == "user" for m in trial["messages"] if m["role"] == "tool")


def test_max_steps_overrides_the_users_stop_in_the_same_step(fixture_source: source.Source):
    """_check_termination runs after the step in which the user stopped, and the step count wins."""
    def user(body: dict[str, Any]) -> dict[str, Any]:
        return {"content": STOP} if turns(body) == 1 else {"content": "Try."}

    prediction, _ = play(fixture_source, served(lambda body: {"content": "Sure."}, user),
                         limits=rollout.Limits(max_steps=3))
    [trial] = prediction.extra["trials"]
    assert trial["termination_reason"] == "max_steps" and trial["messages"][-1]["content"] == STOP
    prediction, _ = play(fixture_source, served(lambda body: {"content": "Sure."}, user),
                         limits=rollout.Limits(max_steps=4))
    assert prediction.extra["trials"][0]["termination_reason"] == "user_stop"


@pytest.mark.parametrize("arguments", ['{"user_id": "ann"', "[1, 2]", '"ann"'])
def test_arguments_that_are_not_a_json_object_end_with_agent_error(fixture_source: source.Source, arguments: str):
    agent = lambda body: {"tool_calls": [call("get_user_details", arguments, "c1")]}  # noqa: E731
    host = FakeEnvironmentHost()
    prediction, _ = play(fixture_source, served(agent, lambda body: {"content": "Hi."}), host=host)
    [trial] = prediction.extra["trials"]
    assert trial["termination_reason"] == "agent_error" and "get_user_details" in trial["error"]
    assert [m["role"] for m in trial["messages"]] == ["assistant", "user"] and host.calls == []
    assert host.closed == 1


def test_a_call_past_the_environments_limits_ends_the_trajectory_with_its_reason(fixture_source: source.Source):
    agent = lambda body: {"tool_calls": [call("calculate", {"expression": "9 ** 9 ** 9"}, "c1")]}  # noqa: E731
    host = FakeEnvironmentHost(beyond_limits=("calculate",))
    prediction, server = play(fixture_source, served(agent, lambda body: {"content": "Hi."}), host=host, trials=2)
    for trial in prediction.extra["trials"]:
        assert trial["termination_reason"] == "environment_limit" and "'calculate'" in trial["error"]
        assert [m["role"] for m in trial["messages"]] == ["assistant", "user", "assistant"]
    assert prediction.error is None and host.closed == 2 and len(bodies(server, "agent-m")) == 2


@pytest.mark.parametrize("answer", [{"content": None}, {"content": "  \n"}, {"content": ""}])
def test_an_empty_user_message_ends_with_user_error(fixture_source: source.Source, answer: dict[str, Any]):
    prediction, _ = play(fixture_source, served(lambda body: {"content": "Hi."}, lambda body: answer))
    [trial] = prediction.extra["trials"]
    assert trial["termination_reason"] == "user_error" and "empty message" in trial["error"]
    assert len(trial["messages"]) == 1


def test_a_call_without_an_id_gets_a_deterministic_one(fixture_source: source.Source):
    def agent(body: dict[str, Any]) -> dict[str, Any]:
        return {"tool_calls": [call("get_user_details", {}, None)]} if turns(body) == 0 else {"content": "Done."}

    host = FakeEnvironmentHost({"get_user_details": ("{}", False)})
    prediction, server = play(fixture_source, served(agent, user_that_asks_then_stops), host=host)
    messages = prediction.extra["trials"][0]["messages"]
    assert messages[2]["tool_calls"][0]["id"] == "call_2_0" == messages[3]["id"] == host.calls[0][0]
    assert bodies(server, "agent-m")[1]["messages"][-1] == {"role": "tool", "content": "{}", "tool_call_id": "call_2_0"}


def test_a_request_that_fails_propagates(fixture_source: source.Source):
    host = FakeEnvironmentHost()
    with pytest.raises(RequestFailed):
        play(fixture_source, served(lambda body: {"content": "Hi."}, lambda body: {"content": "Hi."}), host=host,
             trials=2, fault=lambda key, attempt: Fault(status=400))
    assert host.opened == host.closed


# ---- trials and the cache --------------------------------------------------------------------------------------

def test_trials_send_their_own_seeds_and_each_reaches_the_server(fixture_source: source.Source, tmp_path: Path):
    store = Store(tmp_path / "db.sqlite")
    script = served(agent_that_looks_up_then_answers, user_that_asks_then_stops)
    host = FakeEnvironmentHost({"get_user_details": ("{}", False)})
    with ScriptedServer(reply=script) as server:
        prediction, _ = play(fixture_source, script, host=host, trials=2, store=store, server=server)
        sent = list(server.bodies)
        server.reset_clock()
        # the same trials again: every answer from the cache, the same trajectories
        again, _ = play(fixture_source, script, host=host, trials=2, store=store, server=server)
        assert server.bodies == [] and again.extra["trials"] == prediction.extra["trials"]
    assert [t["seed"] for t in prediction.extra["trials"]] == OFFICIAL_SEEDS[:2]
    assert [t["trial"] for t in prediction.extra["trials"]] == [0, 1]
    assert len(sent) == 8 and {body["seed"] for body in sent} == set(OFFICIAL_SEEDS[:2])
    # the first user request of the two trials differs only in its seed: both were sent, neither was a cache hit
    firsts = [body for body in sent if body["model"] == "user-m" and len(body["messages"]) == 2]
    assert len(firsts) == 2 and {**firsts[0], "seed": 0} == {**firsts[1], "seed": 0}


def test_solve_plays_the_trials_the_options_ask_for(fixture_source: source.Source, monkeypatch: pytest.MonkeyPatch):
    host = FakeEnvironmentHost()
    opened: list[Any] = []
    monkeypatch.setattr(rollout, "open_source", lambda data_dir: opened.append(data_dir) or fixture_source)
    monkeypatch.setattr(rollout, "default_host", lambda: host)
    monkeypatch.setattr(rollout, "environment_root_of", lambda given: given.root)  # the fixture holds no code
    task = airline_task()
    sample = Sample("airline_7", "airline", {"domain": "airline", "task_id": "7", "split": "test"}, task)
    # a sample that says where its source is is read from there (with the pinned table)
    placed = Sample("airline_7", "airline", {**sample.input, SOURCE_ROOT: str(fixture_source.root)}, task)
    assert rollout.sample_source(placed, {}) == source.Source(fixture_source.root)

    async def go(server: ScriptedServer) -> Any:
        clients = {"model": clients_for(server)["model"]}  # no user role: the tested model plays the user
        try:
            return await rollout.solve(sample, clients, {"trials": "3", "data_dir": "/somewhere"})
        finally:
            await clients["model"].close()

    with ScriptedServer(reply=lambda body: {"content": STOP}) as server:
        prediction = asyncio.run(go(server))
        assert {body["model"] for body in server.bodies} == {"agent-m"} and len(server.bodies) == 3
    assert opened == ["/somewhere"] and host.opened == host.closed == 3
    assert [t["seed"] for t in prediction.extra["trials"]] == OFFICIAL_SEEDS[:3]
    assert prediction.extra["user_model"] == "agent-m" and prediction.extra["split"] == "test"
    assert prediction.output == GREETING  # the agent's last text of trial 0: the user stopped at once


def test_expected_requests_grow_with_the_gold_actions():
    small = Sample("a", "airline", {}, {"evaluation_criteria": {"actions": []}})
    big = Sample("b", "airline", {}, airline_task())
    assert 0 < rollout.expected_requests(small) < rollout.expected_requests(big)


def test_a_scored_trial_is_checked_ahead_and_the_scorer_takes_that_check(fixture_source: source.Source,
                                                                         check_host: FakeEnvironmentHost):
    host, checks = FakeEnvironmentHost({"get_user_details": ("{}", False)}), check_host
    prediction, _ = play(fixture_source, served(agent_that_looks_up_then_answers, user_that_asks_then_stops),
                         host=host)
    [trial] = prediction.extra["trials"]
    # started as the trial ended, on the check host; the scorer waits for it rather than replaying again
    kept = env_checks.official_env_check("airline", airline_task(), trial["messages"], source_root=fixture_source.root)
    assert kept["replay_problems"] == ["checked 1"] and checks.checked == [("airline", "7", 7)] and host.checked == []
    checks.evaluate_env = lambda *args, **kwargs: pytest.fail("the scorer replayed a trial checked ahead")
    assert env_checks.official_env_check("airline", airline_task(), trial["messages"],
                                         source_root=fixture_source.root) is kept
    # a trajectory the evaluator does not score (an early end) is not replayed
    checks.checked.clear()
    prediction, _ = play(fixture_source, served(lambda body: {"content": "?"}, lambda body: {"content": ""}))
    assert prediction.extra["trials"][0]["termination_reason"] == "user_error" and checks.checked == []


# ---- the NL judge ----------------------------------------------------------------------------------------------

def test_the_judge_reads_the_whole_conversation_once_per_trial(fixture_source: source.Source):
    verdict = {"results": [{"expectedOutcome": "Refuses.", "reasoning": "It did.", "metExpectation": True}]}
    script = served(agent_that_looks_up_then_answers, user_that_asks_then_stops, lambda body: {"content": json.dumps(verdict)})
    host = FakeEnvironmentHost({"get_user_details": ("{}", False)})
    prediction, server = play(fixture_source, script, task=airline_task(["Refuses."]), host=host, trials=2, judge=True)
    assert prediction.extra["judge_model"] == "judge-m"
    assert [t["nl_judgement"] for t in prediction.extra["trials"]] == [
        {"model": "judge-m", "results": verdict["results"], "error": None}] * 2
    judged = bodies(server, "judge-m")
    assert len(judged) == 2
    prompts = read_prompts(fixture_source)
    lines = ("assistant: Hello, fixture speaking.\nuser: Cancel my trip please.\nassistant: Let me check.\n"
             "tool: {}\ntool: Error: Tool 'get_reservation' not found.\nassistant: Your trip is cancelled.\n"
             f"user: Thanks. {STOP}")
    assert judged[0] == {"model": "judge-m", "temperature": 0.0, "messages": [
        {"role": "system", "content": prompts.judge_system},
        {"role": "user", "content": prompts.judge_prompt(lines, ["Refuses."])}]}


def test_no_judge_call_without_assertions_or_after_an_early_end(fixture_source: source.Source):
    prediction, server = play(fixture_source, served(agent_that_looks_up_then_answers, user_that_asks_then_stops),
                              judge=True, host=FakeEnvironmentHost({"get_user_details": ("{}", False)}))
    assert bodies(server, "judge-m") == [] and prediction.extra["trials"][0]["nl_judgement"] is None
    prediction, server = play(fixture_source, served(lambda body: {"content": "?"}, lambda body: {"content": ""}),
                              task=airline_task(["Refuses."]), judge=True)
    assert bodies(server, "judge-m") == [] and prediction.extra["trials"][0]["nl_judgement"] is None


@pytest.mark.parametrize(("answer", "results", "error"), [
    ('{"results": []}', [], None),
    ("{}", [], None),  # no results: passes officially
    ('{"results": [{"expectedOutcome": "a", "reasoning": "r", "metExpectation": "false"}]}',
     [{"expectedOutcome": "a", "reasoning": "r", "metExpectation": False}], None),
    ('```json\n{"results": []}\n```', None, "Expecting value"),
    ('{"results": null}', None, "not a list"),
    ('{"results": [{"expectedOutcome": "a", "metExpectation": true}]}', None, "reasoning"),
    ('{"results": [{"expectedOutcome": "a", "reasoning": "r", "metExpectation": "maybe"}]}', None, "not a boolean"),
    (None, None, "no text"),
])
def test_the_judges_answer_is_read_as_the_official_evaluator_reads_it(answer: str | None, results: Any,
                                                                      error: str | None):
    judgement = rollout.parse_judgement(answer, "j")
    assert judgement["results"] == results and judgement["model"] == "j"
    assert (judgement["error"] is None) if error is None else (error in judgement["error"])


# ---- the real reference (slow) ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def reference_archive() -> Path:
    if not REFERENCE_ARCHIVE.is_file():
        pytest.skip(f"the τ²-bench reference archive not found at {REFERENCE_ARCHIVE}: place ../shared beside the "
                    "project")
    return REFERENCE_ARCHIVE


TASKS_PY = "src/tau2/data_model/tasks.py"
TASKS_PY_BLOB = "28f37885f0282bd3b82eed18bfe8aa2350fba2b7"


@pytest.fixture(scope="module")
def reference_root(reference_archive: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    wanted = {**source.PINNED_FILES, TASKS_PY: TASKS_PY_BLOB}
    files = source.read_archive(reference_archive, wanted)
    root = tmp_path_factory.mktemp("tau2-reference")
    for relative, content in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes(content)
    return root


@pytest.mark.slow
def test_the_real_texts_are_read(reference_root: Path):
    origin = source.Source(reference_root, source.PROMPT_BLOB_IDS)
    prompts = read_prompts(origin)
    assert prompts.stop_tokens == ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
    assert prompts.greeting and "\n" not in prompts.greeting
    agent = prompts.agent_system_prompt("POLICY")
    assert agent.startswith("<instructions>\n") and agent.endswith("\n</instructions>\n<policy>\nPOLICY\n</policy>")
    user = prompts.user_system_prompt("SCENARIO", with_tools=True)
    assert user.startswith(prompts.guidelines_with_tools) and user.endswith("\n\n<scenario>\nSCENARIO\n</scenario>")
    assert [name for name, is_field in prompts.judge_user if is_field] == ["trajectory_str", "nl_assertions"]
    assert '"results"' in prompts.judge_system


# Run in a subprocess (the official code is never imported by the test process): the official `__str__` methods
# of StructuredUserInstructions and UserScenario, taken from the pinned tasks.py with `ast`, on stand-in classes.
OFFICIAL_SCENARIO_TEXT = r'''
import ast, json, sys, textwrap
module = ast.parse(open(sys.argv[1], encoding="utf-8").read())
methods = {}
for node in module.body:
    if isinstance(node, ast.ClassDef) and node.name in ("StructuredUserInstructions", "UserScenario"):
        [method] = [item for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "__str__"]
        namespace = {"textwrap": textwrap}
        exec(compile(ast.Module([method], []), sys.argv[1], "exec"), namespace)
        methods[node.name] = namespace["__str__"]
class Fields:
    def __init__(self, values, method):
        self.__dict__.update(values)
        self.method = method
    def __str__(self):
        return self.method(self)
out = []
for scenario in json.load(sys.stdin):
    instructions = scenario["instructions"]
    if isinstance(instructions, dict):
        instructions = Fields({"known_info": None, "unknown_info": None, **instructions},
                              methods["StructuredUserInstructions"])
    out.append(str(Fields({"persona": scenario.get("persona"), "instructions": instructions}, methods["UserScenario"])))
json.dump(out, sys.stdout)
'''


@pytest.mark.slow
def test_scenario_texts_equal_the_official_ones_for_every_task(reference_root: Path):
    origin = source.Source(reference_root)
    tasks = [task for domain in ("airline", "retail") for task in data.load([domain], None, source=origin)]
    records = [json.loads(origin.text(data.domain_path(d, data.TASK_FILE))) for d in ("airline", "retail")]
    scenarios = [record["user_scenario"] for domain_records in records for record in domain_records]
    official = subprocess.run([sys.executable, "-c", OFFICIAL_SCENARIO_TEXT, str(reference_root / TASKS_PY)],
                              input=json.dumps(scenarios), capture_output=True, text=True, check=True, timeout=120)
    assert len(tasks) == 164
    assert [scenario_text(task.user_scenario) for task in tasks] == json.loads(official.stdout)



# ---- parity with the official orchestrator's requests (slow: the official venv, tests/tau2_official_venv.py) ----

def official_like_agent(body: dict[str, Any]) -> dict[str, Any]:
    """Looks the customer up (and calls a tool that does not exist, with non-ASCII arguments) until a tool result
    is in its history, then answers."""
    if any(m["role"] == "tool" for m in body["messages"]):
        return {"content": "Done, anything else?"}
    names = {tool["function"]["name"] for tool in body["tools"]}
    lookup = (call("get_user_details", {"user_id": "mia_li_3668"}, "a1") if "get_user_details" in names
              else call("get_customer_by_phone", {"phone_number": "555-123-2002"}, "a1"))
    return {"content": None, "tool_calls": [lookup, call("no_such_tool", {"q": "Añn ✈"}, "a2")]}


def official_like_user(body: dict[str, Any]) -> dict[str, Any]:
    """A telecom user checks its status bar first; then one line, then the stop token."""
    spoken = turns(body)
    if body.get("tools") and spoken == 0:
        return {"content": None, "tool_calls": [call("check_status_bar", {}, "u1")]}
    if spoken == (1 if body.get("tools") else 0):
        return {"content": "Hi, I'm Mia; my line is 555-123-2002."}
    return {"content": f"Thanks. {STOP}"}


def official_task_record(domain: str, reference_root: Path) -> dict[str, Any]:
    """The domain's first base task as its file holds it (telecom's tasks.json from the official venv's data)."""
    from tests.tau2_official_venv import official_venv

    origin = source.Source(official_venv().folder if domain == "telecom" else reference_root)
    first = data.load([domain], source=origin, limit=1)[0]
    records = json.loads(origin.text(data.domain_path(domain, data.TASK_FILE)))
    return next(record for record in records if record["id"] == first.id)


def compare_with_official(domain: str, task: dict[str, Any], script: Script, reference_root: Path, trials: int = 2,
                          limits: rollout.Limits = DEFAULT_LIMITS, judge: bool | str = False
                          ) -> tuple[list[rollout.Trial], list[dict[str, Any]]]:
    """The official run of `task` and ours against the same scripted server; asserts the same request bodies
    (parsed, in any order: the official trials run one after the other, ours together) and trajectories holding the
    official results file's roles, contents, requestors and error flags. Our environment host is the fake one,
    answering each tool with the official run's own result for it."""
    from tests import scripted_server
    from tests.tau2_official_venv import run_official_scripted

    with ScriptedServer(reply=script) as server:
        # the scripts are this file's functions: the official run is kept by this file's text
        results, official = run_official_scripted(
            {"domain": domain, "base_url": server.base_url, "agent_model": "agent-m", "user_model": "user-m",
             "task_ids": [task["id"]], "num_trials": trials, "max_steps": limits.max_steps,
             "max_errors": limits.max_errors},
            server, [Path(__file__), Path(scripted_server.__file__)])
    simulations = results["simulations"]
    names = {c["id"]: c["name"] for m in simulations[0]["messages"] for c in m.get("tool_calls") or []}
    answers = {names[m["id"]]: (m["content"], m["error"]) for m in simulations[0]["messages"] if m["role"] == "tool"}
    host = FakeEnvironmentHost(answers, user_tools=next((b["tools"] for b in official if b["model"] == "user-m"
                                                         and b.get("tools")), None))
    agent_tools = next(b["tools"] for b in official if b["model"] == "agent-m")
    host_open = host.open_async

    async def open_with_official_tools(name: str, record: dict[str, Any], root: Path) -> FakeSession:
        session = await host_open(name, record, root)
        session.agent_tools = agent_tools
        return session

    host.open_async = open_with_official_tools  # type: ignore[method-assign]
    origin = source.Source(reference_root, {**source.PROMPT_BLOB_IDS, **{
        k: v for k, v in source.BLOB_IDS.items() if k.endswith(".md")}})
    prediction, server = play(origin, script, task=task, domain=domain, host=host, trials=trials, limits=limits,
                              judge=judge)
    ours = list(server.bodies)

    def order(body: dict[str, Any]) -> tuple[Any, ...]:
        # the judge's requests carry no seed
        return body.get("seed", -1), body["model"], len(body["messages"]), json.dumps(body, sort_keys=True)

    assert len(ours) == len(official) and sorted(ours, key=order) == sorted(official, key=order)
    played = prediction.extra["trials"]
    for trial, simulation in zip(played, simulations, strict=True):
        assert trial["seed"] == simulation["seed"]
        assert trial["termination_reason"] == simulation["termination_reason"]
        assert [(m["role"], m["content"], m.get("requestor"), m.get("error")) for m in trial["messages"]] == [
            (m["role"], m["content"], m.get("requestor") if m["role"] == "tool" else None, m.get("error"))
            for m in simulation["messages"]]
    return played, simulations



@pytest.mark.slow
@pytest.mark.parametrize("domain", ["airline", "telecom"])
def test_the_requests_equal_the_official_orchestrators(reference_root: Path, domain: str):
    """Two trials of the domain's first base task: tool calls (one unknown, with non-ASCII arguments), telecom's
    user tool, the user's stop."""
    task = official_task_record(domain, reference_root)
    played, _ = compare_with_official(domain, task, served(official_like_agent, official_like_user), reference_root)
    assert [trial["termination_reason"] for trial in played] == ["user_stop"] * 2


@pytest.mark.slow
def test_the_judges_requests_equal_the_official_evaluators(reference_root: Path):
    """Retail's first base task judged on NL assertions, two trials: the official run asks its judge (a fixed model,
    through the same endpoint) once per trial after the conversation; ours asks the judge role of that model name.
    Every body, the judge's included, is the same."""
    origin = source.Source(reference_root)
    judged = next(task for task in data.load(["retail"], source=origin)
                  if task.evaluation_criteria is not None and task.evaluation_criteria.nl_assertions
                  and data.RewardType.NL_ASSERTION in task.evaluation_criteria.reward_basis)
    task = next(record for record in json.loads(origin.text(data.domain_path("retail", data.TASK_FILE)))
                if record["id"] == judged.id)
    verdicts = json.dumps({"results": [{"expectedOutcome": assertion, "reasoning": "Seen.", "metExpectation": True}
                                       for assertion in task["evaluation_criteria"]["nl_assertions"]]})
    parties = {"agent-m": official_like_agent, "user-m": official_like_user,
               OFFICIAL_JUDGE_MODEL: lambda body: {"content": verdicts}}
    played, simulations = compare_with_official("retail", task, lambda body: parties[body["model"]](body),
                                                reference_root, judge=OFFICIAL_JUDGE_MODEL)
    assert [trial["nl_judgement"]["error"] for trial in played] == [None, None]
    # the official evaluator read the scripted judge's answer, so its requests reached the server too
    assert all(simulation["reward_info"]["nl_assertions"] and {check["justification"] for check in
               simulation["reward_info"]["nl_assertions"]} == {"Seen."} for simulation in simulations)


@pytest.mark.slow
def test_the_limits_end_as_the_official_orchestrators_do(reference_root: Path):
    """A user that never stops, at a small max_steps; an agent calling an unknown tool every turn, at the official
    max_errors: the same requests, the same ends at the same messages."""
    task = official_task_record("airline", reference_root)
    chatty = served(lambda body: {"content": f"Sure. {STOP}"}, lambda body: {"content": "One more thing."})
    played, _ = compare_with_official("airline", task, chatty, reference_root, trials=1,
                                      limits=rollout.Limits(max_steps=12))
    assert played[0]["termination_reason"] == "max_steps" and len(played[0]["messages"]) == 13
    erring = served(lambda body: {"tool_calls": [call("no_such_tool", {}, f"c{turns(body)}")]},
                    lambda body: {"content": "Hello?"})
    played, _ = compare_with_official("airline", task, erring, reference_root, trials=1)
    assert played[0]["termination_reason"] == "too_many_errors" and len(played[0]["messages"]) == 22
