"""solve(sample, clients, options): one chat call per single-turn item, a rollout per multi-turn or web search item,
a rollout after its scenario's prerequisite chain per memory item (agentic/memory.py); and
the run's request profile (BFCL has the official requests only: both request modes for single-turn items,
prompt mode for multi-turn ones)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from evaluators.benchmarks.bfcl.agentic.web_search import (
    BACKEND_OPTION,
    SERPAPI,
    SERPAPI_KEY_ENV,
    WEB_SEARCH_DIFFERENCES,
    agentic_format_text,
    backend_problem,
    run_with_backend,
)
from evaluators.benchmarks.bfcl.agentic.web_search import unavailable_now as web_search_unavailable
from evaluators.benchmarks.bfcl.categories import (
    FORMAT_SENSITIVITY,
    VECTOR,
    is_format_sensitivity,
    is_memory,
    is_multi_turn,
    is_web_search,
)
from evaluators.benchmarks.bfcl.data import DATA_VERSION, DataSource, asks_every_category, data_source, optional_multi_turn
from evaluators.benchmarks.bfcl.format_sensitivity.prompts import FORMAT_SENSITIVITY_TOOLS_REFUSED
from evaluators.benchmarks.bfcl.item_requests import build_request
from evaluators.benchmarks.bfcl.multi_turn.requests import OFFICIAL_MULTI_TURN_SAMPLING, multi_turn_texts
from evaluators.benchmarks.bfcl.official_source import SOURCE_NOTE, official_prompt
from evaluators.benchmarks.bfcl.prompts import OFFICIAL_SAMPLING
from evaluators.benchmarks.bfcl.wheel import BFCL_WHEEL, cached_wheel_path
from evaluators.core.errors import DataError, ToolboardError
from evaluators.core.hooks import RunSettings
from evaluators.core.types import Prediction, RequestProfile, Sample
from evaluators.engine.client import calls_with_benchmark_names

OFFICIAL_STYLE = "official"
TOOLS_MODE_DIFFERENCE = (
    "native tools mode follows the official FC handler for OpenAI-compatible endpoints (tools converted by "
    "convert_to_tool, names with '.' sent with '_' and mapped back); the parity of requests and scores is "
    "established for prompt mode"
)
MULTI_TURN_TOOLS_REFUSED = (
    "the multi-turn categories run in prompt mode only (the official prompting loop); native tools mode covers "
    "the single-turn categories: choose those (the group single_turn), or the request mode prompt"
)


async def solve(sample: Sample, clients: Mapping[str, Any], options: Mapping[str, Any]) -> Prediction:
    if is_multi_turn(sample.subset):
        return await solve_multi_turn(sample, clients["model"], options)
    if is_web_search(sample.subset):
        if options.get("request_mode", "prompt") != "prompt":
            raise ToolboardError(MULTI_TURN_TOOLS_REFUSED)
        return await run_with_backend(sample, clients["model"], str(options.get(BACKEND_OPTION) or SERPAPI))
    if is_memory(sample.subset):
        if options.get("request_mode", "prompt") != "prompt":
            raise ToolboardError(MULTI_TURN_TOOLS_REFUSED)
        from evaluators.benchmarks.bfcl.agentic.memory import solve_memory

        return await solve_memory(sample, clients["model"])
    if is_format_sensitivity(sample.subset) and options.get("request_mode", "prompt") != "prompt":
        raise ToolboardError(FORMAT_SENSITIVITY_TOOLS_REFUSED)
    request = build_request(sample, mode=options.get("request_mode", "prompt"))
    result = await clients["model"].complete(request)
    tool_calls = calls_with_benchmark_names(result, request)
    return Prediction(sample.id, output=result.text, tool_calls=tool_calls, latency=result.latency, usage=result.usage)


def expected_requests(sample: Sample) -> int:
    """One request for a single-turn item; for a multi-turn one, about two per turn (the calls, then the answer
    without a call), read from its questions only: a run starts the longest conversations first. A memory
    scenario's first item also counts its chain's turns (it starts the chain): the chains start first."""
    if is_multi_turn(sample.subset):
        return 2 * len(sample.input["question"])
    if is_memory(sample.subset):
        from evaluators.benchmarks.bfcl.agentic.memory import expected_memory_requests

        return expected_memory_requests(sample)
    return 1


def request_profile(config: RunSettings) -> RequestProfile:
    """The official requests (texts read from the pinned wheel, which is fetched here once if needed, so
    a missing wheel is one clear error before any request) and the official temperature unless set."""
    model = config.model
    if model.prompt_style not in (None, OFFICIAL_STYLE):
        raise ToolboardError("bfcl sends the official requests only (texts read from the pinned bfcl-eval wheel); "
                             "drop --prompt-style or choose official")
    refused = setup_problems(config)
    if refused:
        raise ToolboardError(refused)
    official_prompt()
    tools = model.request_mode == "tools"
    if tools and runs_format_sensitivity(config):
        raise ToolboardError(f"bfcl: {FORMAT_SENSITIVITY_TOOLS_REFUSED}")
    sampling = {"single_turn": model.sampling_for(OFFICIAL_SAMPLING)}
    web_search = runs_web_search(config)
    if web_search:
        problem = web_search_problem(config)
        if problem:
            raise ToolboardError(problem)
    memory = runs_memory(config)
    if runs_multi_turn(config) or web_search or memory:
        if tools:
            raise ToolboardError(f"bfcl: {MULTI_TURN_TOOLS_REFUSED}")
        multi_turn_texts()  # the holdout prompt and the step limit: one clear error now if the wheel lacks them
        sampling["multi_turn"] = model.sampling_for(OFFICIAL_MULTI_TURN_SAMPLING)
    if web_search or memory:
        agentic_format_text()
    if memory:
        from evaluators.benchmarks.bfcl.agentic.memory import memory_texts

        memory_texts()  # the memory prompts: one clear error now if the wheel lacks them
    differences: tuple[str, ...] = (TOOLS_MODE_DIFFERENCE,) if tools else ()
    if web_search:
        differences += WEB_SEARCH_DIFFERENCES
    if memory:
        differences += MEMORY_DIFFERENCES
    return RequestProfile(
        prompt_style=OFFICIAL_STYLE,
        source=f"{SOURCE_NOTE} ({DATA_VERSION})",
        sampling=sampling,
        differences=differences,
    )


def runs_web_search(config: RunSettings, look_up: bool = True) -> bool:
    """Whether the run will hold web search items, as the engine and `load` pick them: a web search category
    chosen; for a run of every category (none named, or `all`) only with a backend configured
    (Benchmark.unavailable_now) and a source holding the agentic files."""
    return _runs_agentic(config, is_web_search, look_up)


def _runs_agentic(config: RunSettings, kind: Callable[[str], bool], look_up: bool) -> bool:
    """Whether the run holds items of the agentic categories `kind` picks, as `load` picks them: named, or in a run
    of every category from a source holding the agentic files."""
    from evaluators.benchmarks.bfcl.agentic.data import has_agentic_files
    from evaluators.core.registry import get_benchmark
    from evaluators.core.selection import runnable_subsets

    benchmark = get_benchmark("bfcl")
    if not any(kind(category) for category in runnable_subsets(benchmark, list(config.subsets) or None)):
        return False
    chosen = set(benchmark.expand_subsets(list(config.subsets) or None))
    if not asks_every_category(list(chosen)):
        return True
    source = data_source(config.data_dir) if look_up else _source_on_this_machine(config.data_dir)
    return source is None or has_agentic_files(source)


MEMORY_DIFFERENCES = (
    "memory: a resumed run (or one re-sending errors) plays each chain of prerequisite conversations again from the "
    "start, answered from the response cache, instead of reusing an earlier execution's snapshots; a prerequisite "
    "request that failed before is sent again there (officially never retried)",
)


def runs_memory(config: RunSettings, look_up: bool = True) -> bool:
    """Whether the run will hold memory items, as `load` picks them."""
    return _runs_agentic(config, is_memory, look_up)


def runs_format_sensitivity(config: RunSettings) -> bool:
    """Whether the run names format sensitivity (a run of every category leaves it out: unavailable_now)."""
    from evaluators.core.registry import get_benchmark
    from evaluators.core.selection import runnable_subsets

    return FORMAT_SENSITIVITY in runnable_subsets(get_benchmark("bfcl"), list(config.subsets) or None)


def server_keys(config: RunSettings) -> tuple[tuple[str, str], ...]:
    """Benchmark.server_keys: the SerpAPI key, when the run plays web search with the official backend."""
    backend = str((getattr(config, "options", None) or {}).get(BACKEND_OPTION) or SERPAPI)
    if backend != SERPAPI or not runs_web_search(config, look_up=False):
        return ()
    return ((SERPAPI_KEY_ENV, f"web search's {SERPAPI} backend: choose categories without web search, or replay a "
                              f"recording with --option {BACKEND_OPTION}=recorded"),)


def web_search_problem(config: RunSettings) -> str | None:
    """Why the run's web search part cannot start (no backend configured), naming what to set; None if it can."""
    return backend_problem(str((getattr(config, "options", None) or {}).get(BACKEND_OPTION) or SERPAPI))


