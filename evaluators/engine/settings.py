"""What a run is: benchmark, data selection and model settings (never the API key)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from evaluators.core.declarations import Role
from evaluators.core.display_names import subset_title
from evaluators.core.errors import ToolboardError
from evaluators.core.limits import MAX_MODEL_NAME_CHARS, visitor_text

# Sampling fields a user may set; those left unset take the benchmark's value for each request.
SAMPLING_FIELDS = ("temperature", "top_p", "max_tokens")
# Sent when neither the user nor the benchmark sets a temperature.
DEFAULT_TEMPERATURE = 0.0
# A run's requests in flight at once, and attempts per request, when the run names none (RunSettings' defaults).
DEFAULT_CONCURRENCY = 8
DEFAULT_MAX_ATTEMPTS = 6


@dataclass(frozen=True)
class ModelSettings:
    """How to reach and sample the model. The key is read from `api_key_env` at run time only."""

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    request_mode: str = "prompt"
    # None: the benchmark's sampling for each request (its official sampling, where it has one), else 0.
    temperature: float | None = None
    max_tokens: int | None = None
    timeout: float = 120.0
    extra_body: dict[str, Any] = field(default_factory=dict)
    top_p: float | None = None
    # Benchmarks with request profiles: `official` or `toolboard`; None until a run resolves it.
    prompt_style: str | None = None

    def sampling_for(self, benchmark_sampling: dict[str, Any]) -> dict[str, Any]:
        """What a request is sent with: the benchmark's sampling, overridden by what the user set."""
        chosen = {"temperature": DEFAULT_TEMPERATURE, **benchmark_sampling}
        for name in SAMPLING_FIELDS:
            value = getattr(self, name)
            if value is not None:
                chosen[name] = value
        return chosen

    def generation(self) -> dict[str, Any]:
        """The settings that change what the model returns (part of the run's fingerprint)."""
        temperature = self.temperature
        if temperature is None and self.prompt_style is None:
            temperature = DEFAULT_TEMPERATURE  # what is sent: equal settings keep the fingerprint they always had
        settings: dict[str, Any] = {
            "model": self.model,
            "request_mode": self.request_mode,
            "temperature": temperature,
            "max_tokens": self.max_tokens,
            "extra_body": self.extra_body,
        }
        # Only when set, so that runs made before these fields existed keep their fingerprints.
        if self.top_p is not None:
            settings["top_p"] = self.top_p
        if self.prompt_style is not None:  # runs from before prompt styles had none
            settings["prompt_style"] = self.prompt_style
        return settings


# The name `solve` finds the model under test by among the run's clients (beside the declared roles).
TESTED_ROLE = "model"


@dataclass(frozen=True)
class Endpoint:
    """Another model a run talks to in one of the benchmark's declared roles (a simulated user, a
    judge). The key is read from `api_key_env` at run time only."""

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"

    def identity(self) -> dict[str, Any]:
        """What changes the role's answers (part of the fingerprint); like the tested model, not its URL."""
        return {"model": self.model}


def role_settings(role: Role, endpoint: Endpoint, tested: ModelSettings | None = None) -> ModelSettings:
    """Chat settings for a role's model: its own endpoint; the tested model's sampling and timeout,
    unless the role declares its own temperature (then nothing else is sent but that)."""
    if role.temperature is None and tested is not None:
        return ModelSettings(base_url=endpoint.base_url, model=endpoint.model, api_key_env=endpoint.api_key_env,
                             temperature=tested.temperature, max_tokens=tested.max_tokens, timeout=tested.timeout,
                             top_p=tested.top_p)
    return ModelSettings(base_url=endpoint.base_url, model=endpoint.model, api_key_env=endpoint.api_key_env,
                         temperature=role.temperature, timeout=role.timeout or (tested or ModelSettings).timeout)


