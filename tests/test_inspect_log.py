"""`python -m evaluators export RUN_ID --inspect-log FILE`: a finished run written as an Inspect AI eval log, read
back with inspect-ai's own reader. A real run against the scripted server in a real SQLite store (TOOLBOARD_HOME),
the CLI in a subprocess. The refusal without the extra (requirements-inspect.txt) runs everywhere: the subprocess
blocks `inspect_ai` in sys.modules, so its import fails as it does where the package is not installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from evaluators.engine.run_document import export_document
from evaluators.engine.store import Store
from tests.engine_fixtures import correct_reply, run_to_end, scripted_run_config, write_dataset
from tests.scripted_server import ScriptedServer

pytestmark = pytest.mark.slow  # CLI subprocesses

ROOT = Path(__file__).resolve().parent.parent
ITEMS = 4
WRONG_ITEM = "normal_atom_bool_3"  # answered with the wrong time: wrong in both modes
SECRET = "sk-test-0123456789abcdefSECRET"  # the tested model's key: never written
INSTALL = "pip install -r requirements-inspect.txt"
# `python -m evaluators`, with inspect_ai made unimportable (an entry of None in sys.modules: ImportError).
WITHOUT_INSPECT = ("import runpy, sys; sys.modules['inspect_ai'] = None; sys.argv[0] = 'evaluators';"
                   " runpy.run_module('evaluators', run_name='__main__', alter_sys=True)")


def _reply(body: dict) -> dict:
    reply = correct_reply(body)
    if "number 3 at" in json.dumps(body["messages"]):
        call = reply["tool_calls"][0]
        return {"tool_calls": [{**call, "function": {**call["function"], "arguments": json.dumps({"time": "23:59"})}}]}
    return reply


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A TOOLBOARD_HOME whose store holds one finished run (native tools mode), and the run's id."""
    home = tmp_path_factory.mktemp("inspect_home")
    data = write_dataset(home / "data", ITEMS)
    os.environ["TOOLBOARD_TEST_KEY"] = SECRET
    store = Store(home / "toolboard.db")
    try:
        with ScriptedServer(reply=_reply) as server, ThreadPoolExecutor(1) as thread:
            # on a thread of its own: a browser test run before in this process may leave the main thread's
            # asyncio state marked as running (playwright's sync API), which asyncio.run refuses
            thread.submit(run_to_end, store, scripted_run_config(server, data, request_mode="tools")).result()
        run_id = store.list_runs()[0].id
        assert store.get_run(run_id).status == "finished"
    finally:
        store.close()
        os.environ.pop("TOOLBOARD_TEST_KEY", None)
    return home, run_id


