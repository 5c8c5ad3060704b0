"""BFCL memory requests against the official handler's, byte for byte, over whole scenario chains: the same scripted
model plays the notetaker scenario of memory_kv and memory_rec_sum (its 5 prerequisite conversations, then two
items) through the official `OpenAICompletionsHandler.inference_multi_turn_prompting` (in the official venv, with
the official generator's initial settings and order) and through ours (agentic/memory.py, the official classes in
real environment workers). The script reaches the tools' error texts (key search on an empty memory, a key not in
snake case, entries too long, a duplicate key, a full core memory, a text not found, an empty memory), an unknown
tool, arguments that do not fit, and the step limit's force-quit of a prerequisite conversation (its snapshot still
flushed); the snapshot files both sides write are compared too."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.scripted_server import ScriptedServer
from tests.test_bfcl_multi_turn_requests import canonical

MODEL = "org/scripted-model-1.5"
CATEGORIES = ("memory_kv", "memory_rec_sum")
SCENARIO = "notetaker"
ITEMS = ("130-notetaker-0", "131-notetaker-1")
TOOL_RESULTS = "[{'role': 'tool'"
LONG = "y" * 301


def _official_venv() -> Any:
    from tests.bfcl_official_venv import VenvUnavailable, official_venv

    try:
        return official_venv()
    except VenvUnavailable as exc:
        pytest.skip(f"the official BFCL venv cannot be built here: {exc}")


def _kv(conversation: int | None, turn: int, step: int, content: str) -> str:
    """memory_kv: what the model says at this step (conversation: the prerequisite's place in the chain, None for
    an item)."""
    if conversation is None:
        return ["[core_memory_retrieve_all(), archival_memory_list_keys()]",
                "{'answer': 'Team meeting', 'context': 'core memory'}"][min(step, 1)]
    if conversation == 1 and turn == 0:
        return "[core_memory_list_keys()]"  # every step a call: the step limit's force-quit ends the conversation
    if conversation == 0 and turn == 0:
        steps = ["[core_memory_key_search(query='monday notes'), archival_memory_key_search(query='x', k=2)]",
                 f"[core_memory_add(key='Bad Key', value='x'), core_memory_add(key='long_note', value='{LONG}'), "
                 "core_memory_add(key='monday', value='Team meeting ran over')]",
                 "[core_memory_add(key='monday', value='again'), no_such_tool(a=1), core_memory_add(key='only_key')]",
                 "Noted."]
        return steps[min(step, 3)]
    if conversation == 2 and turn == 0:
        adds = ", ".join(f"core_memory_add(key='item_{n}', value='v{n}')" for n in range(1, 8))
        return [f"[{adds}]", "Noted."][min(step, 1)]
    if conversation >= 2:
        return ["[core_memory_replace(key='missing', value='v'), core_memory_retrieve(key='monday'), "
                "archival_memory_key_search(query='day 1 notes', k=3), archival_memory_replace(key='day_1', "
                f"value='{'z' * 2001}'), archival_memory_retrieve(key='day_2')]", "Noted."][min(step, 1)]
    return [f"[archival_memory_add(key='day_{turn}', value={content[:40]!r})]", "Noted."][min(step, 1)]


def _rec_sum(conversation: int | None, turn: int, step: int, content: str) -> str:
    if conversation is None:
        return ["[memory_retrieve()]", "{'answer': 'meeting', 'context': 'memory'}"][min(step, 1)]
    if conversation == 1 and turn == 0:
        return "[memory_retrieve()]"
    if conversation == 0 and turn == 0:
        steps = [f"[memory_retrieve(), memory_replace(old_text='zzz', new_text='y'), memory_update(text='{'x' * 10001}')]",
                 "[memory_append(text='Monday: meeting. '), memory_nope(), memory_append()]", "Noted."]
        return steps[min(step, 2)]
    if conversation >= 2:
        return ["[memory_replace(old_text='Monday', new_text='Mon'), memory_append(text=' more')]",
                "Noted."][min(step, 1)]
    return [f"[memory_append(text={content[:40]!r})]", "Noted."][min(step, 1)]


def _script(prereq_firsts: dict[str, int]) -> Any:
    """Replies by the conversation (its first user message: a prerequisite's place in the chain, else an item),
    the turn (user messages that are not tool results) and the step in the turn."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        plan = _kv if "core_memory_add" in messages[0]["content"] else _rec_sum
        users = [i for i, m in enumerate(messages) if m["role"] == "user" and not m["content"].startswith(TOOL_RESULTS)]
        step = sum(1 for m in messages[users[-1]:] if m["role"] == "assistant")
        return {"content": plan(prereq_firsts.get(messages[1]["content"]), len(users) - 1, step,
                                messages[users[-1]]["content"])}

    return reply


async def _ours(samples: list[Any], base_url: str) -> tuple[dict[str, Any], dict[str, dict[str, str]]]:
    from evaluators.benchmarks.bfcl.agentic.memory import memory_run, solve_memory
    from evaluators.benchmarks.bfcl.multi_turn.env_host import EnvironmentHost
    from evaluators.engine.client import ChatClient
    from evaluators.engine.settings import ModelSettings

    client = ChatClient(ModelSettings(base_url=base_url, model=MODEL), use_cache=False)
    host = EnvironmentHost(workers=1)
    try:
        predictions = {sample.id: await solve_memory(sample, client, host) for sample in samples}
        folder = memory_run(client).folder
        snapshots = {category: {str(path.relative_to(folder / category / SCENARIO)): path.read_text(encoding="utf-8")
                                for path in sorted((folder / category / SCENARIO).rglob("*.json"))}
                     for category in CATEGORIES}
        return predictions, snapshots
    finally:
        host.shutdown()
        await client.close()


def _kept_play_parts(ids: dict[str, list[str]]) -> list[bytes]:
    """What names a kept official play here: the items, the model, and the scripts (this file's functions) with the
    server that answers from them."""
    from tests import scripted_server

    return [json.dumps(ids).encode(), MODEL.encode(), Path(__file__).read_bytes(),
            Path(scripted_server.__file__).read_bytes()]


@pytest.mark.slow
def test_every_request_of_scripted_memory_chains_and_items_equals_the_official_handlers(
        bfcl_official: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from evaluators.benchmarks.bfcl.data import load
    from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV
    from tests.bfcl_official_venv import kept_scripted_play, run_official_memory

    venv = _official_venv()
    monkeypatch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
    ids = {category: [f"{category}_{item}" for item in ITEMS] for category in CATEGORIES}
    samples = [sample for sample in load(subsets=list(CATEGORIES)) if sample.id in ids[sample.subset]]
    assert [sample.id for sample in samples] == [*ids["memory_kv"], *ids["memory_rec_sum"]]
    firsts = {conversation["question"][0][0]["content"]: place
              for place, conversation in enumerate(samples[0].input["prereqs"])}
    with ScriptedServer(reply=_script(firsts)) as server:
        official, official_bodies = kept_scripted_play(
            venv, "memory-scripted", _kept_play_parts(ids), server,
            lambda: run_official_memory(venv, tmp_path / "official", server.base_url, MODEL, ids))
        server.raw_bodies = []
        predictions, snapshots = asyncio.run(_ours(samples, server.base_url))
        our_bodies = server.raw_bodies
    assert len(our_bodies) == len(official_bodies) > 100
    for index, (ours, theirs) in enumerate(zip(our_bodies, official_bodies)):
        mine, their = canonical(ours), canonical(theirs)
        assert mine[1] == their[1], f"request {index}: fields {mine[1]} vs the official {their[1]}"
        assert mine[0] == their[0], f"request {index}:\n ours     {mine[0][-1500:]!r}\n official {their[0][-1500:]!r}"
    results = official["results"]
    for sample in samples:
        prediction = predictions[sample.id]
        assert prediction.error is None and prediction.extra["turns"] == results[sample.id], sample.id
        prereqs = prediction.extra["memory_prereqs"]
        assert [c["id"] for c in prereqs["conversations"]] == [c["id"] for c in sample.input["prereqs"]]
        if sample.id == sample.input["chain_head"]:
            for conversation in prereqs["chain"]:
                assert conversation["turns"] == results[conversation["id"]], conversation["id"]
            forced = prereqs["chain"][1]
            assert forced["stop"] == "force_terminated" and forced["turns_played"] == 1 and forced["steps"] == 21
            assert forced["snapshot"] is not None
    # the snapshots: the same files, byte for byte, and the items started from the last one
    for category in CATEGORIES:
        assert snapshots[category] == official["snapshots"][category], category
        assert len(snapshots[category]) == 6  # five checkpoints and the scenario's final snapshot
        final = f"agentic/memory/{category.removeprefix('memory_')}/memory_snapshot/{SCENARIO}_final.json"
        head = predictions[f"{category}_{ITEMS[0]}"].extra["memory_snapshot"]
        assert head["snapshot"] == json.loads(snapshots[category][final])
        assert head["flushed_by"] == f"{category}_prereq_36-notetaker-4"
    shown = "\n".join(message["content"] for body in our_bodies for message in json.loads(body)["messages"]
                      if message["role"] == "user").replace("\\'", "'")
    for text in ("Error during execution: division by zero", "Key must be in snake_case format",
                 "Entry is too long. Please shorten the entry to less than 300 characters.",
                 "less than 2000 characters", "Key name must be unique.", "Core memory is full.",
                 "name 'no_such_tool' is not defined", "missing 1 required positional argument: 'value'",
                 "name 'memory_nope' is not defined", "Memory is empty.", "Text 'zzz' not found in memory.",
                 "Entry will be too long after updating.", "Key not found.", '"ranked_results": [['):
        assert text in shown, text
    systems = [json.loads(body)["messages"][0]["content"] for body in our_bodies]
    assert "There is no content in the core memory at this point." in systems[0]
    assert any("There is no content in the memory at this point." in system for system in systems)


def _vector(conversation: int | None, turn: int, step: int, content: str) -> str:
    """memory_vector: what the model says at this step (as _kv)."""
    if conversation is None:
        return [f"[core_memory_retrieve(query={content!r}, top_k=3), archival_memory_retrieve(query={content!r})]",
                "{'answer': 'Team meeting', 'context': 'core memory'}"][min(step, 1)]
    if conversation == 1 and turn == 0:
        return "[core_memory_retrieve(query='team', top_k=2)]"  # every step a call: the force-quit
    if conversation == 0 and turn == 0:
        steps = ["[core_memory_retrieve(query='monday'), archival_memory_retrieve_all(), core_memory_remove(vec_id=3), "
                 "core_memory_update(vec_id=9, new_text='x')]",
                 f"[core_memory_add(text='{LONG}'), core_memory_add(text='Team meeting ran over'), no_such_tool(a=1), "
                 "core_memory_add()]",
                 "Noted."]
        return steps[min(step, 2)]
    if conversation == 2 and turn == 0:
        adds = ", ".join(f"core_memory_add(text='note {n}')" for n in range(1, 8))
        return [f"[{adds}]", "Noted."][min(step, 1)]
    if conversation >= 2:
        return ["[archival_memory_retrieve(query='deadline', top_k=3), core_memory_update(vec_id=0, "
                "new_text='Team meeting moved'), core_memory_retrieve_all()]", "Noted."][min(step, 1)]
    return [f"[archival_memory_add(text={content[:60]!r})]", "Noted."][min(step, 1)]


@pytest.mark.slow
def test_every_request_of_a_scripted_memory_vector_chain_equals_the_official_handlers_on_the_same_builds(
        bfcl_official: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """memory_vector over the notetaker chain and two items: the official loop in a venv over this interpreter's own
    torch, sentence-transformers and faiss (their floats then equal ours), the same offline weights."""
    from evaluators.benchmarks.bfcl.agentic.memory import memory_run, solve_memory
    from evaluators.benchmarks.bfcl.agentic.vector_extra import THREAD_SETTINGS, hub_cache
    from evaluators.benchmarks.bfcl.data import load
    from evaluators.benchmarks.bfcl.multi_turn.env_host import VECTOR_CALL_SECONDS, VECTOR_KIND, EnvironmentHost
    from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV
    from evaluators.engine.client import ChatClient
    from evaluators.engine.settings import ModelSettings
    from tests.bfcl_official_venv import VenvUnavailable, kept_scripted_play, official_vector_venv, run_official_memory

    try:
        venv = official_vector_venv()
    except VenvUnavailable as exc:
        pytest.skip(f"the official vector venv cannot be built here: {exc}")
    monkeypatch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
    category = "memory_vector"
    ids = {category: [f"{category}_{item}" for item in ITEMS]}
    samples = [sample for sample in load(subsets=[category]) if sample.id in ids[category]]
    firsts = {conversation["question"][0][0]["content"]: place
              for place, conversation in enumerate(samples[0].input["prereqs"])}

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        users = [i for i, m in enumerate(messages) if m["role"] == "user" and not m["content"].startswith(TOOL_RESULTS)]
        step = sum(1 for m in messages[users[-1]:] if m["role"] == "assistant")
        return {"content": _vector(firsts.get(messages[1]["content"]), len(users) - 1, step,
                                   messages[users[-1]]["content"])}

    async def ours(base_url: str) -> tuple[dict[str, Any], dict[str, str]]:
        client = ChatClient(ModelSettings(base_url=base_url, model=MODEL), use_cache=False)
        host = EnvironmentHost(workers=1, memory_mb=0, call_seconds=VECTOR_CALL_SECONDS, kind=VECTOR_KIND)
        try:
            predictions = {sample.id: await solve_memory(sample, client, host) for sample in samples}
            folder = memory_run(client).folder / category / SCENARIO
            return predictions, {str(path.relative_to(folder)): path.read_text(encoding="utf-8")
                                 for path in sorted(folder.rglob("*.json"))}
        finally:
            host.shutdown()
            await client.close()

    env = {**THREAD_SETTINGS, "HF_HUB_CACHE": str(hub_cache(tmp_path / "hf")), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
    with ScriptedServer(reply=reply) as server:
        official, official_bodies = kept_scripted_play(
            venv, "memory-vector-scripted", _kept_play_parts(ids), server,
            lambda: run_official_memory(venv, tmp_path / "official", server.base_url, MODEL, ids, env=env))
        server.raw_bodies = []
        predictions, snapshots = asyncio.run(ours(server.base_url))
        our_bodies = server.raw_bodies
    assert len(our_bodies) == len(official_bodies) > 50
    for index, (mine_raw, theirs_raw) in enumerate(zip(our_bodies, official_bodies)):
        mine, their = canonical(mine_raw), canonical(theirs_raw)
        assert mine[1] == their[1], f"request {index}: fields {mine[1]} vs the official {their[1]}"
        assert mine[0] == their[0], f"request {index}:\n ours     {mine[0][-1500:]!r}\n official {their[0][-1500:]!r}"
    for sample in samples:
        assert predictions[sample.id].extra["turns"] == official["results"][sample.id], sample.id
    assert snapshots == official["snapshots"][category] and len(snapshots) == 6
    shown = "\n".join(message["content"] for body in our_bodies for message in json.loads(body)["messages"]
                      if message["role"] == "user").replace("\\'", "'")
    for text in ('{"result": []}', "ID 3 not present in store.", "Entry length exceeds maximum length of 300",
                 "Memory size exceeds maximum size of 7 entries.", "name 'no_such_tool' is not defined",
                 "missing 1 required positional argument: 'text'", '"similarity_score": '):
        assert text in shown, text
