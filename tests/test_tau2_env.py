"""The τ²-bench environment host (env_host.py), its worker (env_worker.py) and the official-code loader
(official_code.py).

The core tests use a small stand-in tree (a few modules written here, their own blob-id table) and pure helpers.
The worker tests run the official domain environments from the pinned files: they need the reference archive
(../shared/reference, as test_tau2_data.py) and the inspect-evals wheel (for airline's db.json and telecom's
tasks.json), filled once into a cache folder under $TOOLBOARD_TEST_CACHE; they skip with the reason when either is
absent. No test imports the official code in this process.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evaluators.benchmarks.tau2 import env_worker, official_code, source
from evaluators.benchmarks.tau2.env_host import (
    ENVIRONMENT_LIMIT,
    EnvironmentHost,
    EnvironmentLimit,
    EnvironmentRequestError,
    Session,
    gold_key,
)
from tests.tau2_fixtures import full_source_root

PROJECT = Path(__file__).resolve().parents[1]
DOMAINS = ("airline", "retail", "telecom")
GREETING = {"role": "assistant", "content": "Hi! How can I help you today?", "tool_calls": None, "turn_idx": 0}


def official_modules_loaded() -> list[str]:
    return [name for name in sys.modules if name == "tau2" or name.startswith("tau2.")]


# ---- core: the tables and the pure helpers ------------------------------------------------------------------

def test_the_code_table_pins_the_environment_closure_and_the_cache_takes_it():
    assert len(source.CODE_BLOB_IDS) == 28 and all(len(value) == 40 for value in source.CODE_BLOB_IDS.values())
    assert all(relative.startswith("src/tau2/") for relative in source.CODE_BLOB_IDS)
    assert source.PINNED_FILES == {**source.BLOB_IDS, **source.PROMPT_BLOB_IDS, **source.NOTE_BLOB_IDS,
                                   **source.CODE_BLOB_IDS}
    modules = official_code.module_files()
    assert {f"tau2.domains.{domain}.environment" for domain in DOMAINS} <= set(modules)
    assert modules["tau2.utils"] == "src/tau2/utils/__init__.py"  # the one package whose __init__ runs
    assert official_code.stand_in_packages(modules) == {
        "tau2", "tau2.data_model", "tau2.domains", "tau2.domains.airline", "tau2.domains.retail",
        "tau2.domains.telecom", "tau2.environment"}


def test_db_differences_name_the_paths_that_differ():
    gold = {"users": {"a": {"name": "Ann", "tags": [1, 2]}, "b": {"x": 1}}, "n": 1}
    predicted = {"users": {"a": {"name": "Bo", "tags": [1, 3]}, "c": {"x": 1}}, "n": 1}
    assert env_worker.db_differences(gold, predicted) == [
        {"path": "/users/a/name", "gold": "Ann", "predicted": "Bo"},
        {"path": "/users/a/tags/1", "gold": 2, "predicted": 3},
        {"path": "/users/b", "gold": {"x": 1}, "predicted": None},
        {"path": "/users/c", "gold": None, "predicted": {"x": 1}}]
    many = env_worker.db_differences({"k": list(range(100))}, {"k": [-1] * 100})
    assert len(many) == env_worker.DIFF_ENTRIES
    long = env_worker.db_differences({"k": "x" * 1000}, {"k": "y"})
    assert long[0]["gold"].endswith("…") and len(long[0]["gold"]) == env_worker.DIFF_VALUE_CHARS + 1


def test_the_time_limit_units_grow_with_the_work():
    task = {"initial_state": {"initialization_actions": [{}, {}]},
            "evaluation_criteria": {"actions": [{}, {}, {}], "env_assertions": [{}]}}
    assert env_worker.open_units({}) == 4 and env_worker.open_units(task) == 6
    messages = [{"role": "assistant", "tool_calls": [{}, {}]}, {"role": "tool"}]
    assert env_worker.evaluate_units(task, messages) == 2 * 6 + 2 + 3 + 1


STAND_IN_FILES = {
    "src/tau2/utils/__init__.py": b"from .helpers import double\n",
    "src/tau2/utils/helpers.py": b"def double(x: int) -> int:\n    return 2 * x\n",
    "src/tau2/domains/mock/environment.py": (b"from tau2.utils import double\n"
                                             b"def f(x: 'int', y: int = 1): pass\n"
                                             b"ANNOTATION = f.__annotations__['y']\n"
                                             b"VALUE = double(21)\n"),
}
PROBE = """
import importlib, json, sys
from pathlib import Path
from evaluators.benchmarks.tau2 import official_code, source
ids = json.loads(sys.argv[2])
official_code.install_official_finder(source.Source(Path(sys.argv[1]), ids))
module = importlib.import_module("tau2.domains.mock.environment")
outcome = {"value": module.VALUE, "annotation_is_type": module.ANNOTATION is int,
           "parent_empty": [k for k, v in vars(sys.modules["tau2"]).items()
                            if not k.startswith("__") and not isinstance(v, type(sys))] == []}
