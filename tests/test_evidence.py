"""Evidence with the score (issue 16, item 3): each sample's row keeps its gold answer and the request as
sent, so Explore and exports read that one row and never reload or re-download the dataset."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evaluators.core.registry import get_benchmark
from evaluators.core.types import ChatRequest, Prediction
from evaluators.engine.client import ChatClient, SentRequests
from evaluators.engine.runner import execute, start_run
from evaluators.engine.settings import ModelSettings, RunConfig, RunRequest
from evaluators.engine.store import (
    MAX_EVIDENCE_BYTES,
    MIGRATIONS,
    REBUILT_WHEN_SHOWN,
    SCHEMA_VERSION,
    UPLOADED_PROMPT_NOTE,
    Evidence,
    Store,
)
from evaluators.service import explore
from evaluators.service.explore import sample_detail
from tests.agent_fixtures import ITEMS, milestone_plans, write_agent_dataset
from tests.engine_fixtures import correct_reply, run_to_end, scripted_run_config, write_dataset
from tests.scripted_server import ScriptedServer, last_user_text

FALLBACK_NOTE = "stored before evidence was kept: prompt rebuilt, gold reloaded"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_dataset(tmp_path / "data", 4)


def _number(body: dict[str, Any]) -> int:
    return int(last_user_text(body).split("number ")[1].split(" ")[0])


def _no_reload(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to load the run's samples again fails the test."""
    explore._samples_for.cache_clear()

    def reload(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the dataset was loaded again")

    monkeypatch.setattr(explore, "_samples_for", reload)


def test_a_run_keeps_each_samples_gold_and_the_exact_request_the_server_received(data: Path, tmp_path: Path):
    store = Store(tmp_path / "db.sqlite")
    with ScriptedServer(reply=correct_reply) as server:
        outcome = run_to_end(store, scripted_run_config(server, data))
        received = {_number(body): body for body in server.bodies}
        assert len(received) == server.requests == 4
        again = run_to_end(store, scripted_run_config(server, data))  # every answer from the cache
        assert server.requests == 4
    samples = {s.id: s for s in get_benchmark("acebench").load(str(data), language="en", subsets=["normal_atom_bool"])}
    for run_id in (outcome.run_id, again.run_id):
        for number, body in received.items():
            stored = store.load_sample_evidence(run_id, f"normal_atom_bool_{number}")
            assert stored.evidence_kept and stored.subset == "normal_atom_bool"
            assert stored.request == {"requests": 1, "body": body}  # a cache hit counts as sent: the same body
            assert stored.gold == samples[f"normal_atom_bool_{number}"].gold
            assert stored.prediction.output == f"[Clock.setAlarm(time='{stored.gold['Clock.setAlarm']['time']}')]"
            assert stored.score.correct and stored.score.sample_id == stored.sample_id


def test_a_sample_page_reads_its_row_even_after_the_data_folder_is_gone(data: Path, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch):
    from ui.context import AppContext
    from ui.explore_tab import detail_html

    store = Store(tmp_path / "db.sqlite")
    with ScriptedServer(reply=correct_reply) as server:
        outcome = run_to_end(store, scripted_run_config(server, data, request_mode="tools"))
        body = next(body for body in server.bodies if _number(body) == 2)
    shutil.rmtree(data)
    _no_reload(monkeypatch)
    detail = sample_detail(store, outcome.run_id, "normal_atom_bool_2")
    assert detail["request_as_sent"] == {"requests": 1, "body": body}
    assert detail["prompt_messages"] == body["messages"] and detail["prompt_note"] == ""
    assert detail["gold"] == {"Clock.setAlarm": {"time": "02:02"}} and detail["verdict"] == "right"
    assert detail["subset"] == "normal_atom_bool" and detail["tool_calls"][0]["name"] == "Clock.setAlarm"
    context = AppContext(store=store)
    try:
        page = detail_html(context, outcome.run_id, "normal_atom_bool_2", "official")
    finally:
        context.close()
    assert "Request as sent, besides its messages" in page and "&quot;tool_choice&quot;" in page
    assert "Gold answer" in page and "02:02" in page


# ---- an agent rollout: many requests, the last one kept --------------------------------------------

PLANS = milestone_plans()


def _item_of(text: str) -> str:
    return next(item["id"] for item in ITEMS if item["question"] in text or f"[{item['id']}]" in text)


def milestone_agent(body: dict[str, Any]) -> dict[str, Any]:
    """Replays the item's milestones one per turn, then finishes."""
    prompt = body["messages"][-1]["content"]
    plan = PLANS[_item_of(prompt)]
    executed = prompt.count("\nexecution result:") + prompt.count("\nexecution:")
    return {"content": plan[executed] if executed < len(plan) else "finish conversation"}


def test_an_agent_rollout_keeps_its_last_request_and_how_many_it_sent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    data = write_agent_dataset(tmp_path / "data")
    store = Store(tmp_path / "db.sqlite")
    with ScriptedServer(reply=milestone_agent) as server:
        model = ModelSettings(base_url=server.base_url, model="scripted", api_key_env="", timeout=5.0)
        config = RunConfig("acebench", model, language="en", subsets=("agent_multi_step",), data_dir=str(data), concurrency=2)
        run_id, samples = start_run(RunRequest(config), store)
        asyncio.run(execute(store, run_id, samples))
        bodies = [body for body in server.bodies if _item_of(body["messages"][-1]["content"]) == "agent_multi_step_0"]
    assert len(bodies) == len(PLANS["agent_multi_step_0"]) + 1 == 5
    stored = store.load_sample_evidence(run_id, "agent_multi_step_0")
    assert stored.request == {"requests": 5, "body": bodies[-1]}  # the last request holds the whole conversation
    assert stored.gold == next(s.gold for s in samples if s.id == "agent_multi_step_0")
    shutil.rmtree(data)
    _no_reload(monkeypatch)
    detail = sample_detail(store, run_id, "agent_multi_step_0")
    assert detail["prompt_messages"] == bodies[-1]["messages"]
    assert detail["prompt_note"].startswith("the last of 5 requests sent for this sample")
    transcript = next(item["value"] for item in detail["evidence"] if item["key"] == "transcript")
    assert [turn["role"] for turn in transcript][:3] == ["user", "agent", "execution"]


def test_a_companion_clients_requests_never_replace_the_tested_models(tmp_path: Path):
    store = Store(tmp_path / "db.sqlite")

    async def sample(tested_url: str, judge_url: str) -> tuple[SentRequests, SentRequests | None]:
        tested = ChatClient(ModelSettings(base_url=tested_url, model="tested", api_key_env=""), store=store)
        judge = ChatClient(ModelSettings(base_url=judge_url, model="judge", api_key_env=""), store=store)
        try:
            sent = tested.capture_requests()
            await tested.complete(ChatRequest(messages=[{"role": "user", "content": "first"}]))
            await tested.complete(ChatRequest(messages=[{"role": "user", "content": "second"}]))
            await judge.complete(ChatRequest(messages=[{"role": "user", "content": "is the call right?"}]))

            async def other_sample() -> SentRequests:  # a sample of its own (another task) records apart
                own = tested.capture_requests()
                await tested.complete(ChatRequest(messages=[{"role": "user", "content": "other sample"}]))
                return own

            other = await asyncio.create_task(other_sample())
            return sent, other
        finally:
            await tested.close()
            await judge.close()

    with ScriptedServer() as model_server, ScriptedServer() as judge_server:
        sent, other = asyncio.run(sample(model_server.base_url, judge_server.base_url))
        assert judge_server.requests == 1 and model_server.requests == 3
        second = next(b for b in model_server.bodies if b["messages"][0]["content"] == "second")
    assert json.loads(sent.evidence().text) == {"requests": 2, "body": second}
    other_kept = json.loads(other.evidence().text)
    assert other_kept["requests"] == 1 and other_kept["body"]["messages"][0]["content"] == "other sample"


# ---- uploads: gold and the prompt this tool would send, marked not sent ------------------------------

def test_an_upload_keeps_gold_and_builds_the_prompt_it_would_send_when_shown(data: Path, tmp_path: Path):
    """An upload keeps each item's gold, and a note instead of the body this tool would send: that body is the
    item's and the benchmark's alone, built again when the sample is shown (issue 41: an upload's rows once held
    a copy of every prompt, most of what it stored)."""
    from evaluators.service.submissions import check_submission, store_submission

    upload = tmp_path / "predictions.jsonl"
    upload.write_text("".join(json.dumps({"id": f"normal_atom_bool_{i}", "output": "[Clock.setAlarm(time='00:00')]"}) + "\n"
                              for i in range(4)))
    submission = check_submission(upload, "acebench", language="en", data_dir=data)
    store = Store(tmp_path / "db.sqlite")
    run_id = store_submission(store, submission, "uploaded-model")
    sample = next(s for s in submission.samples if s.id == "normal_atom_bool_1")
    stored = store.load_sample_evidence(run_id, sample.id)
    assert stored.gold == sample.gold == {"Clock.setAlarm": {"time": "01:01"}}
    assert stored.request == {"not_sent": True, "body": None, REBUILT_WHEN_SHOWN: True, "note": UPLOADED_PROMPT_NOTE}
    explore._samples_for.cache_clear()
    would_send = get_benchmark("acebench").build_request(sample, mode="prompt", prompt_style="toolboard")
    detail = sample_detail(store, run_id, sample.id)
    assert detail["prompt_messages"] == would_send.messages and detail["verdict"] == "wrong"
    assert detail["prompt_note"] == UPLOADED_PROMPT_NOTE and detail["gold"] == sample.gold
    # Without its data, the page says why there is no prompt; the verdict and the gold are still there.
    shutil.rmtree(data)
    explore._samples_for.cache_clear()
    gone = sample_detail(store, run_id, sample.id)
    assert gone["prompt_messages"] == [] and "the run's data cannot be read here" in gone["prompt_note"]
    assert gone["gold"] == sample.gold and gone["verdict"] == "wrong"


def test_an_uploaded_agent_item_keeps_gold_and_says_it_has_no_single_prompt(tmp_path: Path):
    from evaluators.service.submissions import check_submission, store_submission

    data = write_agent_dataset(tmp_path / "data")
    upload = tmp_path / "predictions.jsonl"
    upload.write_text(json.dumps({"id": "agent_multi_step_0", "result": [], "process": []}) + "\n")
    submission = check_submission(upload, "acebench", language="en", subsets=["agent_multi_step"], data_dir=data)
    store = Store(tmp_path / "db.sqlite")
    run_id = store_submission(store, submission, "agent-upload")
    stored = store.load_sample_evidence(run_id, "agent_multi_step_0")
    assert stored.request["not_sent"] is True and stored.request["body"] is None
    assert stored.gold == ITEMS[0]["gold"]
    explore._samples_for.cache_clear()
    detail = sample_detail(store, run_id, "agent_multi_step_0")
    assert detail["prompt_messages"] == [] and detail["prompt_note"].startswith("uploaded predictions: no single prompt")


# ---- rows stored before migration 5 ----------------------------------------------------------------

def test_a_schema_4_store_migrates_and_explore_shows_its_old_rows_by_reloading(data: Path, tmp_path: Path):
    # A real run's rows, as a store at schema 4 held them (no gold, no request).
    fresh = Store(tmp_path / "fresh.sqlite")
    with ScriptedServer(reply=correct_reply) as server:
        outcome = run_to_end(fresh, scripted_run_config(server, data))
    rows = fresh.export_rows(outcome.run_id)
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        for number in range(4):
            db.executescript(MIGRATIONS[number])
        db.execute("PRAGMA user_version=4")
        for table in Store.RUN_TABLES:
            for row in rows[table]:
                row = {key: value for key, value in row.items() if key not in ("gold", "request", "events", "metadata")}
                db.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values()))
    explore._samples_for.cache_clear()
    store = Store(path)
    assert store.schema_version() == SCHEMA_VERSION == 7
    old = store.load_sample_evidence(outcome.run_id, "normal_atom_bool_3")
    assert not old.gold_kept and not old.request_kept and old.prediction.output and old.score.correct
    detail = sample_detail(store, outcome.run_id, "normal_atom_bool_3")
    assert detail["prompt_note"] == FALLBACK_NOTE and detail["request_as_sent"] is None
    assert detail["gold"] == {"Clock.setAlarm": {"time": "03:03"}} and detail["verdict"] == "right"
    assert "number 3 at 03:03" in detail["prompt_messages"][-1]["content"]
    assert detail.keys() == sample_detail(fresh, outcome.run_id, "normal_atom_bool_3").keys()
    export = tmp_path / "old.jsonl"
    _export(store, outcome.run_id, export)
    exported = [json.loads(line) for line in export.read_text().splitlines()]
    assert len(exported) == 4 and not any("gold" in row or "request" in row for row in exported)


