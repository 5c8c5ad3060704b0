"""Bounded decoding of model answers: a short answer must not decode into something huge, and
hostile text (deep nesting, huge numbers, pathological tags) gives a plain format error quickly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evaluators.benchmarks.acebench.checker import score
from evaluators.benchmarks.acebench.decode import (
    MAX_ANSWER_CHARS,
    DecodeError,
    decode_text,
    decode_tool_calls,
    official_first_bracket_extraction,
    parse_call_list,
    strict_bracket_candidates,
)
from evaluators.benchmarks.stepeval_audio.extract import arguments_object, hermes_json_call, step_text_call
from evaluators.benchmarks.toolbench_static.parse import parse_step, strict_strips_think_blocks
from evaluators.core.call_literals import MAX_CALL_TEXT_CHARS, MAX_COMPUTED_SIZE
from evaluators.core.types import Prediction, Sample, ToolCall
from evaluators.core.value_size import expanded_size
from tests.acebench_fixtures import EXAMPLE_DIR, GOLD, SPEC, verdict
from tests.conftest import PROJECT

SHARED_LIST_BOMB = "[Trip_plan(city=[[1]*99999]*99999)]"  # 24 characters of arguments, 10^10 elements written out
SHARED_STRING_BOMB = "[Trip_plan(city=['a'*99999]*99999)]"
MAX_RSS_MB = 300


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("answer", [SHARED_LIST_BOMB, SHARED_STRING_BOMB, "[Trip_plan(city='a'*10**9)]"])
def test_a_repetition_that_expands_past_the_bound_is_a_format_error(answer: str, strict: bool):
    with pytest.raises(DecodeError, match=f"more than {MAX_COMPUTED_SIZE:,} elements and characters"):
        decode_text(answer, multi_turn=False, strict=strict)
    result = verdict(answer, GOLD, strict=strict)
    assert (result.correct, result.error_type, result.rule) == (False, "format_error", "wrong_output_format")


def test_expanded_size_counts_a_shared_value_every_time_it_appears():
    inner = [1, 2, 3]
    assert expanded_size([inner, inner], limit=100) == 1 + 2 * (1 + 3)
    assert expanded_size({"ab": ["xyz"] * 4}, limit=100) == 1 + 2 + (1 + 4 * 3)
    assert expanded_size(10**30, limit=100) >= 31  # an int counts its digits
    # walked once per distinct container, so measuring a huge shared value is cheap and refused
    assert expanded_size([[1] * 99999] * 99999, limit=1_000_000) is None


def test_small_constant_arithmetic_still_works():
    decoded = parse_call_list("[f(a='-'*20, b=[0]*7, c=24*60, d=(1, 2)*2, e=2**2000, g='%s!' % 'hi', h=f'{3:>4}'+'')]")
    assert decoded == [{"f": {"a": "-" * 20, "b": [0] * 7, "c": 1440, "d": (1, 2, 1, 2), "e": 2**2000, "g": "hi!", "h": "   3"}}]
    assert parse_call_list("[f(a=[[0]*50]*50)]") == [{"f": {"a": [[0] * 50] * 50}}]


def test_the_budget_is_shared_by_all_arithmetic_of_an_answer():
    half = MAX_COMPUTED_SIZE // 2 + 1
    assert parse_call_list(f"[f(a='x'*{half})]") == [{"f": {"a": "x" * half}}]
    with pytest.raises(DecodeError):
        parse_call_list(f"[f(a='x'*{half}), g(b='y'*{half})]")
    with pytest.raises(DecodeError):  # strict: candidates share it too
        decode_text(f"[f(a='x'*{half}), 1] [g(b='y'*{half})]", multi_turn=False, strict=True)


HOSTILE_ANSWERS = {
    "100k nested brackets": "[f(a=" + "[" * 100_000 + "]" * 100_000 + ")]",
    "deep brackets within the length bound": "[f(a=" + "[" * 5_000 + "]" * 5_000 + ")]",
    "5000-digit literal": "[f(a=" + "7" * 5000 + ")]",
    "2**49999": "[f(a=2**49999)]",
    "1<<99999": "[f(a=1<<99999)]",
    "huge repetition": "[f(a='a'*10**9)]",
    "huge hex literal": "[f(a=0x" + "f" * 30_000 + ")]",
    "huge hex in a subscript": "[f(a=x[0x" + "f" * 30_000 + "])]",
    "long unary chain": "[f(a=" + "-" * 30_000 + "1)]",
    "long operator chain": "[f(a=" + "+".join(["1"] * 15_000) + ")]",
    "long attribute chain": "[f(a=x" + ".y" * 15_000 + ")]",
    "long subscript chain": "[f(a=x" + "[0]" * 10_000 + ")]",
    "wide format widths": "[f(a='" + "%999s" * 10_000 + "' % ((1,)*10000))]",
    "over-long call list": "[f(a='" + "x" * MAX_CALL_TEXT_CHARS + "')]",
    "null byte": "[f(a='\x00')]",
}


@pytest.mark.parametrize("multi_turn", [False, True])
@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("name", sorted(HOSTILE_ANSWERS))
def test_hostile_answers_are_plain_format_errors(name: str, strict: bool, multi_turn: bool):
    with pytest.raises(DecodeError) as raised:
        decode_text(HOSTILE_ANSWERS[name], multi_turn=multi_turn, strict=strict)
    message = str(raised.value)
    assert message and len(message) < 200
    assert "set_int_max_str_digits" not in message and "Error" not in message


def test_a_huge_int_the_reference_computes_still_decodes_and_strict_calls_it_a_wrong_value():
    assert decode_text("[f(a=10 ** 5000)]", multi_turn=False) == [{"f": {"a": 10**5000}}]
    result = verdict("[Trip_plan(city='Paris', days=10 ** 5000)]", GOLD, strict=True)
    # Integers are compared exactly; against a float gold the checker's fallback rule decides.
    assert (result.correct, result.error_type, result.rule) == (False, "wrong_value", "strict_values_equal")


def test_native_arguments_with_huge_numbers_or_deep_nesting_are_format_errors():
    for arguments, expected in (('{"a": ' + "7" * 5000 + "}", "4,300 digits"), ("[" * 100_000, "nested too deeply")):
        with pytest.raises(DecodeError, match=expected):
            decode_tool_calls([ToolCall("f", arguments)])


def test_length_bounds_on_the_answer_and_the_parsed_text():
    with pytest.raises(DecodeError, match="at most 1,000,000"):
        decode_text("[f()]" + " " * MAX_ANSWER_CHARS, multi_turn=False)
    with pytest.raises(DecodeError, match="longer than 100,000"):
        official_first_bracket_extraction("x [" + "[]" * MAX_CALL_TEXT_CHARS + "]")
    # official extraction is unchanged below the bound, including its quirks
    assert official_first_bracket_extraction("] [f()] [g()]") is None
    assert official_first_bracket_extraction("a [f(x=']')] b") == "[f(x=']"
    # strict: all candidates together get MAX_CALL_TEXT_CHARS, however many there are
    candidates = strict_bracket_candidates("[x]" * MAX_CALL_TEXT_CHARS + "[f()]")
    assert sum(map(len, candidates)) <= MAX_CALL_TEXT_CHARS
    assert strict_bracket_candidates("a [f(x=']', y=\"\\\"[\")] b [g()]") == ["[f(x=']', y=\"\\\"[\")]", "[g()]"]


def test_stepeval_json_with_a_huge_number_is_no_arguments_not_a_crash():
    huge = '{"a": ' + "7" * 5000 + "}"
    assert arguments_object(huge) is None
    assert step_text_call(f"<tool_call>function\nweb_search\n{huge}</tool_call>") == ("web_search", None)
    as_string = json.dumps(huge)
    assert hermes_json_call(f'<tool_call>{{"name": "web_search", "arguments": {as_string}}}</tool_call>') == ("web_search", None)
    assert hermes_json_call('<tool_call>{"name": ' + "7" * 5000 + '}</tool_call><tool_call>{"name": "x"}</tool_call>') == ("x", {})


def test_tag_readers_keep_their_meaning_on_unclosed_tags():
    tail = '<tool_call>function\nget_date_time\n{"a": 1}</tool_call>'
    assert step_text_call("<tool_call>function\nx\n{" * 3 + tail) == ("x", None)  # the first body runs to the first close
    assert step_text_call("<tool_call> nope " * 3 + tail) == ("get_date_time", {"a": 1})
    assert step_text_call(tail.replace("</tool_call>", "")) is None
    assert hermes_json_call('<tool_call>{"x"' + '<tool_call>{"name": "f"}</tool_call>') is None  # one body, bad JSON
    assert strict_strips_think_blocks("<think>a</think>b<think>c") == "b<think>c"
    assert parse_step("<think>x</think>Action: f\nAction Input: {}" + "<think>" * 3, strict=True).action == "f"


# ---- memory and CPU stay bounded: each run in a child process with its own limits ----------------

# The child's own peak is VmHWM: ru_maxrss also counts the (large) pytest process it was forked from.
_MEASURED = """
import atexit, re, resource, runpy, sys
def _peak():
    with open("/proc/self/status") as status:
        print("MAXRSS_KB", re.search(r"VmHWM:\\s+(\\d+) kB", status.read()).group(1), file=sys.stderr)