def runs_multi_turn(config: RunSettings, look_up: bool = True) -> bool:
    """Whether the run will hold multi-turn items, as `load` picks them: its subsets and groups (every category
    when none is chosen), where every category from a source without the multi-turn files (a copy of the
    single-turn data) means the single-turn ones only. `look_up=False`: nothing is downloaded (a wheel not on
    this machine yet is the pinned one, which holds them)."""
    from evaluators.core.registry import get_benchmark

    chosen = set(get_benchmark("bfcl").expand_subsets(list(config.subsets) or None))
    if asks_every_category(list(chosen)):
        source = data_source(config.data_dir) if look_up else _source_on_this_machine(config.data_dir)
        if source is not None and optional_multi_turn(source):
            return False
    return any(is_multi_turn(category) for category in chosen)


def _source_on_this_machine(data_dir: str | None) -> DataSource | None:
    if data_dir:
        try:
            return data_source(data_dir)
        except DataError:
            return None  # the run itself says what is wrong with the folder
    given = BFCL_WHEEL.read()
    wheel = Path(given).expanduser() if given else cached_wheel_path()
    return DataSource(wheel=wheel) if wheel.is_file() else None


def setup_problems(config: RunSettings) -> str | None:
    """What this installation lacks for the run, every part at once, one line each (memory_vector's extra, a web
    search backend), from the settings alone; None when nothing is lacking. A user fixing one then does not meet
    the next only on the second try."""
    problems = [agentic_asked(config), web_search_problem(config) if runs_web_search(config, look_up=False) else None]
    return "\n".join(problem for problem in problems if problem) or None


