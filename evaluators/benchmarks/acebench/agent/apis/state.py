"""What every simulated app object shares: its state as attributes, and messages in its language."""

from __future__ import annotations

from typing import Any

from evaluators.benchmarks.acebench.agent.apis.texts import text


class AppObject:
    """Private helpers only: public methods are what the model can call, so none live here."""

    def __init__(self, state: dict[str, Any], language: str) -> None:
        self._language = language
        for name, value in state.items():
            setattr(self, name, value)

    def _text(self, key: str, **values: Any) -> str:
        return text(self._language, key, **values)
