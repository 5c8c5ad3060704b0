"""BFCL memory (memory_kv, memory_rec_sum) played against an endpoint, the parts: the stand-in for the three helpers
of `bfcl_eval.utils` checked equal to the official functions (read from the pinned wheel), the memory prompts read
from the wheel, the data a played item carries (docs, class, its scenario's prerequisite conversations), the order
items start in (each scenario's first item first: it starts the chain), and the official classes in a real
environment worker (snapshots written where the official code writes them)."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path
from typing import Any

import pytest

from evaluators.benchmarks.bfcl.agentic import memory_ids
from tests.conftest import BfclOfficial

SCENARIOS = ("student", "customer", "finance", "healthcare", "notetaker")


@pytest.fixture
def wheel(bfcl_official: BfclOfficial, monkeypatch: pytest.MonkeyPatch) -> Path:
    from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV

    monkeypatch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
    return bfcl_official.wheel


def _official_helpers(wheel: Path) -> dict[str, Any]:
    """The official functions of bfcl_eval/utils.py the three helpers rely on, compiled from the wheel's source
    alone (the module itself is not imported: its imports create folders)."""
    from evaluators.benchmarks.bfcl.wheel import read_member

    source = read_member(wheel, "bfcl_eval/utils.py").decode()
    tree = ast.parse(source)
    wanted = {"is_format_sensitivity", "is_web_search", "is_memory", "is_first_memory_prereq_entry", "is_memory_prereq",
              "is_agentic", "is_multi_turn", "is_live", "is_non_live", "get_general_grouping",
              "extract_test_category_from_id", "extract_memory_backend_type", "get_directory_structure_by_id"}
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in wanted]
    assert {node.name for node in functions} == wanted
    namespace: dict[str, Any] = {"os": os}
    exec(compile(ast.Module(body=functions, type_ignores=[]), "bfcl_eval/utils.py", "exec"), namespace)  # noqa: S102
    return namespace


def _every_memory_id(wheel: Path) -> list[str]:
    from evaluators.benchmarks.bfcl.wheel import DATA_PREFIX, read_member

    ids = []
    for line in read_member(wheel, DATA_PREFIX + "BFCL_v4_memory.json").decode().splitlines():
        ids.append(json.loads(line)["id"])
    for scenario in SCENARIOS:
        member = DATA_PREFIX + f"memory_prereq_conversation/memory_{scenario}.json"
        ids.extend(json.loads(line)["id"] for line in read_member(wheel, member).decode().splitlines())
    return [item_id.replace("memory", category, 1) for item_id in ids
            for category in ("memory_kv", "memory_vector", "memory_rec_sum")]


def test_the_stand_in_helpers_equal_the_official_functions(wheel: Path):
    official = _official_helpers(wheel)
    ids = _every_memory_id(wheel)
    assert len(ids) == 3 * (155 + 37)
    edge = ["memory_kv_prereq_10-customer-10", "memory_kv_prereq_0-customer-0", "memory_rec_sum_prereq_36-notetaker-4",
            "live_simple_3-2-1", "simple_python_0", "multi_turn_base_7", "web_search_base_3", "format_sensitivity_0:x:y",
            "memory_live_1-a-0", "prereq-0", "memory_multi_turn_2-x-0", "x_prereq_1-0", "memory_x:memory_kv_1", "memory",
            "web_search_memory_kv_1-a-0", "memoryless_kv_1", "", "a"]
    for item_id in ids + edge:
        for name in memory_ids.OFFICIAL_NAMES:
            try:
                expected: Any = official[name](item_id)
            except Exception as error:  # noqa: BLE001 - the stand-in must raise alike
                with pytest.raises(type(error), match=str(error).replace("(", r"\(").replace(")", r"\)")):
                    getattr(memory_ids, name)(item_id)
                continue
            assert getattr(memory_ids, name)(item_id) == expected, (name, item_id)
    assert memory_ids.get_directory_structure_by_id("memory_kv_prereq_3-customer-3") == "agentic/memory/kv"


def test_the_memory_prompts_come_from_the_wheel_and_are_placed_as_the_official_loop_places_them(wheel: Path):
    from evaluators.benchmarks.bfcl.agentic.memory import memory_system_prompt, memory_texts, with_memory_prompt

    texts = memory_texts()
    assert set(texts.settings) == set(SCENARIOS)
    kv = memory_system_prompt("memory_kv_prereq_0-customer-0", "customer", "MEM", texts)
    rec_sum = memory_system_prompt("memory_rec_sum_prereq_0-customer-0", "customer", "MEM", texts)
    assert kv.startswith(texts.settings["customer"]) and "Core Memory" in kv and kv.endswith("MEM\n")
    assert rec_sum.startswith(texts.settings["customer"]) and "Core Memory" not in rec_sum and rec_sum.endswith("MEM\n")
    user = {"role": "user", "content": "hi"}
    assert with_memory_prompt([[user], [user]], "P") == [[{"role": "system", "content": "P"}, user], [user]]
    question = [[{"role": "system", "content": "FORMAT"}, user]]
    assert with_memory_prompt(question, "P")[0][0] == {"role": "system", "content": "P\n\nFORMAT"}
    assert question[0][0]["content"] == "FORMAT"  # not changed


def test_a_played_memory_item_carries_its_docs_class_and_scenario_chain(wheel: Path):
    from evaluators.benchmarks.bfcl.data import load
    from evaluators.benchmarks.bfcl.solve import expected_requests
    from evaluators.core.registry import get_benchmark
    from evaluators.engine.runner import longest_first

    samples = load(subsets=["memory_kv", "memory_rec_sum"])
    assert len(samples) == 310
    first = samples[0]
    assert first.id == "memory_kv_0-customer-0" and first.input["involved_classes"] == ["MemoryAPI_kv"]
    assert len(first.input["function"]) == 15 and first.input["chain_head"] == first.id
    assert [c["id"] for c in first.input["prereqs"]] == [f"memory_kv_prereq_{n}-customer-{n}" for n in range(10)]
    rec_sum = next(s for s in samples if s.id == "memory_rec_sum_131-notetaker-1")
    assert rec_sum.input["chain_head"] == "memory_rec_sum_130-notetaker-0" and len(rec_sum.input["function"]) == 5
    assert [c["id"] for c in rec_sum.input["prereqs"]][0] == "memory_rec_sum_prereq_32-notetaker-0"
    turns = {scenario: sum(len(c["question"]) for c in next(s for s in samples if s.input["scenario"] == scenario)
                           .input["prereqs"]) for scenario in SCENARIOS}
    assert sum(turns.values()) == 323
    # the ten chain heads (5 scenarios x 2 backends) start first, the longest chain first
    ordered = longest_first(samples, get_benchmark("bfcl"))
    heads = ordered[:10]
    assert all(s.id == s.input["chain_head"] for s in heads)
    assert expected_requests(heads[0]) == 2 + 2 * max(turns.values())
    assert expected_requests(ordered[10]) == 2


@pytest.mark.slow  # over half a second in the fast loop
def test_the_official_memory_classes_run_in_a_worker_and_flush_where_the_official_code_writes(wheel: Path,
                                                                                              tmp_path: Path):
    from evaluators.benchmarks.bfcl.agentic.memory import initial_config
    from evaluators.benchmarks.bfcl.multi_turn.env_host import EnvironmentHost
    from evaluators.core.types import Sample

    def sample(item_id: str, class_name: str) -> Sample:
        return Sample(item_id, "memory_kv", {"involved_classes": [class_name], "initial_config": initial_config(
            class_name, tmp_path, "customer", item_id)}, None)

    host = EnvironmentHost(workers=1)
    try:
        session = host.open(sample("memory_kv_prereq_0-customer-0", "MemoryAPI_kv"), "m")
        assert host.memory_context(session) == "There is no content in the core memory at this point."
        assert host.execute(session, ["core_memory_key_search(query='name')", "core_memory_add(key='first_name', "
                                      "value='Michael')", "core_memory_add(key='First Name', value='x')"]) == [
            "Error during execution: division by zero", '{"status": "Key-value pair added."}',
            '{"error": "Key must be in snake_case format and cannot contain spaces."}']
        host.flush_memory(session)
        host.close(session)
        folder = tmp_path / "agentic" / "memory" / "kv" / "memory_snapshot"
        assert json.loads((folder / "customer_final.json").read_text()) == {
            "core_memory": {"first_name": "Michael"}, "archival_memory": {}}
        assert (folder / "prereq_checkpoints" / "memory_kv_prereq_0-customer-0.json").is_file()
        item = host.open(sample("memory_kv_0-customer-0", "MemoryAPI_kv"), "m")
        assert json.loads(host.memory_context(item)) == {"first_name": "Michael"}
        with pytest.raises(Exception, match="exactly one memory class"):
            host.memory_context(host.open(Sample("multi_turn_base_0", "multi_turn_base", {
                "involved_classes": ["MathAPI"], "initial_config": {}}, None), "m"))
        rec_sum = host.open(sample("memory_rec_sum_prereq_0-notetaker-0", "MemoryAPI_rec_sum"), "m")
        assert host.execute(rec_sum, ["memory_retrieve()", "memory_append(text='a')", "memory_append(text=1)"]) == [
            '{"error": "Memory is empty."}', '{"status": "Memory appended."}', '{"status": "Memory appended."}']
    finally:
        host.shutdown()


@pytest.mark.slow
def test_a_chain_stops_when_the_last_item_waiting_for_it_is_cancelled(wheel: Path):
    import asyncio

    from evaluators.benchmarks.bfcl.agentic.memory import memory_run, solve_memory
    from evaluators.benchmarks.bfcl.data import load
    from evaluators.benchmarks.bfcl.multi_turn.env_host import EnvironmentHost
    from evaluators.engine.client import ChatClient
    from evaluators.engine.settings import ModelSettings
    from tests.scripted_server import ScriptedServer

    head, second = load(subsets=["memory_kv"], limit=2)

    async def play(server: ScriptedServer) -> tuple[int, int, bool]:
        client = ChatClient(ModelSettings(base_url=server.base_url, model="m"), use_cache=False)
        host = EnvironmentHost(workers=1)
        try:
            first = asyncio.create_task(solve_memory(head, client, host))
            other = asyncio.create_task(solve_memory(second, client, host))
            while server.requests < 3:
                await asyncio.sleep(0.02)
            first.cancel()  # another item still waits: the chain goes on
            await asyncio.sleep(0.3)
            going = server.requests
            other.cancel()  # the last one: the chain is cancelled
            await asyncio.gather(first, other, return_exceptions=True)
            await asyncio.sleep(0.3)
            stopped = server.requests
            await asyncio.sleep(0.3)
            chain = memory_run(client).chains[("memory_kv", "customer")]
            return going, server.requests - stopped, chain.cancelled()
        finally:
            host.shutdown()
            await client.close()

    with ScriptedServer(reply=lambda body: {"content": "Noted."}, latency=0.02) as server:
        going, after, cancelled = asyncio.run(play(server))
    assert going > 3 and after == 0 and cancelled
