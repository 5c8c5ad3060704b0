"""The two drivers of ACEBench's agent categories, played through the engine's chat client:
multi_step (the model and execution) and multi_turn (the model, a simulated user and execution)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evaluators.benchmarks.acebench.agent.calls import official_multi_turn_routing
from evaluators.benchmarks.acebench.agent.env import FINISH, AgentEnvironment
from evaluators.benchmarks.acebench.agent.prompts import ToolboardAgentPrompts
from evaluators.benchmarks.acebench.agent.replay import environment_for
from evaluators.benchmarks.acebench.evidence import STOP, TRANSCRIPT, agent_prediction
from evaluators.benchmarks.acebench.official_prompts import official_prompts_for
from evaluators.core.types import ChatRequest, Prediction, Sample

# At most this many messages (agent, user and execution) after the opening one, as in the reference.
MAX_MESSAGES = 40

SIMULATED_USER_ROLE_DIFFERENCE = (
    "the simulated user's own earlier replies are sent to it as `assistant` messages; the official code "
    "sends them as `system` messages, which many servers reject after the first message"
)


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

    async def ask(self, chat: Any, messages: list[dict[str, Any]], sampling: dict[str, Any]) -> str:
        # The messages are copied: the simulated user's list keeps growing after this request.
        result = await chat.complete(ChatRequest(messages=list(messages), sampling=dict(sampling)))
        self.latency += result.latency
        for key in self.usage:
            self.usage[key] += int(result.usage.get(key, 0))
        return result.text or ""  # a reply without text (e.g. only tool calls) counts as empty

    def prediction(self) -> Prediction:
        return agent_prediction(self.sample.id, self.env.saved_state(), self.process, latency=self.latency,
                                usage=dict(self.usage), extra={TRANSCRIPT: self.transcript, STOP: self.stop})


def agent_prompts(sample: Sample, prompt_style: str) -> Any:
    """The requests of a rollout: the official ones (read from the official source) or our own."""
    return official_prompts_for(sample) if prompt_style == "official" else ToolboardAgentPrompts()


def official_finish_check(index: int, message: str | list[Any]) -> bool:
    """The dialogue ends when a message after the second contains `finish conversation` (a
    substring of text; an equal element of an execution list)."""
    return index > 1 and FINISH in message


async def run_multi_step(sample: Sample, chat: Any, prompt_style: str = "toolboard") -> Prediction:
    """The model alone: every reply goes to execution; the model sees the task and the execution
    results only (official_multi_step_history_without_agent_replies)."""
    prompts = agent_prompts(sample, prompt_style)
    rollout = Rollout(sample, environment_for(sample))
    question = str(sample.input["question"])
    history = official_multi_step_history_without_agent_replies("", "user", question)
    rollout.add("user", question)
    reply: str | None = None
    for index in range(MAX_MESSAGES):
        if reply is None:
            reply = await rollout.ask(chat, prompts.agent_messages("multi_step", sample, history), prompts.agent_sampling)
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


async def run_multi_turn(sample: Sample, chat: Any, user_chat: Any, prompt_style: str = "toolboard") -> Prediction:
    """The model, the simulated user and execution. Replies holding a decodable `[…]` go to
    execution, others to the user; the user never sees execution results."""
    prompts = agent_prompts(sample, prompt_style)
    rollout = Rollout(sample, environment_for(sample))
    user_messages = prompts.user_opening_messages(sample)
    opening = await rollout.ask(user_chat, user_messages, prompts.user_sampling)
    # Our one deliberate change (SIMULATED_USER_ROLE_DIFFERENCE): the simulator's own lines are
    # "assistant" turns (the reference files them as "system"), which every chat template accepts.
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
            last_text = await rollout.ask(user_chat, user_messages, prompts.user_sampling)
            user_messages.append({"role": "assistant", "content": last_text})
            last_role, content = "user", last_text
        else:
            last_text = await rollout.ask(chat, prompts.agent_messages("multi_turn", sample, history), prompts.agent_sampling)
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
