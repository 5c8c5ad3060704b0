"""Requests for ACEBench items: the official requests (prompt texts read from the official source,
see `official_prompts`), the same text protocol in our own words (`toolboard`), and a native-tools
mode with the specs converted to valid JSON Schema."""

from __future__ import annotations

import re
from typing import Any

from evaluators.benchmarks.acebench.categories import is_agent, is_special
from evaluators.benchmarks.acebench.official_prompts import official_prompts_for
from evaluators.core.types import PROMPT_STYLES, ChatRequest, Sample

MODES = ("prompt", "tools")

_FORMAT_RULES_EN = """Reply with the API call(s) for the next step of the conversation, written as a Python-style list of calls:
[ApiName(key1='value1', key2='value2'), OtherApi(key='value')]
Rules:
- Output only that list: no explanation, no call results, no other text.
- Several calls go inside the same pair of brackets, separated by commas.
- Pass every parameter the user has mentioned; leave out optional parameters the user has not mentioned.
- When no value format is specified, use the user's own words as the value.
- An API without parameters is written [ApiName()].
- Use only parameter names that appear in the API specification; never make one up."""

_FORMAT_RULES_ZH = """请给出对话下一步需要发起的 API 调用，写成 Python 风格的调用列表：
[ApiName(key1='value1', key2='value2'), OtherApi(key='value')]
规则：
- 只输出这个列表，不要解释，不要写调用结果，也不要输出其他文字。
- 多个调用写在同一对方括号内，用逗号分隔。
- 用户提到的参数都要传入；用户没有提到的可选参数不要传。
- 没有指定取值格式时，直接使用用户的原话作为参数值。
- 没有参数的 API 写作 [ApiName()]。
- 只能使用 API 说明里出现的参数名，不要编造参数名。"""

_SPECIAL_CASES_EN = """First decide whether the request can be served by the APIs as it stands.
Case 1: it can. Then answer with the list of calls, following the rules above.
Case 2: it cannot. Then answer with exactly one of these sentences, filled in, and nothing else:
- a parameter value in the conversation is wrong: ["There is incorrect value (value) for the parameters (key) in the conversation history."]
- required parameters were never given: ["Missing necessary parameters (key1, key2, ...) for the api (ApiName)"]
- no API can do what is asked: ["Due to the limitations of the function, I cannot solve this problem."]
Check case 1 before case 2."""

_SPECIAL_CASES_ZH = """先判断现有 API 能否直接完成这个请求。
情况一：可以。按上面的规则输出调用列表。
情况二：不可以。只输出下面其中一句（填好括号中的内容，保持英文原句），不要输出其他内容：
- 对话中有参数取值错误：["There is incorrect value (value) for the parameters (key) in the conversation history."]
- 缺少必填参数：["Missing necessary parameters (key1, key2, ...) for the api (ApiName)"]
- 没有 API 能完成该请求：["Due to the limitations of the function, I cannot solve this problem."]
先检查情况一，再检查情况二。"""

