"""The Evaluate form (or the `start_run` API) -> a run configuration, every field checked and explained
when wrong. No gradio here, and no benchmark names: the roles, options, prompt styles and built-in
examples a benchmark has come from its declaration in the registry.

A form is a dict: the fields of `FIELDS`, plus `roles` ({role name: {"base_url", "model", "key_env"}})
and `options` ({option name: value}). The flat keys used before benchmarks declared their roles and
options (`judge_base_url`, `user_model`, `modality`, …) are read as aliases of these.
"""

from __future__ import annotations

from typing import Any

from evaluators.core.errors import ToolboardError
from evaluators.core.limits import echoed
from evaluators.core.paths import data_dir_from_env
from evaluators.core.registry import Benchmark, all_benchmarks, get_benchmark
from evaluators.core.selection import language_names, resolve_language
from evaluators.engine.endpoint_guard import check_endpoint_allowed, check_key_variable
from evaluators.engine.local_model import LOCAL_MODELS, installed_problem
from evaluators.engine.settings import REQUEST_MODES, Endpoint, ModelSettings, RunConfig, check_run_settings
from ui.context import BUILT_IN_EXAMPLE, AppContext, example_folder, resolve_data_dir

DATA_SOURCES = ("download", BUILT_IN_EXAMPLE, "local folder")
DATA_DIR_CHOICE = "server data folder (TOOLBOARD_DATA_DIR)"
LIMIT_LABEL = ("Limit per subset (empty = all): the first N items of each subset; multi-turn subsets keep N whole "
               "conversations, each counted as all its turns")
AUTO_PROMPT_STYLE = "auto"
# A public deployment must not be usable to flood an endpoint or starve other visitors.
PUBLIC_MAX_CONCURRENCY = 16
PUBLIC_MAX_LIMIT = 100
DEFAULT_CONCURRENCY = 8
LOCAL_DEMO = LOCAL_MODELS["smollm2"]
ENDPOINT_KINDS = ("your endpoint", LOCAL_DEMO.title)
ROLE_PARTS = ("base_url", "model", "key_env")
# Flat form keys from before roles and options were declared: `<role>_base_url`, `<role>_model`,
# `<role>_key_env` for these roles, and these options by their own name.
ALIAS_ROLES = ("judge", "user")
ALIAS_OPTIONS = ("modality",)
# The form's plain fields (besides roles and options), in the order the page lays them out.
FIELDS = ("endpoint_kind", "base_url", "model", "api_key_env", "benchmark", "language", "subsets", "data_source",
          "data_folder", "limit", "concurrency", "request_mode", "prompt_style", "temperature")


def subset_choices(benchmark: str) -> list[str]:
    spec = get_benchmark(benchmark)
    return [*[g for g in spec.groups if g != "all"], *spec.subsets]


def language_choices(benchmark: str) -> list[str]:
    return language_names(get_benchmark(benchmark))


def default_data_folder(context: AppContext) -> str | None:
    """What the "download" source reads: the server's TOOLBOARD_DATA_DIR when set, else None (download)."""
    folder = context.default_data_dir or data_dir_from_env()
    return str(folder) if folder else None


def data_source_choices(context: AppContext, benchmark: str) -> list[tuple[str, str]]:
    """(label, value) of the data sources a form offers for `benchmark`: "download" says when it reads
    TOOLBOARD_DATA_DIR instead; the built-in example only for a benchmark that ships one; a local folder
    not on a public deployment."""
    choices = [(DATA_DIR_CHOICE if default_data_folder(context) else "download", "download")]
    if get_benchmark(benchmark).example is not None:
        choices.append((BUILT_IN_EXAMPLE, BUILT_IN_EXAMPLE))
    if not context.public:
        choices.append(("local folder", "local folder"))
    return choices


def data_source_value(context: AppContext, benchmark: str, source: str | None) -> str:
    """`source` if `benchmark` offers it, else "download"."""
    return source if source in {value for _, value in data_source_choices(context, benchmark)} else "download"


def data_line(context: AppContext, source: str | None, folder: str | None, benchmark: str,
              language: str | None = None) -> str:
    """What a run (or a check) with this data source will read, in one plain line; server paths are
    shortened on a public deployment."""
    spec = get_benchmark(benchmark)
    if source == BUILT_IN_EXAMPLE:
        try:
            example_folder(benchmark, language)
        except ToolboardError as exc:
            return f"data: ⚠️ {exc}"
        return f"data: the built-in example of {spec.title} (a few items shipped with the app; no download)"
    if source == "local folder":
        if context.public:
            return "data: ⚠️ local data folders are not available on a public deployment"
        folder = (folder or "").strip()
        return f"data: the local folder {context.redact_paths(folder)}" if folder else "data: ⚠️ give the local data folder"
    server_folder = default_data_folder(context)
    if server_folder:
        return f"data: the server's data folder (TOOLBOARD_DATA_DIR), {context.redact_paths(server_folder)}"
    return f"data: {spec.title}'s published data, downloaded on first use (then cached)"


