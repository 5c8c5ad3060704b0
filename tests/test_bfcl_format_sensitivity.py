"""BFCL format sensitivity, its parts on their own (no official venv, no endpoint): the configurations and ids, the
doc renderers, each decoder rule (tests/test_bfcl_format_sensitivity_parity.py compares them all with the official
runner), hostile answers that must fail their item only, the statistics and the report, and which runs take the
category."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from evaluators.benchmarks.bfcl.categories import FORMAT_SENSITIVITY, category_of_id
from evaluators.benchmarks.bfcl.checker import score
from evaluators.benchmarks.bfcl.decode_common import DecodeFailure
from evaluators.benchmarks.bfcl.format_sensitivity.data import (
    CONFIGURATIONS,
    official_configuration_from_id,
    official_format_sensitivity_id,
    official_routing_id,
)
from evaluators.benchmarks.bfcl.format_sensitivity.decode import (
    official_format_sensitivity_decode,
    official_json_call_list_pattern,
    official_json_outer_brackets,
    official_tool_call_tag_required,
    official_xml_value_by_type,
)
from evaluators.benchmarks.bfcl.format_sensitivity.prompts import official_python_docs, official_xml_docs
from evaluators.benchmarks.bfcl.format_sensitivity.report import (
    configuration_counts,
    format_sensitivity_summary,
    official_format_sensitivity_statistics,
)
from evaluators.benchmarks.bfcl.official_source import parse_configuration
from evaluators.benchmarks.bfcl.report import summarize
from evaluators.core.errors import DataError
from evaluators.core.types import Prediction, Sample, SampleScore

DEFAULT = "ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=plaintext&style=classic"
# A made-up enum sentence: the renderers take the wheel's, the layout is what is tested here.
SENTENCE = (" Allowed: ", None, ";")
DOCS: list[dict[str, Any]] = [{"name": "shop.order", "description": "Order, with care", "parameters": {"type": "dict", "properties": {"item": {"type": "string", "description": "What", "enum": ["tea", "coffee"]}, "count": {"type": "integer", "description": "How many", "default": 1}, "tags": {"type": "array", "items": {"type": "string"}, "description": "Tags", "default": ["a", "b"]}, "limits": {"type": "dict", "additionalProperties": {"type": "float"}, "description": "Per-day"}, "address": {"type": "dict", "description": "Where", "required": ["city"], "properties": {"city": {"type": "string", "description": "City"}, "zip": {"type": "string", "description": "Zip", "default": "00,1"}}}, "when": {"type": "tuple", "description": "Span"}, "ratio": {"type": "float"}}, "required": ["item", "count"]}}, {"name": "ping", "description": "Ping", "parameters": {"type": "dict", "properties": {}}}]
XML_DOCS = '<function name="shop.order">\n  <desc>Order, with care</desc>\n  <params>\n    <param name="item" type="string" required="true">\n      <desc>What Allowed: [\'tea\', \'coffee\'];</desc>\n    </param>\n    <param name="count" type="integer" required="true" default="1">\n      <desc>How many</desc>\n    </param>\n    <param name="tags" type="array[string]" required="false" default="[\'a\' \'b\']">\n      <desc>Tags</desc>\n    </param>\n    <param name="limits" type="dict[float]" required="false">\n      <desc>Per-day</desc>\n    </param>\n    <param name="address" type="dict" required="false">\n      <desc>Where</desc>\n      <params>\n        <param name="city" type="string" required="true">\n          <desc>City</desc>\n        </param>\n        <param name="zip" type="string" required="false" default="\'001\'">\n          <desc>Zip</desc>\n        </param>\n      </params>\n    </param>\n    <param name="when" type="tuple" required="false">\n      <desc>Span</desc>\n    </param>\n    <param name="ratio" type="float" required="false">\n      <desc></desc>\n    </param>\n  </params>\n</function>\n\n<function name="ping">\n  <desc>Ping</desc>\n  <params>\n  </params>\n</function>\n'
PYTHON_DOCS = '# Function: shop.order\n    """\n    Order, with care\n\n    Args:\n        item (str): What Allowed: [\'tea\', \'coffee\'];\n        count (int, default=1): How many\n        tags (list[str], default=[\'a\', \'b\']): Tags\n        limits (dict[str, float]): Per-day\n        address (dict): Where\n            city (str): City\n            zip (str, default=\'00,1\'): Zip\n        when (tuple): Span\n        ratio (float): \n    """\n\n\n\n\n\n# Function: ping\n    """\n    Ping\n\n    """\n\n\n\n'
FUNCTION = {"name": "math.gcd", "description": "GCD", "parameters": {"type": "dict", "properties": {
    "num1": {"type": "integer", "description": "a"}, "num2": {"type": "integer", "description": "b"}},
    "required": ["num1", "num2"]}}
GOLD = [{"math.gcd": {"num1": [40], "num2": [50]}}]


def _config(ret: str, tag: bool) -> str:
    return f"ret_fmt={ret}&tool_call_tag={tag}&func_doc_fmt=json&prompt_fmt=plaintext&style=classic"


def _sample(config: str, original: str = "simple_python_19", index: int = 0) -> Sample:
    return Sample(id=official_format_sensitivity_id(index, config, original), subset=FORMAT_SENSITIVITY,
                  input={"question": [[{"role": "user", "content": "gcd of 40 and 50"}]], "function": [FUNCTION]},
                  gold=GOLD, meta={"category": FORMAT_SENSITIVITY, "language": "python", "original_id": original})


def _verdict(text: str | None, ret: str = "python", tag: bool = False, original: str = "simple_python_19") -> SampleScore:
    sample = _sample(_config(ret, tag), original)
    return score(sample, Prediction(sample.id, output=text))


# ---- configurations and ids --------------------------------------------------------------------------------


def test_the_26_configurations_in_the_official_order():
    assert len(CONFIGURATIONS) == len(set(CONFIGURATIONS)) == 26
    assert CONFIGURATIONS[0] == "ret_fmt=python&tool_call_tag=True&func_doc_fmt=python&prompt_fmt=plaintext&style=classic"
    assert CONFIGURATIONS[23] == "ret_fmt=concise_xml&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=plaintext&style=classic"
    assert CONFIGURATIONS[24:] == (DEFAULT.replace("plaintext", "markdown"), DEFAULT.replace("classic", "experimental"))
    assert DEFAULT in CONFIGURATIONS
    assert all(parse_configuration(text).text == text for text in CONFIGURATIONS)


def test_official_configuration_from_id_and_the_routing_id():
    sample_id = official_format_sensitivity_id(27, CONFIGURATIONS[1], "live_parallel_multiple_3-2-1")
    assert sample_id == f"format_sensitivity_27:{CONFIGURATIONS[1]}:live_parallel_multiple_3-2-1"
    config = official_configuration_from_id(sample_id)
    assert (config.return_format, config.tool_call_tag, config.function_doc_format) == ("python", True, "xml")
    assert official_routing_id(sample_id) == "live_parallel_multiple_3-2-1"
    assert category_of_id(sample_id) == FORMAT_SENSITIVITY
    with pytest.raises(DataError, match="exactly two colons"):
        official_configuration_from_id("format_sensitivity_1:simple_python_2")
    with pytest.raises(DataError, match="not a prompt configuration"):
        official_configuration_from_id("format_sensitivity_1:ret_fmt=yaml:simple_python_2")


# ---- the doc renderers (checked against the official ones on this doc: equal) --------------------------------


def test_official_xml_docs_and_official_xml_doc_drops_attribute_commas():
    assert official_xml_docs(DOCS, SENTENCE) == XML_DOCS
    assert 'default="[\'a\' \'b\']"' in XML_DOCS and "default=\"'001'\"" in XML_DOCS


def test_official_python_docs_and_official_python_docs_join():
    assert official_python_docs(DOCS, SENTENCE) == PYTHON_DOCS
    assert PYTHON_DOCS.endswith('    """\n\n\n\n') and "\n\n\n\n\n\n# Function: ping" in PYTHON_DOCS


# ---- decoders ----------------------------------------------------------------------------------------------


def test_official_tool_call_tag_required():
    assert official_tool_call_tag_required("[ok <TOOLCALL> f(a=1) </TOOLCALL> <TOOLCALL>g()</TOOLCALL>]") == "f(a=1)"
    with pytest.raises(DecodeFailure) as failure:
        official_tool_call_tag_required("[f(a=1)]</TOOLCALL>")
    assert failure.value.rule == "official_tool_call_tag_required"
    # inside the tag the text is not bracketed again: a tuple of calls is still calls
    assert official_format_sensitivity_decode("<TOOLCALL>f(a=1), g(b=2)</TOOLCALL>", "python", True) == [
        {"f": {"a": 1}}, {"g": {"b": 2}}]
    assert _verdict("<TOOLCALL>[math.gcd(num1=40, num2=50)]</TOOLCALL>", tag=True).correct
    missing = _verdict("[math.gcd(num1=40, num2=50)]", tag=True)
    assert (missing.correct, missing.error_type, missing.rule) == (False, "ast_decoder:decoder_failed",
                                                                   "official_tool_call_tag_required")


def test_official_json_patterns_equal_the_regular_expressions_in_linear_time():
    pattern = re.compile(r"\[\s*{.*?}\s*(?:,\s*{.*?}\s*)*\]", re.DOTALL)
    outer = re.compile(r"\[.*\]", re.DOTALL)
    rng = random.Random(7)
    for _ in range(4000):
        text = "".join(rng.choice("[]{}, a\n") for _ in range(rng.randrange(14)))
        found = pattern.search(text)
        assert official_json_call_list_pattern(text) == (found.span() if found else None), text
        found = outer.search(text)
        assert official_json_outer_brackets(text) == (found.group(0) if found else text), text
    # The official pattern backtracks exponentially on this; a linear matcher simply ends (no clock: a loaded machine
    # must not fail it, and an exponential one would never return).
    hostile = "[{" + "},{" * 40_000
    assert official_json_call_list_pattern(hostile) is None


def test_official_json_rules():
    decode = official_format_sensitivity_decode
    assert decode('```json\n[{"function": "f", "parameters": {"a": 1}}]\n```', "json", False) == [{"f": {"a": 1}}]
    # official_invalid_json_is_no_call: no call at all, not a decode failure
    assert decode("[{'function': 'f', 'parameters': {}}]", "json", False) == []
    assert _verdict("[{'function': 'math.gcd'}]", "json").error_type == "simple_function_checker:wrong_count"
    with pytest.raises(DecodeFailure) as failure:
        decode('[{"function": "f"}]', "json", False)
    assert failure.value.rule == "official_json_call_needs_function_and_parameters"
    # objects that are not calls are skipped; the pattern stops at the first `}]` of a nested list of objects
    assert decode('[1, "x", {"function": "f", "parameters": {}}]', "json", False) == [{"f": {}}]
    assert decode('[{"function": "f", "parameters": {"c": [{"k": 1}]}}]', "json", False) == []
    assert _verdict('[{"function": "math.gcd", "parameters": {"num1": 40, "num2": 50}}]', "json").correct


def test_official_xml_rules():
    decode = official_format_sensitivity_decode
    verbose = ('Calls: <functions><function name="f"><params><param name="a" value="7" type="integer"/>'
               '<param value="x"/><param name="b" type="boolean" value="TRUE"/></params></function>'
               '<function name="g"><param name="c" value="[1, (2, 3)]" type="array"/></function></functions> done')
    assert decode(verbose, "verbose_xml", False) == [{"f": {"a": 7, None: "x", "b": True}}, {"g": {"c": [1, (2, 3)]}}]
    concise = '<functions><function name="f"><param name="a" type="float"> 2.5 </param><param name="s"> hi </param></function></functions>'
    assert decode(concise, "concise_xml", False) == [{"f": {"a": 2.5, "s": "hi"}}]
    with pytest.raises(DecodeFailure) as failure:
        decode('<functions><function name="f"><param type="string">x</param></function></functions>', "concise_xml", False)
    assert failure.value.rule == "official_concise_xml_decode_raises" and "KeyError" in failure.value.detail
    with pytest.raises(DecodeFailure) as failure:
        decode("<function name='f'/>", "verbose_xml", False)
    assert failure.value.rule == "official_xml_functions_block_required"
    assert [official_xml_value_by_type(raw, kind) for raw, kind in (
        ("5", "integer"), ("5", "float"), ("yes", "boolean"), ("x", "null"), ("{'a': 1}", "dict"), ("(1,)", "tuple"),
        ("1", "string"), ("1", "number"))] == [5, 5.0, False, None, {"a": 1}, (1,), "1", "1"]
    assert _verdict('<functions><function name="math.gcd"><param name="num1" type="integer">40</param>'
                    '<param name="num2" type="integer">50</param></function></functions>', "concise_xml").correct


# ---- hostile answers: each fails its own item with a reason, nothing raises --------------------------------

HOSTILE = {
    "billion_laughs": ('<functions><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>'
                       '<function name="f">&b;</function></functions>', "verbose_xml"),
    "undefined_entity": ('<functions><function name="f"><param name="a" value="&x;"/></function></functions>',
                         "verbose_xml"),
    "external_entity": ('<functions><function name="f"><param name="a">&xxe;</param></function></functions>',
                        "concise_xml"),
    "deep_xml": ("<functions><function name='f'>" + "<a>" * 12_000 + "</a>" * 12_000 + "</function></functions>",
                 "concise_xml"),
    "unclosed_xml": ("<functions>" + "<function name='f'>" * 4_000 + "</functions>", "concise_xml"),
    "deep_literal": ('<functions><function name="f"><param name="a" type="array">' + "[" * 5_000 + "]" * 5_000
                     + "</param></function></functions>", "concise_xml"),
    "huge_integer": ('<functions><function name="f"><param name="a" type="integer">' + "9" * 5_000
                     + "</param></function></functions>", "concise_xml"),
    "deep_json": ("[" * 60_000 + "]" * 39_000, "json"),
    "huge_json_integer": ('[{"function": "f", "parameters": {"a": ' + "9" * 5_000 + "}}]", "json"),
    "too_long": ("[" + "f(a=1), " * 20_000 + "]", "python"),
    "nul_bytes": ("<TOOLCALL>\x00f(a=1)</TOOLCALL>", "python"),
}


# (error type, rule) where it is not "decoder failed" because a decode step of the return format raised. Deep but
# well-formed XML parses (expat is not recursive) and names a wrong function.
HOSTILE_OUTCOMES = {"too_long": ("ast_decoder:decoder_failed", "bounded_answer_too_long"),
                    "nul_bytes": ("ast_decoder:decoder_failed", "official_syntax_error_fails_decode"),
                    "deep_xml": ("simple_function_checker:wrong_func_name", "official_function_name_exact")}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_answer_fails_only_its_item_with_a_clear_reason(kind: str):
    text, ret = HOSTILE[kind]
    verdict = _verdict(text, ret, tag=kind == "nul_bytes")
    expected = HOSTILE_OUTCOMES.get(kind, ("ast_decoder:decoder_failed", f"official_{ret}_decode_raises"))
    assert (verdict.correct, verdict.error_type, verdict.rule) == (False, *expected) and verdict.detail, verdict


def test_no_text_fails_the_decode_and_an_empty_text_is_no_call():
    assert _verdict(None).error_type == "ast_decoder:decoder_failed"
    # "" is bracketed into "[]": an empty list of calls, as officially
    assert _verdict("").error_type == "simple_function_checker:wrong_count"


# ---- error types, statistics, report -------------------------------------------------------------------------


def test_the_official_error_types_by_routing():
    assert _verdict("[math.gcd(num1=40, num2=50), math.gcd(num1=1, num2=2)]").error_type == \
        "simple_function_checker:wrong_count"
    assert _verdict("[]", original="parallel_3").error_type == "parallel_function_checker_no_order:wrong_count"
    assert _verdict("[]", original="live_multiple_2-1-0").error_type == "multiple_function_checker:wrong_count"
    assert _verdict("[math.gcd(num1=41, num2=50)]", original="parallel_3").error_type == \
        "parallel_function_checker_no_order:cannot_find_match"
    assert _verdict("[math.gcd(num1='40', num2=50)]").error_type == "type_error:simple"
    assert _verdict("[math.gcd(num1=41, num2=50)]").error_type == "value_error:others"
    assert _verdict("[math.lcm(num1=40, num2=50)]").error_type == "simple_function_checker:wrong_func_name"
    assert _verdict("[math.gcd(num1=40)]").error_type == "simple_function_checker:missing_required"
    assert _verdict("math.gcd").error_type == "ast_decoder:decoder_failed"
    assert _verdict('[{"function": "f", "parameters": 3}]', "json").error_type == \
        "ast_decoder:decoder_wrong_output_format"


def test_official_format_sensitivity_statistics():
    counts = {"a": (1, 2), "b": (2, 2), "c": (0, 2)}
    assert official_format_sensitivity_statistics(counts) == {
        "accuracy_max_delta": 100.0, "accuracy_variance": 2500.0, "accuracy_std": 50.0}
    assert official_format_sensitivity_statistics({"a": (1, 3)}) == {
        "accuracy_max_delta": 0.0, "accuracy_variance": 0.0, "accuracy_std": 0.0}


def _scores(correct_by_config: dict[str, list[bool]], error_type: str | None = None) -> list[SampleScore]:
    scores = []
    for config, results in correct_by_config.items():
        for index, correct in enumerate(results):
            scores.append(SampleScore(official_format_sensitivity_id(index, config, "simple_python_1"), FORMAT_SENSITIVITY,
                                      correct, None if correct else error_type or "value_error:others"))
    return scores


def test_the_report_keeps_each_configuration_and_the_statistics_outside_overall():
    scores = _scores({CONFIGURATIONS[25]: [True, True], CONFIGURATIONS[0]: [True, False]})
    scores.append(SampleScore("simple_python_0", "simple_python", True))
    report = summarize([], scores, subsets=["simple_python", FORMAT_SENSITIVITY])
    assert list(configuration_counts(scores)) == [CONFIGURATIONS[0], CONFIGURATIONS[25]]
    metrics = report.subsets[FORMAT_SENSITIVITY].metrics
    assert metrics["accuracy"] == 0.75 and report.subsets[FORMAT_SENSITIVITY].n == 4
    assert (metrics[f"accuracy[{CONFIGURATIONS[0]}]"], metrics[f"correct[{CONFIGURATIONS[0]}]"],
            metrics[f"total[{CONFIGURATIONS[0]}]"]) == (0.5, 1, 2)
    assert report.summary["format_sensitivity_max_delta"] == 0.5
    assert report.summary["format_sensitivity_std"] == 0.3536
    assert report.summary["overall"] is None and report.summary["non_live_ast"] is None
    without = summarize([], [SampleScore("simple_python_0", "simple_python", True)])
    assert "format_sensitivity_max_delta" not in without.summary
    missing = _scores({CONFIGURATIONS[0]: [False], CONFIGURATIONS[1]: [False]}, error_type="missing")
    assert format_sensitivity_summary(missing) == {"format_sensitivity_max_delta": None, "format_sensitivity_std": None}


# ---- which runs take it ------------------------------------------------------------------------------------


def test_a_run_of_every_category_leaves_it_out_and_native_tools_are_refused():
    from evaluators.benchmarks.bfcl.solve import run_problem
    from evaluators.core.registry import get_benchmark
    from evaluators.core.selection import runnable_subsets
    from evaluators.engine.settings import ModelSettings, RunConfig

    bfcl = get_benchmark("bfcl")
    assert FORMAT_SENSITIVITY not in runnable_subsets(bfcl, None)
    assert FORMAT_SENSITIVITY not in runnable_subsets(bfcl, ["all"])
    assert runnable_subsets(bfcl, [FORMAT_SENSITIVITY]) == [FORMAT_SENSITIVITY]

    def config(subsets: tuple[str, ...], mode: str) -> Any:
        return RunConfig(benchmark="bfcl", subsets=subsets,
                         model=ModelSettings(base_url="http://127.0.0.1:1/v1", model="m", request_mode=mode))

    problem = run_problem(config((FORMAT_SENSITIVITY,), "tools"))
    assert problem and "format sensitivity runs in prompt mode only" in problem
    assert run_problem(config((FORMAT_SENSITIVITY,), "prompt")) is None


# ---- the ids file, from a folder laid out like the wheel's data ---------------------------------------------


def test_official_items_in_data_file_order_from_a_folder(tmp_path):
    import json

    from evaluators.benchmarks.bfcl.data import load
    from tests.bfcl_fixtures import ANSWERS, write_bfcl_folder

    folder = write_bfcl_folder(tmp_path / "data")
    with pytest.raises(DataError, match="expected BFCL_v4_format_sensitivity.json"):
        load(folder, subsets=[FORMAT_SENSITIVITY])
    assert FORMAT_SENSITIVITY not in {s.subset for s in load(folder)}  # every category: left out without the file
    ids_file = folder / "BFCL_v4_format_sensitivity.json"
    # key order, then data-file order within a category (not the list's order); an empty list is skipped
    ids_file.write_text(json.dumps({"parallel": ["parallel_0"], "multiple": [],
                                    "simple_python": ["simple_python_2", "simple_python_0"]}), encoding="utf-8")
    samples = load(folder, subsets=[FORMAT_SENSITIVITY])
    assert len(samples) == 3 * 26
    assert [s.meta["original_id"] for s in samples[::26]] == ["parallel_0", "simple_python_0", "simple_python_2"]
    assert samples[27].id == f"format_sensitivity_27:{CONFIGURATIONS[1]}:simple_python_0"
    assert samples[27].gold == ANSWERS["simple_python"][0] and samples[27].meta["configuration"] == CONFIGURATIONS[1]
    assert load(folder, subsets=[FORMAT_SENSITIVITY], limit=26) == samples[:26]
    ids_file.write_text(json.dumps({"simple_python": ["simple_python_9"]}), encoding="utf-8")
    with pytest.raises(DataError, match="1 id\\(s\\) listed for simple_python are not in its data file"):
        load(folder, subsets=[FORMAT_SENSITIVITY])
    ids_file.write_text(json.dumps({"irrelevance": ["irrelevance_0"]}), encoding="utf-8")
    with pytest.raises(DataError, match="irrelevance is not a single-turn category with answers"):
        load(folder, subsets=[FORMAT_SENSITIVITY])
    ids_file.write_text(json.dumps(["simple_python_0"]), encoding="utf-8")
    with pytest.raises(DataError, match="expected one JSON object"):
        load(folder, subsets=[FORMAT_SENSITIVITY])
