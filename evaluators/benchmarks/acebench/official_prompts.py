"""Requests as the official ACEBench code builds them (`apimodel_inference.py`, `generate.py`, the
agent and simulated-user classes), from the prompt texts read out of the pinned official source."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from string import Formatter
from typing import Any

from evaluators.benchmarks.acebench.data import official_code_dir
from evaluators.benchmarks.acebench.official_source import OfficialCode
from evaluators.core.errors import DataError
from evaluators.core.types import Sample

# generate.py's command-line defaults, which single-turn requests are sent with.
OFFICIAL_SINGLE_TURN_SAMPLING: dict[str, Any] = {"temperature": 0.7, "top_p": 1, "max_tokens": 1200}
# The defaults of APIAgent_turn, APIAgent_step and APIUSER, which the agent loops build without sampling arguments.
OFFICIAL_AGENT_SAMPLING: dict[str, Any] = {"temperature": 0.001, "top_p": 1, "max_tokens": 1000}

SOURCE_NOTE = "prompt texts read from the official model_inference/ at the pinned commit"


def official_format(template: str, **values: Any) -> str:
    """`template.format(**values)` for the plain named fields the official templates use; anything
    else (attribute or index access, conversions, format specs, unknown names) is refused."""
    out: list[str] = []
    for literal, name, spec, conversion in _template_parts(template):
        out.append(literal)
        if name is None:
            continue
        if name not in values or spec or conversion:
            raise DataError(f"official prompt template has a field {{{name}}} that the official code does not fill")
        out.append(str(values[name]))  # format(value, "") of a str or list is its str()
    return "".join(out)


@lru_cache(maxsize=64)
def _template_parts(template: str) -> tuple[tuple[str, str | None, str | None, str | None], ...]:
    """A template's literal texts and fields, parsed once (a run formats the same few templates for every request)."""
    try:
        return tuple(Formatter().parse(template))
    except ValueError as exc:
        raise DataError(f"official prompt template cannot be formatted: {exc}") from None


def official_functions(functions: Any) -> list[Any]:
    """generate.py wraps an item's `function` in a list when it is a single dict or string."""
    return [functions] if isinstance(functions, dict | str) else functions


def official_multi_step_agent_defaults_to_zh(language: str) -> str:
    """multi_step_inference builds APIAgent_step without `language=`, and the class defaults to "zh":
    the multi_step agent gets the Chinese prompts for English items too."""
    return "zh"


def _system_prompt_name(subset: str) -> str:
    """single_turn_inference picks the template by substrings of the item's category."""
    if "special" in subset:
        return "SYSTEM_PROMPT_FOR_SPECIAL_DATA"
    if "preference" in subset:
        return "SYSTEM_PROMPT_FOR_PREFERENCE_DATA"
    return "SYSTEM_PROMPT_FOR_NORMAL_DATA"


class OfficialPrompts:
    """The official request texts of one data source."""

    single_turn_sampling = OFFICIAL_SINGLE_TURN_SAMPLING
    agent_sampling = OFFICIAL_AGENT_SAMPLING
    user_sampling = OFFICIAL_AGENT_SAMPLING

    def __init__(self, code: OfficialCode):
        self.code = code

    def _text(self, key: str, name: str, language: str) -> str:
        return self.code.constant(key, f"{name}_{language.upper()}")

    # ---- single-turn (normal and special) -----------------------------------------------------

    def single_turn_messages(self, sample: Sample, language: str) -> list[dict[str, Any]]:
        """Exactly two messages: the category's system prompt and the conversation so far."""
        functions = official_functions(sample.input["functions"])
        name = _system_prompt_name(sample.subset)
        template = self._text(language, name, language)
        if name == "SYSTEM_PROMPT_FOR_PREFERENCE_DATA":
            system = official_format(template, profile=sample.input.get("profile", ""), function=functions)
        else:
            system = official_format(template, time=sample.input.get("time", ""), function=functions)
        user = official_format(self._text(language, "USER_PROMPT", language), question=sample.input["question"])
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    # ---- agent rollouts -----------------------------------------------------------------------

    def agent_language(self, kind: str, language: str) -> str:
        return official_multi_step_agent_defaults_to_zh(language) if kind == "multi_step" else language

    def agent_messages(self, kind: str, sample: Sample, history: str) -> list[dict[str, Any]]:
        """The agent's request: multi_turn adds the airline and phone policies to its system prompt
        (unformatted, as the official class concatenates them); multi_step formats its system prompt
        with an empty time."""
        language = self.agent_language(kind, sample.meta.get("language", "en"))
        functions = official_functions(sample.input["functions"])
        key = f"{kind}_agent"
        if kind == "multi_step":
            system = official_format(self._text(key, "MULTI_TURN_AGENT_PROMPT_SYSTEM", language), time="")
        else:
            system = self._text(key, "MULTI_TURN_AGENT_PROMPT_SYSTEM", language)
            involved = sample.input["involved_classes"]
            if "Travel" in involved:
                system += self._text(language, "TRAVEL_PROMPT", language)
            if "BaseApi" in involved:
                system += self._text(language, "BASE_PROMPT", language)
        user = official_format(self._text(key, "MULTI_TURN_AGENT_PROMPT_USER", language),
                               functions=functions, history=history)
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def user_opening_messages(self, sample: Sample) -> list[dict[str, Any]]:
        """The simulated user's first request: its rules (phone when BaseApi is involved, else
        airline) with the instruction, then the agent's fixed opening line."""
        language = sample.meta.get("language", "en")
        involved = sample.input["involved_classes"]
        if "BaseApi" not in involved and "Travel" not in involved:
            raise DataError(f"{sample.id}: the official simulated user needs BaseApi or Travel among the involved classes")
        name = "SYSTEM_PROMPT_BASE" if "BaseApi" in involved else "SYSTEM_PROMPT_TRAVEL"
        system = official_format(self._text("multi_turn_user", name, language), instruction=sample.input["question"])
        return [{"role": "system", "content": system}, {"role": "user", "content": self.code.opening_line(language)}]


@lru_cache(maxsize=8)
def _prompts_for(code_dir: str) -> OfficialPrompts:
    return OfficialPrompts(OfficialCode(Path(code_dir)))


def official_prompts_for_data(language_dir: Path) -> OfficialPrompts:
    """The official prompts beside a `data_<lang>` folder (downloading them for downloaded data)."""
    code_dir = official_code_dir(language_dir)
    if code_dir is None:
        raise DataError(
            "the official prompt files are not here: expected model_inference/prompt_en.py (and the agent "
            "and user prompt files) beside the data_<lang> folder or one level up from data_all/; "
            "choose the toolboard prompt style to run with our own wording",
            language_dir,
        )
    prompts = _prompts_for(str(code_dir.resolve()))
    prompts.code.check()
    return prompts


def official_prompts_for(sample: Sample) -> OfficialPrompts:
    data_dir = sample.meta.get("data_dir")
    if not data_dir:
        raise DataError(f"{sample.id}: the sample does not say where its data came from (meta['data_dir'])")
    return _prompts_beside(str(data_dir))


@lru_cache(maxsize=64)
def _prompts_beside(data_dir: str) -> OfficialPrompts:
    """Found and checked once per data folder: a run checks the files as it starts (request_profile),
    and its requests reuse the texts already read instead of looking for the files again (a few
    filesystem calls per request, ~1 ms, on the event loop)."""
    return official_prompts_for_data(Path(data_dir))
