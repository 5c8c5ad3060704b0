"""A tiny ACEBench agent dataset written for these tests (never the real data): two multi_step and
two multi_turn items, their gold end states and milestones, and small scenario defaults."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

BASE_STATE = {"wifi": False, "logged_in": True}
MESSAGE_STATE = {
    "max_capacity": 3,
    "user_list": {"Ana": {"user_id": "USR1"}, "Ben": {"user_id": "USR2"}, "Cleo": {"user_id": "USR3"}},
    "inbox": {
        "1": {"sender_id": "USR1", "receiver_id": "USR2", "message": "hello", "time": "2024-01-02"},
        "2": {"sender_id": "USR2", "receiver_id": "USR1", "message": "hi", "time": "2024-03-04"},
        "3": {"sender_id": "USR3", "receiver_id": "USR1", "message": "lunch?", "time": "2023-05-06"},
    },
    "message_id_counter": 3,
}
REMINDER_STATE = {
    "max_capacity": 3,
    "reminder_list": {"1": {"reminder_id": 501, "title": "Gym", "description": "Leg day", "time": "2024-06-12 07:00", "notified": False}},
    "reminder_id_counter": 1,
}
FOOD_STATE = {
    "users": {"Ana": {"user_id": "F1", "password": "pw-ana", "balance": 50.0}},
    "merchant_list": {"Tea House": {"merchant_id": "M1", "service_type": "Tea", "menu": [{"product": "Green Tea", "price": 12.0}]}},
    "logged_in_users": [],
    "orders": [],
}
TRAVEL_STATE = {
    "users": {"u1": {"user_name": "Ana", "password": "pw1", "cash_balance": 1000.0, "bank_balance": 0.0, "membership_level": "regular"}},
    "flights": [
        {"flight_no": "TB100", "origin": "Oslo", "destination": "Rome", "depart_time": "2024-07-20 08:00:00",
         "arrival_time": "2024-07-20 11:00:00", "status": "available", "seats_available": 5, "economy_price": 300, "business_price": 900},
    ],
    "reservations": [{"reservation_id": "res_1", "user_id": "u1", "flight_no": "TB100", "payment_method": "cash", "cabin": "Economy Class", "baggage": 1}],
}
SCENARIOS = {
    "BaseApi": (BASE_STATE, [], False, []),
    "MessageApi": (MESSAGE_STATE, ["BaseApi"], True, ["inbox"]),
    "ReminderApi": (REMINDER_STATE, ["BaseApi"], False, ["reminder_list"]),
    "FoodPlatform": (FOOD_STATE, ["BaseApi"], False, []),
    "Travel": (TRAVEL_STATE, [], False, []),
}

SPEC = {"name": "turn_on_wifi", "description": "Turn on Wi-Fi.", "parameters": {"type": "dict", "required": [], "properties": {}}}


def _item(item_id: str, question: str, classes: list[str], config: dict[str, Any], gold: list[Any], milestones: list[str]) -> dict[str, Any]:
    return {"id": item_id, "question": question, "classes": classes, "config": config, "gold": gold, "milestones": milestones}


ITEMS = [
    _item("agent_multi_step_0", "I am Ana. Delete my earliest message, then tell Ben 'see you'.", ["BaseApi", "MessageApi"],
          {"BaseApi": {"wifi": False, "logged_in": True}},
          [{"BaseApi": {"wifi": True, "logged_in": True}},
           {"MessageApi": {"inbox": {"1": MESSAGE_STATE["inbox"]["1"], "2": MESSAGE_STATE["inbox"]["2"],
                                     "4": {"sender_id": "USR1", "receiver_id": "USR2", "message": "see you"}}}}],
          ["[turn_on_wifi()]", "[get_earliest_message_id()]", "[delete_message(message_id=3)]",
           "[send_message(sender_name='Ana', receiver_name='Ben', message='see you')]"]),
    _item("agent_multi_step_1", "I am Ana (password pw-ana). Order two Green Tea from Tea House.", ["BaseApi", "FoodPlatform"],
          {"BaseApi": {"wifi": False, "logged_in": True}},
          [{"BaseApi": {"wifi": True, "logged_in": True}},
           {"FoodPlatform": {"users": {"Ana": {"user_id": "F1", "password": "pw-ana", "balance": 26.0}}, "logged_in_users": ["Ana"],
                             "orders": [{"user_name": "Ana", "merchant_name": "Tea House",
                                         "items": [{"product": "Green Tea", "quantity": 2, "price_per_unit": 12.0}], "total_price": 24.0}]}}],
          ["[turn_on_wifi()]", "[login_food_platform(username='Ana', password='pw-ana')]",
           "[add_food_delivery_order(username='Ana', merchant_name='Tea House', items=[{'product': 'Green Tea', 'quantity': 2}])]"]),
    _item("agent_multi_turn_0", "You are Ana. Add a reminder 'Tea' (Buy tea) at 2024-06-11 16:00.", ["BaseApi", "ReminderApi"], {},
          [{"BaseApi": {"wifi": False, "logged_in": True}},
           {"ReminderApi": {"reminder_list": {"1": REMINDER_STATE["reminder_list"]["1"],
                                              "2": {"reminder_id": 2, "title": "Tea", "description": "Buy tea", "time": "2024-06-11 16:00", "notified": False}}}}],
          ["[add_reminder(title='Tea', description='Buy tea', time='2024-06-11 16:00')]"]),
    _item("agent_multi_turn_1", "You are user u1 (password pw1). Book TB100 in economy, pay cash, two bags.", ["Travel"], {},
          [{"Travel": {"users": {"u1": {**TRAVEL_STATE["users"]["u1"], "cash_balance": 650.0}},
                       "reservations": TRAVEL_STATE["reservations"] + [
                           {"reservation_id": "res_2", "user_id": "u1", "flight_no": "TB100", "payment_method": "cash",
                            "cabin": "Economy Class", "baggage": 2}]}}],
          ["[get_flight_details(origin='Oslo', destination='Rome')]",
           "[reserve_flight(user_id='u1', password='pw1', flight_no='TB100', cabin='Economy Class', payment_method='cash', baggage_count=2)]"]),
]


def write_agent_dataset(root: Path, with_scenarios: bool = True) -> Path:
    """`root/data_en/...` in the official layout, and `root/scenarios/en/<Class>.json` defaults."""
    folder = root / "data_en"
    (folder / "possible_answer").mkdir(parents=True, exist_ok=True)
    for category in ("agent_multi_step", "agent_multi_turn"):
        items = [item for item in ITEMS if item["id"].startswith(category)]
        with (folder / f"data_{category}.json").open("w") as questions, (folder / "possible_answer" / f"data_{category}.json").open("w") as answers:
            for item in items:
                questions.write(json.dumps({"id": item["id"], "question": item["question"], "function": [SPEC],
                                            "initial_config": item["config"], "involved_classes": item["classes"]}) + "\n")
                answers.write(json.dumps({"id": item["id"], "ground_truth": item["gold"], "mile_stone": item["milestones"]}) + "\n")
    if with_scenarios:
        scenario_dir = root / "scenarios" / "en"
        scenario_dir.mkdir(parents=True, exist_ok=True)
        for name, (state, bases, calls_base, int_keyed) in SCENARIOS.items():
            data = {"class": name, "language": "en", "base_classes": bases, "init_calls_base_init": calls_base,
                    "integer_keyed_attributes": int_keyed, "state": state}
            (scenario_dir / f"{name}.json").write_text(json.dumps(data))
    return root


def milestone_plans() -> dict[str, list[str]]:
    return {item["id"]: item["milestones"] for item in ITEMS}
