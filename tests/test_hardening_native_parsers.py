"""BFCL's native tree-sitter parsers on hostile answers: deep nesting that crashes tree-sitter (SIGSEGV) and huge
answers are bounded before any parse, and the parse itself runs in a child process, so a crash or a hang costs one
sample, never the process that scores (the CLI, a run, or the app serving everyone)."""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from evaluators.benchmarks.bfcl.decode_common import DecodeFailure
from evaluators.benchmarks.bfcl.decode_java import decode_java
from evaluators.benchmarks.bfcl.decode_javascript import decode_javascript
from evaluators.benchmarks.bfcl.javascript_types import javascript_value
from evaluators.benchmarks.bfcl.native_parsing import (
    BOUNDED_ANSWER_TOO_LONG,
    BOUNDED_NESTING_TOO_DEEP,
    ISOLATED_PARSER_CRASHED,
    ISOLATED_PARSER_TIMEOUT,
    MAX_BRACKET_NESTING,
    MAX_PARSED_CHARS,
    bracket_nesting,
    decode_isolated,
    isolated_failure,
    parser_worker,
)
from evaluators.core.isolated_call import (
    CRASHED,
    TIMEOUT,
    IsolatedCallError,
    IsolatedCallFailed,
    IsolatedStartError,
    IsolatedWorker,
)
from evaluators.core.registry import get_benchmark
from evaluators.core.types import Prediction
from tests.bfcl_fixtures import JS_DOC, write_bfcl_folder
from tests.conftest import PROJECT

DEEP = 20_000  # balanced nesting that ends the process with SIGSEGV in tree-sitter 0.21 on an 8 MiB stack
JAVA_ID, JS_ID = "simple_java_0", "simple_javascript_0"
JAVA_GOLD = 'LibraryShelf.reserve(isbn="978-0", days=14L, readers=new ArrayList<String>(Arrays.asList("Ann")))'
JS_GOLD = "paintCanvas(colour='teal', brush={size: 3})"


def nested(opener: str, depth: int = DEEP) -> str:
    closer = {"(": ")", "[": "]", "{": "}"}[opener]
    return "f(a=" + opener * depth + "1" + closer * depth + ")"


@pytest.fixture(scope="module")
def bfcl_samples(tmp_path_factory: pytest.TempPathFactory) -> dict:
    folder = write_bfcl_folder(tmp_path_factory.mktemp("bfcl"))
    samples = get_benchmark("bfcl").load(folder, subsets=["simple_java", "simple_javascript"])
    return {sample.id: sample for sample in samples}


def scored(samples: dict, sample_id: str, output: str, mode: str = "official"):
    """The verdict through the benchmark's declared score (what the CLI, uploads and runs call)."""
    return get_benchmark("bfcl").score(samples[sample_id], Prediction(sample_id, output=output), mode)


# ---- the bounds ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["official", "strict"])
@pytest.mark.parametrize("opener", ["[", "(", "{"])
@pytest.mark.parametrize("sample_id", [JAVA_ID, JS_ID])
def test_nesting_that_crashes_tree_sitter_is_a_decode_failure_of_that_sample(bfcl_samples, sample_id, opener, mode):
    answer = nested(opener)
    assert len(answer) > 40_000
    verdict = scored(bfcl_samples, sample_id, answer, mode)
    assert (verdict.correct, verdict.error_type, verdict.rule) == (False, "decoder_failed", BOUNDED_NESTING_TOO_DEEP)
    assert verdict.detail == f"the answer nests brackets {DEEP + 1:,} deep; at most {MAX_BRACKET_NESTING} are parsed"
    # this process is alive and scores the next answer as before
    assert scored(bfcl_samples, sample_id, JAVA_GOLD if sample_id == JAVA_ID else JS_GOLD, mode).correct


def test_a_huge_answer_is_bounded_before_it_is_parsed(bfcl_samples):
    huge = "paintCanvas(colour='teal', points=[" + "1," * 700_000 + "1])"  # 1.4 MB: seconds of parsing and walking
    verdict = scored(bfcl_samples, JS_ID, huge, "strict")
    assert (verdict.correct, verdict.error_type, verdict.rule) == (False, "decoder_failed", BOUNDED_ANSWER_TOO_LONG)
    assert verdict.detail == f"the answer is {len(huge):,} characters long; at most {MAX_PARSED_CHARS:,} are parsed"
    java = scored(bfcl_samples, JAVA_ID, "A.b(x=1, y=" + "1" * MAX_PARSED_CHARS + ")")
    assert java.rule == BOUNDED_ANSWER_TOO_LONG


