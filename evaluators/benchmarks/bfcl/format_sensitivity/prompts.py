"""A format sensitivity item's request, as the official prompting handler builds it
(`system_prompt_pre_processing_chat_model` -> `formulate_system_prompt` with the configuration in the id):

- official_configuration_from_id: the configuration is the middle part of the id;
- official_format_sensitivity_hints_twice: the docs carry the Python hint sentence TWICE (the official loader
  reads each original category with the hints, then hints the whole format sensitivity set again);
- the template (plain text / markdown), the style (classic / experimental), the return-format and tool-call-tag
  texts: read from the wheel at run time (official_source.official_prompt_for), never written here;
- the docs rendered in the configuration's format: json (`json.dumps(indent=4)`, ASCII escapes), xml
  (official_xml_docs) or python (official_python_docs). The renderers are ours, written after reading the
  official `_generate_function_doc_xml` / `_generate_function_doc_python`; the sentence each appends to a
  described enum is read from the wheel (official_source.doc_enum_sentences).

Prompt mode only: the official generator drops format sensitivity for FC models (FORMAT_SENSITIVITY_TOOLS_REFUSED).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evaluators.benchmarks.bfcl.categories import FORMAT_SENSITIVITY
from evaluators.benchmarks.bfcl.format_sensitivity.data import official_configuration_from_id
from evaluators.benchmarks.bfcl.official_source import Sentence, doc_enum_sentences, fill, official_prompt_for
from evaluators.benchmarks.bfcl.prompts import (
    OFFICIAL_SAMPLING,
    official_functions_text,
    official_hinted_functions,
    official_prompt_messages,
)
from evaluators.core.types import ChatRequest, Sample

FORMAT_SENSITIVITY_TOOLS_REFUSED = (
    "format sensitivity runs in prompt mode only (the official generator drops it for function-calling models: "
    "its 26 configurations are system-prompt formats); choose the request mode prompt, or other categories"
)
# The renderers' indentation: two spaces per XML level, eight (then four per level) in a Python docstring.
_XML_STEP = 2
_PY_ARGS_INDENT = 8
_PY_DEPTH_INDENT = 4
_PY_PRIMITIVES = {"string": "str", "number": "float", "integer": "int", "boolean": "bool"}
_PY_LISTS = ("array", "list", "tuple")
_PY_DICTS = ("object", "dict")


def official_format_sensitivity_hints_twice(functions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The docs as the official format sensitivity entries hold them: the (Python) hint appended twice."""
    return official_hinted_functions(official_hinted_functions(functions, FORMAT_SENSITIVITY), FORMAT_SENSITIVITY)


def _described(meta: dict[str, Any], enum_sentence: Sentence) -> str:
    """A description, with the enum sentence (the allowed values as `str` prints the list) when it has one."""
    text: str = meta.get("description", "")
    if "enum" in meta:
        text += fill(enum_sentence, str(meta["enum"]))
    return text


def official_xml_param(name: str, meta: dict[str, Any], required: Sequence[str] | None, level: int,
                       enum_sentence: Sentence) -> str:
    """One `<param>` element: name, type (with `[inner]` for items / additionalProperties), required ("true" when
    the schema lists no `required`), the default's repr; every comma of those attributes removed
    (official_xml_doc_drops_attribute_commas); its description; its properties nested two levels deeper."""
    pad = " " * (level * _XML_STEP)
    kind = meta.get("type", "string")
    is_required = "true" if required is None or name in required else "false"
    description = _described(meta, enum_sentence)
    if "items" in meta and "type" in meta["items"]:
        kind = f"{kind}[{meta['items']['type']}]"
    elif "additionalProperties" in meta:
        kind = f"{kind}[{meta['additionalProperties'].get('type', 'string')}]"
    attributes = f'name="{name}", type="{kind}", required="{is_required}"'
    if "default" in meta:
        attributes += f' default="{meta["default"]!r}"'
    out = [f"{pad}<param {official_xml_doc_drops_attribute_commas(attributes)}>\n", f"{pad}  <desc>{description}</desc>\n"]
    if "properties" in meta:
        out.append(f"{pad}  <params>\n")
        out.extend(official_xml_param(child, child_meta, meta.get("required"), level + 2, enum_sentence)
                   for child, child_meta in meta["properties"].items())
        out.append(f"{pad}  </params>\n")
    out.append(f"{pad}</param>\n")
    return "".join(out)


def official_xml_doc_drops_attribute_commas(attributes: str) -> str:
    """The official renderer joins the attributes with ", " and then deletes every comma of the result, those
    inside a name, a type or a default's repr included (`default="['a' 'b']"`)."""
    return attributes.replace(",", "")


