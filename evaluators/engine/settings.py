"""What a run is: benchmark, data selection and model settings (never the API key)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

REQUEST_MODES = ("prompt", "tools")


@dataclass(frozen=True)
class ModelSettings:
    """How to reach and sample the model. The key is read from `api_key_env` at run time only."""

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    request_mode: str = "prompt"
    temperature: float = 0.0
    max_tokens: int | None = None
    timeout: float = 120.0
    extra_body: dict[str, Any] = field(default_factory=dict)

    def generation(self) -> dict[str, Any]:
        """The settings that change what the model returns (part of the run's fingerprint)."""
        return {
            "model": self.model,
            "request_mode": self.request_mode,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "extra_body": self.extra_body,
        }


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

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["subsets"] = list(self.subsets)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunConfig:
        data = dict(data)
        data["model"] = ModelSettings(**data["model"])
        data["subsets"] = tuple(data.get("subsets") or ())
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
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]