def test_the_bounds_apply_to_the_text_the_parser_gets_and_stop_exactly_at_their_limits():
    # The official decoders strip the outer brackets they add: `[...]` counts the text between them.
    longest = "f(a='" + "x" * (MAX_PARSED_CHARS - 7) + "')"
    assert len(longest) == MAX_PARSED_CHARS
    assert decode_isolated("javascript", longest) == decode_javascript(longest)
    assert decode_isolated("javascript", f"[{longest}]") == decode_javascript(longest)
    with pytest.raises(DecodeFailure) as too_long:
        decode_isolated("javascript", longest + ";")
    assert too_long.value.rule == BOUNDED_ANSWER_TOO_LONG
    deepest = "f(a=" + "[" * (MAX_BRACKET_NESTING - 1) + "1" + "]" * (MAX_BRACKET_NESTING - 1) + ")"
    assert bracket_nesting(deepest) == MAX_BRACKET_NESTING
    assert decode_isolated("javascript", deepest) == decode_javascript(deepest)
    with pytest.raises(DecodeFailure) as too_deep:
        decode_isolated("javascript", deepest.replace("1", "[1]"))
    assert too_deep.value.rule == BOUNDED_NESTING_TOO_DEEP


def test_the_nesting_scan_never_undercounts():
    assert bracket_nesting("f(a=[1, {b: (2)}])") == 4
    assert bracket_nesting("'((((' + ')'") == 4  # quotes are not looked at
    assert bracket_nesting("(]" * 3) == 3  # a closer of another kind closes nothing
    assert bracket_nesting(")))(") == 1
    assert bracket_nesting("") == 0


@pytest.mark.parametrize("mode", ["official", "strict"])
def test_the_python_walks_reach_the_bound_without_recursion_errors(mode):
    depth = MAX_BRACKET_NESTING - 1  # and `A.b(` around them: the deepest nesting parsed
    java = "A.b(x=" + "(" * depth + "1" + ")" * depth + ", y=2)"
    assert bracket_nesting(java) == MAX_BRACKET_NESTING
    decoded = decode_java(java, mode)  # in this (pytest's) deep stack too
    assert decoded == decode_isolated("java", java, mode) == [{"A.b": {"x": "(" * depth + "1" + ")" * depth, "y": "2"}}]
    lists = MAX_BRACKET_NESTING - 2
    brush = "{size: " + "[" * lists + "3" + "]" * lists + "}"  # read as "(" + brush + ")": 100 deep
    value = javascript_value(brush, JS_DOC["parameters"]["properties"]["brush"], "strict")  # strict_js_reads_literals
    inner = value["size"]
    for _ in range(lists):
        assert isinstance(inner, list) and len(inner) == 1
        inner = inner[0]
    assert inner == 3


# ---- the isolation ------------------------------------------------------------------------------------------
# Functions the child runs (module-level, so the child imports them by name).


def echo(*values):
    return values


def child_pid() -> int:
    return os.getpid()


def read_address_zero() -> bytes:
    return ctypes.string_at(0)  # SIGSEGV in the child


def raise_sigsegv() -> None:
    signal.pthread_kill(threading.get_ident(), signal.SIGSEGV)


def sleep_for(seconds: float) -> str:
    time.sleep(seconds)
    return "woke"


def fail_with(message: str) -> None:
    raise ValueError(message)


class TwoArgumentError(Exception):
    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code


def fail_unpicklably() -> None:
    raise TwoArgumentError("cannot be rebuilt from its args", 7)


