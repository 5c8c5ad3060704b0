"""The official prompt texts and type mapping, read at run time from the pinned wheel's source files as
data: module-level assignments taken with `ast.literal_eval` (names of constants already read are
resolved), never imported or executed."""

from __future__ import annotations

import ast
import re
import string
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeGuard

from evaluators.benchmarks.bfcl.wheel import WHEEL_NAME, pinned_wheel, read_member
from evaluators.core.errors import DataError

PROMPTS_FILE = "bfcl_eval/constants/default_prompts.py"
TYPE_MAPPINGS_FILE = "bfcl_eval/constants/type_mappings.py"
SOURCE_NOTE = f"the official prompt texts read from {PROMPTS_FILE} of the pinned wheel {WHEEL_NAME}"
# The official default configuration string, as `parse_prompt_variation_params` reads it.
_CONFIG = re.compile(r"^ret_fmt=(?P<return_format>python|json|verbose_xml|concise_xml)"
                     r"&tool_call_tag=(?P<tool_call_tag>True|False)"
                     r"&func_doc_fmt=(?P<function_doc_format>python|xml|json)"
                     r"&prompt_fmt=(?P<prompt_format>plaintext|markdown)"
                     r"&style=(?P<prompt_style>classic|experimental)$")


def _literal(node: ast.expr, known: dict[str, Any]) -> Any:
    """A literal, a name of a constant read before it, or a dict/list/tuple of those; else ValueError."""
    if isinstance(node, ast.Name):
        if node.id in known:
            return known[node.id]
        raise ValueError(node.id)
    if isinstance(node, ast.Dict):
        keys = [key for key in node.keys if key is not None]  # None: a `**` entry, left to literal_eval below
        if len(keys) == len(node.keys):
            return {_literal(k, known): _literal(v, known) for k, v in zip(keys, node.values)}
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_literal(item, known) for item in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    return ast.literal_eval(node)


def module_constants(source: str, where: str) -> dict[str, Any]:
    """`NAME = <literal>` assignments at module level; the others (calls, concatenations) are left out."""
    try:
        tree = ast.parse(source, filename=where)
    except (SyntaxError, ValueError) as exc:
        raise DataError(f"cannot be read as Python source: {exc}", where) from None
    constants: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            name, value = node.target.id, node.value
        else:
            continue
        try:
            constants[name] = _literal(value, constants)
        except (ValueError, TypeError, SyntaxError, RecursionError):
            continue
    return constants


def official_format(template: str, **values: str) -> str:
    """`template.format(**values)` where every field is a plain name among `values` (no attribute, index,
    conversion or format spec), as the official templates use them."""
    for _, field, spec, conversion in string.Formatter().parse(template):
        if field is None:
            continue
        if field not in values or spec or conversion:
            raise DataError(f"unexpected field {{{field}}} in an official template (expected {', '.join(values)})")
    return template.format(**values)


@dataclass(frozen=True)
class OfficialPrompt:
    """The pieces of the default system prompt, as `formulate_system_prompt` picks them."""

    template: str
    persona: str
    task: str
    tool_call_format: str
    multiturn_behavior: str
    available_tools: str
    function_doc_format: str

    def system_prompt(self, functions_text: str) -> str:
        """The system prompt around the rendered function docs."""
        available = official_format(self.available_tools, format=self.function_doc_format, functions=functions_text)
        return official_format(self.template, persona=self.persona, task=self.task,
                               tool_call_format=self.tool_call_format, multiturn_behavior=self.multiturn_behavior,
                               available_tools=available)


def _need(constants: dict[str, Any], name: str, where: str) -> Any:
    if name not in constants:
        raise DataError(f"constant {name} not found (or not a literal) in {PROMPTS_FILE}", where)
    return constants[name]


@dataclass(frozen=True)
class PromptConfiguration:
    """One official system-prompt configuration (`parse_prompt_variation_params` reads the same string)."""

    return_format: str  # python, json, verbose_xml, concise_xml
    tool_call_tag: bool
    function_doc_format: str  # python, xml, json
    prompt_format: str  # plaintext, markdown
    prompt_style: str  # classic, experimental

    @property
    def text(self) -> str:
        return (f"ret_fmt={self.return_format}&tool_call_tag={self.tool_call_tag}&func_doc_fmt="
                f"{self.function_doc_format}&prompt_fmt={self.prompt_format}&style={self.prompt_style}")


