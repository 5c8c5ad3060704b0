"""A conversation's trajectory messages (the plan's Message dicts, the shape of the official results file's
messages) and the request messages each participant is sent, as the official code converts them
(`to_litellm_messages`; the user simulator's `flip_roles`).

Trajectory messages: {"role": "assistant"|"user", "content": str | None, "tool_calls": [{"id", "name", "arguments":
dict, "requestor"}] | None, "turn_idx": int}, and tool messages {"role": "tool", "id" (the call's), "content",
"requestor", "error", "turn_idx"} (as the official results file and uploads.py write them: no tool_calls key).

Who sees what (the official agent and user states): the agent sees its own messages, the user's text messages and
the results of its own calls; the user sees its own messages (tool calls included), the agent's messages that carry
no tool calls (their text included, never an agent message that also calls a tool) and the results of its own
calls."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

Message = dict[str, Any]

ASSISTANT = "assistant"
USER = "user"
TOOL = "tool"


def text_message(role: str, content: str | None, tool_calls: list[dict[str, Any]] | None, turn_idx: int) -> Message:
    """An agent's or the user's message in the trajectory."""
    return {"role": role, "content": content, "tool_calls": tool_calls or None, "turn_idx": turn_idx}


def tool_call(call_id: str, name: str, arguments: dict[str, Any], requestor: str) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments, "requestor": requestor}


def tool_message(call: dict[str, Any], content: str, error: bool, turn_idx: int) -> Message:
    """The environment's answer to one call, returned to whoever made it."""
    return {"role": TOOL, "id": call["id"], "content": content, "requestor": call["requestor"], "error": error,
            "turn_idx": turn_idx}


def agent_view(trajectory: Iterable[Message]) -> list[Message]:
    """The trajectory messages the agent's history holds."""
    return [message for message in trajectory
            if message["role"] == ASSISTANT
            or message["role"] == USER and not message.get("tool_calls")
            or message["role"] == TOOL and message.get("requestor") == ASSISTANT]


def user_view(trajectory: Iterable[Message]) -> list[Message]:
    """The trajectory messages the user simulator's history holds."""
    return [message for message in trajectory
            if message["role"] == USER
            or message["role"] == ASSISTANT and not message.get("tool_calls")
            or message["role"] == TOOL and message.get("requestor") == USER]


def agent_request_messages(system_prompt: str, trajectory: Iterable[Message]) -> list[dict[str, Any]]:
    """[system] + the agent's history, as the official agent sends it."""
    return [{"role": "system", "content": system_prompt}, *(_request_message(m) for m in agent_view(trajectory))]


def user_request_messages(system_prompt: str, trajectory: Iterable[Message]) -> list[dict[str, Any]]:
    """[system] + the user's history with the roles flipped: its own messages go as the assistant's (with their
    tool calls), the agent's as the user's, its tool results as tool messages."""
    flipped = []
    for message in user_view(trajectory):
        role = {USER: ASSISTANT, ASSISTANT: USER, TOOL: TOOL}[message["role"]]
        flipped.append(_request_message({**message, "role": role}))
    return [{"role": "system", "content": system_prompt}, *flipped]


def _request_message(message: Message) -> dict[str, Any]:
    """One message as `to_litellm_messages` writes it, keys whose value is None left out (as sent): the calls
    an assistant message echoes carry the extra top-level `name` and their arguments re-serialised with
    `json.dumps` defaults; a tool message is {role, content, tool_call_id}."""
    role = message["role"]
    if role == TOOL:
        converted: dict[str, Any] = {"role": TOOL, "content": message["content"], "tool_call_id": message["id"]}
    elif role == ASSISTANT:
        calls = message.get("tool_calls")
        converted = {"role": ASSISTANT, "content": message["content"], "tool_calls": [
            {"id": call["id"], "name": call["name"],
             "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])}, "type": "function"}
            for call in calls] if calls else None}
    else:
        converted = {"role": USER, "content": message["content"]}
    return {key: value for key, value in converted.items() if value is not None}


def conversation_lines(trajectory: Iterable[Message]) -> str:
    """The whole trajectory as the NL judge reads it: one `role: content` line per message (content None shows
    as `None`: tool calls are only their role)."""
    return "\n".join(f"{message['role']}: {message['content']}" for message in trajectory)
