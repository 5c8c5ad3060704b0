"""Reminders: at most six, looked up by title."""

from __future__ import annotations

from typing import Any

from evaluators.benchmarks.acebench.agent.apis.base import BaseApi, fail, is_false


class ReminderApi(BaseApi):
    # State set from the default state and the config (AppObject); annotated only, so a missing one still raises.
    max_capacity: int
    reminder_list: dict[int, dict[str, Any]]
    reminder_id_counter: int

    # Methods that exist only in one language's class (the en class lacks both, see
    # official_en_search_reminders_missing); they are unknown names in the other language.
    LANGUAGE_ONLY_METHODS = {"mark_as_notified": "zh", "search_reminders": "zh"}

    def view_reminder_by_title(self, title: str) -> dict[str, Any]:
        if is_false(self.logged_in):
            return fail(self._text("reminder_view_not_logged_in"))
        for reminder in self.reminder_list.values():
            if reminder["title"] == title:
                return {"status": True, "reminder": reminder}
        return fail(self._text("no_reminder_title", title=title))

    def add_reminder(self, title: str, description: str, time: Any) -> dict[str, Any]:
        if is_false(self.logged_in):
            return fail(self._text("reminder_add_not_logged_in"))
        if len(self.reminder_list) >= self.max_capacity:
            return fail(self._text("reminders_full"))
        self.reminder_id_counter += 1
        reminder_id = self.reminder_id_counter
        # The new key and reminder_id are the counter (4, 5, …), unlike the defaults' 1001..1003.
        self.reminder_list[reminder_id] = {
            "reminder_id": reminder_id, "title": title, "description": description, "time": time, "notified": False,
        }
        return {"status": True, "message": self._text("reminder_added", title=title)}

    def delete_reminder(self, reminder_id: int) -> dict[str, Any]:
        if is_false(self.logged_in):
            return fail(self._text("reminder_delete_not_logged_in"))
        if reminder_id not in self.reminder_list:
            return fail(self._text("no_reminder_id"))
        del self.reminder_list[reminder_id]
        return {"status": True, "message": self._text("reminder_deleted", reminder_id=reminder_id)}

    def view_all_reminders(self) -> dict[str, Any]:
        if not self.reminder_list:
            return fail(self._text("no_reminders"))
        reminders = [
            {"title": r["title"], "description": r["description"], "time": r["time"], "notified": r["notified"]}
            for r in self.reminder_list.values()
        ]
        return {"status": True, "reminders": reminders}

    def mark_as_notified(self, reminder_id: int) -> dict[str, Any]:
        if reminder_id not in self.reminder_list:
            return fail(self._text("no_reminder_id"))
        self.reminder_list[reminder_id]["notified"] = True
        return {"status": True, "message": self._text("reminder_marked", reminder_id=reminder_id)}

    def search_reminders(self, keyword: str) -> dict[str, Any]:
        found = []
        for reminder in self.reminder_list.values():
            if keyword.lower() in reminder["title"].lower() or keyword.lower() in reminder["description"].lower():
                found.append({
                    "title": reminder["title"],
                    "description": reminder["description"],
                    "time": official_zh_search_reminders_formats_time(reminder["time"]),
                })
        if not found:
            return fail(self._text("no_keyword_reminders"))
        return {"status": True, "reminders": found}


def official_zh_search_reminders_formats_time(time: Any) -> str:
    """zh `search_reminders` calls `.strftime` on the stored time, a string, so any match raises."""
    if not hasattr(time, "strftime"):
        raise AttributeError(f"'{type(time).__name__}' object has no attribute 'strftime'")
    formatted: str = time.strftime("%Y-%m-%d %H:%M")
    return formatted


def official_en_search_reminders_missing(language: str, method: str) -> bool:
    """The en ReminderApi has no `search_reminders` (nor `mark_as_notified`), though the en tool
    lists advertise it: calling it is an unknown-method error."""
    return ReminderApi.LANGUAGE_ONLY_METHODS.get(method, language) != language