for name in ("tau2.runner", "tau2.utils.helpers2"):
    try:
        importlib.import_module(name)
        outcome[name] = "imported"
    except ImportError as refused:
        outcome[name] = str(refused)
print(json.dumps(outcome))
"""


def run_probe(root: Path, ids: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The finder in a child process (never in pytest's)."""
    return subprocess.run([sys.executable, "-c", PROBE, str(root), json.dumps(ids)], capture_output=True, text=True,
                          cwd=PROJECT, env=dict(os.environ, PYTHONPATH=str(PROJECT)), timeout=120)


def test_the_finder_serves_checked_files_with_empty_parents_and_refuses_the_rest(tmp_path: Path):
    for relative, content in STAND_IN_FILES.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_bytes(content)
    ids = {relative: source.blob_id(content) for relative, content in STAND_IN_FILES.items()}
    done = run_probe(tmp_path, ids)
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    # the official __init__ of a pinned package runs; the others are empty; annotations stay objects (the
    # loader's own `from __future__ import annotations` is not inherited by the compiled official code)
    assert outcome["value"] == 42 and outcome["annotation_is_type"] and outcome["parent_empty"]
    assert "tau2.runner is not among the pinned official" in outcome["tau2.runner"]
    assert "tau2.utils.helpers2 is not among the pinned official" in outcome["tau2.utils.helpers2"]

    (tmp_path / "src/tau2/utils/helpers.py").write_bytes(b"def double(x):\n    return 3 * x\n")
    altered = run_probe(tmp_path, ids)
    assert altered.returncode != 0 and "src/tau2/utils/helpers.py has git blob id" in altered.stderr


# ---- the official environments in worker processes (slow: the reference archive and the wheel) ----------------

@pytest.fixture(scope="module")
def source_root() -> Path:
    """A folder holding every pinned file (data and code), filled once from the reference archive and the wheel."""
    return full_source_root()


@pytest.fixture(scope="module")
def host() -> Iterator[EnvironmentHost]:
    environments = EnvironmentHost(workers=2)
    yield environments
    environments.shutdown()


@pytest.fixture(scope="module")
def tasks(source_root: Path) -> dict[str, list[dict[str, Any]]]:
    """Each domain's base tasks, as records (dicts) in task-file order."""
    loaded = {}
    for domain in DOMAINS:
        folder = source_root / source.DOMAINS_PREFIX / domain
        base = set(json.loads((folder / "split_tasks.json").read_text())["base"])
        loaded[domain] = [task for task in json.loads((folder / "tasks.json").read_text()) if task["id"] in base]
    return loaded


def call(host: EnvironmentHost, session: Session, name: str, requestor: str = "assistant", **arguments: Any
         ) -> tuple[str, bool]:
    result = host.call(session, f"call_{name}", name, requestor, arguments)
    return result.content, result.error


@pytest.mark.slow
def test_tool_schemas_are_the_official_ones_in_official_order(host: EnvironmentHost, source_root: Path,
                                                              tasks: dict[str, list[dict[str, Any]]]):
    counts = {}
    for domain in DOMAINS:
        session = host.open(domain, tasks[domain][0], source_root)
        counts[domain] = (len(session.agent_tools), None if session.user_tools is None else len(session.user_tools))
        if domain == "airline":
            airline = session.agent_tools
        host.close(session)
    assert counts == {"airline": (14, None), "retail": (16, None), "telecom": (13, 30)}
    details = next(tool for tool in airline if tool["function"]["name"] == "get_user_details")
    assert details == {"type": "function", "function": {
        "name": "get_user_details", "description": "Get the details of a user, including their reservations.",
        "parameters": {"properties": {"user_id": {"description": "The user ID, such as 'sara_doe_496'.",
                                                  "title": "User Id", "type": "string"}},
                       "required": ["user_id"], "title": "parameters", "type": "object"}}}
    # the official code ran in the worker only
    assert official_modules_loaded() == []


