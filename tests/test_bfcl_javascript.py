"""simple_javascript decoding (tree-sitter) and value conversion by the declared JavaScript type."""

from __future__ import annotations

import pytest

from evaluators.benchmarks.bfcl.decode_common import DecodeFailure
from evaluators.benchmarks.bfcl.decode_javascript import WRONG_FORMAT_RULES, decode_javascript
from evaluators.benchmarks.bfcl.javascript_types import JAVASCRIPT_TO_PYTHON_TYPE, UnsupportedJavaScriptType, javascript_value
from tests.bfcl_source_render import javascript_call_text, matches_allowed, read_lines
from tests.conftest import BfclOfficial


def failure_rule(text: str, mode: str = "official") -> str:
    with pytest.raises(DecodeFailure) as raised:
        decode_javascript(text, mode)
    return raised.value.rule


# --- decoding ---

@pytest.mark.parametrize("mode", ["official", "strict"])
def test_a_lone_call_needs_no_semicolon(mode):
    assert decode_javascript("f(a=1)", mode) == [{"f": {"a": "1"}}]
    assert decode_javascript("```\n[a.b.c(x={k: 1}, y=[1, 2])]\n```", mode) == [{"a.b.c": {"x": "{k: 1}", "y": "[1, 2]"}}]


@pytest.mark.parametrize("text", ["hello there", "[f(a=1,", "```javascript\n[f(a=1)]\n```"])
def test_official_js_tree_sitter_error(text):
    assert failure_rule(text) == "official_js_tree_sitter_error"


def test_official_js_first_call_only():
    assert decode_javascript("[f(a=1); g(b=2)]") == [{"f": {"a": "1"}}]
    # Statements before the first call are skipped; a call inside another statement is not looked at.
    assert decode_javascript('[x; f(a=1)]') == [{"f": {"a": "1"}}]
    assert decode_javascript("[f(a=1)(b=2)]") == [{"f(a=1)": {"b": "2"}}]


@pytest.mark.parametrize("text", ["[f(a=1), g(b=2)]", "[]", "", "[const x = f(a=1)]", "[new F(a=1)]"])
def test_official_js_no_call_is_wrong_format(text):
    rule = failure_rule(text)
    assert rule == "official_js_no_call_is_wrong_format"
    assert rule in WRONG_FORMAT_RULES


def test_official_js_named_and_bare_arguments():
    assert decode_javascript('[f(a=1, d=false, 5, "s", zz)]') == [{"f": {"a": "1", "d": "false", None: "zz"}}]
    assert decode_javascript("[f(a=1, true, false)]") == [{"f": {"a": "1", None: "true"}}]


@pytest.mark.parametrize("text", ["[f(a=1, a=2)]", "[f(a=1, zz, true)]"])
def test_official_js_repeated_argument_fails(text):
    assert failure_rule(text) == "official_js_repeated_argument_fails"


def test_official_js_strips_one_quote_pair():
    assert decode_javascript("[f(a=`t`, b=\"q\", c='r', d=\"x'\")]") == [{"f": {"a": "`t`", "b": "q", "c": "r",
                                                                               "d": "x'"}}]
    assert decode_javascript("""[f(a='a' + "b")]""") == [{"f": {"a": "'a' + \"b\""}}]
    # Only the outer characters are looked at.
    assert decode_javascript('[f(a="a" + "b")]') == [{"f": {"a": 'a" + "b'}}]


def test_official_js_unencodable_text():
    assert failure_rule('[f(a="\ud800")]') == "official_js_unencodable_text"


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError):
        decode_javascript("f(a=1)", "lenient")


# --- value conversion by the declared type (the data file's original doc) ---

def test_official_js_string_strips_quotes():
    assert javascript_value("'x'", {"type": "String"}) == "x"
    assert javascript_value("x", {"type": "String"}) == "x"
    assert javascript_value("`x`", {"type": "String"}) == "`x`"


@pytest.mark.parametrize(("text", "declared", "expected"), [
    ("3", "integer", 3), ("3.0", "integer", "3.0"),
    ("3", "float", 3.0), ("-2.5", "float", -2.5), ("1e3", "float", "1e3"), (".5", "float", ".5"),
    ("12n", "Bigint", 12), ("12", "Bigint", "12"),
    ("true", "Boolean", True), ("false", "Boolean", False), ("1", "Boolean", "1"),
    ("whatever()", "any", "whatever()"),
])
def test_official_js_number_patterns(text, declared, expected):
    value = javascript_value(text, {"type": declared})
    assert value == expected and type(value) is type(expected)


def test_official_js_array_naive_split():
    strings = {"type": "array", "items": {"type": "String"}}
    assert javascript_value('["a", \'b\', c]', strings) == ["a", "b", "c"]
    assert javascript_value('["a, b"]', strings) == ['"a', 'b"']
    assert javascript_value("new Array(1, 2)", {"type": "array", "items": {"type": "float"}}) == [1.0, 2.0]
    assert javascript_value("[]", strings) == []
    assert javascript_value("[[1, 2], [3, 'x']]", {"type": "array", "items": {"type": "array"}}) == [[1, 2], [3, "x"]]
    assert javascript_value("myList", strings) == "myList"


