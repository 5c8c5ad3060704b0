"""The five API classes of ACEBench's agent categories, by the names the data use."""

from __future__ import annotations

from evaluators.benchmarks.acebench.agent.apis.base import BaseApi
from evaluators.benchmarks.acebench.agent.apis.food import FoodPlatform
from evaluators.benchmarks.acebench.agent.apis.message import MessageApi
from evaluators.benchmarks.acebench.agent.apis.reminder import ReminderApi
from evaluators.benchmarks.acebench.agent.apis.travel import Travel

API_CLASSES: dict[str, type] = {
    "BaseApi": BaseApi,
    "MessageApi": MessageApi,
    "ReminderApi": ReminderApi,
    "FoodPlatform": FoodPlatform,
    "Travel": Travel,
}

# The attributes saved for scoring (the reference's SAVED_CLASS), in the order they are written.
SAVED_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "BaseApi": ("wifi", "logged_in"),
    "MessageApi": ("inbox",),
    "ReminderApi": ("reminder_list",),
    "FoodPlatform": ("users", "logged_in_users", "orders"),
    "Travel": ("users", "reservations"),
}