@pytest.mark.slow
def test_a_read_and_a_write_on_each_domain(host: EnvironmentHost, source_root: Path,
                                           tasks: dict[str, list[dict[str, Any]]]):
    airline = host.open("airline", tasks["airline"][0], source_root)
    content, error = call(host, airline, "get_user_details", user_id="mia_li_3668")
    user = json.loads(content)
    assert not error and user["user_id"] == "mia_li_3668" and user["reservations"]
    reservation = user["reservations"][0]
    content, error = call(host, airline, "cancel_reservation", reservation_id=reservation)
    assert not error and json.loads(content)["status"] == "cancelled"
    assert host.state(airline)["db"]["reservations"][reservation]["status"] == "cancelled"
    # a fresh session starts from the pinned DB again (a deep copy per session)
    other = host.open("airline", tasks["airline"][0], source_root)
    assert host.state(other)["db"]["reservations"][reservation].get("status") != "cancelled"

    retail = host.open("retail", tasks["retail"][0], source_root)
    user_id = next(iter(host.state(retail)["db"]["users"]))
    content, error = call(host, retail, "get_user_details", user_id=user_id)
    assert not error and json.loads(content)["user_id"] == user_id
    address = {"address1": "1 Main St", "address2": "", "city": "Springfield", "state": "IL", "country": "USA",
               "zip": "62701"}
    content, error = call(host, retail, "modify_user_address", user_id=user_id, **address)
    assert not error and json.loads(content)["address"] == address
    assert host.state(retail)["db"]["users"][user_id]["address"] == address

    telecom = host.open("telecom", tasks["telecom"][0], source_root)
    content, error = call(host, telecom, "get_customer_by_phone", phone_number="555-123-2002")
    customer = json.loads(content)
    assert not error and customer["customer_id"]
    line_id = next(line for line in host.state(telecom)["db"]["lines"] if line["phone_number"] == "555-123-2002")
    content, error = call(host, telecom, "suspend_line", customer_id=customer["customer_id"],
                          line_id=line_id["line_id"], reason="test")
    assert not error
    line = next(line for line in host.state(telecom)["db"]["lines"] if line["line_id"] == line_id["line_id"])
    assert line["status"] == "Suspended"
    for session in (airline, other, retail, telecom):
        host.close(session)


@pytest.mark.slow
def test_unknown_tools_and_bad_arguments_give_the_official_error_results(host: EnvironmentHost, source_root: Path,
                                                                        tasks: dict[str, list[dict[str, Any]]]):
    session = host.open("airline", tasks["airline"][0], source_root)
    assert call(host, session, "book_a_rocket", user_id="x") == ("Error: Tool 'book_a_rocket' not found.", True)
    assert call(host, session, "get_user_details") == (
        "Error: AirlineTools.get_user_details() missing 1 required positional argument: 'user_id'", True)
    assert call(host, session, "get_user_details", user_id="x", extra=1) == (
        "Error: AirlineTools.get_user_details() got an unexpected keyword argument 'extra'", True)
    assert call(host, session, "get_user_details", "user", user_id="x") == ("Error: User tools not available", True)
    assert call(host, session, "get_user_details", user_id="nobody") == ("Error: User nobody not found", True)
    # a plain string result is returned as is; a bare number goes through the official serialisation
    assert call(host, session, "calculate", expression="2 + 2") == ("4.0", False)
    host.close(session)