def parse_configuration(text: Any, where: str = "") -> PromptConfiguration:
    """A configuration string -> its five parts; DataError for anything the official pattern refuses."""
    found = _CONFIG.match(text) if isinstance(text, str) else None
    if found is None:
        raise DataError(f"{text!r} is not a prompt configuration string we read", where or None)
    return PromptConfiguration(found["return_format"], found["tool_call_tag"] == "True", found["function_doc_format"],
                               found["prompt_format"], found["prompt_style"])


def configured_prompt(constants: dict[str, Any], config: PromptConfiguration, where: str) -> OfficialPrompt:
    """The pieces `formulate_system_prompt` picks for one configuration, from the constants read."""
    try:
        style = _need(constants, "PROMPT_STYLE_TEMPLATES", where)[config.prompt_style]
        tag_key = "tool_call_with_tag" if config.tool_call_tag else "tool_call_no_tag"
        tool_call_format = official_format(
            style[tag_key], output_format=_need(constants, "OUTPUT_FORMAT_MAPPING", where)[config.return_format],
            param_types=_need(constants, "PARAM_TYPE_MAPPING", where)[config.return_format])
        return OfficialPrompt(
            template=_need(constants, "PROMPT_TEMPLATE_MAPPING", where)[config.prompt_format],
            persona=style["persona"], task=style["task"], tool_call_format=tool_call_format,
            multiturn_behavior=style["multiturn_behavior"], available_tools=style["available_tools"],
            function_doc_format=config.function_doc_format,
        )
    except (KeyError, TypeError) as exc:
        raise DataError(f"the prompt constants lack {exc} for the configuration {config.text!r}", where) from None


def prompt_from_constants(constants: dict[str, Any], where: str) -> OfficialPrompt:
    """The default configuration (DEFAULT_SYSTEM_PROMPT_FORMAT) applied to the constants read (the single-turn,
    multi-turn and agentic requests render their docs as JSON: another default doc format is refused)."""
    config = _need(constants, "DEFAULT_SYSTEM_PROMPT_FORMAT", where)
    if not isinstance(config, str) or _CONFIG.match(config) is None:
        raise DataError(f"DEFAULT_SYSTEM_PROMPT_FORMAT {config!r} is not a configuration string we read", where)
    parsed = parse_configuration(config, where)
    if parsed.function_doc_format != "json":
        raise DataError(f"the default function doc format is {parsed.function_doc_format!r}; only json is "
                        "implemented", where)
    return configured_prompt(constants, parsed, where)


@lru_cache(maxsize=4)
def _constants_of(wheel_text: str) -> dict[str, Any]:
    wheel = Path(wheel_text)
    where = f"{wheel}:{PROMPTS_FILE}"
    return module_constants(decode(read_member(wheel, PROMPTS_FILE), where), where)


def official_prompt_for(config: PromptConfiguration, wheel: Path | None = None) -> OfficialPrompt:
    """The system prompt's pieces of any official configuration (format sensitivity), from the pinned wheel."""
    wheel_text = str(wheel or pinned_wheel())
    return configured_prompt(_constants_of(wheel_text), config, f"{wheel_text}:{PROMPTS_FILE}")


@lru_cache(maxsize=4)
def _prompt_of(wheel_text: str) -> OfficialPrompt:
    wheel = Path(wheel_text)
    where = f"{wheel}:{PROMPTS_FILE}"
    source = decode(read_member(wheel, PROMPTS_FILE), where)
    return prompt_from_constants(module_constants(source, where), where)


@lru_cache(maxsize=4)
def _type_mapping_of(wheel_text: str) -> dict[str, str]:
    wheel = Path(wheel_text)
    where = f"{wheel}:{TYPE_MAPPINGS_FILE}"
    mapping = module_constants(decode(read_member(wheel, TYPE_MAPPINGS_FILE), where), where).get("GORILLA_TO_OPENAPI")
    if not isinstance(mapping, dict):
        raise DataError(f"GORILLA_TO_OPENAPI not found in {TYPE_MAPPINGS_FILE}", where)
    return mapping


