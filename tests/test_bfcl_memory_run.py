"""BFCL memory runs from the CLI against the scripted server, on a small data folder of two scenarios (its
questions and prerequisite conversations written here; the memory tools' docs, prompts and classes from the pinned
wheel): every item ends scored, each answered from the memory its scenario's chain left; the chains of the four
(backend, scenario) pairs run side by side within the run's concurrency, each before its items; the prerequisite
evidence is stored. Bad input: an unknown tool and arguments that do not fit fail only their own item; a failed
prerequisite request touches only its own chain, which goes on without that conversation's snapshot as the official
generator does, its items naming the failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROJECT
from tests.engine_fixtures import stored_predictions
from tests.scripted_server import Fault, ScriptedServer, prompt_key

RUN_SECONDS = 300
TOOL_RESULTS = "[{'role': 'tool'"
# scenario -> its prerequisite conversations (each a list of user turns), then its items (question, answer).
PREREQS = {
    "customer": [["My first name is Michael.", "I am 35 years old."], ["I live in Paris.", "My dog is called Rex."]],
    "notetaker": [["Dentist on Monday at 09:30 AM."], ["Buy milk.", "Call Jacob on Wednesday."]],
}
ITEMS = {
    "customer": [("What is my first name?", "Michael"), ("Where do I live?", "Paris"), ("What is my dog called?", "Rex")],
    "notetaker": [("When is the dentist?", "09:30 AM"), ("Whom should I call?", "Jacob")],
}
FACTS = [turn for scenario in PREREQS.values() for conversation in scenario for turn in conversation]
BAD_INPUT_QUESTION = "Where do I live?"  # memory_kv only: an unknown tool and a call missing an argument first
FAILING_TURN = "Call Jacob on Wednesday."  # memory_kv only, in the run with a failing prerequisite request


def _lines(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def write_memory_folder(root: Path, wheel: Path) -> Path:
    """A folder laid out like the wheel's bfcl_eval/data/ with the memory files only."""
    from evaluators.benchmarks.bfcl.wheel import DATA_PREFIX, read_member

    (root / "possible_answer").mkdir(parents=True)
    (root / "memory_prereq_conversation").mkdir()
    (root / "multi_turn_func_doc").mkdir()
    questions, answers, number, prereq = [], [], 0, 0
    for scenario, items in ITEMS.items():
        for index, (question, answer) in enumerate(items):
            item_id = f"memory_{number}-{scenario}-{index}"
            questions.append({"id": item_id, "question": [[{"role": "user", "content": question}]],
                              "involved_classes": ["MemoryAPI"], "scenario": scenario})
            answers.append({"id": item_id, "ground_truth": [answer], "source": "test"})
            number += 1
        conversations = []
        for index, turns in enumerate(PREREQS[scenario]):
            conversations.append({"id": f"memory_prereq_{prereq}-{scenario}-{index}", "topic": "test",
                                  "question": [[{"role": "user", "content": turn}] for turn in turns],
                                  "involved_classes": ["MemoryAPI"], "scenario": scenario})
            prereq += 1
        (root / "memory_prereq_conversation" / f"memory_{scenario}.json").write_text(_lines(conversations))
    (root / "BFCL_v4_memory.json").write_text(_lines(questions))
    (root / "possible_answer" / "BFCL_v4_memory.json").write_text(_lines(answers))
    for backend in ("kv", "rec_sum", "vector"):
        name = f"multi_turn_func_doc/memory_{backend}.json"
        (root / name).write_bytes(read_member(wheel, DATA_PREFIX + name))
    return root


def _reply(body: dict[str, Any]) -> dict[str, Any]:
    """Prerequisite turns: keep the fact; items: read the memory, then answer with what it holds."""
    messages = body["messages"]
    kv = "core_memory_add" in messages[0]["content"]
    users = [m["content"] for m in messages if m["role"] == "user" and not m["content"].startswith(TOOL_RESULTS)]
    step = sum(1 for m in messages[[i for i, m in enumerate(messages) if m["role"] == "user"
                                    and m["content"] == users[-1]][-1]:] if m["role"] == "assistant")
    turn = users[-1]
    if turn in FACTS:
        if step:
            return {"content": "Noted."}
        if kv:
            return {"content": f"[core_memory_add(key='fact_{FACTS.index(turn)}', value={turn!r})]"}
        return {"content": f"[memory_append(text={turn + ' '!r})]"}
    if step == 0:
        if kv and turn == BAD_INPUT_QUESTION:
            return {"content": "[no_such_tool(city='x'), core_memory_add(key='only_key')]"}
        return {"content": "[core_memory_retrieve_all()]" if kv else "[memory_retrieve()]"}
    if step == 1 and kv and turn == BAD_INPUT_QUESTION:
        return {"content": "[core_memory_retrieve_all()]"}
    answer = next(answer for items in ITEMS.values() for question, answer in items if question == turn)
    shown = messages[-1]["content"]
    return {"content": f"{{'answer': '{answer if answer in shown else 'I do not know'}', 'context': 'memory'}}"}


