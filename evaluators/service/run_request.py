"""One run request from every front door: the raw input of the form, the `start_run` API or the command
line, with the deployment's policy, becomes one RunRequest, every rule checked here once and refused with
the same message whichever door it came in by. The front doors only gather what they were given (by the
setting names RunSettings declares, evaluators/service/run_settings.py); the engine takes the RunRequest and
checks nothing again.

Raw input is a mapping: every field may be missing, None or empty (= unset); numbers may be written as
text (a form box, a flag) or given as numbers (an API payload); `roles` is {role name: {"base_url",
"model", "key_env"}}, `options` is {option name: value}.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from evaluators.core.environment import read_setting
from evaluators.core.errors import ToolboardError
from evaluators.core.limits import echoed
from evaluators.core.registry import Benchmark, get_benchmark
from evaluators.core.selection import resolve_language
from evaluators.core.types import REQUEST_MODES
from evaluators.engine.endpoint_guard import (
    EndpointNotAllowedError,
    allowed_key_variables,
    check_api_key,
    check_endpoint_allowed,
    check_key_variable,
    check_run_keys,
)
from evaluators.engine.local_model import LOCAL_PREFIX, installed_problem, is_local, local_model
from evaluators.engine.settings import Endpoint, ModelSettings, RunConfig, RunRequest, check_model_name
from evaluators.service.deployment import is_public_mode
from evaluators.service.run_settings import (
    MAX_CONCURRENCY,
    SETTING_NAMES,
    RunSettings,
    number_range,
    read_run_settings,
    wrong_kind_message,
)

# Every name a door may hand the builder: the settings and the key (never a setting: it is not stored).
RAW_FIELDS = ("api_key", *SETTING_NAMES)
ROLE_PARTS = ("base_url", "model", "key_env")
# What a run reads: the deployment's data ("download": the operator's data folder, else TOOLBOARD_DATA_DIR,
# else the benchmark's published data), a benchmark's built-in example, or a folder of the caller's.
DOWNLOAD, BUILT_IN_EXAMPLE, LOCAL_FOLDER = "download", "built-in example", "local folder"
DATA_SOURCES = (DOWNLOAD, BUILT_IN_EXAMPLE, LOCAL_FOLDER)
AUTO_PROMPT_STYLE = "auto"
# A public deployment must not be usable to flood an endpoint or starve other visitors.
PUBLIC_MAX_CONCURRENCY = 16
PUBLIC_MAX_LIMIT = 100


@dataclass(frozen=True)
class RunPolicy:
    """What a deployment allows a run: `public` (no key from the server's environment, no local folder),
    caps on concurrency and on the limit per subset (a cap on the limit requires one), the key variables a
    run may name (None: any name ending in _KEY), what "download" reads, and whether only public hosts may
    be called (None: as the process's network guard says, TOOLBOARD_PUBLIC, which the engine, the key
    lookup and the redirect guard also follow; a public app runs with it on)."""

    public: bool = False
    max_concurrency: int = MAX_CONCURRENCY
    max_limit: int | None = None
    key_variables: tuple[str, ...] | None = None
    default_data_dir: str | None = None
    public_hosts_only: bool | None = None


def app_policy(public: bool, default_data_dir: str | None = None) -> RunPolicy:
    """The app's policy: a public deployment's caps and no server keys; on a private one the key variables
    its operator lists in TOOLBOARD_KEY_VARS (default OPENAI_API_KEY)."""
    if public:
        return RunPolicy(public=True, max_concurrency=PUBLIC_MAX_CONCURRENCY, max_limit=PUBLIC_MAX_LIMIT,
                         key_variables=(), default_data_dir=default_data_dir)
    return RunPolicy(key_variables=allowed_key_variables(), default_data_dir=default_data_dir)


def command_line_policy() -> RunPolicy:
    """The command line's policy: its user's own environment, so any key variable (…_KEY) unless
    TOOLBOARD_KEY_VARS lists them; public mode (TOOLBOARD_PUBLIC) as the app's."""
    if is_public_mode():
        return app_policy(True)
    listed = read_setting("key_vars")
    return RunPolicy(key_variables=allowed_key_variables() if listed else None)


def build_run_request(raw: Mapping[str, Any], policy: RunPolicy) -> RunRequest:
    """`raw` (see the module docstring) under `policy` -> the checked RunRequest, or a ToolboardError
    that says which field is wrong and what is expected."""
    settings = read_run_settings(raw)
    benchmark = _benchmark(settings.benchmark)
    config = _run_config(settings, policy, benchmark, _tested_model(settings, policy))
    api_key = check_api_key(_text(raw.get("api_key")) or None)
    check_run_keys(config, api_key)
    return RunRequest(config=config, api_key=api_key)


# The model under test while a form's endpoint boxes are still empty: only what ranks a run is looked at.
_STAND_IN = "the model under test"


def run_settings(raw: Mapping[str, Any], policy: RunPolicy) -> RunConfig:
    """The settings `raw` asks for, built and checked as build_run_request builds them, but for the endpoint
    of the model under test (a stand-in unless it is the built-in local model) and the keys: what decides
    whether the run would be ranked, known before the endpoint is given and without looking it up. A
    ToolboardError when a setting is wrong."""
    settings = read_run_settings(raw)
    benchmark = _benchmark(settings.benchmark)
    local = is_local(settings.model or "") or is_local(settings.base_url or "")
    tested = _tested_model(settings, policy) if local else _Tested("", _STAND_IN, "")
    return _run_config(settings, policy, benchmark, tested, with_roles=False)


def _run_config(settings: RunSettings, policy: RunPolicy, benchmark: Benchmark, tested: _Tested,
                with_roles: bool = True) -> RunConfig:
    """Every setting but the key, checked against the benchmark's declarations and the policy's caps
    (`with_roles` False: the roles' endpoints left out, unchecked)."""
    language = resolve_language(benchmark, settings.language)
    benchmark.expand_subsets(list(settings.subsets))  # an unknown subset or group is refused, naming the known ones
    model = ModelSettings(
        base_url=tested.base_url, model=tested.model, api_key_env=tested.api_key_env,
        request_mode=_request_mode(benchmark, settings.request_mode),
        temperature=settings.temperature, top_p=settings.top_p,
        max_tokens=settings.max_tokens if settings.max_tokens is not None else tested.max_tokens,
        timeout=max(settings.timeout, tested.timeout),  # the local model's at least its own: its queue is long
        extra_body=dict(settings.extra_body),
        prompt_style=_prompt_style(benchmark, settings.prompt_style),
    )
    roles_given = {name: role.model_dump() for name, role in settings.roles.items()}
    roles = build_roles(benchmark, roles_given, policy, Endpoint(model.base_url, model.model, model.api_key_env)) \
        if with_roles else {}
    config = RunConfig(
        benchmark=benchmark.name, model=model, language=language, subsets=settings.subsets,
        limit=settings.limit, data_dir=_data_dir(benchmark, language, settings, policy),
        concurrency=settings.concurrency, use_cache=settings.use_cache, max_attempts=settings.max_attempts,
        roles=roles, options=_options(benchmark, settings.options),
    )
    for label, name in (("the model name", model.model),
                        *((f"the {role} role's model name", endpoint.model) for role, endpoint in roles.items())):
        check_model_name(name, label)
    _check_caps(config, policy)
    _check_server_keys(benchmark, config, policy)
    return config


def _check_server_keys(benchmark: Benchmark, config: RunConfig, policy: RunPolicy) -> None:
    """A public deployment refuses a run that would read a key from the server's environment besides the
    endpoints' (Benchmark.server_keys): a visitor's run never spends the operator's keys."""
    needed = benchmark.server_keys(config) if policy.public and benchmark.server_keys is not None else ()
    if needed:
        raise ToolboardError("a run on a public deployment cannot read a key from the server's environment: "
                             + "; ".join(f"{variable} ({why})" for variable, why in needed))


def _check_caps(config: RunConfig, policy: RunPolicy) -> None:
    """The deployment's caps on concurrency and on the limit per subset (a cap on the limit requires one)."""
    cap = "this deployment's cap"
    if policy.max_concurrency < MAX_CONCURRENCY and config.concurrency > policy.max_concurrency:
        raise number_range("concurrency").refused(config.concurrency, policy.max_concurrency, cap)
    if policy.max_limit is None:
        return
    if config.limit is None:
        raise ToolboardError(f"the limit per subset must be given on this deployment (at most {policy.max_limit} "
                             "samples per subset)")
    if config.limit > policy.max_limit:
        raise number_range("limit").refused(config.limit, policy.max_limit, cap)


# ---- the parts ---------------------------------------------------------------------------------------

def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _benchmark(name: Any) -> Benchmark:
    if not _text(name):
        raise ToolboardError("give the benchmark to run")
    benchmark = get_benchmark(_text(name))
    if benchmark.solve is None:
        raise ToolboardError(f"{benchmark.name} cannot run against an endpoint yet")
    return benchmark


@dataclass(frozen=True)
class _Tested:
    base_url: str
    model: str
    api_key_env: str
    max_tokens: int | None = None
    timeout: float = 0.0


def _tested_model(settings: RunSettings, policy: RunPolicy) -> _Tested:
    """The model under test: an endpoint (base URL, model, key variable), or the built-in local model
    (model `local:NAME`: no base URL, no key; its own token cap, and a timeout long enough for its queue)."""
    base_url, model = settings.base_url or "", settings.model or ""
    if is_local(model) or is_local(base_url):
        if base_url and model and base_url != model:
            raise ToolboardError(f"the built-in local model ({model if is_local(model) else base_url}) takes no "
                                 "base URL: leave it empty")
        chosen = local_model(model if is_local(model) else base_url)
        problem = installed_problem(LOCAL_PREFIX + chosen.name)
        if problem:  # how to install it is for the operator, not for a public deployment's visitors
            raise ToolboardError(f"{chosen.title} is not installed on this deployment" if policy.public else problem)
        return _Tested(LOCAL_PREFIX + chosen.name, chosen.name, "", chosen.max_tokens, chosen.timeout)
    if not base_url or not model:
        raise ToolboardError("give the endpoint's base URL and the model name (or the built-in local model, "
                             f"{LOCAL_PREFIX}smollm2)")
    check_endpoint_allowed(base_url, policy.public_hosts_only)
    return _Tested(base_url, model, _key_variable(settings.api_key_env, policy))


def _key_variable(given: Any, policy: RunPolicy) -> str:
    """The variable a key is read from (empty: none); on a public deployment none may be named."""
    name = _text(given)
    if name and policy.public:
        raise ToolboardError(f"a run on a public deployment cannot read a key from the server's environment "
                             f"({echoed(name)!r} named): give the key in the API key field instead")
    check_key_variable(name, policy.key_variables)
    return name


def build_roles(benchmark: Benchmark, raw_roles: Any, policy: RunPolicy, tested: Endpoint | None,
                scoring_files: bool = False) -> dict[str, Endpoint]:
    """{role name: Endpoint} for the roles given a model, each one the benchmark declares. A role's key
    variable, when none is named, is the tested model's for a role on the same scheme, host and port, else
    none: a key never goes to another host unless its variable is named. A role given the tested model
    itself is left out when the tested model plays it anyway. `tested` None: scoring a file."""
    if raw_roles is None:
        return {}
    if not isinstance(raw_roles, Mapping):
        raise ToolboardError(wrong_kind_message("roles"))
    roles: dict[str, Endpoint] = {}
    for name, parts in raw_roles.items():
        if not isinstance(parts, Mapping):
            raise ToolboardError(f'role {echoed(str(name))!r} must be {{"base_url", "model", "key_env"}}')
        given = {part: _text(parts.get(part) or parts.get(f"api_{part}")) for part in ROLE_PARTS}
        if not (given["base_url"] or given["model"] or given["key_env"]):
            continue  # an empty box: the benchmark's fallback
        role = benchmark.role(_text(name))
        if scoring_files and not role.used_when_scoring_files:
            raise ToolboardError(f"the {role.name} role of {benchmark.name} takes part in runs only, not in scoring a file")
        if not (given["base_url"] and given["model"]):
            raise ToolboardError(f"{role.label} needs both a base URL and a model (or neither: {role.fallback})")
        try:
            check_endpoint_allowed(given["base_url"], policy.public_hosts_only)
        except EndpointNotAllowedError as exc:
            raise EndpointNotAllowedError(f"{role.label}: {exc}") from None
        key_env = _key_variable(given["key_env"], policy) or _same_host_key(given["base_url"], tested)
        endpoint = Endpoint(given["base_url"], given["model"], key_env)
        if role.played_by_tested_model and endpoint == tested:
            continue
        roles[role.name] = endpoint
    return roles


def _same_host_key(url: str, tested: Endpoint | None) -> str:
    if tested is None:
        return ""
    mine, theirs = urlsplit(url), urlsplit(tested.base_url)
    try:
        same = (mine.scheme, mine.hostname, mine.port) == (theirs.scheme, theirs.hostname, theirs.port)
    except ValueError:  # a malformed port was refused already; never a key for it
        return ""
    return tested.api_key_env if same else ""


def _options(benchmark: Benchmark, raw_options: Any) -> dict[str, str]:
    if raw_options is None:
        return {}
    if not isinstance(raw_options, Mapping):
        raise ToolboardError(wrong_kind_message("options"))
    given = {_text(name): _text(value) for name, value in raw_options.items() if _text(value)}
    return benchmark.chosen_options(given)  # each checked against the declarations; defaults left out


def _request_mode(benchmark: Benchmark, value: Any) -> str:
    """The mode given, or the benchmark's first (its published rows'); one the benchmark does not offer is refused."""
    mode = _text(value) or benchmark.request_modes[0]
    if mode not in benchmark.request_modes:
        offered = ", ".join(benchmark.request_modes)
        raise ToolboardError(f"the request mode of {benchmark.name} must be {offered}; got {echoed(mode)!r}"
                             if mode in REQUEST_MODES else
                             f"the request mode must be one of {offered}; got {echoed(mode)!r}")
    return mode


def _prompt_style(benchmark: Benchmark, value: Any) -> str | None:
    """None (auto: official when its files are there) or a style the benchmark offers."""
    style = _text(value) or AUTO_PROMPT_STYLE
    if style == AUTO_PROMPT_STYLE:
        return None
    if benchmark.request_profile is None:
        raise ToolboardError(f"{benchmark.name} has no prompt styles to choose from: leave the prompt style on "
                             f"{AUTO_PROMPT_STYLE}")
    if style not in benchmark.prompt_styles:
        raise ToolboardError(f"prompts for {benchmark.name} must be one of {AUTO_PROMPT_STYLE}, "
                             f"{', '.join(benchmark.prompt_styles)}; got {echoed(style)!r}")
    return style


def _data_dir(benchmark: Benchmark, language: str | None, settings: RunSettings, policy: RunPolicy) -> str | None:
    """The folder the run reads (None: TOOLBOARD_DATA_DIR, else the benchmark's download)."""
    folder = settings.data_folder or ""
    source = settings.data_source or (LOCAL_FOLDER if folder else DOWNLOAD)
    if source == DOWNLOAD:
        return policy.default_data_dir
    if source == BUILT_IN_EXAMPLE:
        return str(example_folder(benchmark, language))
    if source != LOCAL_FOLDER:
        raise ToolboardError(f"the data source must be one of {', '.join(DATA_SOURCES)}; got {echoed(source)!r}")
    return local_folder(folder, policy.public)


def example_folder(benchmark: Benchmark, language: str | None) -> Path:
    """The folder of a benchmark's built-in example (see registry.Example), in the example's language only
    (`language` as resolved for the benchmark); a benchmark without one is a clear error."""
    example = benchmark.example
    if example is None:
        raise ToolboardError(f"{benchmark.title} has no built-in example: pick another data source")
    if example.language is not None and language != example.language:
        raise ToolboardError(f"the built-in example of {benchmark.title} is in {example.language}: "
                             f"choose language {example.language}")
    return example.folder


def local_folder(folder: str | None, public: bool) -> str:
    """A local data folder a form named: never on a public deployment, never empty."""
    if public:
        raise ToolboardError("local data folders are not available on a public deployment")
    if not (folder or "").strip():
        raise ToolboardError("give the local data folder, or pick another data source")
    return (folder or "").strip()
