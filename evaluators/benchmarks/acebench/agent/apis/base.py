"""The phone's base API: the Wi-Fi and device-login flags every phone app carries."""

from __future__ import annotations

from typing import Any

from evaluators.benchmarks.acebench.agent.apis.state import AppObject


class BaseApi(AppObject):
    """Holds `wifi` and `logged_in`. MessageApi, ReminderApi and FoodPlatform inherit it, and each
    object keeps its own copy of the flags."""

    def _load_scenario(self, config: dict[str, Any]) -> None:
        """The reference's loader: flags come from `config` with defaults, never merged."""
        self.wifi = config.get("wifi", False)
        self.logged_in = config.get("logged_in", True)

    def turn_on_wifi(self) -> dict[str, Any]:
        self.wifi = True
        return {"status": True, "message": self._text("wifi_on")}

    def login_device(self) -> dict[str, Any]:
        self.logged_in = True
        return {"status": True, "message": self._text("device_logged_in")}


def fail(message: str) -> dict[str, Any]:
    return {"status": False, "message": message}


def is_false(flag: Any) -> bool:
    """The reference tests flags with `== False`, so 0 and 0.0 count as off too."""
    return bool(flag == False)  # noqa: E712 - deliberate: equality, not identity or truthiness