@pytest.mark.slow
def test_telecom_user_tools_and_the_line_state_synced_to_the_phone(host: EnvironmentHost, source_root: Path,
                                                                   tasks: dict[str, list[dict[str, Any]]]):
    # abroad, the line's roaming disabled by the task's initialization actions
    task = next(task for task in tasks["telecom"] if "user_abroad_roaming_disabled_on" in task["id"])
    session = host.open("telecom", task, source_root)
    assert session.user_tools is not None and len(session.user_tools) == 30
    status, error = call(host, session, "check_status_bar", "user")
    assert not error and status.startswith("Status Bar: ")
    # an agent tool called by the user, a user tool called by the agent: not found, as official
    assert call(host, session, "enable_roaming", "user", customer_id="x", line_id="y")[1]
    assert call(host, session, "check_status_bar")[0] == "Error: Tool 'check_status_bar' not found."

    surroundings = host.state(session)["user_db"]["surroundings"]
    assert surroundings["roaming_allowed"] is False
    customer = json.loads(call(host, session, "get_customer_by_phone", phone_number=surroundings["phone_number"])[0])
    line = next(line for line in host.state(session)["db"]["lines"]
                if line["phone_number"] == surroundings["phone_number"])
    content, error = call(host, session, "enable_roaming", customer_id=customer["customer_id"],
                          line_id=line["line_id"])
    assert not error
    host.step_end(session)
    assert host.state(session)["user_db"]["surroundings"]["roaming_allowed"] is True  # sync_tools ran
    host.close(session)
    # telecom's environment syncs after each step; airline's and retail's `sync_tools` is the base class's no-op,
    # so the host sends nothing for it
    assert session.syncs is True
    for domain in ("airline", "retail"):
        quiet = host.open(domain, tasks[domain][0], source_root)
        assert quiet.syncs is False
        host.step_end(quiet)
        host.close(quiet)


def gold_trajectory(host: EnvironmentHost, domain: str, task: dict[str, Any], source_root: Path,
                    leave_out: int | None = None) -> list[dict[str, Any]]:
    """A trajectory that makes the task's gold actions through `call` (one leave_out index skipped), each as a
    message of its requestor followed by the live tool result."""
    session = host.open(domain, task, source_root)
    messages: list[dict[str, Any]] = [GREETING, {"role": "user", "content": "Hello.", "tool_calls": None,
                                                  "turn_idx": 1}]
    for index, action in enumerate(task["evaluation_criteria"]["actions"] or []):
        if index == leave_out:
            continue
        requestor = action.get("requestor") or "assistant"
        call_id = f"call_{index}"
        result = host.call(session, call_id, action["name"], requestor, action["arguments"])
        host.step_end(session)
        messages.append({"role": requestor, "content": None, "turn_idx": len(messages),
                         "tool_calls": [{"id": call_id, "name": action["name"], "arguments": action["arguments"],
                                         "requestor": requestor}]})
        messages.append({"role": "tool", "id": call_id, "content": result.content, "requestor": requestor,
                         "error": result.error, "turn_idx": len(messages)})
    host.close(session)
    return messages + [{"role": "user", "content": "###STOP###", "tool_calls": None, "turn_idx": len(messages)}]


def first_task_with_a_write(domain_tasks: list[dict[str, Any]], types: dict[str, str]) -> tuple[dict[str, Any], int]:
    """The first task whose gold actions hold a write, and the index of its last write."""
    for task in domain_tasks:
        writes = [index for index, action in enumerate(task["evaluation_criteria"]["actions"] or [])
                  if types[action["name"]] == "write"]
        if writes:
            return task, writes[-1]
    raise AssertionError("no task with a gold write")


@pytest.mark.slow
@pytest.mark.parametrize("domain", DOMAINS)
def test_gold_actions_match_the_gold_db_and_a_dropped_write_does_not(host: EnvironmentHost, source_root: Path,
                                                                     tasks: dict[str, list[dict[str, Any]]],
                                                                     domain: str):
    types = host.evaluate_env(domain, tasks[domain][0], [GREETING], source_root=source_root).tool_types
    assert {"read", "write"} <= set(types.values())
    task, last_write = first_task_with_a_write(tasks[domain], types)
    gold = host.evaluate_env(domain, task, gold_trajectory(host, domain, task, source_root), source_root=source_root)
    assert gold.db_match is True and gold.replay_error is None and gold.db_diff == {}
    assert gold.replay_problems == []
    assert all(check["met"] for check in gold.env_assertions)

    dropped = host.evaluate_env(domain, task, gold_trajectory(host, domain, task, source_root, last_write),
                                source_root=source_root)
    assert dropped.db_match is False and dropped.db_diff
    assert all(entry.keys() == {"path", "gold", "predicted"} for entries in dropped.db_diff.values()
               for entry in entries)


