"""The two drivers of ACEBench's agent categories, played through the engine's chat client:
multi_step (the model and execution) and multi_turn (the model, a simulated user and execution)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evaluators.acebench.agent.calls import official_multi_turn_routing
from evaluators.acebench.agent.env import FINISH, AgentEnvironment
from evaluators.acebench.agent.prompts import (
    USER_GREETING,
    agent_system_prompt,
    agent_user_prompt,
    user_simulator_prompt,
)
from evaluators.acebench.agent.replay import environment_for
from evaluators.core.types import ChatRequest, Prediction, Sample

# At most this many messages (agent, user and execution) after the opening one, as in the reference.
MAX_MESSAGES = 40


@dataclass
class Rollout:
    """What a rollout produced: the transcript, the agent replies sent to execution, the usage."""

    sample: Sample
    env: AgentEnvironment
    transcript: list[dict[str, str]] = field(default_factory=list)
    process: list[str] = field(default_factory=list)
    latency: float = 0.0
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0})
    stop: str = "message_limit"

    def add(self, role: str, content: str) -> None:
        self.transcript.append({"role": role, "content": content})

    async def ask(self, chat: Any, messages: list[dict[str, Any]]) -> str:
        result = await chat.complete(ChatRequest(messages=messages))
        self.latency += result.latency
        for key in self.usage:
            self.usage[key] += int(result.usage.get(key, 0))
        return result.text or ""  # a reply without text (e.g. only tool calls) counts as empty

    def prediction(self) -> Prediction:
        extra = {"transcript": self.transcript, "stop": self.stop}
        return Prediction(self.sample.id, result=self.env.saved_state(), process=self.process,
                          latency=self.latency, usage=dict(self.usage), extra=extra)


def official_finish_check(index: int, message: str | list[Any]) -> bool:
    """The dialogue ends when a message after the second contains `finish conversation` (a
    substring of text; an equal element of an execution list)."""
    return index > 1 and FINISH in message


async def run_multi_step(sample: Sample, chat: Any) -> Prediction:
    """The model alone: every reply goes to execution; the model sees the task and the execution
    results only (official_multi_step_history_without_agent_replies)."""
    language = sample.meta.get("language", "en")
    rollout = Rollout(sample, environment_for(sample))
    question = str(sample.input["question"])
    system = agent_system_prompt("multi_step", sample.input["involved_classes"], language)
    history = official_multi_step_history_without_agent_replies("", "user", question)
    rollout.add("user", question)
    reply: str | None = None
    for index in range(MAX_MESSAGES):
        if reply is None:
            user = agent_user_prompt("multi_step", sample.input["functions"], history, language)
            reply = await rollout.ask(chat, [{"role": "system", "content": system}, {"role": "user", "content": user}])
            rollout.add("agent", reply)
            if official_finish_check(index, reply):
                rollout.stop = "finish"
                break
            continue
        rollout.process.append(reply)
        execution = rollout.env.execute_multi_step(reply)
        rollout.add("execution", execution.text)
        history = official_multi_step_history_without_agent_replies(history, "execution", execution.text)
        reply = None
        if official_finish_check(index, execution.content):
            rollout.stop = "finish"
            break
    return rollout.prediction()


def official_multi_step_history_without_agent_replies(history: str, role: str, text: str) -> str:
    """multi_step shows the model only `user:<task>` and `execution result:<…>` lines: its own
    earlier replies are never part of the history it sees."""
    prefix = "user:" if role == "user" else "execution result:"
    return history + prefix + text + "\n"


async def run_multi_turn(sample: Sample, chat: Any, user_chat: Any) -> Prediction:
    """The model, the simulated user and execution. Replies holding a decodable `[…]` go to
    execution, others to the user; the user never sees execution results."""
    language = sample.meta.get("language", "en")
    involved = sample.input["involved_classes"]
    rollout = Rollout(sample, environment_for(sample))
    system = agent_system_prompt("multi_turn", involved, language)
    user_messages: list[dict[str, Any]] = [
        {"role": "system", "content": user_simulator_prompt(str(sample.input["question"]), involved, language)},
        {"role": "user", "content": USER_GREETING[language]},
    ]
    opening = await rollout.ask(user_chat, user_messages)
    # Our one deliberate change: the simulator's own lines are "assistant" turns (the reference
    # files them as "system"), which every chat template accepts.
    user_messages.append({"role": "assistant", "content": opening})
    rollout.add("user", opening)
    history = "user:" + opening + "\n"
    last_role, last_text, to_execution = "user", opening, False
    for index in range(MAX_MESSAGES):
        if last_role == "agent" and to_execution:
            rollout.process.append(last_text)
            execution = rollout.env.execute_multi_turn(last_text)
            last_role, last_text, content = "execution", execution.text, execution.content
        elif last_role == "agent":
            user_messages.append({"role": "user", "content": official_user_sees_agent_text(last_text)})
            last_text = await rollout.ask(user_chat, user_messages)
            user_messages.append({"role": "assistant", "content": last_text})
            last_role, content = "user", last_text
        else:
            user = agent_user_prompt("multi_turn", sample.input["functions"], history, language)
            last_text = await rollout.ask(chat, [{"role": "system", "content": system}, {"role": "user", "content": user}])
            to_execution = official_multi_turn_routing(last_text)
            last_role, content = "agent", last_text
        rollout.add(last_role, last_text)
        if official_finish_check(index, content):
            rollout.stop = "finish"
            break
        history += f"{last_role}:{last_text}\n"
    return rollout.prediction()


def official_user_sees_agent_text(text: str) -> str:
    """The simulated user gets the agent's message with one leading `user:` or `agent:` removed."""
    for prefix in ("user:", "agent:"):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text
