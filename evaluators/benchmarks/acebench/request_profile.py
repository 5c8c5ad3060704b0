"""Which requests an ACEBench run sends: `official` (the official code's requests, prompt texts read
from the pinned official source) whenever those files are available, else `toolboard` (our own
wording); recorded with the run together with the sampling sent and the known differences."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluators.benchmarks.acebench.agent.rollout import SIMULATED_USER_ROLE_DIFFERENCE
from evaluators.benchmarks.acebench.categories import is_agent
from evaluators.benchmarks.acebench.data import DATA_VERSION, is_downloaded, official_code_dir, resolve_language_dir
from evaluators.benchmarks.acebench.official_prompts import (
    OFFICIAL_AGENT_SAMPLING,
    OFFICIAL_SINGLE_TURN_SAMPLING,
    SOURCE_NOTE,
    official_prompts_for_data,
)
from evaluators.core.errors import DataError, ToolboardError
from evaluators.core.hooks import RunSettings
from evaluators.core.types import PROMPT_STYLES, RequestProfile

MODEL_NAME_CASES_DIFFERENCE = (
    "the official code's special cases for some model names are not applied (names containing `o1`: "
    "one user message and no sampling for the agent; `deepseek-r1`: the reply cut after `</think>`)"
)
OFFICIAL_USER_MODEL = "gpt-4o"  # generate.py's --user-model default
OWN_WORDING = "our own wording of the official protocol (same output format, same three special sentences)"


def _style(asked: str | None, request_mode: str, data_dir: str | None, language: str) -> tuple[str, str]:
    """The prompt style the run will use and, when it is not the official one, why."""
    if asked is not None and asked not in PROMPT_STYLES:
        raise ToolboardError(f"unknown prompt style {asked!r}; expected one of {', '.join(PROMPT_STYLES)}")
    if request_mode == "tools":
        if asked == "official":
            raise ToolboardError("official requests exist in prompt mode only: native tools mode is our "
                                 "extension; choose prompt mode, or the toolboard prompt style")
        return "toolboard", "native tools mode is our extension: the official harness sends no such requests"
    if asked == "toolboard":
        return "toolboard", "own prompts chosen (the toolboard prompt style)"
    language_dir = resolve_language_dir(data_dir, language)
    if asked == "official":
        official_prompts_for_data(language_dir)  # a missing file or constant is a clear error naming it
        return "official", ""
    try:
        if official_code_dir(language_dir) is None:
            return "toolboard", (f"the official prompt files (model_inference/) are not beside the data "
                                 f"({data_origin(language_dir)}): own prompts used")
        official_prompts_for_data(language_dir)
    except DataError as exc:  # e.g. offline with a cache from before the files were kept, or files missing
        return "toolboard", (f"the official prompt files beside the data ({data_origin(language_dir)}) could not be "
                             f"read ({without_local_paths(exc)}): own prompts used")
    return "official", ""


def data_origin(language_dir: Path) -> str:
    """Where the data came from, in words: the note is shown to visitors, so it never holds a server path."""
    return "downloaded from the pinned official source" if is_downloaded(language_dir) else "a local folder"


def without_local_paths(error: DataError) -> str:
    """The error's message without the file it names in front, and any other absolute path in it as words."""
    text = str(error)
    if error.path:
        text = text.removeprefix(error.path + (f", line {error.line}" if error.line is not None else "") + ": ")
    from evaluators.engine.redact import paths_as_words  # on this error path only: it imports the store

    return paths_as_words(text)


def request_profile(config: RunSettings) -> RequestProfile:
    """The run's request profile from its settings (a RunConfig): prompt style, source, sampling sent."""
    from evaluators.core.registry import get_benchmark

    model = config.model
    language = config.language or "en"
    style, note = _style(model.prompt_style, model.request_mode, config.data_dir, language)
    subsets = get_benchmark("acebench").expand_subsets(list(config.subsets) or None)
    official = style == "official"
    kinds: dict[str, dict[str, Any]] = {}
    if any(not is_agent(s) for s in subsets):
        kinds["single_turn"] = OFFICIAL_SINGLE_TURN_SAMPLING if official else {}
    if any(is_agent(s) for s in subsets):
        kinds["agent"] = OFFICIAL_AGENT_SAMPLING if official else {}
    if "agent_multi_turn" in subsets:
        kinds["simulated_user"] = OFFICIAL_AGENT_SAMPLING if official else {}
    differences: list[str] = []
    if official:
        if "agent_multi_turn" in subsets:
            differences.append(SIMULATED_USER_ROLE_DIFFERENCE)
            user = config.roles["user"].model if "user" in config.roles else model.model
            if user != OFFICIAL_USER_MODEL:
                differences.append(f"the simulated user is {user} (the official default is {OFFICIAL_USER_MODEL})")
        differences.append(MODEL_NAME_CASES_DIFFERENCE)
    return RequestProfile(
        prompt_style=style,
        source=f"{SOURCE_NOTE} ({DATA_VERSION})" if official else OWN_WORDING,
        sampling={kind: model.sampling_for(sampling) for kind, sampling in kinds.items()},
        differences=tuple(differences),
        note=note,
    )