@pytest.fixture
def memory_env(bfcl_official: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, str], Path]:
    from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV

    monkeypatch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
    env = {**os.environ, "TOOLBOARD_HOME": str(tmp_path / "home"), WHEEL_PATH_ENV: str(bfcl_official.wheel)}
    return env, write_memory_folder(tmp_path / "data", bfcl_official.wheel)


def _run(server: ScriptedServer, env: dict[str, str], folder: Path, *extra: str) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "evaluators", "run", "bfcl", "--subset", "memory_kv", "memory_rec_sum",
            "--data-dir", str(folder), "--base-url", server.base_url, "--model", "org/scripted-model",
            "--api-key-env", "", "--concurrency", "4", "--json", *extra]
    return subprocess.run(args, cwd=PROJECT, env=env, capture_output=True, text=True, timeout=RUN_SECONDS)


def _chain_of(body: dict[str, Any]) -> tuple[str, str, bool]:
    """(backend, scenario, whether the request is a prerequisite conversation's) of a request."""
    messages = body["messages"]
    backend = "kv" if "core_memory_add" in messages[0]["content"] else "rec_sum"
    first = messages[1]["content"]
    for scenario in PREREQS:
        if any(first == conversation[0] for conversation in PREREQS[scenario]):
            return backend, scenario, True
        if any(first == question for question, _ in ITEMS[scenario]):
            return backend, scenario, False
    raise AssertionError(first)


@pytest.mark.slow
def test_a_memory_run_plays_each_chain_before_its_items_and_scores_every_item(memory_env: tuple[dict[str, str], Path]):
    env, folder = memory_env
    with ScriptedServer(reply=_reply, latency=0.05) as server:
        done = _run(server, env, folder)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert {name: (s["n"], s["metrics"]["accuracy"]) for name, s in report["subsets"].items()} == {
        "memory_kv": (5, 1.0), "memory_rec_sum": (5, 1.0)}  # the kv item with the bad calls still answers
    # each chain's requests all come before its items' requests; chains ran side by side, within the concurrency
    last_prereq: dict[tuple[str, str], int] = {}
    first_item: dict[tuple[str, str], int] = {}
    for index, body in enumerate(server.bodies):
        backend, scenario, prereq = _chain_of(body)
        if prereq:
            last_prereq[(backend, scenario)] = index
        else:
            first_item.setdefault((backend, scenario), index)
    assert set(last_prereq) == set(first_item) and len(first_item) == 4
    assert all(last_prereq[chain] < first_item[chain] for chain in first_item)
    assert 1 < server.max_in_flight <= 4
    assert len(server.bodies) == 2 * (2 * len(FACTS)) + 2 * 2 * 5 + 1  # prereq turns, items, the extra bad step
    predictions = stored_predictions(Path(env["TOOLBOARD_HOME"]), report["run_id"])
    assert len(predictions) == 10
    head = predictions["memory_kv_0-customer-0"]
    assert head.error is None and head.extra["stop"] == "completed"
    snapshot = head.extra["memory_snapshot"]
    assert snapshot["flushed_by"] == "memory_kv_prereq_1-customer-1"
    assert snapshot["snapshot"]["core_memory"] == {"fact_0": "My first name is Michael.", "fact_1": "I am 35 years old.",
                                                   "fact_2": "I live in Paris.", "fact_3": "My dog is called Rex."}
    chain = head.extra["memory_prereqs"]["chain"]
    assert [c["id"] for c in chain] == ["memory_kv_prereq_0-customer-0", "memory_kv_prereq_1-customer-1"]
    assert chain[0]["snapshot"]["core_memory"] == {"fact_0": "My first name is Michael.", "fact_1": "I am 35 years old."}
    assert chain[1]["turns"] == [["[core_memory_add(key='fact_2', value='I live in Paris.')]", "Noted."],
                                 ["[core_memory_add(key='fact_3', value='My dog is called Rex.')]", "Noted."]]
    assert chain[0]["transcript"][0]["steps"][0]["results"] == ['{"status": "Key-value pair added."}']
    # Explore shows, for an item, the snapshot it started from and its chain's outline, under their titles
    from evaluators.service.explore import sample_evidence

    shown = {entry["key"]: entry for entry in sample_evidence("bfcl", predictions["memory_kv_2-customer-2"], None)}
    assert shown["memory_snapshot"]["title"] == "Memory snapshot the item started from"
    assert shown["memory_snapshot"]["value"]["started_from"] == (
        "the snapshot customer_final.json flushed by memory_kv_prereq_1-customer-1")
    assert shown["memory_prereqs"]["title"] == "Prerequisite conversations (not scored)"
    other = predictions["memory_kv_2-customer-2"].extra["memory_prereqs"]
    assert "chain" not in other and other["kept_with"] == "memory_kv_0-customer-0"
    assert [c["stop"] for c in other["conversations"]] == ["completed", "completed"]
    rec_sum = predictions["memory_rec_sum_3-notetaker-0"].extra["memory_snapshot"]
    assert rec_sum["snapshot"] == {"memory": "Dentist on Monday at 09:30 AM. Buy milk. Call Jacob on Wednesday. "}
    # bad input: the unknown tool and the missing argument reached the model as the official texts; only that item
    bad = predictions["memory_kv_1-customer-1"]
    assert bad.error is None
    assert bad.extra["transcript"][0]["steps"][0]["results"] == [
        "Error during execution: name 'no_such_tool' is not defined",
        "Error during execution: MemoryAPI_kv.core_memory_add() missing 1 required positional argument: 'value'"]