@pytest.mark.slow
def test_a_tasks_gold_end_is_passed_to_the_workers_instead_of_rebuilt(source_root: Path,
                                                                      tasks: dict[str, list[dict[str, Any]]]):
    """The host hands each worker the gold end another worker computed for the task: shown with a planted one,
    which the worker uses as given (a gold trajectory then does not match it)."""
    task = tasks["retail"][0]
    fresh = EnvironmentHost(workers=1)
    try:
        messages = gold_trajectory(fresh, "retail", task, source_root)
        key = str(source_root.resolve()) + gold_key("retail", task, False)
        fresh._gold_ends[key] = {"db_hash": "planted", "user_db_hash": None, "problems": ["planted note"]}
        planted = fresh.evaluate_env("retail", task, messages, source_root=source_root)
        assert planted.db_match is False and planted.replay_problems == ["planted note"]
        assert fresh._gold_ends[key]["db_hash"] == "planted"
    finally:
        fresh.shutdown()
    real = EnvironmentHost(workers=1)
    try:
        check = real.evaluate_env("retail", task, messages, source_root=source_root)
        assert check.db_match is True and check.replay_problems == []
        [kept] = real._gold_ends.values()
        assert kept["db_hash"] != "planted" and len(kept["db_hash"]) == 64
    finally:
        real.shutdown()


@pytest.mark.slow
def test_telecom_env_assertions_and_a_task_with_no_env_criteria(host: EnvironmentHost, source_root: Path,
                                                                 tasks: dict[str, list[dict[str, Any]]]):
    task = tasks["telecom"][0]
    assert task["evaluation_criteria"]["env_assertions"]
    met = host.evaluate_env("telecom", task, gold_trajectory(host, "telecom", task, source_root),
                            source_root=source_root)
    assert met.env_assertions and all(check["met"] and check["reward"] == 1.0 for check in met.env_assertions)
    assert met.env_assertions[0]["env_assertion"]["func_name"] == task["evaluation_criteria"]["env_assertions"][0][
        "func_name"]
    unmet = host.evaluate_env("telecom", task, [GREETING], source_root=source_root)
    assert any(not check["met"] and check["reward"] == 0.0 for check in unmet.env_assertions)
    assert unmet.tool_types["toggle_airplane_mode"] == "write"

    no_criteria = dict(tasks["airline"][0], evaluation_criteria={"actions": None, "env_assertions": None,
                                                                 "reward_basis": ["DB"]})
    check = host.evaluate_env("airline", no_criteria, [GREETING], source_root=source_root)
    assert check.db_match is None and check.env_assertions == []


@pytest.mark.slow
def test_a_replayed_result_that_differs_is_a_problem_and_strict_replay_fails(host: EnvironmentHost,
                                                                            source_root: Path,
                                                                            tasks: dict[str, list[dict[str, Any]]]):
    task = tasks["telecom"][0]
    messages = gold_trajectory(host, "telecom", task, source_root)
    altered = [dict(message, content="something else") if message["role"] == "tool" else message
               for message in messages]
    lenient = host.evaluate_env("telecom", task, altered, source_root=source_root)
    assert lenient.db_match is True and lenient.replay_error is None
    assert any("returned different content" in problem for problem in lenient.replay_problems)
    strict = host.evaluate_env("telecom", task, altered, True, source_root=source_root)
    assert strict.db_match is False and strict.replay_error and strict.replay_error.startswith("ValueError")


@pytest.mark.slow
def test_async_calls_and_bad_requests(host: EnvironmentHost, source_root: Path,
                                      tasks: dict[str, list[dict[str, Any]]]):
    import asyncio

    async def scenario() -> tuple[str, dict[str, Any]]:
        session = await host.open_async("retail", tasks["retail"][0], source_root)
        result = await host.call_async(session, "c1", "calculate", "assistant", {"expression": "1 + 2"})
        await host.step_end_async(session)
        state = await host.state_async(session)
        await host.close_async(session)
        return result.content, state

    content, state = asyncio.run(scenario())
    assert content == "3.0" and set(state) == {"db", "user_db"} and state["user_db"] is None

    session = host.open("airline", tasks["airline"][0], source_root)
    with pytest.raises(EnvironmentRequestError, match="no open session 'nowhere' in this worker"):
        host.call(dataclasses.replace(session, id="nowhere"), "c", "calculate", "assistant", {"expression": "1"})
    with pytest.raises(EnvironmentRequestError, match="ValidationError: 2 validation errors for ToolCall"):
        host.call(session, "c", "calculate", "robot", {"expression": "1"})
    host.close(session)
    with pytest.raises(EnvironmentRequestError, match="was closed"):
        host.call(session, "c", "calculate", "assistant", {"expression": "1"})
    with pytest.raises(EnvironmentRequestError, match="unknown domain 'banking'"):
        host.open("banking", tasks["airline"][0], source_root)
    with pytest.raises(EnvironmentRequestError, match="ValidationError"):
        host.open("airline", {"id": "x", "user_scenario": 5}, source_root)
    with pytest.raises(EnvironmentRequestError, match="role must be assistant, user or tool"):
        host.evaluate_env("airline", tasks["airline"][1], [{"role": "system", "content": "x"}],
                          source_root=source_root)


