"""Multi-turn execution: the official execute decode (model text -> call texts) and the official execute loop's
rules without eval (the method-name rewrite, the blocked names, the result text)."""

from __future__ import annotations

import pytest

from evaluators.benchmarks.bfcl.decode_common import DecodeFailure
from evaluators.benchmarks.bfcl.multi_turn.execution import (
    is_empty_execute_response,
    official_blocked_names,
    official_call_texts,
    official_instance_name,
    official_result_text,
    official_rewrites_method_names,
    parse_nested_value,
)


@pytest.mark.parametrize(("text", "calls"), [
    ("cd(folder='document')", ["cd(folder='document')"]),
    ("[ls(a=True), mv(source='a b', destination=\"c\")]", ["ls(a=True)", "mv(source='a b', destination='c')"]),
    ("```\nsort(file_name='x')\n```", ["sort(file_name='x')"]),
    ("sort('final_report.pdf')", ["sort()"]),  # positional arguments are dropped, as the official decoder drops them
    ("f(x=-5, y=[1, {'a': 2}], z=(1, 2), w=None, v=1.50)", ["f(x=-5, y=[1, {'a': 2}], z=(1, 2), w=None, v=1.5)"]),
    ("f(x={'a': 1, 'b': 'c'})", ["f(x={'a': 1, 'b': 'c'})"]),
    ("f(x={1: 'one'})", ["f(x={'1': 'one'})"]),  # keys printed inside quotes as they are
    ("f(x=g(y=1))", ["f(x=g(y=1))"]),  # a nested call with keywords decodes to {g: {y: 1}}: a call again
    ("f(x=g(1))", ["f(x='g(1)')"]),  # without keywords it is text
    ("f(x={'g': {'y': 1}, 'h': {'z': 2}})", ["f(x=g(y=1))"]),  # a dict of dicts is a call: its first key only
    ("f(**{'a': 1})", ["f(None={'a': 1})"]),
    ("[]", []),
    ("", []),
])
def test_official_call_texts(text: str, calls: list[str]):
    assert official_call_texts(text) == calls


@pytest.mark.parametrize("text", ["f(x={})", "f(y=1, z={'g': {'h': {}}})", "I cannot help with that.", "f(x="])
def test_texts_the_official_execute_decode_refuses(text: str):
    with pytest.raises(DecodeFailure):
        official_call_texts(text)


def test_an_empty_dict_fails_as_the_official_decode_does():
    with pytest.raises(DecodeFailure) as caught:
        parse_nested_value({})
    assert caught.value.rule == "official_empty_dict_fails_execute_decode"


def test_empty_execute_responses():
    assert is_empty_execute_response([])
    assert is_empty_execute_response([[]])
    assert is_empty_execute_response([""])
    assert not is_empty_execute_response(["ls()"])
    assert not is_empty_execute_response([[], []])


def test_instance_names_and_the_rewrite():
    name = official_instance_name("org/model-1.5:x_eval", "multi_turn_base_3", "GorillaFileSystem")
    assert name == "org_model_1_5_x_eval_multi_turn_base_3_GorillaFileSystem_instance"
    mapping = {"cd": "fs", "ls": "fs"}
    assert official_rewrites_method_names("cd(folder=ls())", mapping) == "fs.cd(folder=fs.ls())"
    assert official_rewrites_method_names("echo(content='run cd (x)')", mapping) == "echo(content='run fs.cd(x)')"
    assert official_rewrites_method_names("os.cd(x=1)", mapping) == "os.fs.cd(x=1)"


@pytest.mark.parametrize(("text", "blocked"), [
    ("kill(pid=1)", "kill"), ("os.remove(path='x')", "remove"), ("a.b.run(x=1)", None), ("fs.cd(folder='run')", None),
    ("exit", "exit"), ("x.Popen(a=1)", "Popen"),
])
def test_blocked_names(text: str, blocked: str | None):
    assert official_blocked_names(text) == blocked


def test_result_texts():
    assert official_result_text("plain") == "plain"
    assert official_result_text({"a": [1, 2]}) == '{"a": [1, 2]}'
    assert official_result_text({"a": {1, 2}}) == "{'a': {1, 2}}"
    assert official_result_text(None) == "None"
    assert official_result_text([{"a": 1}]) == "[{'a': 1}]"


# ---- against the official execute loop, run in the official venv --------------------------------------------

FILES = {"GorillaFileSystem": {"root": {"alex": {"type": "directory", "contents": {
    "notes.txt": {"type": "file", "content": "alpha\nbeta\ngamma"},
    "docs": {"type": "directory", "contents": {"a.md": {"type": "file", "content": "# A"}}}}}}}}
