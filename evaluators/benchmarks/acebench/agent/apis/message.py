"""Text messages between six fixed users, with an inbox of at most six messages."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from evaluators.benchmarks.acebench.agent.apis.base import BaseApi, fail, is_false


class MessageApi(BaseApi):
    # State set from the default state and the config (AppObject); annotated only, so a missing one still raises.
    max_capacity: int
    user_list: dict[str, dict[str, Any]]
    inbox: dict[int, dict[str, Any]]
    message_id_counter: int

    def send_message(self, sender_name: str, receiver_name: str, message: str) -> dict[str, Any]:
        if is_false(self.logged_in):
            return fail(self._text("send_not_logged_in"))
        if is_false(self.wifi):
            return fail(self._text("send_wifi_off"))
        if len(self.inbox) >= self.max_capacity:
            return fail(self._text("inbox_full"))
        if sender_name not in self.user_list or receiver_name not in self.user_list:
            return fail(self._text("no_such_sender_or_receiver"))
        sender_id = self.user_list[sender_name]["user_id"]
        receiver_id = self.user_list[receiver_name]["user_id"]
        self.message_id_counter += 1  # never decreases: the first new message is 7 even after deletions
        self.inbox[self.message_id_counter] = official_sent_message_has_no_time(sender_id, receiver_id, message)
        return {"status": True, "message": self._text("message_sent", receiver=receiver_name)}

    def delete_message(self, message_id: int) -> dict[str, Any]:
        if is_false(self.logged_in):
            return fail(self._text("delete_not_logged_in"))
        if message_id not in self.inbox:
            return fail(self._text("no_message_id"))
        del self.inbox[message_id]
        return {"status": True, "message": self._text("message_deleted", message_id=message_id)}

    def view_messages_between_users(self, sender_name: str, receiver_name: str) -> dict[str, Any]:
        if is_false(self.logged_in):
            return fail(self._text("view_not_logged_in"))
        if sender_name not in self.user_list:
            return fail(self._text("no_sender"))
        if receiver_name not in self.user_list:
            return fail(self._text("no_receiver"))
        sender_id = self.user_list[sender_name]["user_id"]
        receiver_id = self.user_list[receiver_name]["user_id"]
        found = [
            {"id": message_id, "sender": sender_name, "receiver": receiver_name, "message": data["message"]}
            for message_id, data in self.inbox.items()
            if data["sender_id"] == sender_id and data["receiver_id"] == receiver_id
        ]
        if not found:
            return fail(self._text("no_messages_between"))
        return {"status": True, "messages": found}

    def search_messages(self, user_name: str, keyword: str) -> dict[str, Any]:
        if user_name not in self.user_list:
            return fail(self._text("no_user"))
        user_id = self.user_list[user_name]["user_id"]
        found = [
            {"id": message_id, "sender_id": data["sender_id"], "receiver_id": data["receiver_id"], "message": data["message"]}
            for message_id, data in self.inbox.items()
            if (data["sender_id"] == user_id or data["receiver_id"] == user_id) and keyword.lower() in data["message"].lower()
        ]
        if not found:
            return fail(self._text("no_keyword_messages"))
        return {"status": True, "messages": found}

    def get_all_message_times_with_ids(self) -> dict[Any, Any]:
        if is_false(self.logged_in):
            return fail(self._text("times_not_logged_in"))
        return {message_id: data["time"] for message_id, data in self.inbox.items()}

    def get_latest_message_id(self) -> dict[str, Any]:
        if is_false(self.logged_in):
            return fail(self._text("latest_not_logged_in"))
        if not self.inbox:
            return fail(self._text("no_message_records"))
        message_id = official_message_by_date(self.inbox, later=True)
        return {"status": True, "message": self._text("latest_id", message_id=message_id), "message_id": message_id}

    def get_earliest_message_id(self) -> dict[str, Any]:
        if is_false(self.logged_in):
            return fail(self._text("earliest_not_logged_in"))
        if not self.inbox:
            return fail(self._text("no_message_records"))
        message_id = official_message_by_date(self.inbox, later=False)
        return {"status": True, "message": self._text("earliest_id", message_id=message_id), "message_id": message_id}


def official_sent_message_has_no_time(sender_id: Any, receiver_id: Any, message: Any) -> dict[str, Any]:
    """A sent message is stored without `time`, so later latest/earliest lookups raise KeyError('time')."""
    return {"sender_id": sender_id, "receiver_id": receiver_id, "message": message}


def official_message_by_date(inbox: dict[Any, Any], later: bool) -> Any:
    """The id of the first message with the latest (earliest) `time` date; ties keep inbox order."""
    best_id, best_time = None, None
    for message_id, data in inbox.items():
        moment = datetime.strptime(data["time"], "%Y-%m-%d")
        if best_time is None or (moment > best_time if later else moment < best_time):
            best_id, best_time = message_id, moment
    return best_id
