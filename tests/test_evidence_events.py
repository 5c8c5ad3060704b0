"""Every model call of a sample is an event (issue 28, item 3): the engine's chat client, which every call goes
through, records the tested model's, a judge's and a simulated user's calls (request as sent, response,
bounded), the store keeps them with the prediction, the run document carries them and Explore shows them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from evaluators.core.types import ChatRequest
from evaluators.engine.client import (
    MAX_EVENTS,
    REPEATED,
    ChatClient,
    EventLog,
    RequestFailed,
    RetryPolicy,
    _Call,
    record_events,
    request_of_event,
)
from evaluators.engine.run_document import export_run, import_run
from evaluators.engine.settings import Endpoint, ModelSettings
from evaluators.engine.store import MAX_EVIDENCE_BYTES, Store
from evaluators.service.explore import sample_detail
from tests.agent_fixtures import write_agent_dataset
from tests.scripted_server import Fault, ScriptedServer, prompt_key
from tests.test_acebench_agent_rollout import _run, is_user_simulator, milestone_agent, simulated_user


def test_a_rollouts_calls_are_its_events_under_their_roles_in_the_store_the_document_and_explore(tmp_path: Path):
    from ui.context import AppContext
    from ui.explore_tab import detail_html

    data = write_agent_dataset(tmp_path / "data")
    with ScriptedServer(reply=simulated_user) as user_server, ScriptedServer(reply=milestone_agent) as model_server:
        user = Endpoint(base_url=user_server.base_url, model="user-llm", api_key_env="")
        outcome, _ = _run(data, tmp_path, model_server, ("agent_multi_turn",), roles={"user": user})
        received = {"model": model_server.bodies, "user": user_server.bodies}
    store = Store(tmp_path / "db.sqlite")
    every = [(event, request_of_event(stored.events, number)) for stored in store.iter_stored_samples(outcome.run_id)
             for number, event in enumerate(stored.events, 1)]
    for role, bodies in received.items():  # every call the servers got, each once, as they got it, under its role
        requests = [request for event, request in every if event["role"] == role]
        assert len(requests) == len(bodies) and all(request in bodies for request in requests)
    events = store.load_sample_evidence(outcome.run_id, "agent_multi_turn_1").events
    assert [event["role"] for event in events] == ["user", "model", "model", "model", "user"]
    assert all(event["error"] is None and isinstance(event["latency"], float) for event in events)
    assert events[-1]["response"]["text"].endswith("finish conversation")

    document = export_run(store, outcome.run_id)
    sample = next(s for s in document["samples"] if s["id"] == "agent_multi_turn_1")
    assert sample["events"] == events and sample["evidence"]["stop"] == "finish"
    other = Store(tmp_path / "other.sqlite")
    assert import_run(other, document) and other.load_sample_evidence(outcome.run_id, "agent_multi_turn_1").events == events

    detail = sample_detail(store, outcome.run_id, "agent_multi_turn_1")
    assert detail["events"] == events
    context = AppContext(store=store)
    try:
        page = detail_html(context, outcome.run_id, "agent_multi_turn_1", "official")
    finally:
        context.close()
    assert f"<h4>Model calls ({len(events)})</h4>" in page and "1. user: Please help me with [agent_multi_turn_1]." in page
    assert "<h4>Transcript</h4>" in page and "<h4>End state (agent)</h4>" in page


def test_the_tested_model_playing_a_role_is_recorded_under_that_role(tmp_path: Path):
    data = write_agent_dataset(tmp_path / "data")

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        return simulated_user(body) if is_user_simulator(body) else milestone_agent(body)

    with ScriptedServer(reply=reply) as server:
        outcome, _ = _run(data, tmp_path, server, ("agent_multi_turn",))
    events = Store(tmp_path / "db.sqlite").load_sample_evidence(outcome.run_id, "agent_multi_turn_1").events
    assert {event["role"] for event in events} == {"model", "user"}
    assert all(is_user_simulator(request_of_event(events, number)) == (event["role"] == "user")
               for number, event in enumerate(events, 1))


def test_a_failed_call_is_an_event_with_its_error_and_a_cached_answer_says_so(tmp_path: Path):
    store = Store(tmp_path / "db.sqlite")

    async def calls(url: str) -> EventLog:
        client = ChatClient(ModelSettings(base_url=url, model="m", api_key_env=""), store=store,
                            retry=RetryPolicy(max_attempts=1), role="judge")
        log = record_events()
        try:
            await client.complete(ChatRequest(messages=[{"role": "user", "content": "hello"}]))
            await client.complete(ChatRequest(messages=[{"role": "user", "content": "hello"}]))
            try:
                await client.complete(ChatRequest(messages=[{"role": "user", "content": "fail"}]))
            except RequestFailed:
                pass
            else:
                raise AssertionError("the failing call succeeded")
        finally:
            await client.close()
        return log

    failing = prompt_key({"messages": [{"role": "user", "content": "fail"}]})

    def fault(key: str, count: int) -> Fault | None:
        return Fault(status=400, message="no such thing") if key == failing else None

    with ScriptedServer(fault=fault) as server:
        events = asyncio.run(calls(server.base_url)).events()
    assert [(event["role"], event["cached"]) for event in events] == [("judge", False), ("judge", True), ("judge", False)]
    assert events[2]["response"] is None and "400" in events[2]["error"]
    assert events[0]["response"]["text"] == events[1]["response"]["text"] == "[]"


def test_a_samples_events_are_bounded_keeping_the_last_requests_whole():
    log = EventLog()
    big = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x" * 300_000}]}).encode()
    small = json.dumps({"model": "m", "messages": [{"role": "user", "content": "a " * 3000}]}).encode()
    for _ in range(6):
        log.add(_Call("model", small, {"text": "y" * 20_000, "tool_calls": None, "usage": {}}, None, 0.1, False))
    events = log.events()
    assert all(request_of_event(events, number) == json.loads(small)  # small ones as sent (or as the same later one)
               for number in range(1, len(events) + 1))
    assert all(event["response"]["text"].endswith("(20,000 characters)") for event in events)

    log = EventLog()
    for index in range(MAX_EVENTS + 5):
        log.add(_Call("model" if index % 2 else "user", small, None, "failed", 0.0, False))
    events = log.events()
    assert len(events) == MAX_EVENTS + 1 and events[-1]["note"] == f"5 more model calls, not kept (over {MAX_EVENTS})"
    assert len(json.dumps(events).encode()) < MAX_EVIDENCE_BYTES
    kept = [event for event in events[:-1] if "not_kept" not in event["request"]]
    assert kept and kept == [event for event in events[:-1]][-len(kept):]  # the last ones are kept whole

    log = EventLog()
    log.add(_Call("model", big, None, None, 0.0, False))
    (event,) = log.events()
    assert event["request"]["messages"][0]["content"] == "<300,000 characters not kept>"  # shortened, like audio


def test_a_dialogues_earlier_requests_are_kept_once_as_the_first_messages_of_a_later_one():
    """A dialogue's step request is the next step's first messages: kept as a reference to it, rebuilt exactly."""
    system = {"role": "system", "content": "docs " * 4000}
    sent: list[dict] = []
    log = EventLog()
    messages = [system, {"role": "user", "content": "turn 0"}]
    for step in range(6):
        body = {"model": "m", "messages": list(messages), "temperature": 0.001}
        sent.append(body)
        log.add(_Call("model", json.dumps(body).encode(), {"text": f"step {step}", "tool_calls": None, "usage": {}},
                      None, 0.1, False))
        log.add(_Call("user", json.dumps({"model": "u", "messages": [{"role": "user", "content": str(step)}]}).encode(),
                      None, "no answer", 0.0, False))
        messages += [{"role": "assistant", "content": f"step {step}"}, {"role": "user", "content": f"result {step}"}]
    log.add(_Call("model", json.dumps({**sent[-1], "temperature": 0.5}).encode(), None, "other sampling", 0.0, False))
    events = log.events()
    model_numbers = [number for number, event in enumerate(events, 1) if event["role"] == "model"]
    assert [request_of_event(events, number) for number in model_numbers] == [*sent, {**sent[-1], "temperature": 0.5}]
    kept_whole = [number for number in model_numbers if "messages" in events[number - 1]["request"]
                  and isinstance(events[number - 1]["request"]["messages"], list)]
    assert kept_whole == model_numbers[-2:]  # the last step, and the one sent with other sampling
    assert events[model_numbers[0] - 1]["request"][REPEATED] == model_numbers[-2]
    assert len(json.dumps(events)) < 2 * len(json.dumps(sent[-1])) + 4000
    # the other role's requests (no common beginning) are kept as sent
    assert all(event["request"]["model"] == "u" for event in events if event["role"] == "user")
    from ui.explore_tab import events_html

    page = events_html(events)
    assert page.count("docs docs") >= len(model_numbers)  # every request's messages shown, rebuilt


def test_the_page_escapes_every_call_and_redacts_their_errors():
    from ui.explore_tab import events_html

    events = [{"role": "model", "request": {"model": "m", "messages": [{"role": "user", "content": "<i>hi</i>"}]},
               "response": {"text": "<script>alert(1)</script>", "tool_calls": None, "usage": {}}, "error": None,
               "latency": 0.1, "cached": True},
              {"role": "judge", "request": {"not_kept": True, "bytes": 9, "note": "left out"}, "response": None,
               "error": "the server died: see /srv/models/log.txt", "latency": 0.0, "cached": False}]
    page = events_html(events, lambda text: text.replace("/srv/models/", "…/"))
    assert "<script>" not in page and "<i>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "1. model (cached): &lt;script&gt;" in page and "2. judge: the server died: see …/log.txt" in page
    assert "/srv/models" not in page and "left out" in page
    assert events_html([]) == ""