@pytest.mark.slow
def test_a_failed_prerequisite_request_is_named_and_its_chain_goes_on_as_the_official_generator_does(
        memory_env: tuple[dict[str, str], Path]):
    env, folder = memory_env
    failing: set[str] = set()

    def watch(body: dict[str, Any]) -> None:
        backend, _, prereq = _chain_of(body)
        last = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
        if backend == "kv" and prereq and last == FAILING_TURN:
            failing.add(prompt_key(body))

    def fault(key: str, attempt: int) -> Fault | None:
        return Fault(status=400, message="scripted refusal") if key in failing else None

    with ScriptedServer(reply=_reply, fault=fault, on_request=watch) as server:
        done = _run(server, env, folder)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    predictions = stored_predictions(Path(env["TOOLBOARD_HOME"]), report["run_id"])
    assert all(prediction.error is None for prediction in predictions.values())  # every item played and scored
    for item_id in ("memory_kv_3-notetaker-0", "memory_kv_4-notetaker-1"):
        evidence = predictions[item_id].extra
        prereqs = evidence["memory_prereqs"]
        assert [c["stop"] for c in prereqs["conversations"]] == ["completed", "request_failed"]
        [failure] = prereqs["failures"]
        assert failure.startswith("memory prerequisite conversation memory_kv_prereq_3-notetaker-1 failed: HTTP 400")
        assert "as the official generator does" in prereqs["failure_note"]
        # the failed conversation flushed nothing: the items started from the first one's snapshot
        assert evidence["memory_snapshot"]["flushed_by"] == "memory_kv_prereq_2-notetaker-0"
        assert evidence["memory_snapshot"]["snapshot"]["core_memory"] == {"fact_4": "Dentist on Monday at 09:30 AM."}
    # only that chain suffers: Jacob was never kept, so that one question is answered wrong; the rest are right
    assert report["subsets"]["memory_kv"]["metrics"]["accuracy"] == 0.8
    assert report["subsets"]["memory_rec_sum"]["metrics"]["accuracy"] == 1.0
    verdicts = {item_id: p for item_id, p in predictions.items() if "failures" in p.extra["memory_prereqs"]}
    assert set(verdicts) == {"memory_kv_3-notetaker-0", "memory_kv_4-notetaker-1"}