def demo_preset() -> dict[str, Any] | None:
    """The demo: the local model on the first benchmark with a built-in example (the part of it the
    example names for the demo, in its language): no key, no network. None when no benchmark ships an example."""
    benchmark = next((b for b in all_benchmarks() if b.example is not None), None)
    if benchmark is None:
        return None
    assert benchmark.example is not None
    return {"endpoint_kind": LOCAL_DEMO.title, "benchmark": benchmark.name, "language": benchmark.example.language,
            "subsets": list(benchmark.example.demo_subsets), "data_source": BUILT_IN_EXAMPLE, "limit": 20, "concurrency": 2, "request_mode": "tools",
            "temperature": 0.0, "prompt_style": AUTO_PROMPT_STYLE}


def local_model_note(kind: str) -> str:
    if kind != LOCAL_DEMO.title:
        return ""
    problem = installed_problem()
    if problem:
        return f"⚠️ {problem}"
    return ("SmolLM2-135M runs on this machine (about 450 MB of RAM; its server starts with the first run and answers "
            "one request at a time, 4-6 s an item with native tools, 15-30 s with official prompts on 2 cores). It is a "
            "smoke test of the whole pipeline, not a competitor: expect low scores. No key or base URL is needed.")


# What the form switches to when the local model is picked: its server answers one request at a time and an
# official-prompt item takes 15-30 s on 2 cores, so a few items, two in flight, with native tools (its
# short prompts; the model needs tools to call any).
LOCAL_DEMO_FORM = {"concurrency": 2, "request_mode": "tools", "limit": 5}


def key_variable(context: AppContext, name: str | None, base_url: str) -> str:
    """The environment variable a run may take its key from: only one named explicitly, ending in _KEY,
    and none on a public deployment or for the local model."""
    name = (name or "").strip()
    if context.public or base_url.startswith("local:"):
        return ""
    check_key_variable(name)
    return name


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def given_roles(form: dict[str, Any]) -> dict[str, dict[str, str]]:
    """The role endpoints the form holds (`roles`, then the old flat keys), empty boxes left out."""
    roles = {str(name): {part: _text((parts or {}).get(part) or (parts or {}).get(f"api_{part}")) for part in ROLE_PARTS}
             for name, parts in (form.get("roles") or {}).items()}  # key_env, or api_key_env as in Endpoint
    for name in ALIAS_ROLES:
        if name not in roles or not any(roles[name].values()):
            roles[name] = {part: _text(form.get(f"{name}_{part}")) for part in ROLE_PARTS}
    return {name: parts for name, parts in roles.items() if parts["base_url"] or parts["model"]}


def given_options(form: dict[str, Any]) -> dict[str, str]:
    """The option values the form holds (`options`, then the old flat keys), empty ones left out."""
    options = {str(name): _text(value) for name, value in (form.get("options") or {}).items()}
    for name in ALIAS_OPTIONS:
        if not options.get(name):
            options[name] = _text(form.get(name))
    return {name: value for name, value in options.items() if value}


def _declared_anywhere(kind: str, name: str) -> bool:
    return any(name in (item.name for item in getattr(benchmark, kind)) for benchmark in all_benchmarks())


def chosen_roles(context: AppContext, benchmark: Benchmark, form: dict[str, Any]) -> dict[str, Endpoint]:
    """{role name: Endpoint} for each of the benchmark's roles given a model; a role another benchmark
    declares is ignored (its box is hidden for this one), one no benchmark declares is refused."""
    roles = {}
    for name, parts in given_roles(form).items():
        if name not in {role.name for role in benchmark.roles}:
            if not _declared_anywhere("roles", name):
                raise ToolboardError(f"no benchmark has a role {name!r}")
            continue
        role = benchmark.role(name)
        if not (parts["base_url"] and parts["model"]):
            raise ToolboardError(f"{role.label} needs both a base URL and a model (or neither: {role.fallback})")
        check_endpoint_allowed(parts["base_url"])
        roles[name] = Endpoint(parts["base_url"], parts["model"],
                               key_variable(context, parts["key_env"], parts["base_url"]))
    return roles


