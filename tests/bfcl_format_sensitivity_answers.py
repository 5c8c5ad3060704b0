"""Test-only: format sensitivity answers written in each return format, for comparing our scorer with the official
`format_sensitivity_runner`.

`oracle_answer` is the gold (tests/bfcl_oracle.py's choice of values) written as the item's configuration asks:
Python calls, a JSON list of `{"function", "parameters"}`, verbose XML (`<param name value type/>`) or concise XML
(`<param name type>value</param>`), inside `<TOOLCALL>…</TOOLCALL>` when the configuration has the tag.
`mutated_answer` changes it in one seeded way per (item, round): a call-level change (bfcl_mutations.CALL_CHANGES;
the Python-source ones only for Python answers), sometimes the answer written in another return format, and
sometimes a change of the text (the tag left out or left open, prose around it, a fence, invalid JSON, malformed
XML, a value its type cannot read, a call object without its parameters, …). Same (item, round), same text.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from evaluators.benchmarks.bfcl.format_sensitivity.data import official_configuration_from_id
from evaluators.core.types import Sample
from tests import bfcl_mutations
from tests.bfcl_mutations import Call

SEED = "bfcl-format-sensitivity-parity"
RETURN_FORMATS = ("python", "json", "verbose_xml", "concise_xml")
# Call changes that Python source alone can express (an expression, a positional argument, `**kw`).
PYTHON_ONLY_CHANGES = ("expression_argument", "positional_argument", "keyword_splat")
WRONG_FORMAT_SHARE = 0.15
TEXT_CHANGE_SHARE = 0.5


def _xml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, tuple):
        return "tuple"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "dict"
    if value is None:
        return "null"
    return "string"


def _xml_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    return repr(value)


def _arguments(call: Call) -> dict[str, Any]:
    return {param: argument.value for param, argument in call.arguments.items()}


def render(calls: list[Call], return_format: str, rng: random.Random) -> str:
    if return_format == "python":
        return bfcl_mutations._render(rng, calls, "python")
    if return_format == "json":
        return json.dumps([{"function": call.name, "parameters": _arguments(call)} for call in calls])
    functions = []
    for call in calls:
        if return_format == "verbose_xml":
            params = "".join(f"<param name={quoteattr(p)} value={quoteattr(_xml_text(v))} type=\"{_xml_type(v)}\"/>"
                             for p, v in _arguments(call).items())
            functions.append(f"<function name={quoteattr(call.name)}><params>{params}</params></function>")
        else:
            params = "".join(f"<param name={quoteattr(p)} type=\"{_xml_type(v)}\">{escape(_xml_text(v))}</param>"
                             for p, v in _arguments(call).items())
            functions.append(f"<function name={quoteattr(call.name)}>{params}</function>")
    return "<functions>" + "".join(functions) + "</functions>"


def _tagged(text: str, tag: bool) -> str:
    return f"<TOOLCALL>{text}</TOOLCALL>" if tag else text


def oracle_answer(sample: Sample) -> str:
    config = official_configuration_from_id(sample.id)
    calls = bfcl_mutations._gold_calls(sample)
    return _tagged(render(calls, config.return_format, random.Random(0)), config.tool_call_tag)


TextChange = Callable[[str, bool], str]


def _cut(text: str, closing: str) -> str:
    index = text.rfind(closing)
    return text if index < 0 else text[:index] + text[index + len(closing):]


TEXT_CHANGES: dict[str, TextChange] = {
    "tag_left_out": lambda text, tag: text.replace("<TOOLCALL>", "").replace("</TOOLCALL>", ""),
    "tag_added": lambda text, tag: text if tag else f"<TOOLCALL>{text}</TOOLCALL>",
    "tag_left_open": lambda text, tag: text.replace("</TOOLCALL>", ""),
    "tag_lower_case": lambda text, tag: text.replace("TOOLCALL", "toolcall"),
    "prose_before": lambda text, tag: "Sure! Here are the calls: " + text,
    "prose_after": lambda text, tag: text + "\nThese calls answer the question.",
    "fence_json": lambda text, tag: f"```json\n{text}\n```",
    "fence_xml": lambda text, tag: f"```xml\n{text}\n```",
    "json_single_quotes": lambda text, tag: text.replace('"', "'"),
    "json_brace_dropped": lambda text, tag: _cut(text, "}"),
    "json_trailing_comma": lambda text, tag: text.replace("}]", "},]"),
    "json_object_not_list": lambda text, tag: text.replace("[{", "{", 1).replace("}]", "}", 1),
    "json_parameters_renamed": lambda text, tag: text.replace('"parameters"', '"arguments"'),
    "json_parameters_text": lambda text, tag: text.replace('"parameters": ', '"parameters": "none", "p": ', 1),
    "json_empty_list": lambda text, tag: _tagged("[]", tag),
    "json_number": lambda text, tag: _tagged("42", tag),
    "xml_closing_dropped": lambda text, tag: _cut(text, "</function>"),
    "xml_ampersand": lambda text, tag: text.replace("<functions>", "<functions>&", 1),
    "xml_functions_open": lambda text, tag: text.replace("</functions>", ""),
    "xml_bad_integer": lambda text, tag: text.replace('type="string"', 'type="integer"', 1),
    "xml_name_left_out": lambda text, tag: text.replace("<param name=", "<param nom=", 1),
    "xml_unknown_type": lambda text, tag: text.replace('type="', 'type="x', 1),
    "xml_spaces_inside": lambda text, tag: text.replace("</param>", "  </param>").replace('">', '">  '),
    "empty": lambda text, tag: "",
    "whitespace_only": lambda text, tag: " \n ",
    "brackets_only": lambda text, tag: "[]",
}


def mutated_answer(sample: Sample, round_: int) -> tuple[str, str]:
    """(what was changed, the text) for one item in one round."""
    rng = random.Random(f"{SEED}:{round_}:{sample.id}")
    config = official_configuration_from_id(sample.id)
    return_format = config.return_format
    if rng.random() < WRONG_FORMAT_SHARE:
        return_format = rng.choice([other for other in RETURN_FORMATS if other != config.return_format])
    changes = {name: change for name, change in bfcl_mutations.CALL_CHANGES.items()
               if return_format == "python" or name not in PYTHON_ONLY_CHANGES}
    calls = bfcl_mutations._gold_calls(sample)
    call_kind = rng.choice(sorted(changes))
    changes[call_kind](rng, calls)
    text = _tagged(render(calls, return_format, rng), config.tool_call_tag)
    text_kind = rng.choice(sorted(TEXT_CHANGES)) if rng.random() < TEXT_CHANGE_SHARE else "as_is"
    if text_kind != "as_is":
        text = TEXT_CHANGES[text_kind](text, config.tool_call_tag)
    written = "" if return_format == config.return_format else f"+written_as_{return_format}"
    return f"{call_kind}{written}+{text_kind}", text