def decode(raw: bytes, where: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DataError("not valid UTF-8", where) from None


def official_prompt(wheel: Path | None = None) -> OfficialPrompt:
    """The default system prompt's pieces from the pinned wheel (downloaded once when not cached)."""
    return _prompt_of(str(wheel or pinned_wheel()))


def gorilla_to_openapi(wheel: Path | None = None) -> dict[str, str]:
    """BFCL type names -> JSON-Schema type names, as the official FC handlers map them."""
    return _type_mapping_of(str(wheel or pinned_wheel()))


# ---- the language hints of the function docs (bfcl_eval/utils.py), read as data ----------------------

UTILS_FILE = "bfcl_eval/utils.py"
HINT_FUNCTION = "_get_language_specific_hint"
DOC_FUNCTION = "_func_doc_language_specific_pre_processing"
# A sentence appended to a description: literal parts and None where the official f-string puts a value.
Sentence = tuple[str | None, ...]
# How many values each appended sentence of the Java / JavaScript branches takes, in source order:
# Java: any-type, declared type, list element type; JavaScript: the same, then the dict's properties.
_JAVA_SLOTS = (0, 1, 1)
_JS_SLOTS = (0, 1, 1, 1)


@dataclass(frozen=True)
class LanguageHints:
    """What `add_language_specific_hint_to_function_doc` appends: a sentence per language to every
    function description, and the Java / JavaScript parameter sentences."""

    function: dict[str, str]  # python / java / javascript
    java: tuple[Sentence, ...]
    javascript: tuple[Sentence, ...]


def fill(sentence: Sentence, *values: str) -> str:
    """The sentence with its value slots filled in order."""
    given = iter(values)
    return "".join(next(given) if part is None else part for part in sentence)


def _named_function(tree: ast.Module, name: str, where: str) -> ast.FunctionDef:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise DataError(f"function {name} not found", where)


def _tests_call(node: ast.AST, name: str) -> TypeGuard[ast.If]:
    """`if name(...):`"""
    return (isinstance(node, ast.If) and isinstance(node.test, ast.Call) and isinstance(node.test.func, ast.Name)
            and node.test.func.id == name)


def _returned_text(body: list[ast.stmt]) -> str | None:
    if len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Constant):
        value = body[0].value.value
        return value if isinstance(value, str) else None
    return None


def _function_hints(tree: ast.Module, where: str) -> dict[str, str]:
    """if is_java: return A / elif is_js: return B / else: return C."""
    function = _named_function(tree, HINT_FUNCTION, where)
    first = function.body[0] if function.body else None
    if first is not None and _tests_call(first, "is_java") and len(first.orelse) == 1 and _tests_call(first.orelse[0], "is_js"):
        second = first.orelse[0]
        texts = {"java": _returned_text(first.body), "javascript": _returned_text(second.body),
                 "python": _returned_text(second.orelse)}
        hints = {language: text for language, text in texts.items() if text is not None}
        if len(hints) == len(texts):
            return hints
    raise DataError(f"{HINT_FUNCTION} in {UTILS_FILE} is not the if/elif/else of three texts it was", where)


def _sentence(node: ast.expr) -> Sentence | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return (node.value,)
    if isinstance(node, ast.JoinedStr):
        parts: list[str | None] = []
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                parts.append(part.value)
            elif isinstance(part, ast.FormattedValue) and part.conversion == -1 and part.format_spec is None:
                parts.append(None)
            else:
                return None
        return tuple(parts)
    return None


def _appended_sentences(branch: list[ast.stmt]) -> tuple[Sentence, ...]:
    """The `x += "…"` / `x += f"…"` sentences of a branch, in source order."""
    found = []
    for statement in branch:
        for node in ast.walk(statement):
            if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
                sentence = _sentence(node.value)
                if sentence is not None:
                    found.append((node.lineno, node.col_offset, sentence))
    return tuple(sentence for _, _, sentence in sorted(found))


def _slots(sentences: tuple[Sentence, ...]) -> tuple[int, ...]:
    return tuple(sum(part is None for part in sentence) for sentence in sentences)


def _parameter_hints(tree: ast.Module, where: str) -> tuple[tuple[Sentence, ...], tuple[Sentence, ...]]:
    function = _named_function(tree, DOC_FUNCTION, where)
    for node in ast.walk(function):
        if _tests_call(node, "is_java") and len(node.orelse) == 1 and _tests_call(node.orelse[0], "is_js"):
            java = _appended_sentences(node.body)
            javascript = _appended_sentences(node.orelse[0].body)
            if _slots(java) == _JAVA_SLOTS and _slots(javascript) == _JS_SLOTS:
                return java, javascript
    raise DataError(f"{DOC_FUNCTION} in {UTILS_FILE} does not append the Java and JavaScript sentences it did", where)