@pytest.mark.slow
def test_a_task_message_history_is_replayed_when_a_session_opens(host: EnvironmentHost, source_root: Path,
                                                                 tasks: dict[str, list[dict[str, Any]]]):
    probe = host.open("airline", tasks["airline"][0], source_root)
    reservation = json.loads(call(host, probe, "get_user_details", user_id="mia_li_3668")[0])["reservations"][0]
    content, error = call(host, probe, "cancel_reservation", reservation_id=reservation)
    host.close(probe)
    history = [
        {"role": "user", "content": "Cancel it.", "turn_idx": 0},
        {"role": "assistant", "content": None, "turn_idx": 1,
         "tool_calls": [{"id": "h1", "name": "cancel_reservation", "arguments": {"reservation_id": reservation},
                         "requestor": "assistant"}]},
        {"role": "tool", "id": "h1", "content": content, "requestor": "assistant", "error": error, "turn_idx": 2}]
    task = dict(tasks["airline"][0], initial_state={"initialization_data": None, "initialization_actions": None,
                                                    "message_history": history})
    session = host.open("airline", task, source_root)
    assert host.state(session)["db"]["reservations"][reservation]["status"] == "cancelled"
    host.close(session)
    # the orchestrator's replay is strict: a recorded result the tools do not give again is refused
    altered = dict(task, initial_state=dict(task["initial_state"], message_history=[
        *history[:2], dict(history[2], content="{}")]))
    with pytest.raises(EnvironmentRequestError, match="ValueError"):
        host.open("airline", altered, source_root)


@pytest.mark.slow
def test_sessions_on_several_workers_run_concurrently_and_the_memory_limit_is_set(
        host: EnvironmentHost, source_root: Path, tasks: dict[str, list[dict[str, Any]]]):
    import asyncio

    async def one(domain: str, expression: str) -> tuple[Session, str]:
        session = await host.open_async(domain, tasks[domain][0], source_root)
        result = await host.call_async(session, "c", "calculate", "assistant", {"expression": expression})
        return session, result.content

    async def many() -> list[tuple[Session, str]]:
        # airline and retail have a calculate tool (telecom has none)
        return await asyncio.gather(*(one(domain, f"{index} + 1")
                                      for index, domain in enumerate(("airline", "retail") * 3)))

    outcomes = asyncio.run(many())
    assert [content for _, content in outcomes] == [f"{index + 1}.0" for index in range(6)]
    workers = {id(session.worker): session.worker for session, _ in outcomes}
    assert len(workers) == 2  # both workers took sessions
    for session, _ in outcomes:
        host.close(session)
    limits = Path(f"/proc/{next(iter(workers.values())).process.pid}/limits")
    if limits.is_file():
        line = next(line for line in limits.read_text().splitlines() if line.startswith("Max address space"))
        assert line.split()[3] == str(host.memory_mb * 1024 * 1024)


@pytest.mark.slow
def test_open_sessions_are_bounded_per_worker_and_a_failed_open_gives_its_place_back(
        source_root: Path, tasks: dict[str, list[dict[str, Any]]]):
    import asyncio

    bounded = EnvironmentHost(workers=1, sessions_per_worker=2)
    open_now: list[int] = [0]
    most: list[int] = [0]

    async def conversation(index: int) -> str:
        session = await bounded.open_async("retail", tasks["retail"][0], source_root)
        open_now[0] += 1
        most[0] = max(most[0], open_now[0])
        try:
            result = await bounded.call_async(session, "c", "calculate", "assistant", {"expression": f"{index} + 1"})
            await asyncio.sleep(0)  # the others are waiting for a place meanwhile
            return result.content
        finally:
            open_now[0] -= 1
            await bounded.close_async(session)

    async def scenario() -> list[str]:
        for _ in range(3):  # refused opens hold no place afterwards
            with pytest.raises(EnvironmentRequestError, match="unknown domain"):
                await bounded.open_async("banking", tasks["retail"][0], source_root)
        return list(await asyncio.gather(*(conversation(index) for index in range(5))))

    try:
        assert asyncio.run(scenario()) == [f"{index + 1}.0" for index in range(5)]
        assert most[0] == 2  # never more than workers x sessions_per_worker open at once; every one ran
    finally:
        bounded.shutdown()


