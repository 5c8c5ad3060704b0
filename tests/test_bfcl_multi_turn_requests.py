"""BFCL multi-turn requests byte for byte as the official prompting loop sends them: the real
`OpenAICompletionsHandler.inference_multi_turn_prompting` runs in the official venv against the scripted
server, then our rollouts run against the same script, and every request body is compared (the messages as
bytes, in the SDK's compact encoding, and the other fields as values). Also: the texts read from the wheel,
and the assistant message echoed as the SDK echoes it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from evaluators.benchmarks.bfcl.multi_turn.requests import (
    OFFICIAL_MULTI_TURN_SAMPLING,
    multi_turn_texts,
    official_execution_results_message,
    official_holdout_message,
    texts_from_source,
)
from evaluators.core.errors import DataError
from evaluators.core.types import ChatRequest
from evaluators.engine.client import ChatClient, cache_key, encode_body, request_body
from evaluators.engine.settings import ModelSettings
from evaluators.engine.store import Store
from tests.scripted_server import ScriptedServer

SOURCE = '''
MAXIMUM_STEP_LIMIT = 20
DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC = (
    "I have updated some more functions you can choose from. What about now?"
)
DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING = (
    "{functions}\\n" + DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC
)
'''


def test_the_holdout_prompt_and_the_step_limit_are_read_from_the_source_as_data():
    texts = texts_from_source(SOURCE, "default_prompts.py")
    assert texts.step_limit == 20
    assert texts.holdout_prompt == "{functions}\nI have updated some more functions you can choose from. What about now?"
    docs = [{"name": "f", "description": "Ünïcode", "parameters": {"required": True, "default": None}}]
    message = official_holdout_message(docs, texts)
    # `.format(functions=<list>)`: the list's Python repr, non-ASCII kept as it is
    assert message == {"role": "user", "content": str(docs) + "\nI have updated some more functions you can choose "
                                                              "from. What about now?"}
    assert "'required': True, 'default': None" in message["content"]


@pytest.mark.parametrize(("source", "problem"), [
    (SOURCE.replace("MAXIMUM_STEP_LIMIT = 20", "MAXIMUM_STEP_LIMIT = '20'"), "MAXIMUM_STEP_LIMIT"),
    (SOURCE.replace("MAXIMUM_STEP_LIMIT = 20", ""), "MAXIMUM_STEP_LIMIT"),
    (SOURCE.replace('"{functions}\\n" + ', "build() + "), "DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING"),
    (SOURCE.replace("{functions}", "{docs}"), "unexpected field {docs}"),
])
def test_a_changed_source_is_a_clear_error(source: str, problem: str):
    with pytest.raises(DataError, match=problem):
        texts_from_source(source, "default_prompts.py")


def test_the_pinned_wheel_holds_the_texts(bfcl_official: Any):
    texts = multi_turn_texts(bfcl_official.wheel)
    assert texts.step_limit == 20 and texts.holdout_prompt.startswith("{functions}\n")


def test_execution_results_are_one_user_message_with_the_repr_of_the_tool_results():
    message = official_execution_results_message(["cd(folder='a')", 'echo(content="x\'y")'], ['{"cwd": "a"}', "None"])
    assert message == {"role": "user", "content": "[{'role': 'tool', 'name': \"cd(folder='a')\", 'content': '{\"cwd\": "
                                                  "\"a\"}'}, {'role': 'tool', 'name': 'echo(content=\"x\\'y\")', "
                                                  "'content': 'None'}]"}


def test_the_answer_is_echoed_as_the_sdk_echoes_it_and_old_cache_entries_as_content_and_role(tmp_path: Path):
    fields = {"reasoning_content": "hm", "content": "[f()]", "refusal": None, "tool_calls": [], "zeta": {"b": 1, "a": 2}}
    settings = ModelSettings(base_url="", model="m")
    request = ChatRequest(messages=[{"role": "user", "content": "hi"}], sampling=dict(OFFICIAL_MULTI_TURN_SAMPLING))
    with ScriptedServer(reply=lambda body: fields) as server:
        settings = ModelSettings(base_url=server.base_url, model="m")
        store = Store(tmp_path / "db.sqlite")
        client = ChatClient(settings, store=store)

        async def ask() -> Any:
            try:
                return await client.complete(request)
            finally:
                await client.close()

        fresh = asyncio.run(ask())
        # the SDK model's field order (content, refusal, role, ..., tool_calls), then the extras as sent
        assert list(fresh.echoed_message()) == ["content", "refusal", "role", "tool_calls", "reasoning_content", "zeta"]
        assert fresh.echoed_message()["zeta"] == {"b": 1, "a": 2}
        assert asyncio.run(ask()).cached and asyncio.run(ask()).echoed_message() == fresh.echoed_message()
        # an answer cached before the message was kept
        key = cache_key(settings.base_url, encode_body(request_body(request, settings)))
        store.cache_put(key, {"text": "[g()]", "tool_calls": None, "usage": {}})
        old = asyncio.run(ask())
        assert old.cached and old.echoed_message() == {"content": "[g()]", "role": "assistant"}
        body = server.bodies[0]
    assert body["store"] is False and body["temperature"] == 0.001 and set(body) == {"model", "messages", "temperature",
                                                                                      "store"}


def canonical(raw: bytes) -> tuple[bytes, dict[str, Any]]:
    """A body as compared: its messages in the SDK's own encoding (compact, non-ASCII as is, key order kept),
    and its other fields as values (the SDK orders them its own way)."""
    body = json.loads(raw)
    messages = body.pop("messages")
    return json.dumps(messages, ensure_ascii=False, separators=(",", ":")).encode(), body