_TEXT = {
    "en": {
        "intro": "You are an assistant that turns a conversation into API calls. You are given API specifications and the dialogue so far.",
        "intro_profile": "You are an assistant that turns a conversation into API calls. You are given API specifications, the dialogue history 1..t and the user's character profile; take argument values from the profile where the dialogue leaves them open.",
        "rules": _FORMAT_RULES_EN,
        "special": _SPECIAL_CASES_EN,
        "roles": "Roles in the dialogue:\n- user: the person making the request\n- assistant: the AI assistant that makes the API calls\n- tool: returns the results of the calls",
        "roles_special": "Roles in the dialogue:\n- user: the person making the request\n- assistant: the AI assistant that makes the API calls",
        "time": "Current time: {time}",
        "profile": "Character profile:\n{profile}",
        "apis": "API specifications:\n{functions}",
        "user": "Here is the conversation so far:\n{question}",
        "tools_intro": "You are an assistant that serves the user's request by calling the provided tools. Call every tool the request needs, with the parameters the user gave; leave out optional parameters the user did not mention.",
        "tools_special": "If the request cannot be served as it stands, call no tool and reply with exactly one of these sentences, filled in:\n- [\"There is incorrect value (value) for the parameters (key) in the conversation history.\"]\n- [\"Missing necessary parameters (key1, key2, ...) for the api (ApiName)\"]\n- [\"Due to the limitations of the function, I cannot solve this problem.\"]",
    },
    "zh": {
        "intro": "你是一个把对话转换为 API 调用的助手。下面给出 API 说明和目前为止的对话。",
        "intro_profile": "你是一个把对话转换为 API 调用的助手。下面给出 API 说明、第 1 到 t 轮的对话历史以及用户的人物画像；对话中没有给出的参数值，请从人物画像中获取。",
        "rules": _FORMAT_RULES_ZH,
        "special": _SPECIAL_CASES_ZH,
        "roles": "对话中的角色：\n- user：提出请求的用户\n- assistant：发起 API 调用的 AI 助手\n- tool：返回调用结果",
        "roles_special": "对话中的角色：\n- user：提出请求的用户\n- assistant：发起 API 调用的 AI 助手",
        "time": "当前时间：{time}",
        "profile": "人物画像：\n{profile}",
        "apis": "API 说明：\n{functions}",
        "user": "以下是目前为止的对话：\n{question}",
        "tools_intro": "你是一个通过调用所提供的工具来完成用户请求的助手。调用请求所需的每个工具，并传入用户给出的参数；用户没有提到的可选参数不要传。",
        "tools_special": "如果请求按现状无法完成，不要调用工具，只回复下面其中一句（填好括号内容，保持英文原句）：\n- [\"There is incorrect value (value) for the parameters (key) in the conversation history.\"]\n- [\"Missing necessary parameters (key1, key2, ...) for the api (ApiName)\"]\n- [\"Due to the limitations of the function, I cannot solve this problem.\"]",
    },
}


def _language(sample: Sample) -> str:
    language = sample.meta.get("language")
    return language if isinstance(language, str) else "en"


def system_prompt(sample: Sample, language: str) -> str:
    """The text-mode system prompt: the official protocol for normal, preference and special items."""
    text = _TEXT[language]
    functions = repr(sample.input["functions"])  # the reference renders the list's Python repr
    preference = sample.subset == "normal_preference"
    special = is_special(sample.subset)
    parts = [text["intro_profile"] if preference else text["intro"], text["rules"]]
    if special:
        parts.append(text["special"])
    if preference:
        parts.append(text["profile"].format(profile=sample.input.get("profile", "")))
    elif sample.input.get("time"):
        parts.append(text["time"].format(time=sample.input["time"]))
    parts.append(text["roles_special"] if special else text["roles"])
    parts.append(text["apis"].format(functions=functions))
    return "\n\n".join(parts)


def user_prompt(sample: Sample, language: str) -> str:
    return _TEXT[language]["user"].format(question=sample.input["question"])


# ---- native tools: ACEBench's loose types -> JSON Schema --------------------------------------

_SIMPLE_TYPES = {
    "string": "string",
    "str": "string",
    "integer": "integer",
    "int": "integer",
    "number": "number",
    "float": "number",
    "boolean": "boolean",
    "bool": "boolean",
    "object": "object",
    "dict": "object",
    "array": "array",
    "list": "array",
    "tuple": "array",
    "objectArray": "array",
    "enum": "string",
}
_KEPT_KEYWORDS = ("description", "enum", "format", "pattern", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "default")
_LIST_OF = re.compile(r"^list\((.+)\)$")