def test_official_js_dict_regex():
    assert javascript_value("{}", {"type": "dict"}) == {}
    assert javascript_value("{a: '5', 'b': \"x\", c: [1, 'y'], d: true}", {"type": "dict"}) == {
        "a": 5, "b": "x", "c": [1, "y"], "d": True}
    # The text is cut at the first "}": a nested object breaks the rest.
    assert javascript_value("{a: {b: 1}, c: 2}", {"type": "dict"}) == {"a": "{b: 1"}
    # `.` does not cross a newline: an object written over several lines stays text.
    assert javascript_value("{\n  a: 1\n}", {"type": "dict"}) == "{\n  a: 1\n}"
    assert javascript_value("settings", {"type": "dict"}) == "settings"


def test_strict_js_reads_literals():
    doc = {"type": "dict"}
    assert javascript_value("{a: {b: 1}, c: 2}", doc, "strict") == {"a": {"b": 1}, "c": 2}
    assert javascript_value('{\n  a: 1,\n  "b": "x"\n}', doc, "strict") == {"a": 1, "b": "x"}
    assert javascript_value("{a: '5', b: [1, 'y', {d: 2}], c: -3.5, d: null, e: true}", doc, "strict") == {
        "a": "5", "b": [1, "y", {"d": 2}], "c": -3.5, "d": "null", "e": True}
    strings = {"type": "array", "items": {"type": "String"}}
    assert javascript_value('["a, b", c]', strings, "strict") == ["a, b", "c"]
    assert javascript_value("[60, 30]", {"type": "array", "items": {"type": "float"}}, "strict") == [60.0, 30.0]
    assert javascript_value("[{a: 1}, {b: [2]}]", {"type": "array", "items": {"type": "dict"}}, "strict") == [
        {"a": 1}, {"b": [2]}]
    # Not one complete literal: converted as officially.
    for text, declared in (("{a: 1", doc), ("[1, 2", strings), ("cfg", doc), ("[1, 2]", doc)):
        assert javascript_value(text, declared, "strict") == javascript_value(text, declared)


def test_official_js_unsupported_type():
    for doc in ({"type": "object"}, {"type": "array"}, {"type": "array", "items": {"type": "tuple"}}):
        with pytest.raises(UnsupportedJavaScriptType):
            javascript_value("x", doc)


def test_javascript_to_python_type_covers_the_declared_types():
    assert JAVASCRIPT_TO_PYTHON_TYPE == {"String": "string", "integer": "integer", "float": "float",
                                         "Bigint": "integer", "Boolean": "boolean", "dict": "dict",
                                         "array": "array", "any": "any"}


# --- the renderer, on an item of our own ---

def test_javascript_call_text_writes_natural_javascript():
    doc = {"name": "shelf.put", "parameters": {"type": "dict", "required": ["books", "limit"], "properties": {
        "books": {"type": "array", "items": {"type": "String"}}, "limit": {"type": "float"},
        "meta": {"type": "dict"}, "target": {"type": "any"}, "note": {"type": "String"}}}}
    gold = {"shelf.put": {"books": [["Dune", "Emma"]], "limit": [4.0], "meta": [{"genre": ["novel"], "n": [2]}],
                          "target": ["shelfRef"], "note": ["", "x"]}}
    text = javascript_call_text(gold, doc)
    assert text == '[shelf.put(books=["Dune", "Emma"], limit=4, meta={genre: "novel", n: 2}, target=shelfRef)]'
    (call,) = decode_javascript(text)
    properties = doc["parameters"]["properties"]
    values = {name: javascript_value(value, properties[name]) for name, value in call["shelf.put"].items()}
    assert values == {"books": ["Dune", "Emma"], "limit": 4.0, "meta": {"genre": "novel", "n": 2}, "target": "shelfRef"}


# --- the real data: every gold answer, written as natural JavaScript ---

@pytest.mark.parametrize("mode", ["official", "strict"])
def test_every_javascript_gold_answer_decodes_and_converts(bfcl_official: BfclOfficial, mode):
    root = bfcl_official.data_dir
    items = read_lines(root / "BFCL_v4_simple_javascript.json")
    answers = read_lines(root / "possible_answer" / "BFCL_v4_simple_javascript.json")
    unmatched = set()
    for item, answer in zip(items, answers, strict=True):
        (gold,) = answer["ground_truth"]
        doc = item["function"][0]
        (call,) = decode_javascript(javascript_call_text(gold, doc), mode)
        assert list(call) == [doc["name"]]
        properties = doc["parameters"]["properties"]
        for name, text in call[doc["name"]].items():
            if not matches_allowed(javascript_value(text, properties[name], mode), gold[doc["name"]][name]):
                unmatched.add(item["id"])
    assert len(items) == 50
    assert unmatched == set()