def agentic_asked(config: RunSettings) -> str | None:
    """The refusal of a run that would play memory_vector without its optional extra (named, or in a group that
    names it, as the engine picks subsets), with the pip command; None otherwise. A run of every category leaves
    memory_vector out then (unavailable_now)."""
    from evaluators.benchmarks.bfcl.agentic.vector_extra import vector_problem
    from evaluators.core.registry import get_benchmark
    from evaluators.core.selection import runnable_subsets

    if VECTOR not in runnable_subsets(get_benchmark("bfcl"), list(config.subsets) or None):
        return None
    return vector_problem()


def unavailable_now() -> tuple[str, ...]:
    """Benchmark.unavailable_now: what a run of every category leaves out: web search without a backend configured,
    memory_vector without its extra, and format sensitivity always (5,200 more requests, outside every summary: it
    runs when named, as `--subset format_sensitivity`)."""
    from evaluators.benchmarks.bfcl.agentic.vector_extra import vector_extra_missing

    return (*web_search_unavailable(), *((VECTOR,) if vector_extra_missing() else ()), FORMAT_SENSITIVITY)


def run_problem(config: RunSettings) -> str | None:
    """request_profile's refusals from the settings alone (the form's line before Start): memory_vector without its
    extra, native tools for multi-turn, web search, memory or format sensitivity items."""
    refused = setup_problems(config)
    if refused:
        return refused
    if config.model.request_mode == "tools" and runs_format_sensitivity(config):
        return f"bfcl: {FORMAT_SENSITIVITY_TOOLS_REFUSED}"
    if runs_web_search(config, look_up=False):
        problem = web_search_problem(config)
        if problem:
            return problem
        if config.model.request_mode == "tools":
            return f"bfcl: {MULTI_TURN_TOOLS_REFUSED}"
    if config.model.request_mode == "tools" and (runs_multi_turn(config, look_up=False)
                                                 or runs_memory(config, look_up=False)):
        return f"bfcl: {MULTI_TURN_TOOLS_REFUSED}"
    return None


async def solve_multi_turn(sample: Sample, chat: Any, options: Mapping[str, Any]) -> Prediction:
    """A rollout of the official prompting loop (multi_turn.rollout), its environments in the process's shared
    environment host."""
    if options.get("request_mode", "prompt") != "prompt":
        raise ToolboardError(MULTI_TURN_TOOLS_REFUSED)
    from evaluators.benchmarks.bfcl.multi_turn.rollout import run_rollout

    return await run_rollout(sample, chat)
