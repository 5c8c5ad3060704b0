"""What a run is: benchmark, data selection and model settings (never the API key)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

REQUEST_MODES = ("prompt", "tools")
MODALITIES = ("text", "audio")
# Sampling fields a user may set; those left unset take the benchmark's value for each request.
SAMPLING_FIELDS = ("temperature", "top_p", "max_tokens")
# Sent when neither the user nor the benchmark sets a temperature.
DEFAULT_TEMPERATURE = 0.0


@dataclass(frozen=True)
class JudgeSettings:
    """An LLM judge set apart from the model under test (StepEval parameter accuracy). The key is read
    from `api_key_env` at run time only."""

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = 300.0

    def identity(self) -> dict[str, Any]:
        """What changes the verdicts (part of the run's fingerprint); like the model under test, not its URL."""
        return {"model": self.model}

    def model_settings(self) -> ModelSettings:
        """Chat settings for the judge: its own endpoint, temperature 0."""
        return ModelSettings(base_url=self.base_url, model=self.model, api_key_env=self.api_key_env, temperature=0.0,
                             timeout=self.timeout)


@dataclass(frozen=True)
class ModelSettings:
    """How to reach and sample the model. The key is read from `api_key_env` at run time only."""

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    request_mode: str = "prompt"
    # None: the benchmark's sampling for each request (ACEBench official: the reference's defaults), else 0.
    temperature: float | None = None
    max_tokens: int | None = None
    timeout: float = 120.0
    extra_body: dict[str, Any] = field(default_factory=dict)
    # Read by benchmarks that support them (StepEval): user turns as text or audio, and the judge.
    modality: str = "text"
    judge: JudgeSettings | None = None
    top_p: float | None = None
    # Benchmarks with request profiles (ACEBench): `official` or `toolboard`; None until a run resolves it.
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
        if self.modality != "text":
            settings["modality"] = self.modality
        if self.judge is not None:
            settings["judge"] = self.judge.identity()
        if self.top_p is not None:
            settings["top_p"] = self.top_p
        if self.prompt_style is not None:  # runs from before prompt styles had none
            settings["prompt_style"] = self.prompt_style
        return settings


@dataclass(frozen=True)
class UserSimulatorSettings:
    """The LLM that plays the user in dialogue rollouts (ACEBench agent_multi_turn), when it is not
    the model under test. The key is read from `api_key_env` at run time only."""

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"

    def identity(self) -> dict[str, Any]:
        """What changes the simulated user's replies (part of the fingerprint); like the model, not its URL."""
        return {"model": self.model}

    def model_settings(self, tested: ModelSettings) -> ModelSettings:
        """Chat settings for the simulator: its own endpoint, sampling and timeout as for the tested model."""
        return ModelSettings(base_url=self.base_url, model=self.model, api_key_env=self.api_key_env,
                             temperature=tested.temperature, max_tokens=tested.max_tokens, timeout=tested.timeout,
                             top_p=tested.top_p)


@dataclass(frozen=True)
class RunConfig:
    benchmark: str
    model: ModelSettings
    language: str | None = None
    subsets: tuple[str, ...] = ()
    limit: int | None = None
    data_dir: str | None = None
    concurrency: int = 8
    use_cache: bool = True
    max_attempts: int = 6
    # None: the model under test also plays the simulated user.
    user_simulator: UserSimulatorSettings | None = None
    # How the requests are built and sampled (RequestProfile.to_json()), recorded when the run starts.
    request_profile: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["subsets"] = list(self.subsets)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunConfig:
        data = dict(data)
        model = dict(data["model"])
        if isinstance(model.get("judge"), dict):
            model["judge"] = JudgeSettings(**model["judge"])
        data["model"] = ModelSettings(**model)
        data["subsets"] = tuple(data.get("subsets") or ())
        if isinstance(data.get("user_simulator"), dict):
            data["user_simulator"] = UserSimulatorSettings(**data["user_simulator"])
        return cls(**data)


def fingerprint(config: RunConfig, data_version: str, evaluator_version: str) -> str:
    """Hash of what determines the scores: benchmark, data and evaluator versions, generation settings."""
    identity = {
        "benchmark": config.benchmark,
        "language": config.language,
        "data_version": data_version,
        "evaluator_version": evaluator_version,
        "generation": config.model.generation(),
    }
    if config.user_simulator is not None:  # only when set, so earlier runs keep their fingerprints
        identity["user_simulator"] = config.user_simulator.identity()
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]


def describe_requests(config: dict[str, Any]) -> str:
    """One line on how the run's requests are built (its request profile), for the terminal."""
    profile = config.get("request_profile")
    model = config.get("model") or {}
    if not profile:
        return f"requests: {model.get('request_mode', 'prompt')} mode"
    sampling = "; ".join(f"{kind}: " + ", ".join(f"{k}={v}" for k, v in values.items())
                         for kind, values in profile.get("sampling", {}).items())
    line = f"requests: {profile['prompt_style']} prompts ({sampling})"
    if profile.get("note"):
        line += f"\n  not the official requests: {profile['note']}"
    return line
