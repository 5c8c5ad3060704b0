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