def chosen_options(benchmark: Benchmark, form: dict[str, Any]) -> dict[str, str]:
    """{option name: value} for the benchmark's options set to other than their default; another
    benchmark's options are ignored, one no benchmark declares is refused."""
    options = {}
    for name, value in given_options(form).items():
        if name in {option.name for option in benchmark.options}:
            options[name] = value
        elif not _declared_anywhere("options", name):
            raise ToolboardError(f"no benchmark has an option {name!r}")
    return benchmark.chosen_options(options)


def _prompt_style(benchmark: Benchmark, form: dict[str, Any]) -> str | None:
    """The chosen prompt style; None for auto, and for benchmarks with one kind of request."""
    style = form.get("prompt_style") or AUTO_PROMPT_STYLE
    if style not in (AUTO_PROMPT_STYLE, *benchmark.prompt_styles):
        raise ToolboardError(f"prompts for {benchmark.name} must be one of {AUTO_PROMPT_STYLE}, "
                             f"{', '.join(benchmark.prompt_styles)}")
    if benchmark.request_profile is None or style == AUTO_PROMPT_STYLE:
        return None
    return style


def _tested_endpoint(form: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """(base URL, model, form) of the model under test; the local demo model sets its own."""
    base_url, model = _text(form.get("base_url")), _text(form.get("model"))
    if form.get("endpoint_kind") == LOCAL_DEMO.title:
        problem = installed_problem()
        if problem:
            raise ToolboardError(problem)
        base_url, model = "local:" + LOCAL_DEMO.name, LOCAL_DEMO.name
        form = {**form, "max_tokens": LOCAL_DEMO.max_tokens, "timeout": LOCAL_DEMO.timeout}
    if not base_url or not model:
        raise ToolboardError("give the endpoint's base URL and the model name")
    check_endpoint_allowed(base_url)
    return base_url, model, form


def _limits(context: AppContext, form: dict[str, Any]) -> tuple[int | None, int]:
    """(limit per subset, concurrency), within the deployment's bounds."""
    limit = _whole_number(form["limit"], "limit") if form.get("limit") not in (None, "") else None
    given = form.get("concurrency")
    concurrency = DEFAULT_CONCURRENCY if given in (None, "") else _whole_number(given, "concurrency")
    if context.public and concurrency > PUBLIC_MAX_CONCURRENCY:
        raise ToolboardError(f"on a public deployment concurrency is at most {PUBLIC_MAX_CONCURRENCY}")
    if context.public and (limit is None or limit > PUBLIC_MAX_LIMIT):
        raise ToolboardError(f"on a public deployment a run takes at most {PUBLIC_MAX_LIMIT} samples per subset: set the limit")
    return limit, concurrency


def run_config(context: AppContext, form: dict[str, Any]) -> RunConfig:
    """The form -> a run configuration, with every field checked and explained when wrong."""
    base_url, model, form = _tested_endpoint(form)
    benchmark = get_benchmark(form["benchmark"])
    language = resolve_language(benchmark, form.get("language"))
    limit, concurrency = _limits(context, form)
    request_mode = form.get("request_mode") or "prompt"
    if request_mode not in REQUEST_MODES:
        raise ToolboardError(f"request mode must be one of {', '.join(REQUEST_MODES)}")
    settings = ModelSettings(
        base_url=base_url, model=model,
        # On a public deployment the server's own keys must never reach a user's endpoint.
        api_key_env=key_variable(context, form.get("api_key_env"), base_url),
        request_mode=request_mode, temperature=_optional_number(form.get("temperature"), "temperature"),
        max_tokens=form.get("max_tokens"), prompt_style=_prompt_style(benchmark, form),
        timeout=form.get("timeout") or ModelSettings.timeout,
    )
    return check_run_settings(RunConfig(
        benchmark=benchmark.name, model=settings, language=language, subsets=tuple(form.get("subsets") or ()),
        limit=limit, concurrency=concurrency,
        data_dir=resolve_data_dir(context, form.get("data_source") or "download", form.get("data_folder") or "",
                                  benchmark.name, language),
        roles=chosen_roles(context, benchmark, form), options=chosen_options(benchmark, form),
    ))


def _whole_number(value: Any, name: str) -> int:
    """A whole number typed in a box or sent by an API caller (its range is checked with the other settings)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ToolboardError(f"{name} must be a whole number; got {echoed(repr(value))}") from None
    if not number.is_integer():
        raise ToolboardError(f"{name} must be a whole number; got {echoed(repr(value))}")
    return int(number)


def _optional_number(value: Any, name: str) -> float | None:
    """An empty field means the benchmark's own value."""
    if value in (None, ""):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ToolboardError(f"{name} must be a number (or empty for the benchmark's own)") from None
