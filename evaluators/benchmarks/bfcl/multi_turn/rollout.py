"""One multi-turn item played as the official prompting loop plays it (`inference_multi_turn_prompting`):
per turn, steps until the model answers without a call (its text does not decode, or decodes to no call),
each step's calls executed in the item's environments and fed back; the item is force-terminated when a
turn goes past the official step limit. Every request goes through the engine's client (cache, retries,
limits); the environments live in the environment host's worker processes.

The Prediction (see the contract): `extra["turns"]` is exactly the official result's `result` (per turn,
per step, the model's text; "" where the answer had no text); the transcript, the states and the stop
reason are evidence."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from evaluators.benchmarks.bfcl.multi_turn.env_host import EnvironmentHost, EnvironmentLimit, rollout_namespace, shared_host
from evaluators.benchmarks.bfcl.multi_turn.evidence import (
    COMPLETED,
    ENVIRONMENT_LIMIT,
    FORCE_TERMINATED,
    INITIAL_STATE,
    REQUEST_FAILED,
    STOP,
    TRANSCRIPT,
    TURNS,
)
from evaluators.benchmarks.bfcl.multi_turn.execution import is_empty_execute_response, official_call_texts
from evaluators.benchmarks.bfcl.multi_turn.requests import (
    MultiTurnTexts,
    multi_turn_texts,
    official_execution_results_message,
    official_turn_messages,
    step_request,
)
from evaluators.core.types import Prediction, Sample
from evaluators.engine.client import RequestFailed

NO_TEXT = "the answer has no text (content null or not a string)"


@dataclass
class Rollout:
    """What one item's rollout has produced so far."""

    sample: Sample
    turns: list[list[str]] = field(default_factory=list)
    transcript: list[dict[str, Any]] = field(default_factory=list)
    initial_state: dict[str, Any] = field(default_factory=dict)
    stop: str = COMPLETED
    error: str | None = None
    limit: str | None = None  # what the environment host said when it ended the session
    latency: float = 0.0
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0})

    def prediction(self) -> Prediction:
        extra: dict[str, Any] = {TURNS: self.turns, TRANSCRIPT: self.transcript, INITIAL_STATE: self.initial_state,
                                 STOP: self.stop}
        if self.limit is not None:
            extra[ENVIRONMENT_LIMIT] = self.limit
        return Prediction(self.sample.id, output=None, error=self.error, latency=self.latency, usage=dict(self.usage),
                          extra=extra)


@dataclass(frozen=True)
class RolloutHooks:
    """What a caller adds around the official loop (a memory conversation): `opened(sample, session)`, after the
    environments are open and before turn 0, gives the sample to play (the memory system prompt put into its
    first turn, as the official loop does once the memory is loaded); `played(session)`, after the last turn
    played (every turn, or the step limit's force-quit) and before the close (a prerequisite conversation's
    snapshot flush). Neither runs after a failed request or an environment past its limits."""

    opened: Callable[[Sample, Any], Awaitable[Sample]] | None = None
    played: Callable[[Any], Awaitable[None]] | None = None


async def run_rollout(sample: Sample, chat: Any, host: EnvironmentHost | None = None,
                      texts: MultiTurnTexts | None = None, hooks: RolloutHooks | None = None) -> Prediction:
    """Play every turn of `sample` with `chat` (the engine's client of the tested model: its model name makes
    the instances' namespace, as the official handler's does) in `host` (default: the process's shared one).
    A failed request ends the rollout with the prediction's error set (a request error: `--rerun-errors`
    plays the item again); an environment past its limits ends it without one (the item is scored on the
    turns played, as the official checker scores a force-terminated item)."""
    texts = texts or multi_turn_texts()
    host = host or shared_host()
    rollout = Rollout(sample)
    session = None
    try:
        # The state after the open and after each step's execution comes with their replies (session.state).
        session = await host.open_async(sample, rollout_namespace(chat.settings.model), track_state=True)
        rollout.initial_state = _state(session)
        if hooks is not None and hooks.opened is not None:
            rollout.sample = await hooks.opened(sample, session)
        await _play(rollout, chat, host, session, texts)
        if hooks is not None and hooks.played is not None:
            await hooks.played(session)
    except RequestFailed as failure:
        rollout.stop, rollout.error = REQUEST_FAILED, str(failure)
    except EnvironmentLimit as limit:
        rollout.stop = ENVIRONMENT_LIMIT
        rollout.limit = str(limit)
    finally:
        if session is not None:
            await host.close_async(session)
    return rollout.prediction()


async def _play(rollout: Rollout, chat: Any, host: EnvironmentHost, session: Any, texts: MultiTurnTexts) -> None:
    messages: list[dict[str, Any]] = []
    for turn in range(len(rollout.sample.input["question"])):
        query = official_turn_messages(rollout.sample, turn, texts)
        messages.extend(query)
        step_texts: list[str] = []
        steps: list[dict[str, Any]] = []
        record: dict[str, Any] = {"query": query, "steps": steps}
        rollout.turns.append(step_texts)
        rollout.transcript.append(record)
        force_quit = await _play_turn(rollout, chat, host, session, texts, messages, step_texts, steps)
        record["state"] = _state(session)  # nothing runs between the turn's last execution and here
        if force_quit:
            rollout.stop = FORCE_TERMINATED
            return


async def _play_turn(rollout: Rollout, chat: Any, host: EnvironmentHost, session: Any, texts: MultiTurnTexts,
                     messages: list[dict[str, Any]], step_texts: list[str], steps: list[dict[str, Any]]) -> bool:
    """The steps of one turn; True when the turn went past the step limit (the official force-quit)."""
    executed = 0
    while True:
        result = await chat.complete(step_request(messages))
        rollout.latency += result.latency
        for key in rollout.usage:
            rollout.usage[key] += int(result.usage.get(key, 0))
        text = result.text
        step_texts.append(text if text is not None else "")
        # The official loop appends the SDK's message object, which the SDK sends back as it dumps it.
        messages.append(result.echoed_message())
        step: dict[str, Any] = {"text": text if text is not None else "", "calls": None, "decode_error": None,
                                "results": []}
        steps.append(step)
        calls = _decoded(text, step)
        if calls is None or is_empty_execute_response(calls):
            return False  # the official loop: a decode failure or no call ends the turn
        step["results"] = results = await host.execute_async(session, calls)
        messages.append(official_execution_results_message(calls, results))
        executed += 1
        if executed > texts.step_limit:  # official: `count > MAXIMUM_STEP_LIMIT` after the step's execution
            return True


def _state(session: Any) -> dict[str, Any]:
    """The session's state after its latest open or execute (what the host's `state` would answer now)."""
    return dict(session.state or {})


def _decoded(text: str | None, step: dict[str, Any]) -> list[str] | None:
    """The step's call texts, or None (the reason kept in the step) when the text does not decode. An answer
    without text fails the official decode too (it strips the text first)."""
    if text is None:
        step["decode_error"] = NO_TEXT
        return None
    try:
        calls = official_call_texts(text)
    except Exception as failure:  # noqa: BLE001 - as the official loop: any decode error ends the turn
        step["decode_error"] = str(failure) or type(failure).__name__
        return None
    step["calls"] = calls
    return calls
