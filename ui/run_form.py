"""The Evaluate form (or the `start_run` API) -> the raw input of a run request, handed to the one builder
every front door uses (evaluators.service.run_request): this module holds no rule of its own. Also what the
form shows (choices, the data line, the demo preset). No gradio here, and no benchmark names: the roles,
options, prompt styles and built-in examples a benchmark has come from its declaration in the registry.

A form is a dict: the fields of `FIELDS`, plus `roles` ({role name: {"base_url", "model", "key_env"}})
and `options` ({option name: value}). The flat keys used before benchmarks declared their roles and
options (`judge_base_url`, `user_model`, `modality`, …) are read as aliases of these.
"""

from __future__ import annotations

import json
from typing import Any

from evaluators.core.display_names import subset_title
from evaluators.core.errors import ToolboardError
from evaluators.core.paths import data_dir_from_env
from evaluators.core.registry import all_benchmarks, get_benchmark
from evaluators.core.selection import language_names, upload_only_asked
from evaluators.engine.local_model import LOCAL_MODELS, LOCAL_PREFIX, installed_problem
from evaluators.engine.settings import RunRequest
from evaluators.service.rank_forecast import rank_forecast
from evaluators.service.run_request import (
    AUTO_PROMPT_STYLE,
    ROLE_PARTS,
    RunPolicy,
    app_policy,
    build_run_request,
)
from evaluators.service.run_settings import SETTING_NAMES, default_of, help_of, is_advanced, title_of
from evaluators.service.runs import requests_of
from ui.context import BUILT_IN_EXAMPLE, AppContext, example_folder, plain_error

DATA_DIR_CHOICE = "server data folder (TOOLBOARD_DATA_DIR)"
LIMIT_LABEL = title_of("limit")
TEMPERATURE_LABEL = title_of("temperature")
LOCAL_DEMO = LOCAL_MODELS["smollm2"]
ENDPOINT_KINDS = ("your endpoint", LOCAL_DEMO.title)
# Flat form keys from before roles and options were declared: `<role>_base_url`, `<role>_model`,
# `<role>_key_env` for these roles, and these options by their own name.
ALIAS_ROLES = ("judge", "user")
ALIAS_OPTIONS = ("modality",)
# The settings people rarely change, folded under the form's Advanced (RunSettings declares which).
ADVANCED_FIELDS = tuple(name for name in SETTING_NAMES if is_advanced(name))
# The form's plain fields (besides roles and options), in the order the page lays them out.
FIELDS = ("endpoint_kind", "base_url", "model", "api_key_env", "benchmark", "language", "subsets", "data_source",
          "data_folder", "limit", "concurrency", "request_mode", "prompt_style", "temperature", *ADVANCED_FIELDS)


def advanced_label(name: str) -> str:
    """An Advanced field's label: its name as the command line and the API write it, and its declared help."""
    return f"{name}: {help_of(name)}"


def advanced_default(name: str) -> Any:
    """What an Advanced field shows at first: its declared default (text boxes show unset as empty)."""
    value = default_of(name)
    if isinstance(value, bool):
        return value
    if isinstance(value, dict):
        return json.dumps(value) if value else ""
    return "" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def subset_choices(benchmark: str) -> list[tuple[str, str]]:
    """(title, id) of the benchmark's groups and subsets a run can play, as a dropdown offers them: those scored
    from uploads only (Benchmark.upload_only, and groups of them only) are offered on the Submit tab, not here."""
    spec = get_benchmark(benchmark)
    keys = (*[g for g in spec.groups if g != "all"], *spec.subsets)
    refused = set(upload_only_asked(spec, keys))
    return [(subset_title(benchmark, key), key) for key in keys if key not in refused]


def language_ids(benchmark: str) -> list[str]:
    return language_names(get_benchmark(benchmark))


def language_choices(benchmark: str) -> list[tuple[str, str]]:
    """(title, id) of the benchmark's languages (e.g. English, en)."""
    return [(subset_title(benchmark, language), language) for language in language_ids(benchmark)]


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
            "temperature": "", "prompt_style": AUTO_PROMPT_STYLE}


def local_model_works() -> bool:
    """Whether the built-in local model can run on this machine (installed, its model file there): the form
    offers it, and its Demo button, only then. Asked once, when the app is built."""
    return installed_problem() is None


def endpoint_kinds(local_works: bool) -> list[str]:
    """What the form's "Model to evaluate" offers: an endpoint, and the local model where it works."""
    return list(ENDPOINT_KINDS) if local_works else [ENDPOINT_KINDS[0]]


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


# The form's fields the builder reads under the same name: every setting but the endpoint (the local demo's
# kind replaces it) and the roles and options (gathered from their own boxes and the old flat keys).
_SAME_NAME = tuple(name for name in SETTING_NAMES if name not in ("base_url", "model", "roles", "options"))


def raw_run(form: dict[str, Any]) -> dict[str, Any]:
    """The form (or the API's arguments) by the builder's names: the local demo model is `local:NAME`
    (its endpoint boxes are not read), roles and options as given."""
    raw = {name: form.get(name) for name in _SAME_NAME if name in form}
    if form.get("endpoint_kind") == LOCAL_DEMO.title:
        raw["model"] = LOCAL_PREFIX + LOCAL_DEMO.name
    else:
        raw["base_url"], raw["model"] = form.get("base_url"), form.get("model")
    raw["roles"], raw["options"] = given_roles(form), given_options(form)
    return raw


def run_policy(context: AppContext) -> RunPolicy:
    return app_policy(context.public, context.default_data_dir)


def run_request(context: AppContext, form: dict[str, Any], api_key: str | None = None) -> RunRequest:
    """The form -> the checked run request (every field checked and explained when wrong)."""
    return build_run_request({**raw_run(form), "api_key": api_key}, run_policy(context))


def rank_line(context: AppContext, form: dict[str, Any]) -> str:
    """The form's line before Start (plain text): would this run be ranked beside the published rows, else
    why; by the board's own rule, from the settings alone (no endpoint is called)."""
    return rank_forecast(raw_run(form), run_policy(context)).line()


def start_job(context: AppContext, form: dict[str, Any], api_key: str | None, owner: str | None = None) -> dict[str, str]:
    """The form's and the `start_run` API's handler: check the form and start the run (if the deployment's
    limits allow it); the key goes to the job only. {"run_id", "message"}: the message is plain text (as API
    callers get it; the page shows it through as_markdown), run_id empty when refused."""
    try:
        run_id = context.start_run(run_request(context, form, api_key or None), owner=owner)
    except Exception as exc:  # noqa: BLE001 - every failure is shown on the page
        return {"run_id": "", "message": plain_error(exc, context.redact_paths)}
    requests = requests_of(context, run_id)
    return {"run_id": run_id, "message": f"Started run {run_id}. {requests}"}