@pytest.mark.slow
def test_a_call_past_the_time_limit_ends_the_workers_sessions(source_root: Path,
                                                              tasks: dict[str, list[dict[str, Any]]]):
    limited = EnvironmentHost(workers=1, call_seconds=2.0)
    try:
        session = limited.open("airline", tasks["airline"][0], source_root)
        bystander = limited.open("airline", tasks["airline"][0], source_root)
        # a huge integer power inside the official calculate tool: SIGALRM ends the worker inside C code
        with pytest.raises(EnvironmentLimit):
            limited.call(session, "c", "calculate", "assistant", {"expression": "9 ** 9 ** 9"})
        assert session.ended == ENVIRONMENT_LIMIT
        with pytest.raises(EnvironmentLimit):
            limited.call(bystander, "c", "calculate", "assistant", {"expression": "1 + 1"})
        assert bystander.ended == ENVIRONMENT_LIMIT
        limited.close(bystander)  # closing an ended session is a no-op
        fresh = limited.open("airline", tasks["airline"][0], source_root)  # a new worker
        assert limited.call(fresh, "c", "calculate", "assistant", {"expression": "1 + 1"}).content == "2.0"
    finally:
        limited.shutdown()


@pytest.mark.slow
def test_a_data_folder_without_the_code_runs_its_environments_from_the_cache(
        source_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    data_only = tmp_path / "data-only"
    shutil.copytree(source_root / "data", data_only / "data")
    monkeypatch.setattr(source, "cache_folder", lambda: source_root)
    assert source.environment_root(source.Source(data_only)) == source_root
    assert source.environment_root(source.Source(source_root)) == source_root


@pytest.mark.slow
def test_a_source_without_the_official_code_is_refused_when_the_worker_starts(tmp_path: Path):
    (tmp_path / source.DOMAINS_PREFIX).mkdir(parents=True)
    empty = EnvironmentHost(workers=1)
    try:
        with pytest.raises(EnvironmentRequestError, match="did not start") as caught:
            empty.open("airline", {"id": "0"}, tmp_path)
        assert "src/tau2/" in str(caught.value) and "file not found" in str(caught.value)
    finally:
        empty.shutdown()


DOTENV_PROBE = """
import os, sys
from pathlib import Path
from evaluators.benchmarks.tau2 import env_worker
root = Path(sys.argv[1])
if sys.argv[2] == "isolated":
    env_worker._isolate_from_dotenv(root)
else:
    os.environ["TAU2_DATA_DIR"] = str(root / "data")
env_worker.Worker(root, 60.0)
print(os.environ.get("TOOLBOARD_TAU2_DOTENV_PROBE"))
"""


@pytest.mark.slow
def test_an_operators_dotenv_is_never_read_by_the_official_code(source_root: Path, tmp_path: Path):
    """python-dotenv looks upwards from the official file's folder: a `.env` above the source would be read
    without the worker's isolation (the control case shows the probe sees it)."""
    copy = shutil.copytree(source_root, tmp_path / "source")
    (copy / ".env").write_text("TOOLBOARD_TAU2_DOTENV_PROBE=read\n")
    script = tmp_path / "probe.py"  # a file, so `__main__` has a `__file__` as in `python -m`
    script.write_text(DOTENV_PROBE)
    env = dict(os.environ, PYTHONPATH=str(PROJECT))
    env.pop("TOOLBOARD_TAU2_DOTENV_PROBE", None)
    outcomes = {mode: subprocess.run([sys.executable, str(script), str(copy), mode], capture_output=True, text=True,
                                     env=env, cwd=tmp_path, timeout=300).stdout.strip()
                for mode in ("isolated", "control")}
    assert outcomes == {"isolated": "None", "control": "read"}