@dataclass(frozen=True)
class RunConfig:
    benchmark: str
    model: ModelSettings
    language: str | None = None
    subsets: tuple[str, ...] = ()
    limit: int | None = None
    data_dir: str | None = None
    concurrency: int = DEFAULT_CONCURRENCY
    use_cache: bool = True
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    # The other models the benchmark needs, by declared role name (a role left out: the benchmark's
    # fallback, e.g. the model under test plays it).
    roles: dict[str, Endpoint] = field(default_factory=dict)
    # Values of the benchmark's declared options that differ from their defaults.
    options: dict[str, str] = field(default_factory=dict)
    # How the requests are built and sampled (RequestProfile.to_json()), recorded when the run starts.
    request_profile: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["subsets"] = list(self.subsets)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunConfig:
        data = dict(data)
        data["model"] = ModelSettings(**data["model"])
        data["subsets"] = tuple(data.get("subsets") or ())
        data["roles"] = {name: Endpoint(**endpoint) for name, endpoint in (data.get("roles") or {}).items()}
        data["options"] = dict(data.get("options") or {})
        return cls(**data)


@dataclass(frozen=True)
class RunRequest:
    """A run the engine may start: its settings, checked once by the service's builder
    (evaluators.service.run_request.build_run_request) against every rule and the deployment's policy,
    and the API key handed in for this run only (never stored, never shown). The engine's start entry
    points take only this type and do not check the settings again."""

    config: RunConfig
    api_key: str | None = field(default=None, repr=False, compare=False)


def require_run_request(request: object) -> RunRequest:
    """`request` when it is a RunRequest, else TypeError: a bare RunConfig skipped the builder's checks."""
    if not isinstance(request, RunRequest):
        raise TypeError(f"a run starts from a RunRequest (evaluators.service.run_request.build_run_request), "
                        f"not a {type(request).__name__}")
    return request


def roles_and_options(config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A stored config's roles and options, read without building a RunConfig (so a config with fields this
    version does not know still shows on the board)."""
    roles = {name: endpoint for name, endpoint in (config.get("roles") or {}).items() if isinstance(endpoint, dict)}
    return roles, dict(config.get("options") or {})


def fingerprint(config: RunConfig, data_version: str, evaluator_version: str) -> str:
    """Hash of what determines the scores: benchmark, data and evaluator versions, generation settings."""
    identity: dict[str, Any] = {
        "benchmark": config.benchmark,
        "language": config.language,
        "data_version": data_version,
        "evaluator_version": evaluator_version,
        "generation": config.model.generation(),
    }
    # Roles and options only when set, so a run without any keeps the fingerprint of its generation settings.
    if config.roles:
        identity["roles"] = {name: endpoint.identity() for name, endpoint in sorted(config.roles.items())}
    if config.options:
        identity["options"] = dict(sorted(config.options.items()))
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]


def describe_requests(config: dict[str, Any]) -> str:
    """One line on how the run's requests are built (its request profile), for the terminal and the page: each
    kind of request by its display name, its sampling as sent."""
    profile = config.get("request_profile")
    model = config.get("model") or {}
    if not profile:
        return f"requests: {model.get('request_mode', 'prompt')} mode"
    benchmark = str(config.get("benchmark") or "")
    sampling = "; ".join(f"{subset_title(benchmark, kind)}: " + ", ".join(f"{k}={v}" for k, v in values.items())
                         for kind, values in profile.get("sampling", {}).items())
    line = f"requests: {profile['prompt_style']} prompts ({sampling})"
    if profile.get("note"):
        line += f"\n  not the official requests: {profile['note']}"
    return line


def check_model_name(name: str, label: str) -> None:
    """Refuse an empty model name or one too long to show (the ranges of the other settings are declared with
    them, in evaluators/service/run_settings.py)."""
    if not name or not name.strip():
        raise ToolboardError(f"{label} is empty")
    visitor_text(name, label, MAX_MODEL_NAME_CHARS)