TWITTER = {"TwitterAPI": {"username": "alex", "password": "pw", "authenticated": True, "tweets": {},
                          "comments": {}, "retweets": {}, "following_list": [], "tweet_counter": 0}}
FS_AND_TWITTER = (["GorillaFileSystem", "TwitterAPI"], {**FILES, **TWITTER})
MATH_AND_FS = (["MathAPI", "GorillaFileSystem"], FILES)
# (classes and config, a model's step text or None, call texts or None)
TRICKY = [
    (FS_AND_TWITTER, None, ["nothing_here(a=1)"]),  # unknown function
    (FS_AND_TWITTER, None, ["cd(folder_name='docs')"]),  # a bad keyword
    (FS_AND_TWITTER, None, ["kill(pid=1)", "os.remove(path='x')", "x.run(a=1)", "a.b.run(c=1)"]),  # blocked names
    (FS_AND_TWITTER, None, ["cd(folder=pwd())", "ls(a=ls())"]),  # nested calls run, as eval runs them
    (FS_AND_TWITTER, "cd(folder={'pwd': {}})", None),  # a dict of dicts is a nested call text
    (FS_AND_TWITTER, "post_tweet(content={'pwd': {}}, tags=['#a'])", None),
    (FS_AND_TWITTER, "cd(folder={})", None),  # an empty dict: the decode fails
    (FS_AND_TWITTER, "[echo(content='run ls(a=True) now', file_name='n.txt'), cat(file_name='n.txt')]", None),
    (FS_AND_TWITTER, None, ["sort('notes.txt')", "cd('docs')", "ls(True)"]),  # positional ground-truth arguments
    (FS_AND_TWITTER, None, ["ls(", "cd(folder='a', folder='b')", " ls()", "\tls()", "cd(folder=None=1)"]),
    (FS_AND_TWITTER, None, ["ls.cd(folder='docs')", "GorillaFileSystem(a=1)", "cd(folder=inf)", "cd(folder=-inf)"]),
    (FS_AND_TWITTER, "[mkdir(dir_name='new'), mkdir(dir_name='new'), touch(file_name='t.txt'), ls()]", None),
    (FS_AND_TWITTER, "[post_tweet(content='hi', tags=['#x'], mentions=[]), get_tweet(tweet_id=0), get_tweet(tweet_id=-5)]",
     None),
    (FS_AND_TWITTER, "tail(file_name='notes.txt', lines=2.5)", None),
    (MATH_AND_FS, "[add(a=1, b=2), add(a=1+2j, b=-1), mean(numbers=[1, 2.5, -3]), divide(a=1, b=0)]", None),
    (MATH_AND_FS, "[square_root(number=16, precision=5), logarithm(value=8, base=2, precision=10), power(base=2, exponent=-1)]",
     None),
    (MATH_AND_FS, None, ["add(a=(1+2j), b=1)", "add(a=-(1), b=+2)", "mean(numbers={1, 2})"]),
]
# The documented deviations: what eval would run but the interpreter does not (neither a decoded call nor a ground
# truth holds such text), with the text the interpreter gives instead.
DEVIATING = [
    (MATH_AND_FS, "print(a=1)", "Error during execution: name 'print' is not defined"),
    (MATH_AND_FS, "add(a=1, b=[1, 2][0])",
     "Error during execution: unsupported expression (Subscript); it is not executed"),
    (MATH_AND_FS, "cd(folder=ls().keys())",
     "Error during execution: unsupported expression (Attribute: an attribute of something other than an "
     "environment instance); it is not executed"),
]


@pytest.fixture(scope="module")
def official_executions(tmp_path_factory: pytest.TempPathFactory):
    from tests.bfcl_official_venv import VenvUnavailable, official_venv, run_official_execution

    try:
        venv = official_venv()
    except VenvUnavailable as reason:
        pytest.skip(f"the official bfcl-eval 2026.3.23 venv could not be built: {reason}")
    return run_official_execution(venv, tmp_path_factory.mktemp("official_execution"), _cases())


def _cases() -> list[dict]:
    tricky = [(classes, text, calls) for classes, text, calls in TRICKY]
    deviating = [(classes, None, [call]) for classes, call, _ in DEVIATING]
    return [{"item_id": f"case_{index}", "involved_classes": classes, "initial_config": config,
             "long_context": False, "model_name": "org/model-1.5", "text": text, "calls": calls}
            for index, ((classes, config), text, calls) in enumerate(tricky + deviating)]