# ---- bounds and values SQLite refuses ----------------------------------------------------------------

def _one_run(store: Store) -> str:
    return store.create_run("acebench", "en", "m", "http://127.0.0.1:9/v1", {}, "fp", 1)


def test_a_request_over_the_bound_is_kept_as_a_note_never_failing_the_row(tmp_path: Path):
    store = Store(tmp_path / "db.sqlite")
    run_id = _one_run(store)
    huge = {"requests": 3, "body": {"messages": [{"role": "user", "content": "x" * MAX_EVIDENCE_BYTES}]}}
    stored = store.save_batch(run_id, [], [("s", Prediction("big", output="[]"), 3, Evidence({"f": {"a": 1}}, huge))])
    assert stored[0].error is None
    row = store.load_sample_evidence(run_id, "big")
    assert row.gold == {"f": {"a": 1}} and row.prediction.output == "[]"
    assert row.request["truncated"] is True and row.request["requests"] == 3 and "body" not in row.request
    assert row.request["bytes"] > MAX_EVIDENCE_BYTES and "not stored" in row.request["note"]
    kept = store._query("SELECT length(request) FROM predictions WHERE sample_id='big'")[0][0]
    assert kept < 1000
    # The client's record: an oversized body keeps its messages with very long texts (audio) shown by
    # their length; one still too big after that becomes the same note.
    audio = {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"},
                                                       {"type": "input_audio", "input_audio": {"data": "A" * MAX_EVIDENCE_BYTES}}]}]}
    shortened = SentRequests(client=None, count=2, last=json.dumps(audio).encode()).evidence()
    assert shortened["shortened"] is True and shortened["requests"] == 2
    parts = shortened["body"]["messages"][0]["content"]
    assert parts[0]["text"] == "hi" and parts[1]["input_audio"]["data"] == f"<{MAX_EVIDENCE_BYTES:,} characters not kept>"
    many = json.dumps({"messages": [{"role": "user", "content": "x" * 100}] * 20_000}).encode()
    note = SentRequests(client=None, count=2, last=many).evidence()
    assert note["truncated"] is True and note["requests"] == 2 and note["bytes"] == len(many)