@pytest.mark.slow
def test_rerun_errors_plays_the_chain_again_from_the_cache_then_the_failed_item(memory_env: tuple[dict[str, str], Path]):
    env, folder = memory_env
    state = {"fail": True}
    failing: set[str] = set()

    def watch(body: dict[str, Any]) -> None:
        if state["fail"] and body["messages"][1]["content"] == "Where do I live?" and "vec_id" not in \
                body["messages"][0]["content"] and "memory_append" in body["messages"][0]["content"]:
            failing.add(prompt_key(body))  # memory_rec_sum's "Where do I live?"

    def fault(key: str, attempt: int) -> Fault | None:
        return Fault(status=400, message="scripted refusal") if key in failing else None

    with ScriptedServer(reply=_reply, fault=fault, on_request=watch) as server:
        done = _run(server, env, folder)
        assert done.returncode == 0, done.stderr[-3000:]
        run_id = json.loads(done.stdout)["run_id"]
        failed = stored_predictions(Path(env["TOOLBOARD_HOME"]), run_id)["memory_rec_sum_1-customer-1"]
        assert failed.error is not None and "HTTP 400" in failed.error
        state["fail"] = False
        failing.clear()
        sent = len(server.bodies)
        again = _run(server, env, folder, "--rerun-errors", run_id)
        assert again.returncode == 0, again.stderr[-3000:]
        resent = [_chain_of(body) for body in server.bodies[sent:]]
    # the customer chain of memory_rec_sum was played again, every answer from the cache: only the item was sent
    assert resent == [("rec_sum", "customer", False)] * 2
    report = json.loads(again.stdout)
    assert report["subsets"]["memory_rec_sum"]["metrics"]["accuracy"] == 1.0
    replayed = stored_predictions(Path(env["TOOLBOARD_HOME"]), run_id)["memory_rec_sum_1-customer-1"]
    assert replayed.error is None and replayed.extra["memory_snapshot"]["flushed_by"] == (
        "memory_rec_sum_prereq_1-customer-1")


def _vector_reply(body: dict[str, Any]) -> dict[str, Any]:
    """memory_vector: keep each fact as a core memory text; an item searches the core memory, then answers."""
    messages = body["messages"]
    assert "vec_id" in messages[0]["content"]
    users = [m["content"] for m in messages if m["role"] == "user" and not m["content"].startswith(TOOL_RESULTS)]
    step = sum(1 for m in messages[[i for i, m in enumerate(messages) if m["role"] == "user"
                                    and m["content"] == users[-1]][-1]:] if m["role"] == "assistant")
    turn = users[-1]
    if turn in FACTS:
        return {"content": "Noted." if step else f"[core_memory_add(text={turn!r})]"}
    if step == 0:
        return {"content": f"[core_memory_retrieve(query={turn!r}, top_k=5), archival_memory_retrieve_all()]"}
    answer = next(answer for items in ITEMS.values() for question, answer in items if question == turn)
    return {"content": f"{{'answer': '{answer if answer in messages[-1]['content'] else 'unknown'}', 'context': 'x'}}"}


@pytest.mark.slow
def test_a_memory_vector_run_with_its_extra_scores_every_item_from_the_embedded_memory(
        memory_env: tuple[dict[str, str], Path]):
    from evaluators.benchmarks.bfcl.agentic.vector_extra import vector_extra_missing

    if vector_extra_missing():
        pytest.skip(f"memory_vector's optional extra is not installed ({', '.join(vector_extra_missing())} missing: "
                    "pip install -r requirements-memory-vector.txt)")
    env, folder = memory_env
    args = [sys.executable, "-m", "evaluators", "run", "bfcl", "--subset", "memory_vector", "--data-dir", str(folder),
            "--api-key-env", "", "--concurrency", "2", "--json", "--model", "org/scripted-model"]
    with ScriptedServer(reply=_vector_reply) as server:
        done = subprocess.run([*args, "--base-url", server.base_url], cwd=PROJECT, env=env, capture_output=True,
                              text=True, timeout=RUN_SECONDS)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert {name: (s["n"], s["metrics"]["accuracy"]) for name, s in report["subsets"].items()} == {
        "memory_vector": (5, 1.0)}
    predictions = stored_predictions(Path(env["TOOLBOARD_HOME"]), report["run_id"])
    head = predictions["memory_vector_0-customer-0"]
    snapshot = head.extra["memory_snapshot"]["snapshot"]
    assert snapshot["core_memory"] == {"next_id": 4, "store": {"0": "My first name is Michael.",
                                                               "1": "I am 35 years old.", "2": "I live in Paris.",
                                                               "3": "My dog is called Rex."}}
    [search, everything] = head.extra["transcript"][0]["steps"][0]["results"]
    found = json.loads(search)["result"]
    assert found[0]["text"] == "My first name is Michael." and 0 < found[0]["similarity_score"] <= 1
    assert json.loads(everything) == {"result": []}
    # the memory prompt showed the core memory as the official dump prints it (its store, ids as text)
    system = next(body for body in server.bodies if body["messages"][1]["content"] == "What is my first name?")
    assert '"0": "My first name is Michael."' in system["messages"][0]["content"]