def test_the_interpreter_gives_the_official_results_and_error_texts(official_executions: list[dict],
                                                                    bfcl_official):
    from evaluators.benchmarks.bfcl.multi_turn.env_host import EnvironmentHost
    from evaluators.core.types import Sample

    host = EnvironmentHost(workers=1, wheel=bfcl_official.wheel)  # one worker: the cases' history as official
    try:
        ours = []
        for case in _cases():
            calls = case["calls"]
            if calls is None:
                try:
                    calls = official_call_texts(case["text"])
                except DecodeFailure:
                    ours.append({"decode_error": True})
                    continue
            sample = Sample(case["item_id"], "multi_turn_base", {"involved_classes": case["involved_classes"],
                                                                 "initial_config": case["initial_config"]}, [], {})
            session = host.open(sample, case["model_name"])
            ours.append({"calls": calls, "results": host.execute(session, calls)})
            host.close(session)
    finally:
        host.shutdown()
    assert len(ours) == len(official_executions) == len(TRICKY) + len(DEVIATING)
    for index, (mine, official) in enumerate(zip(ours[:len(TRICKY)], official_executions)):
        if "decode_error" in official:
            assert "decode_error" in mine, (index, mine, official)
            continue
        assert mine == official, (index, TRICKY[index])
    for (_, _, text), mine, official in zip(DEVIATING, ours[len(TRICKY):], official_executions[len(TRICKY):]):
        assert mine["results"] == [text] != official["results"]


# Model texts whose execute decode is easy to get wrong; with every step text of the oracle and two mutated sets.
DECODE_TEXTS = [
    "cd(folder='a')", "[cd(folder='a'), ls()]", "```\nls(a=True)\n```", "```python\nls(a=True)\n```", "'ls()'",
    "f(x=1e10, y=-0.0, z=1_000, w=0x1F, v=True, u=None)", "f(x=(1, (2, 3)), y=[], z={'k': [1, {'n': None}]})",
    "f(x={'a': {'b': 1}, 'c': 2})", "f(x={'g': {'h': {'i': 1}}})", "f(x={'g': {}})", "f(x={})", "f(x=[{}])",
    "f(x={'q\\'s': 1})", "f(x='It\\'s \"quoted\"')", "f(x='é ☃ \\n tab\\t')", "f(x=b'bytes')", "f(x=...)",
    "f(x=float('inf'))", "f(x=1+2j)", "f(x=3-4j)", "f(x=-5, y=+5, z=not True)", "f(x=2**10)", "f(x='a' + 'b')",
    "f(x=a.b)", "f(x=lambda: 1)", "f(x={1, 2})", "f(x=[i for i in range(3)])", "f(x=g(1))", "f(x=g(y=h(z=1)))",
    "f(1, 2, x=3)", "f(**{'a': 1})", "a.b.c(x=1)", "f()[0]", "[f(), 2]", "f(x=1)\ng(y=2)", "", "   ", "[]",
    "I will call cd now.", "f(x=d['k'])", "f(x=\"\"\"multi\nline\"\"\")",
]


@pytest.fixture(scope="module")
def decode_corpus(bfcl_official) -> list[str]:
    from evaluators.benchmarks.bfcl.categories import MULTI_TURN
    from evaluators.benchmarks.bfcl.data import load
    from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV
    from tests.bfcl_multi_turn_mutations import mutated_answer, oracle_answer

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
        patch.delenv("TOOLBOARD_DATA_DIR", raising=False)
        samples = load(subsets=list(MULTI_TURN))
    texts = set(DECODE_TEXTS)
    for sample in samples:
        for turns in (oracle_answer(sample), mutated_answer(sample, 0)[1], mutated_answer(sample, 1)[1]):
            texts.update(step for turn in turns for step in turn)
    return sorted(texts)


def test_the_execute_decode_equals_the_official_on_every_text(decode_corpus: list[str],
                                                              tmp_path_factory: pytest.TempPathFactory):
    from tests.bfcl_official_venv import VenvUnavailable, official_venv, run_official_decode

    try:
        venv = official_venv()
    except VenvUnavailable as reason:
        pytest.skip(f"the official bfcl-eval 2026.3.23 venv could not be built: {reason}")
    official = run_official_decode(venv, tmp_path_factory.mktemp("official_decode"), decode_corpus)
    differ = []
    for text, answer in zip(decode_corpus, official):
        try:
            ours: dict = {"calls": official_call_texts(text)}
        except DecodeFailure:
            ours = {"decode_error": True}
        if ("decode_error" in ours) != ("decode_error" in answer) or ours.get("calls") != answer.get("calls"):
            differ.append(f"{text!r}: ours {ours} official {answer}")
    assert len(decode_corpus) > 1000
    assert not differ, "\n".join(differ[:30])