def test_a_big_request_through_a_run_keeps_its_messages_with_the_long_text_shortened(tmp_path: Path):
    data = write_dataset(tmp_path / "data", 2)
    questions = data / "data_en" / "data_normal_atom_bool.json"
    lines = questions.read_text().splitlines()
    item = json.loads(lines[0])
    item["question"] = "user: " + "please " * (MAX_EVIDENCE_BYTES // 7 + 10) + item["question"].removeprefix("user: ")
    questions.write_text("\n".join([json.dumps(item), *lines[1:]]) + "\n")
    store = Store(tmp_path / "db.sqlite")
    with ScriptedServer(reply=correct_reply) as server:
        outcome = run_to_end(store, scripted_run_config(server, data))
    big, small = (store.load_sample_evidence(outcome.run_id, f"normal_atom_bool_{n}") for n in (0, 1))
    assert big.request["shortened"] is True and big.request["requests"] == 1 and big.score.correct
    assert big.gold == {"Clock.setAlarm": {"time": "00:00"}}
    assert small.request["requests"] == 1 and small.request["body"]["messages"]
    detail = sample_detail(store, outcome.run_id, "normal_atom_bool_0")
    assert any("characters not kept>" in str(m.get("content")) for m in detail["prompt_messages"])
    assert "shown by their length" in detail["prompt_note"]


@dataclass(frozen=True)
class _Gold:
    name: str
    arguments: dict[str, Any]


def test_evidence_with_lone_surrogates_dataclasses_and_refused_predictions_keeps_every_row(tmp_path: Path):
    store = Store(tmp_path / "db.sqlite")
    run_id = _one_run(store)
    request = {"requests": 1, "body": {"messages": [{"role": "user", "content": "a\udc00b"}]}}
    store.save_batch(run_id, [], [
        ("s", Prediction("surrogate", output="ok"), 1, Evidence("\ud800 gold", request)),
        ("s", Prediction("dataclass", output="ok"), 1, Evidence([_Gold("f", {"x": 1})], request)),
        ("s", Prediction("refused", extra={"result": 10 ** 5000}), 1, Evidence({"g": 1}, request)),  # an int too long to write
        ("s", Prediction("plain", output="ok"), 1),  # no evidence given: NULL, as in old rows
    ])
    surrogate = store.load_sample_evidence(run_id, "surrogate")
    # read back as their \\uXXXX text (as stored text is), so a page or a hub document can always encode them
    assert surrogate.gold == "\\ud800 gold"
    assert surrogate.request["body"]["messages"][0]["content"] == "a\\udc00b"
    assert store.load_sample_evidence(run_id, "dataclass").gold == [{"name": "f", "arguments": {"x": 1}}]
    refused = store.load_sample_evidence(run_id, "refused")
    assert refused.prediction.error.startswith("could not store this prediction") and refused.gold == {"g": 1}
    assert refused.request == surrogate.request
    plain = store.load_sample_evidence(run_id, "plain")
    assert plain.prediction.output == "ok" and not plain.gold_kept and not plain.request_kept
    unknown = store.load_sample_evidence(run_id, "nowhere")
    assert unknown.prediction is None and unknown.score is None and unknown.subset is None
    export = tmp_path / "out.jsonl"
    _export(store, run_id, export)
    rows = {row["id"]: row for row in map(json.loads, export.read_text(encoding="utf-8").splitlines())}
    assert rows["surrogate"]["request"] == surrogate.request and rows["surrogate"]["gold"] == "\\ud800 gold"


# ---- exports ---------------------------------------------------------------------------------------

def _export(store: Store, run_id: str, path: Path) -> None:
    from evaluators.cli import stored_runs
    from evaluators.cli.parser import build_parser

    original = stored_runs.Store
    stored_runs.Store = lambda: store  # type: ignore[assignment, misc]
    try:
        stored_runs.export_command(build_parser().parse_args(["export", run_id, "--predictions", str(path)]))
    finally:
        stored_runs.Store = original  # type: ignore[misc]


def test_exported_predictions_carry_gold_and_request_without_the_dataset(data: Path, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch):
    store = Store(tmp_path / "db.sqlite")
    with ScriptedServer(reply=correct_reply) as server:
        outcome = run_to_end(store, scripted_run_config(server, data))
        received = {_number(body): body for body in server.bodies}
    shutil.rmtree(data)  # the export reads the store alone
    _no_reload(monkeypatch)
    export = tmp_path / "predictions.jsonl"
    _export(store, outcome.run_id, export)
    rows = [json.loads(line) for line in export.read_text().splitlines()]
    assert [row["id"] for row in rows] == [f"normal_atom_bool_{n}" for n in range(4)]
    for row in rows:
        number = int(row["id"].rsplit("_", 1)[1])
        assert row["request"] == {"requests": 1, "body": received[number]}
        assert row["gold"] == {"Clock.setAlarm": {"time": f"{number:02d}:{number:02d}"}}
        assert row["output"] == f"[Clock.setAlarm(time='{number:02d}:{number:02d}')]"


def test_paged_reading_returns_every_row_once(tmp_path: Path):
    store = Store(tmp_path / "db.sqlite")
    run_id = _one_run(store)
    store.save_batch(run_id, [], [("s", Prediction(f"id{n:03d}", output=str(n)), 1, Evidence(n, {"requests": 0, "body": None}))
                                  for n in range(11)])
    seen = list(store.iter_stored_samples(run_id, page=4))
    assert [s.sample_id for s in seen] == [f"id{n:03d}" for n in range(11)]
    assert [s.gold for s in seen] == list(range(11)) and all(s.request_kept for s in seen)


def test_evidence_travels_with_a_run_through_hub_sync_documents(data: Path, tmp_path: Path):
    from evaluators.engine.run_document import export_run, import_run

    store = Store(tmp_path / "db.sqlite")
    with ScriptedServer(reply=correct_reply) as server:
        outcome = run_to_end(store, scripted_run_config(server, data))
    document = json.loads(json.dumps(export_run(store, outcome.run_id)))
    other = Store(tmp_path / "other.sqlite")
    assert import_run(other, document)
    for number in range(4):
        sample_id = f"normal_atom_bool_{number}"
        mine, theirs = store.load_sample_evidence(outcome.run_id, sample_id), other.load_sample_evidence(outcome.run_id, sample_id)
        assert theirs.evidence_kept and (theirs.gold, theirs.request) == (mine.gold, mine.request)


def test_the_page_shows_history_tool_calls_and_leaves_out_audio_data():
    from ui.explore_tab import request_besides_messages, turns_html

    audio = "UklGR" + "A" * 5000
    messages = [{"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": audio, "format": "wav"}}]},
                {"role": "assistant", "content": None, "tool_calls": [{"id": "call_5", "function": {"name": "get_weather"}}]}]
    page = turns_html("Prompt messages", messages)
    assert audio not in page and "5,005 characters of base64 audio" in page
    assert "call_5" in page and "get_weather" in page and "null" not in page
    shown = request_besides_messages({"requests": 2, "body": {"model": "m", "messages": messages, "temperature": 0.0}})
    assert shown == {"requests": 2, "body": {"model": "m", "temperature": 0.0}}
    assert request_besides_messages(None) is None