def official_xml_docs(functions: list[dict[str, Any]], enum_sentence: Sentence) -> str:
    """Each function as a `<function>` block (description, then its parameters), the blocks one blank line apart."""
    blocks = []
    for function in functions:
        schema = function["parameters"]
        block = [f'<function name="{function["name"]}">\n', f"  <desc>{function.get('description', '')}</desc>\n",
                 "  <params>\n"]
        block.extend(official_xml_param(name, meta, schema.get("required"), 2, enum_sentence)
                     for name, meta in schema.get("properties", {}).items())
        block.append("  </params>\n</function>\n")
        blocks.append("".join(block))
    return "\n".join(blocks)


def official_python_type(meta: dict[str, Any]) -> str:
    """The type a Python docstring names: str/float/int/bool, `list[inner]` for a list with items,
    `dict[str, inner]` / `dict`, else the schema's own type name (`float`, `any`, `array` without items)."""
    kind = meta.get("type", "string")
    if kind in _PY_PRIMITIVES:
        return _PY_PRIMITIVES[kind]
    if kind in _PY_LISTS and "items" in meta:
        return f"list[{official_python_type(meta['items'])}]"
    if kind in _PY_DICTS:
        return f"dict[str, {official_python_type(meta['additionalProperties'])}]" if "additionalProperties" in meta \
            else "dict"
    return str(kind)  # an f-string prints it so


def _python_param_lines(name: str, meta: dict[str, Any], depth: int, enum_sentence: Sentence) -> list[str]:
    pad = " " * (_PY_ARGS_INDENT + _PY_DEPTH_INDENT * depth)
    default = f", default={meta['default']!r}" if "default" in meta else ""
    lines = [f"{pad}{name} ({official_python_type(meta)}{default}): {_described(meta, enum_sentence)}\n"]
    for child, child_meta in (meta["properties"].items() if "properties" in meta else ()):
        lines.extend(_python_param_lines(child, child_meta, depth + 1, enum_sentence))
    return lines


def official_python_docs(functions: list[dict[str, Any]], enum_sentence: Sentence) -> str:
    """Each function as a comment naming it and a docstring (description, then `Args:` with one line per
    parameter, nested properties indented further); every block is followed by a one-newline part, and all parts
    are joined by blank lines (official_python_docs_join)."""
    parts = []
    for function in functions:
        lines = [f"# Function: {function['name']}\n", '    """\n', f"    {function.get('description', '')}\n\n"]
        properties = function.get("parameters", {}).get("properties", {})
        if properties:
            lines.append("    Args:\n")
            for name, meta in properties.items():
                lines.extend(_python_param_lines(name, meta, 0, enum_sentence))
        lines.append('    """\n')
        parts.extend(["".join(lines), "\n"])
    return official_python_docs_join(parts)


def official_python_docs_join(parts: list[str]) -> str:
    """The blocks and their one-newline companions joined by blank lines, as the official renderer joins them."""
    return "\n\n".join(parts)


def official_doc_text(functions: list[dict[str, Any]], doc_format: str, wheel: Path | None = None) -> str:
    """`format_function_doc`: the docs in the configuration's format."""
    if doc_format == "json":
        return official_functions_text(functions)
    sentences = doc_enum_sentences(wheel)
    if doc_format == "xml":
        return official_xml_docs(functions, sentences["xml"])
    if doc_format == "python":
        return official_python_docs(functions, sentences["python"])
    raise ValueError(f"unknown function doc format {doc_format!r}")


def format_sensitivity_system_prompt(sample_id: str, functions: list[dict[str, Any]], wheel: Path | None = None) -> str:
    """`formulate_system_prompt` for the configuration in the id, over the docs hinted as the item holds them."""
    config = official_configuration_from_id(sample_id)
    docs = official_format_sensitivity_hints_twice(functions)
    return official_prompt_for(config, wheel).system_prompt(official_doc_text(docs, config.function_doc_format, wheel))


def build_request(sample: Sample, mode: str = "prompt") -> ChatRequest:
    """The official prompting request (system prompt + the item's messages, no tools, temperature 0.001)."""
    if mode != "prompt":
        raise ValueError(FORMAT_SENSITIVITY_TOOLS_REFUSED)
    system = format_sensitivity_system_prompt(sample.id, sample.input["function"])
    return ChatRequest(messages=official_prompt_messages(sample.input["question"], system),
                       sampling=dict(OFFICIAL_SAMPLING))