def cli(home: Path, *args: str, without_inspect: bool = False) -> subprocess.CompletedProcess:
    env = {**os.environ, "TOOLBOARD_HOME": str(home)}
    command = [sys.executable, "-c", WITHOUT_INSPECT] if without_inspect else [sys.executable, "-m", "evaluators"]
    return subprocess.run([*command, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def document(home: Path, run_id: str):
    store = Store(home / "toolboard.db")
    try:
        return export_document(store, run_id)
    finally:
        store.close()


@pytest.mark.parametrize("name", ["run.eval", "run.json"])
def test_a_run_reads_back_as_an_inspect_log(finished: tuple[Path, str], tmp_path: Path, name: str):
    log_api = pytest.importorskip("inspect_ai.log", reason="inspect-ai is not installed (pip install -r requirements-inspect.txt)")
    home, run_id = finished
    target = tmp_path / name
    done = cli(home, "export", run_id, "--inspect-log", str(target))
    assert done.returncode == 0, done.stderr
    assert f"wrote the Inspect log of run {run_id} to {target}" in done.stdout
    assert sorted(path.name for path in tmp_path.iterdir()) == [name]  # no partial file left beside it
    if name.endswith(".json"):
        assert SECRET not in target.read_text(encoding="utf-8")
    stored = document(home, run_id)
    log = log_api.read_eval_log(str(target), resolve_attachments=True)  # .eval keeps long texts as attachments
    assert log.status == "success"
    # the spec: the run's settings
    assert (log.eval.model, log.eval.task, log.eval.run_id) == ("scripted", "acebench/normal_atom_bool", run_id)
    assert log.eval.dataset.name.startswith("chenchen0103/ACEBench@") and log.eval.dataset.samples == ITEMS
    # as the results dataset publishes a run: no key variable, base URL or data folder
    settings = log.eval.metadata["settings"]
    assert settings["model"]["api_key_env"] == "" and "127.0.0.1" not in log.model_dump_json()
    assert SECRET not in log.model_dump_json()
    # samples: ids, target, input, messages, scores per mode, usage
    assert log.samples is not None and [sample.id for sample in log.samples] == [sample.id for sample in stored.samples]
    assert len(log.samples) == ITEMS
    for sample, kept in zip(log.samples, stored.samples, strict=True):
        assert sample.target == json.dumps(kept.gold, ensure_ascii=False)
        body = kept.request["body"]
        assert [message.role for message in sample.input] == [message["role"] for message in body["messages"]]
        assert [message.text for message in sample.input] == [message["content"] for message in body["messages"]]
        assert [message.role for message in sample.messages] == ["system", "user", "assistant"]
        call = sample.messages[-1].tool_calls[0]
        stored_call = kept.events[-1]["response"]["tool_calls"][0]  # as the model returned it (the tool's wire name)
        assert (call.function, call.arguments) == (stored_call["name"], json.loads(stored_call["arguments"]))
        assert sample.output.message.tool_calls[0].arguments == call.arguments
        assert list(sample.scores) == ["official", "strict"]
        for mode in ("official", "strict"):
            assert sample.scores[mode].value == kept.scores[mode].value
            assert sample.scores[mode].answer == json.dumps(kept.scores[mode].answer, ensure_ascii=False)
            assert sample.scores[mode].explanation == (kept.scores[mode].explanation or None)
        assert sample.scores["official"].value == (0.0 if sample.id == WRONG_ITEM else 1.0)
        assert bool(sample.scores["official"].explanation) == (sample.id == WRONG_ITEM)  # why it is wrong
        usage = sample.model_usage["scripted"]
        assert (usage.input_tokens, usage.output_tokens) == (kept.prediction.prompt_tokens, kept.prediction.completion_tokens)
        assert [event.event for event in sample.events] == ["model"]
        assert sample.events[0].call.request == body
    # totals and the report's figures
    total = log.stats.model_usage["scripted"]
    assert total.input_tokens == sum(kept.prediction.prompt_tokens for kept in stored.samples) == 10 * ITEMS
    assert total.output_tokens == 5 * ITEMS
    reports = {report.mode: report.report for report in stored.reports}
    assert [score.name for score in log.results.scores] == ["official", "strict"]
    for score in log.results.scores:
        accuracy = reports[score.name]["subsets"]["normal_atom_bool"]["metrics"]["accuracy"]
        assert score.metrics["normal_atom_bool/accuracy"].value == accuracy == (ITEMS - 1) / ITEMS
        assert score.scored_samples == ITEMS
    assert (log.results.total_samples, log.results.completed_samples) == (ITEMS, ITEMS)


def test_without_the_extra_the_command_is_refused_with_the_pip_command(finished: tuple[Path, str], tmp_path: Path):
    home, run_id = finished
    target = tmp_path / "run.eval"
    done = cli(home, "export", run_id, "--inspect-log", str(target), without_inspect=True)
    assert done.returncode == 2, done.stderr
    assert INSTALL in done.stderr and "inspect-ai" in done.stderr
    assert list(tmp_path.iterdir()) == []
    # the other exports still work there
    done = cli(home, "export", run_id, "--report", str(tmp_path / "report.json"), without_inspect=True)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "report.json").read_text())["run_id"] == run_id