def hints_from_source(source: str, where: str) -> LanguageHints:
    try:
        tree = ast.parse(source, filename=where)
    except (SyntaxError, ValueError) as exc:
        raise DataError(f"cannot be read as Python source: {exc}", where) from None
    java, javascript = _parameter_hints(tree, where)
    return LanguageHints(function=_function_hints(tree, where), java=java, javascript=javascript)


@lru_cache(maxsize=4)
def _hints_of(wheel_text: str) -> LanguageHints:
    wheel = Path(wheel_text)
    where = f"{wheel}:{UTILS_FILE}"
    return hints_from_source(decode(read_member(wheel, UTILS_FILE), where), where)


def language_hints(wheel: Path | None = None) -> LanguageHints:
    """The function-doc hints from the pinned wheel."""
    return _hints_of(str(wheel or pinned_wheel()))


# ---- the sentence the FC handlers append to a float parameter (bfcl_eval/model_handler/utils.py) -----

HANDLER_UTILS_FILE = "bfcl_eval/model_handler/utils.py"
CAST_FUNCTION = "_cast_to_openai_type"


def float_sentence_from_source(source: str, where: str) -> str:
    """The one text `_cast_to_openai_type` appends (to a `float` parameter's description)."""
    try:
        tree = ast.parse(source, filename=where)
    except (SyntaxError, ValueError) as exc:
        raise DataError(f"cannot be read as Python source: {exc}", where) from None
    function = _named_function(tree, CAST_FUNCTION, where)
    found = [node.value.value for node in ast.walk(function)
             if isinstance(node, ast.AugAssign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)]
    if len(found) != 1:
        raise DataError(f"{CAST_FUNCTION} in {HANDLER_UTILS_FILE} does not append the one float sentence it did", where)
    return found[0]


@lru_cache(maxsize=4)
def _float_sentence_of(wheel_text: str) -> str:
    wheel = Path(wheel_text)
    where = f"{wheel}:{HANDLER_UTILS_FILE}"
    return float_sentence_from_source(decode(read_member(wheel, HANDLER_UTILS_FILE), where), where)


def float_sentence(wheel: Path | None = None) -> str:
    return _float_sentence_of(str(wheel or pinned_wheel()))


# ---- the enum sentence the xml and python doc renderers append (bfcl_eval/model_handler/utils.py) ---------

XML_DOC_FUNCTION = "_generate_function_doc_xml"
PYTHON_DOC_FUNCTION = "_generate_function_doc_python"


def _enum_sentence(function: ast.FunctionDef, where: str) -> Sentence:
    """The one `<…desc> += f"…{…}…"` sentence of a renderer: the text added to a description when its parameter
    lists allowed values (one value slot, the list as `str` prints it)."""
    found = []
    for node in ast.walk(function):
        if (isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name)
                and node.target.id.endswith("desc")):
            sentence = _sentence(node.value)
            if sentence is not None and _slots((sentence,)) == (1,):
                found.append(sentence)
    if len(found) != 1:
        raise DataError(f"{function.name} in {HANDLER_UTILS_FILE} does not append the one enum sentence it did", where)
    return found[0]


def doc_enum_sentences_from_source(source: str, where: str) -> dict[str, Sentence]:
    """{"xml": sentence, "python": sentence}: what each renderer appends to a description with an enum."""
    try:
        tree = ast.parse(source, filename=where)
    except (SyntaxError, ValueError) as exc:
        raise DataError(f"cannot be read as Python source: {exc}", where) from None
    return {"xml": _enum_sentence(_named_function(tree, XML_DOC_FUNCTION, where), where),
            "python": _enum_sentence(_named_function(tree, PYTHON_DOC_FUNCTION, where), where)}


@lru_cache(maxsize=4)
def _enum_sentences_of(wheel_text: str) -> dict[str, Sentence]:
    wheel = Path(wheel_text)
    where = f"{wheel}:{HANDLER_UTILS_FILE}"
    return doc_enum_sentences_from_source(decode(read_member(wheel, HANDLER_UTILS_FILE), where), where)


def doc_enum_sentences(wheel: Path | None = None) -> dict[str, Sentence]:
    return _enum_sentences_of(str(wheel or pinned_wheel()))