def _state(pid: int) -> str | None:
    """The process's state letter (R, S, Z, …), None when there is no such process any more."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rpartition(")")[2].split()[0]
    except FileNotFoundError:
        return None


def reaped(pid: int) -> bool:
    """The process is gone and was reaped by its parent: no zombie left behind."""
    return _state(pid) in (None, "X")


def ended(pid: int) -> bool:
    """The process no longer runs (an orphan's zombie is its new parent's, e.g. init's, to reap)."""
    return _state(pid) in (None, "X", "Z")


@pytest.fixture
def worker():
    isolated = IsolatedWorker("test")
    yield isolated
    isolated.close()


@pytest.mark.slow
@pytest.mark.parametrize("crash", [read_address_zero, raise_sigsegv])
def test_a_crash_is_that_calls_error_and_the_next_call_gets_a_fresh_child(worker, crash):
    assert worker.call(echo, 1, "a", timeout=60) == (1, "a")
    first = worker.call(child_pid, timeout=60)
    assert first != os.getpid()
    with pytest.raises(IsolatedCallFailed) as failed:
        worker.call(crash, timeout=60)
    assert (failed.value.kind, failed.value.status) == (CRASHED, "SIGSEGV")
    assert reaped(first)
    second = worker.call(child_pid, timeout=60)
    assert second != first
    assert worker.call(echo, 2, timeout=60) == (2,)
    assert worker.started == 2


@pytest.mark.slow
def test_a_call_past_its_time_limit_is_stopped_and_the_next_call_works(worker):
    first = worker.call(child_pid, timeout=60)
    with pytest.raises(IsolatedCallFailed) as failed:
        worker.call(sleep_for, 600, timeout=0.5)
    assert failed.value.kind == TIMEOUT and "0.5 s" in str(failed.value)
    assert reaped(first)
    assert worker.call(sleep_for, 0, timeout=60) == "woke"


def test_exceptions_come_back_as_raised_and_the_child_stays(worker):
    pid = worker.call(child_pid, timeout=60)
    with pytest.raises(ValueError, match="plain"):
        worker.call(fail_with, "plain", timeout=60)
    with pytest.raises(IsolatedCallError, match="TwoArgumentError: cannot be rebuilt"):
        worker.call(fail_unpicklably, timeout=60)
    assert worker.call(child_pid, timeout=60) == pid


@pytest.mark.slow
def test_calls_from_many_threads_are_answered_one_at_a_time(worker):
    results: dict[int, list] = {}

    def run(thread: int) -> None:
        results[thread] = [worker.call(echo, thread, index, timeout=60) for index in range(50)]

    threads = [threading.Thread(target=run, args=(thread,)) for thread in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {thread: [(thread, index) for index in range(50)] for thread in range(6)}
    assert worker.started == 1


def test_a_child_that_cannot_start_is_an_error_not_a_sample_verdict():
    broken = IsolatedWorker("broken", preload=("no_such_module_for_the_isolated_child",))
    try:
        with pytest.raises(IsolatedStartError, match="ended during start-up"):
            broken.call(echo, 1, timeout=60)
    finally:
        broken.close()


_USE_AND_EXIT = """
import os, sys
from evaluators.core.isolated_call import IsolatedWorker
worker = IsolatedWorker("exit-test")
print(worker.call(os.getpid, timeout=60), flush=True)
if sys.argv[1] == "kill":
    os.kill(os.getpid(), 9)
"""


@pytest.mark.parametrize("how", ["exit", "kill"])
def test_the_child_goes_when_its_parent_exits_or_is_killed(how):
    parent = subprocess.run([sys.executable, "-c", _USE_AND_EXIT, how], cwd=PROJECT, capture_output=True, text=True,
                            timeout=120)
    child = int(parent.stdout.split()[0])
    if how == "exit":
        assert parent.returncode == 0 and reaped(child)  # closed and reaped at interpreter exit
    else:
        assert parent.returncode == -9
        deadline = time.monotonic() + 30  # it sees its parent gone (end of file, or its orphan check each second)
        while not ended(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert ended(child)


# ---- the isolation through the BFCL scoring ------------------------------------------------------------------


@pytest.mark.slow
def test_a_parser_crash_fails_that_sample_only(bfcl_samples, monkeypatch):
    """The real parser crashing in its child: a chain of 60,000 `!` (within the bounds: no brackets) overflows a
    1 MiB stack; the child normally gets 256 MiB, so here it is started with 1 MiB."""
    hostile = "paintCanvas(colour=" + "!" * 60_000 + "1)"
    worker = parser_worker()
    worker.close()
    monkeypatch.setattr(worker, "stack_bytes", 1 << 20)
    try:
        verdict = scored(bfcl_samples, JS_ID, hostile)
        assert (verdict.correct, verdict.error_type, verdict.rule) == (False, "decoder_failed", ISOLATED_PARSER_CRASHED)
        assert verdict.detail == ("the JavaScript parser crashed on this answer (SIGSEGV); it was parsed in a separate "
                                  "process, so only this sample failed")
        assert scored(bfcl_samples, JS_ID, JS_GOLD).correct
    finally:
        worker.close()
    monkeypatch.undo()
    assert scored(bfcl_samples, JS_ID, hostile).rule == "official_normalises_strings"  # the normal stack holds it


@pytest.mark.slow
def test_the_sample_messages_for_a_crashed_or_stopped_parser(worker):
    for function, args, timeout in ((read_address_zero, (), 60), (sleep_for, (600,), 0.5)):
        with pytest.raises(IsolatedCallFailed) as failed:
            worker.call(function, *args, timeout=timeout)
        failure = isolated_failure(failed.value, "Java")
        if failed.value.kind == CRASHED:
            assert (failure.rule, failure.detail) == (ISOLATED_PARSER_CRASHED, (
                "the Java parser crashed on this answer (SIGSEGV); it was parsed in a separate process, so only this "
                "sample failed"))
        else:
            assert (failure.rule, failure.detail) == (ISOLATED_PARSER_TIMEOUT, (
                "the Java parser did not finish this answer within 10 s and was stopped; it was parsed in a separate "
                "process, so only this sample failed"))


def test_scoring_decodes_in_the_child_and_gives_what_the_in_process_decoder_gives():
    texts = ["A.b(x=1, y=2)", "A.b(x=1)", "prose", '[A.b(x="é", y=abc)]', 'A.b(x="\ud800", y=2)',
             'A.b(m=new HashMap<String, Integer>() {{ put("a", 1); }}, y=2)', "f(a={b: [1, 2]}, c)"]
    for mode in ("official", "strict"):
        for text in texts:
            for language, decode in (("java", decode_java), ("javascript", decode_javascript)):
                try:
                    expected = ("decoded", decode(text, mode))
                except DecodeFailure as failure:
                    expected = ("failed", failure.rule, failure.detail)
                try:
                    isolated = ("decoded", decode_isolated(language, text, mode))
                except DecodeFailure as failure:
                    isolated = ("failed", failure.rule, failure.detail)
                assert isolated == expected, (language, mode, text)
    assert parser_worker().pid not in (None, os.getpid())


# ---- the app ------------------------------------------------------------------------------------------------

_SERVE_THE_APP = """
import json, sys
from pathlib import Path
from tests.app_fixtures import running_app
with running_app(Path(sys.argv[1])) as app:
    print(json.dumps({"url": app.url}), flush=True)
    sys.stdin.read()  # until the test closes our stdin
"""


@pytest.mark.slow
def test_the_app_scores_crashing_answers_in_an_upload_and_keeps_serving(tmp_path: Path):
    """The real app in a process of its own (the one that would die): an upload holding answers that crash
    tree-sitter is checked and scored, the samples show the bound, and the app answers afterwards."""
    from gradio_client import Client, handle_file

    data = write_bfcl_folder(tmp_path / "bfcl")
    predictions = tmp_path / "deep.jsonl"
    predictions.write_text("".join(json.dumps(row) + "\n" for row in [
        {"id": JAVA_ID, "output": nested("(")},
        {"id": JS_ID, "output": nested("[")},
    ]), encoding="utf-8")
    server = subprocess.Popen([sys.executable, "-c", _SERVE_THE_APP, str(tmp_path / "app")], cwd=PROJECT,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        url = json.loads(server.stdout.readline())["url"]
        client = Client(url, verbose=False)
        try:
            validation, report, message = client.predict(handle_file(str(predictions)), "bfcl", "", "local folder",
                                                         str(data), api_name="/check_upload")
        except Exception as exc:  # noqa: BLE001 - said with the server's fate below
            ended = server.poll()
            how = signal.Signals(-ended).name if ended is not None and ended < 0 else ended
            raise AssertionError(f"the upload was not answered ({exc!r}); the app process ended: {how}") from None
        assert server.poll() is None, "the app process died"
        assert validation["ok"] and validation["matched"] == 2, validation
        assert report["subsets"]["simple_java"]["metrics"]["accuracy"] == 0
        added = client.predict("Deep nesting model", "", api_name="/add_upload")
        run_id = added.split("Added as run ")[1].split(":")[0]
        rows = client.predict(run_id=run_id, api_name="/samples")
        verdicts = {row[0]: dict(zip(rows["headers"], row)) for row in rows["data"]}
        for sample_id in (JAVA_ID, JS_ID):
            assert (verdicts[sample_id]["error_type"], verdicts[sample_id]["rule"]) == ("decoder_failed",
                                                                                        BOUNDED_NESTING_TOO_DEEP)
        detail = client.predict(run_id, JS_ID, "official", api_name="/sample")
        assert f"the answer nests brackets {DEEP + 1:,} deep; at most {MAX_BRACKET_NESTING} are parsed" in detail
        # still serving: a normal upload is scored as before
        good = tmp_path / "good.jsonl"
        good.write_text(json.dumps({"id": JS_ID, "output": JS_GOLD}) + "\n", encoding="utf-8")
        validation, report, _ = client.predict(handle_file(str(good)), "bfcl", "", "local folder", str(data),
                                               api_name="/check_upload")
        assert validation["ok"] and report["subsets"]["simple_javascript"]["metrics"]["accuracy"] == 1
        assert server.poll() is None
    finally:
        server.stdin.close()
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