def test_an_unknown_or_unfinished_run_is_refused_by_name(finished: tuple[Path, str], tmp_path: Path):
    pytest.importorskip("inspect_ai.log", reason="inspect-ai is not installed (pip install -r requirements-inspect.txt)")
    home, _ = finished
    target = tmp_path / "run.eval"
    done = cli(home, "export", "no-such-run", "--inspect-log", str(target))
    assert done.returncode == 2 and "no run 'no-such-run'" in done.stderr
    store = Store(home / "toolboard.db")
    try:
        running = store.create_run("acebench", "en", "unfinished-model", "http://127.0.0.1:9/v1", {}, "fp", 3)
        store.set_status(running, "running")
    finally:
        store.close()
    done = cli(home, "export", running, "--inspect-log", str(target))
    assert done.returncode == 2
    assert f"run {running!r} is running; only finished runs are exported" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_refused_target_or_run_is_refused_before_inspect_ai_is_imported(finished: tuple[Path, str], tmp_path: Path):
    """Importing inspect-ai costs about 2 s: a target or a run that cannot be written is refused without it."""
    pytest.importorskip("inspect_ai.log", reason="inspect-ai is not installed (pip install -r requirements-inspect.txt)")
    home, run_id = finished
    script = f"""
import sys
from evaluators.core.errors import ToolboardError
from evaluators.engine.store import Store
from evaluators.publish.inspect_log import write_inspect_log
store = Store({str(home / "toolboard.db")!r})
for run, target in [({run_id!r}, {str(tmp_path / "run.txt")!r}), ({run_id!r}, {str(tmp_path / "no" / "run.eval")!r}),
                    ("no-such-run", {str(tmp_path / "run.eval")!r})]:
    try:
        write_inspect_log(store, run, target)
    except ToolboardError as refused:
        print(type(refused).__name__, "inspect_ai" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env={**os.environ, "TOOLBOARD_HOME": str(home)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["ToolboardError False", "ToolboardError False", "ToolboardError False"], \
        done.stdout


def test_a_target_that_cannot_be_written_is_refused_and_leaves_no_file(finished: tuple[Path, str], tmp_path: Path):
    pytest.importorskip("inspect_ai.log", reason="inspect-ai is not installed (pip install -r requirements-inspect.txt)")
    home, run_id = finished
    done = cli(home, "export", run_id, "--inspect-log", str(tmp_path / "missing" / "run.eval"))
    assert done.returncode == 2 and f"folder {tmp_path / 'missing'} does not exist" in done.stderr
    taken = tmp_path / "taken.eval"
    taken.mkdir()  # a folder where the file would go: the rename fails once the log is written
    done = cli(home, "export", run_id, "--inspect-log", str(taken))
    assert done.returncode == 2 and f"cannot write the Inspect log {taken}" in done.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["taken.eval"] and list(taken.iterdir()) == []
    done = cli(home, "export", run_id, "--inspect-log", str(tmp_path / "run.txt"))
    assert done.returncode == 2 and "ends in .eval or .json" in done.stderr
    done = cli(home, "export", "--inspect-log", str(tmp_path / "run.eval"))
    assert done.returncode == 2 and "--inspect-log needs RUN_ID" in done.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["taken.eval"]


def test_a_dialogue_keeps_every_turn_tool_results_and_each_roles_tokens(finished: tuple[Path, str], tmp_path: Path):
    """A sample of several turns (its earlier request kept as a reference to the later one, as the client keeps
    it), a tool result and a simulated user's call: the messages are the last request's, with the tool message and
    its call id, the input is the first request's, and the user role's tokens are its own."""
    log_api = pytest.importorskip("inspect_ai.log", reason="inspect-ai is not installed (pip install -r requirements-inspect.txt)")
    from evaluators.publish.inspect_log import inspect_log

    home, run_id = finished
    stored = document(home, run_id)
    first = {"model": "scripted", "messages": [{"role": "system", "content": "Use the tools."},
                                               {"role": "user", "content": "Set an alarm at 7."}]}
    call = {"id": "c7", "type": "function", "function": {"name": "Clock_setAlarm", "arguments": "{\"time\": \"07:00\"}"}}
    second = {**first, "messages": [*first["messages"], {"role": "assistant", "content": None, "tool_calls": [call]},
                                    {"role": "tool", "tool_call_id": "c7", "content": "alarm set"}]}
    events = [
        {"role": "model", "request": {"repeated_in": 3, "messages": 2, "bytes": 1, "note": "not stored twice"},
         "response": {"text": None, "tool_calls": [{"name": "Clock_setAlarm", "arguments": "{\"time\": \"07:00\"}"}],
                      "usage": {"prompt_tokens": 7, "completion_tokens": 3}}, "error": None, "latency": 0.1, "cached": False},
        {"role": "user", "request": {"model": "simulator", "messages": [{"role": "user", "content": "play the user"}]},
         "response": {"text": "thanks", "tool_calls": None, "usage": {"prompt_tokens": 4, "completion_tokens": 2}},
         "error": None, "latency": 0.1, "cached": True},
        {"role": "model", "request": second, "response": {"text": "Done: __import__('os').system('x')",
                                                          "tool_calls": [{"name": "Clock_setAlarm", "arguments": "not json"}],
                                                          "usage": {"prompt_tokens": 9, "completion_tokens": 4}},
         "error": None, "latency": 0.2, "cached": False},
    ]
    sample = stored.samples[0].model_copy(update={"events": events})
    log = inspect_log(stored.model_copy(update={"samples": [sample]}))
    target = tmp_path / "dialogue.json"
    log_api.write_eval_log(log, str(target))
    read = log_api.read_eval_log(str(target)).samples[0]
    assert [(message.role, message.text) for message in read.input] == [("system", "Use the tools."), ("user", "Set an alarm at 7.")]
    assert [message.role for message in read.messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert read.messages[2].tool_calls[0].id == "c7" and read.messages[2].tool_calls[0].arguments == {"time": "07:00"}
    assert (read.messages[3].tool_call_id, read.messages[3].text) == ("c7", "alarm set")
    last = read.messages[4]
    assert last.text == "Done: __import__('os').system('x')"  # model text kept as data
    assert last.tool_calls[0].arguments == {} and "not JSON" in last.tool_calls[0].parse_error
    assert [(event.role, event.cache) for event in read.events] == [("model", None), ("user", "read"), ("model", None)]
    assert read.events[0].call.request == first  # the reference rebuilt into the request as sent
    assert read.role_usage["user"].total_tokens == 6 and "user" not in read.model_usage