def to_json_schema(spec: Any) -> dict[str, Any]:
    """One ACEBench property spec -> a valid JSON Schema (unknown types become untyped)."""
    if not isinstance(spec, dict):
        return {}
    schema: dict[str, Any] = {k: spec[k] for k in _KEPT_KEYWORDS if k in spec}
    raw_type = spec.get("type")
    inner = _LIST_OF.match(raw_type) if isinstance(raw_type, str) else None
    json_type = _SIMPLE_TYPES.get(raw_type) if isinstance(raw_type, str) else None
    if inner:
        schema["type"] = "array"
        schema["items"] = to_json_schema({**(spec.get("items") or {}), "type": inner.group(1)})
    elif json_type:
        schema["type"] = json_type
    if schema.get("type") == "array" and "items" not in schema:
        default_items = {"type": "object"} if raw_type == "objectArray" else {}
        schema["items"] = to_json_schema(spec["items"] if isinstance(spec.get("items"), dict) else default_items)
    if schema.get("type") == "object" or (json_type is None and "properties" in spec):
        schema["type"] = "object"
        properties = found if isinstance(found := spec.get("properties"), dict) else {}
        schema["properties"] = {name: to_json_schema(sub) for name, sub in properties.items()}
        required = [r for r in spec.get("required") or [] if r in schema["properties"]]
        if required:
            schema["required"] = required
    if "enum" in schema and not isinstance(schema["enum"], list):
        del schema["enum"]
    if "pattern" in schema and not _is_valid_regex(schema["pattern"]):
        del schema["pattern"]  # some specs carry patterns no regex engine accepts
    return schema


def _is_valid_regex(pattern: Any) -> bool:
    try:
        re.compile(pattern)
    except (re.error, TypeError):
        return False
    return isinstance(pattern, str)


_TOOL_NAME = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(name: str) -> str:
    """OpenAI tool names allow [A-Za-z0-9_-] only (64 chars): dots and the like become `_`."""
    return _TOOL_NAME.sub("_", name)[:64]


def to_openai_tool(function: dict[str, Any]) -> dict[str, Any]:
    parameters = function.get("parameters")
    schema = to_json_schema({**parameters, "type": "object"}) if isinstance(parameters, dict) else {}
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return {
        "type": "function",
        "function": {
            "name": tool_name(str(function.get("name", ""))),
            "description": str(function.get("description", "")),
            "parameters": schema,
        },
    }


def _tools_system_prompt(sample: Sample, language: str) -> str:
    text = _TEXT[language]
    parts = [text["tools_intro"]]
    if is_special(sample.subset):
        parts.append(text["tools_special"])
    if sample.subset == "normal_preference":
        parts.append(text["profile"].format(profile=sample.input.get("profile", "")))
    elif sample.input.get("time"):
        parts.append(text["time"].format(time=sample.input["time"]))
    return "\n\n".join(parts)


def build_request(sample: Sample, mode: str = "prompt", language: str | None = None,
                  prompt_style: str = "toolboard") -> ChatRequest:
    """`prompt`: the text protocol (official or in our own words); `tools`: native function calling
    (our extension, own wording only). Agent items are rollouts."""
    language = language or _language(sample)
    if is_agent(sample.subset):
        raise ValueError(f"{sample.id}: agent items are multi-step rollouts, not a single request")
    if prompt_style not in PROMPT_STYLES:
        raise ValueError(f"unknown prompt style {prompt_style!r}; expected one of {', '.join(PROMPT_STYLES)}")
    if prompt_style == "official":
        if mode != "prompt":
            raise ValueError("official requests exist in prompt mode only: native tools mode is our extension")
        prompts = official_prompts_for(sample)
        return ChatRequest(messages=prompts.single_turn_messages(sample, language),
                           sampling=dict(prompts.single_turn_sampling))
    if mode == "prompt":
        messages = [
            {"role": "system", "content": system_prompt(sample, language)},
            {"role": "user", "content": user_prompt(sample, language)},
        ]
        return ChatRequest(messages=messages)
    if mode == "tools":
        tools = [to_openai_tool(f) for f in sample.input["functions"]]
        names = {tool["function"]["name"]: str(f.get("name", "")) for tool, f in zip(tools, sample.input["functions"])}
        messages = [
            {"role": "system", "content": _tools_system_prompt(sample, language)},
            {"role": "user", "content": user_prompt(sample, language)},
        ]
        return ChatRequest(messages=messages, tools=tools, tool_choice="auto", tool_names=names)
    raise ValueError(f"unknown request mode {mode!r}; expected one of {', '.join(MODES)}")
