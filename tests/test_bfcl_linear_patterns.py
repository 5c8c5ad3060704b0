"""linear_patterns gives what the official converters' regular expressions give (compared on generated texts short
enough for the expressions to finish), and stays linear where the expressions backtrack for minutes."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Callable

import pytest

from evaluators.benchmarks.bfcl import java_types, javascript_types
from evaluators.benchmarks.bfcl import linear_patterns as linear
from tests.conftest import PROJECT

SPACES = ["", " ", "  ", "\n", "\t", " \n "]


def _group(match, index: int):
    return None if match is None else match.group(index)


# name -> (the official expression's result, ours, pieces of text, a generator of the pattern's opening)
CASES: dict[str, tuple[Callable, Callable, list[str], Callable[[random.Random], str]]] = {
    "ARRAY_2D": (lambda s: _group(javascript_types.ARRAY_2D.match(s), 0), linear.js_array_2d,
                 ["[", "]", ",", " ", "\n", "1", "x", ")", "[1]", "],", ", [", "] ,["],
                 lambda r: r.choice(["[", "new" + r.choice([" ", "\n", ""]) + "Array("]) + r.choice(SPACES) + "["),
    "OBJECT_PAIR": (lambda s: linear.OBJECT_PAIR.findall(s), linear.js_object_pairs,
                    [":", ",", " ", "\t", "a", "'", "[", "]", "b:", ", ", ": "], lambda r: ""),
    "ARRAY": (lambda s: _group(java_types.ARRAY.search(s), 1), linear.java_array_elements,
              [" ", "\n", "{", "}", "1", ",", "x", "_", "new int[]{"],
              lambda r: "new" + r.choice([" ", "\n ", ""]) + r.choice(["int", "String", ""]) + "[]" + r.choice(SPACES) + "{"),
    "ARRAYLIST_AS_LIST": (lambda s: _group(java_types.ARRAYLIST_AS_LIST.search(s), 1), linear.java_arraylist_as_list,
                          [")", "))", "\n", "a", '"', " ", "new ArrayList<>(Arrays.asList("],
                          lambda r: "new" + r.choice([" ", "  ", ""]) + "ArrayList<" + r.choice(["", "String", "a b"])
                          + ">(Arrays.asList("),
    "ARRAYLIST_ADDS": (lambda s: _group(java_types.ARRAYLIST_ADDS.search(s), 1), linear.java_arraylist_adds_body,
                       [" ", "\n", "}}", "}", "{", "a", "add(", ")", "\t", "{{", "new ArrayList<>(){{"],
                       lambda r: "new" + r.choice([" ", "\n", ""]) + "ArrayList<" + r.choice(["", "String"]) + ">()"
                       + r.choice(SPACES) + "{{"),
    "ARRAYLIST_ADD": (lambda s: java_types.ARRAYLIST_ADD.findall(s), linear.java_arraylist_added,
                      ["add(", ")", "\n", "a", " ", "("], lambda r: "add("),
    "HASHMAP_BODY": (lambda s: _group(java_types.HASHMAP_BODY.search(s), 1), linear.java_hashmap_body,
                     [" ", "\n", ">", "()", "(", ")", "{", "}", "a", 'put("k", 1)', "\t", "new HashMap<", "}}"],
                     lambda r: "new" + r.choice([" ", "\n", ""]) + "HashMap<" + r.choice(["", "String, Integer", "a>b"])
                     + ">" + r.choice(SPACES) + "()" + r.choice(SPACES) + "{"),
    "HASHMAP_PUT": (lambda s: java_types.HASHMAP_PUT.findall(s), linear.java_hashmap_puts,
                    ['put("', '"', ",", '",', " ", "\n", ")", "a", '", '], lambda r: 'put("'),
    "HASHMAP_EMPTY": (lambda s: java_types.HASHMAP_EMPTY.search(s) is not None, linear.java_hashmap_empty,
                      [" ", "\n", ">", "()", "(", ")", "a", "<", "new HashMap<"],
                      lambda r: "new" + r.choice([" ", "\n", ""]) + "HashMap<" + r.choice(["", "String", "a\nb"]) + ">"
                      + r.choice(SPACES) + "()"),
}


def generated_texts(name: str, count: int) -> list[str]:
    _, _, pieces, opening = CASES[name]
    generator = random.Random(name)
    texts = []
    while len(texts) < count:
        parts = []
        for _ in range(generator.randint(1, 3)):
            if generator.random() < 0.3:
                parts.append("".join(generator.choice(pieces) for _ in range(generator.randint(0, 3))))
            parts.append(opening(generator) if generator.random() < 0.8 else generator.choice(pieces))
            parts.append("".join(generator.choice(pieces) for _ in range(generator.randint(0, 8))))
        text = "".join(parts)
        if name == "OBJECT_PAIR":
            text = text.replace("\n", "")  # parse_object's body never holds one
        if name == "ARRAY_2D" and text.count("]") > 14:
            continue  # the official expression is exponential in the rows
        texts.append(text)
    return texts


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_same_result_as_the_official_expression(name: str):
    official, ours, _, _ = CASES[name]
    texts = generated_texts(name, 4000)
    differ = [(text, official(text), ours(text)) for text in texts if official(text) != ours(text)]
    assert not differ, differ[:5]
    assert sum(bool(official(text)) for text in texts) > len(texts) // 20  # the texts reach the matching paths


def test_array_2d_rows_with_brackets_and_newlines_in_them():
    generator = random.Random(7)

    def content() -> str:
        return "".join(generator.choice(["1", "]", "[", ",", " ", "a", "\n", ")", "],", "] ,["])
                       for _ in range(generator.randint(0, 4)))

    for _ in range(4000):
        text = generator.choice(["[", "new Array(", "new\nArray("]) + generator.choice(["", " ", "\n"])
        rows = generator.randint(1, 4)
        for row in range(rows):
            text += "[" + content() + "]" + generator.choice(["", " ", "\n"])
            if row < rows - 1:
                text += generator.choice([",", ", ", ",\n", " ", ""])
        text += generator.choice(["]", ")", "", " ]", "x", "],[1]]"]) + content()
        if text.count("]") <= 16:
            assert linear.js_array_2d(text) == _group(javascript_types.ARRAY_2D.match(text), 0), text


def test_the_converters_read_what_they_read_before():
    assert javascript_types.parse_array("[[1, 2], [3]]", None) == [[1, 2], [3]]
    assert javascript_types.parse_object("{a: [1, 2], b: 'x', c: 3}") == {"a": [1, 2], "b": "x", "c": 3}
    assert java_types.parse_array("new int[]{1, 2}", "integer") == [1, 2]
    assert java_types.parse_arraylist('new ArrayList<String>(Arrays.asList("a", "b"))', "String") == ["a", "b"]
    assert java_types.parse_arraylist('new ArrayList<String>() {{ add("a"); add("b"); }}', "String") == ["a", "b"]
    assert java_types.parse_hashmap('new HashMap<String, Integer>() {{ put("a", 1); put("b", 2); }}') == {"a": 1, "b": 2}
    assert java_types.parse_hashmap("new HashMap<String, Integer>()") == {}


# The official expressions take minutes to hours on these (the first: 2**200 steps); with a CPU limit (CPU seconds,
# not wall clock) a return to them fails here instead of hanging.
_HOSTILE = """
import resource
resource.setrlimit(resource.RLIMIT_CPU, (60, 60))
from evaluators.benchmarks.bfcl import java_types as J, javascript_types as S
n = 65_536
assert S.parse_array("[" + "[1]," * 200 + "1]", "integer") == ["[1"]  # no 2-D match: ARRAY_1D's first row
assert S.parse_array("[" + "[1]," * (n // 4) + "[1]]", None) == [[1]] * (n // 4 + 1)
assert S.parse_object("{" + "a," * (n // 2) + "}") == {}
assert S.parse_object("{a:b," + " " * n + "}") == {"a": "b,"}
assert J.parse_arraylist("new ArrayList<>(){{" + " " * 4000, "String") == []  # no `}}`: ARRAYLIST_EMPTY
assert J.parse_arraylist("new ArrayList<>(){{" * (n // 19), "String") == []
assert J.parse_arraylist("new ArrayList<>(Arrays.asList(" * (n // 30), "String") == "new ArrayList<>(Arrays.asList(" * (n // 30)
assert J.parse_arraylist("new ArrayList<>(){{" + "add(" * (n // 4) + "}}", "String") == []
assert J.parse_hashmap("new HashMap<" * (n // 12)) == "new HashMap<" * (n // 12)
assert J.parse_hashmap("new HashMap<" * (n // 24) + ">" * (n // 2)) == "new HashMap<" * (n // 24) + ">" * (n // 2)
assert J.parse_hashmap('new HashMap<a>(){{' + 'put("' * (n // 5) + '}}') == {}
assert J.parse_array("new int[]{" * (n // 10), "integer") == "new int[]{" * (n // 10)
print("done")
"""


def test_hostile_values_convert_in_linear_time():
    result = subprocess.run([sys.executable, "-c", _HOSTILE], cwd=PROJECT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0 and result.stdout.strip() == "done", result.stderr[-2000:]