atexit.register(_peak)
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # a regression fails here instead of filling the machine
resource.setrlimit(resource.RLIMIT_CPU, (120, 120))  # CPU seconds, not wall clock: quadratic code would need far more
script = sys.argv[1]
sys.argv = sys.argv[1:]
if script.endswith(".py"):
    runpy.run_path(script, run_name="__main__")
else:
    runpy.run_module(script, run_name="__main__", alter_sys=True)
"""


def run_measured(*args: str) -> tuple[subprocess.CompletedProcess, float]:
    """Run `python -m <module>` or a script in a child; returns the result and its peak memory in MB."""
    result = subprocess.run([sys.executable, "-c", _MEASURED, *args], cwd=PROJECT, capture_output=True, text=True, timeout=600)
    peaks = [line.split()[1] for line in result.stderr.splitlines() if line.startswith("MAXRSS_KB ")]
    assert peaks, result.stderr[-2000:]
    return result, int(peaks[-1]) / 1024


def _bomb_predictions(path: Path) -> Path:
    rows = [
        {"id": "normal_atom_bool_0", "output": "[Clock_setAlarm(time=[[1]*99999]*99999)]"},
        {"id": "normal_atom_enum_0", "output": "[Weather_getForecast(city='Denver', units='imperial')]"},
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("mode", ["official", "strict"])
def test_cli_scores_a_bomb_answer_as_a_format_error_and_the_others_normally(tmp_path: Path, mode: str):
    samples = tmp_path / "verdicts.jsonl"
    result, peak_mb = run_measured(
        "evaluators", "score", "acebench", str(_bomb_predictions(tmp_path / "p.jsonl")), "--data-dir", str(EXAMPLE_DIR),
        "--language", "en", "--subset", "normal_atom_bool", "normal_atom_enum", "--mode", mode, "--json", "--samples", str(samples),
    )
    assert result.returncode == 0, result.stderr[-2000:]
    verdicts = {row["sample_id"]: row for row in map(json.loads, samples.read_text().splitlines())}
    bomb = verdicts["normal_atom_bool_0"]
    assert (bomb["correct"], bomb["error_type"], bomb["rule"]) == (False, "format_error", "wrong_output_format")
    assert verdicts["normal_atom_enum_0"]["correct"] is True
    assert peak_mb < MAX_RSS_MB


_UPLOAD_AND_STORE = """
import json, sys
from evaluators.engine.store import Store
from evaluators.service.submissions import check_submission, store_submission
predictions, data_dir, db = sys.argv[1:4]
submission = check_submission(predictions, "acebench", language="en", data_dir=data_dir)
store = Store(db)
run_id = store_submission(store, submission, "bomb-model")
rows = {s.sample_id: [s.correct, s.error_type, s.rule] for s in store.load_scores(run_id, "official")}
print(json.dumps({"status": store.get_run(run_id).status, "rows": rows}))
"""


@pytest.mark.slow
def test_an_uploaded_bomb_answer_is_stored_as_a_format_error_with_memory_bounded(tmp_path: Path):
    script = tmp_path / "upload_and_store.py"
    script.write_text(_UPLOAD_AND_STORE, encoding="utf-8")
    result, peak_mb = run_measured(
        str(script), str(_bomb_predictions(tmp_path / "p.jsonl")), str(EXAMPLE_DIR), str(tmp_path / "toolboard.db"),
    )
    assert result.returncode == 0, result.stderr[-2000:]
    stored = json.loads(result.stdout.splitlines()[-1])
    assert stored["status"] == "finished"
    assert stored["rows"] == {"normal_atom_bool_0": [False, "format_error", "wrong_output_format"],
                              "normal_atom_enum_0": [True, None, None]}
    assert peak_mb < MAX_RSS_MB


_HOSTILE_TEXT = """
from evaluators.benchmarks.acebench.decode import DecodeError, decode_text
from evaluators.benchmarks.stepeval_audio.extract import hermes_json_call, step_text_call
from evaluators.benchmarks.toolbench_static.parse import parse_step
texts = [
    "<tool_call>function\\nX\\n{" * 40_000,
    "<tool_call>function\\n" + " " * 300_000 + "x",
    "<tool_call>{}" * 80_000,
    "<think>" * 150_000,
    "[f()] " + "]" * 900_000,
    "[" + "'" * 900_000,
]
for text in texts:
    step_text_call(text)
    hermes_json_call(text)
    parse_step(text, strict=True)
    for strict in (False, True):
        try:
            decode_text(text, multi_turn=False, strict=strict)
        except DecodeError:
            pass
print("done")
"""


def test_tag_and_bracket_scanners_stay_linear_on_hostile_text(tmp_path: Path):
    # the old regexes needed minutes of CPU here (each unclosed tag rescanned the rest of the text)
    script = tmp_path / "hostile_text.py"
    script.write_text(_HOSTILE_TEXT, encoding="utf-8")
    result, peak_mb = run_measured(str(script))
    assert result.returncode == 0 and result.stdout.strip() == "done", result.stderr[-2000:]
    assert peak_mb < MAX_RSS_MB


def test_score_keeps_its_signature_for_normal_answers():
    sample = Sample(id="normal_atom_bool_0", subset="normal_atom_bool", input={"functions": [SPEC]}, gold=GOLD)
    assert score(sample, Prediction(sample.id, output="[Trip_plan(city='Paris', days=3)]")).correct
