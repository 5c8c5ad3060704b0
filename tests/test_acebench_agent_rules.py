"""The agent environment's official rules, one test per named rule (fixture scenarios, no network)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluators.benchmarks.acebench.agent import calls, env, rollout
from evaluators.benchmarks.acebench.agent.apis import food, message, reminder, travel
from evaluators.benchmarks.acebench.agent.calls import ReplySyntaxError, parse_reply
from evaluators.benchmarks.acebench.agent.env import AgentEnvironment, check_keyword_arguments
from evaluators.benchmarks.acebench.agent.scenarios import default_states
from evaluators.core.errors import DataError
from tests.agent_fixtures import write_agent_dataset


@pytest.fixture
def defaults(tmp_path: Path) -> dict:
    root = write_agent_dataset(tmp_path)
    return default_states(root / "data_en", "en")


def make_env(defaults: dict, classes: list[str], config: dict | None = None, language: str = "en") -> AgentEnvironment:
    return AgentEnvironment(defaults, classes, config or {}, language)


def test_default_states_convert_integer_keys_and_inherit_base_flags(defaults: dict):
    assert list(defaults["MessageApi"]["inbox"]) == [1, 2, 3]
    assert defaults["MessageApi"]["wifi"] is False  # its constructor calls the base's
    assert "wifi" not in defaults["ReminderApi"]  # this one does not


def test_default_states_from_official_sources_without_running_them(tmp_path: Path):
    source = tmp_path / "repo" / "model_inference" / "multi_turn" / "scenariosen"
    (source / "phone_platform").mkdir(parents=True)
    (source / "phone_platform" / "base_api.py").write_text(
        "class BaseApi:\n    def __init__(self):\n        self.wifi = False\n        self.logged_in = True\n")
    (source / "phone_platform" / "message.py").write_text(
        "from x import BaseApi\nclass MessageApi(BaseApi):\n    def __init__(self):\n        super().__init__()\n"
        "        self.inbox: dict = {1: {'message': 'a', 'time': '2024-01-01'}}\n        self.message_id_counter = 1\n")
    for name, file in (("ReminderApi", "reminder.py"), ("FoodPlatform", "food_services.py")):
        (source / "phone_platform" / file).write_text(f"class {name}:\n    def __init__(self):\n        self.orders = []\n")
    (source / "travel.py").write_text("import os\nclass Travel:\n    def __init__(self):\n        self.users = {}\n        os.system('false')\n")
    (tmp_path / "repo" / "data_all" / "data_en").mkdir(parents=True)
    states = default_states(tmp_path / "repo" / "data_all" / "data_en", "en")
    assert states["MessageApi"] == {"wifi": False, "logged_in": True, "inbox": {1: {"message": "a", "time": "2024-01-01"}}, "message_id_counter": 1}
    assert states["Travel"] == {"users": {}}


def test_missing_scenarios_are_a_clear_error(tmp_path: Path):
    root = write_agent_dataset(tmp_path, with_scenarios=False)
    with pytest.raises(DataError, match="no default state for the agent environment"):
        default_states(root / "data_en", "en")


def test_official_reply_normalisation():
    assert calls.official_reply_normalisation(" turn_on_wifi()") == "turn_on_wifi()"
    assert calls.official_reply_normalisation("[f(a='x')]'") == "f(a='x')"
    assert calls.official_reply_normalisation("[f()] ") == "f()] "  # trailing space: a stray `]`
    with pytest.raises(ReplySyntaxError):
        parse_reply("[f()] ")
    with pytest.raises(ReplySyntaxError):
        parse_reply("")
    assert parse_reply("[hello]") == []  # not a call: zero calls, still an execution


def test_official_multi_turn_routing():
    assert calls.official_multi_turn_routing("[turn_on_wifi()]")
    assert not calls.official_multi_turn_routing("Sure. [turn_on_wifi()]")
    assert not calls.official_multi_turn_routing("Which message should I delete?")
    assert not calls.official_multi_turn_routing("[turn_on_wifi(), 3]")  # an element that is not a call


def test_official_unary_minus_of_constant():
    assert parse_reply("[f(a=+5, b=~2, c=-True)]")[0].arguments == (("a", "-5"), ("b", "-2"), ("c", "-1"))
    with pytest.raises(ReplySyntaxError):
        parse_reply("[f(a=-x)]")


def test_official_dict_argument_written_as_call(defaults: dict):
    call = parse_reply("[add_reminder(title='t', description={'note': {'x': 1}}, time='now')]")[0]
    assert call.arguments[1] == ("description", "note(x=1)")
    with pytest.raises(ReplySyntaxError):
        parse_reply("[add_reminder(title='t', description={'note': 1}, time='now')]")
    environment = make_env(defaults, ["BaseApi", "ReminderApi"])
    shown = environment.execute_multi_step("[add_reminder(title='t', description={'note': {'x': 1}}, time='now')]")
    assert shown.content == ["Error during execution: name 'note' is not defined"]


def test_official_build_object(defaults: dict):
    environment = make_env(defaults, ["BaseApi", "MessageApi", "FoodPlatform"],
                           {"BaseApi": {"wifi": True, "logged_in": False}, "MessageApi": {"wifi": False}, "FoodPlatform": {"logged_in_users": ["Ana"]}})
    environment.execute_multi_step("[hello]")
    objects = environment.objects
    assert [objects[n].wifi for n in objects] == [True, True, True]  # the BaseApi entry wins
    assert [objects[n].logged_in for n in objects] == [False, False, False]
    assert objects["FoodPlatform"].logged_in_users == []  # reset by the second load
    misspelt = make_env(defaults, ["BaseApi"], {"Baspi": {"wifi": True}})
    misspelt.execute_multi_step("[hello]")
    assert misspelt.saved_state() == [{"BaseApi": {"wifi": False, "logged_in": True}}]


def test_official_call_goes_to_every_object(defaults: dict):
    environment = make_env(defaults, ["BaseApi", "MessageApi", "ReminderApi"])
    shown = environment.execute_multi_step("[turn_on_wifi()]")
    assert shown.text == "[{'status': True, 'message': 'Wi-Fi has been turned on'}]"
    assert all(obj.wifi is True for obj in environment.objects.values())


def test_official_unknown_method_repeats_previous_result(defaults: dict):
    environment = make_env(defaults, ["BaseApi", "MessageApi"])
    # add_reminder exists only on ReminderApi, which is not involved
    shown = environment.execute_multi_step("[add_reminder(title='a', description='b', time='c'), turn_on_wifi(), add_reminder(title='a')]")
    assert shown.content[0] == f"Error during execution: {env.UNSET_RESULT_ERROR}"
    assert shown.content[1] == shown.content[2] == {"status": True, "message": "Wi-Fi has been turned on"}


def test_official_prefixed_name_fails(defaults: dict):
    environment = make_env(defaults, ["BaseApi"])
    assert environment.execute_multi_step("[phone.turn_on_wifi()]").content == ["Error during execution: name 'phone' is not defined"]
    assert environment.objects["BaseApi"].wifi is False


def test_official_arguments_read_back(defaults: dict):
    environment = make_env(defaults, ["BaseApi", "MessageApi"], {"BaseApi": {"wifi": True}})
    # positional arguments are dropped, so the call misses all three
    shown = environment.execute_multi_step("[send_message('Ana', 'Ben', 'x'), delete_message(message_id='3'), delete_message(message_id=1e999)]")
    assert shown.content == [
        "Error during execution: MessageApi.send_message() missing 3 required positional arguments: 'sender_name', 'receiver_name', and 'message'",
        {"status": False, "message": "Message ID does not exist"},  # '3' is not the int key 3
        "Error during execution: name 'inf' is not defined",
    ]


def test_check_keyword_arguments_texts(defaults: dict):
    environment = make_env(defaults, ["BaseApi"])
    environment.execute_multi_step("[hello]")
    method = environment.objects["BaseApi"].turn_on_wifi
    with pytest.raises(TypeError, match=r"^BaseApi.turn_on_wifi\(\) got an unexpected keyword argument 'x'$"):
        check_keyword_arguments(method, {"x": 1})


def test_official_result_shown_as_json_or_text():
    assert env.official_result_shown_as_json_or_text({1: "a"}) == {"1": "a"}
    assert env.official_result_shown_as_json_or_text(500.0) == 500.0
    assert env.official_result_shown_as_json_or_text([{"p": 1}]) == "[{'p': 1}]"
    assert env.official_result_shown_as_json_or_text(True) == "True"


def test_official_multi_turn_error_split_into_characters(defaults: dict):
    environment = make_env(defaults, ["BaseApi", "MessageApi"])
    shown = environment.execute_multi_turn("[turn_on_wifi(), send_message(sender_name='Ana')]")
    assert "".join(shown.content) == "Error during execution: {str(e)}"
    assert environment.objects["BaseApi"].wifi is True  # the first call ran
    assert environment.saved_state() == []  # no successful execution yet: no end state
    environment.execute_multi_turn("[login_device()]")
    assert environment.saved_state()[0] == {"BaseApi": {"wifi": True, "logged_in": True}}


def test_official_sent_message_has_no_time(defaults: dict):
    environment = make_env(defaults, ["BaseApi", "MessageApi"], {"BaseApi": {"wifi": True}})
    environment.execute_multi_step("[delete_message(message_id=1)]")
    shown = environment.execute_multi_step("[send_message(sender_name='Ana', receiver_name='Cleo', message='m'), get_latest_message_id()]")
    assert shown.content == [{"status": True, "message": "Message successfully sent to Cleo."}, "Error during execution: 'time'"]
    assert message.official_sent_message_has_no_time("a", "b", "m") == {"sender_id": "a", "receiver_id": "b", "message": "m"}


def test_official_message_by_date():
    inbox = {5: {"time": "2024-01-01"}, 6: {"time": "2024-01-01"}, 7: {"time": "2023-01-01"}}
    assert message.official_message_by_date(inbox, later=True) == 5
    assert message.official_message_by_date(inbox, later=False) == 7


def test_official_en_search_reminders_missing(defaults: dict):
    assert reminder.official_en_search_reminders_missing("en", "search_reminders")
    assert not reminder.official_en_search_reminders_missing("zh", "search_reminders")
    environment = make_env(defaults, ["BaseApi", "ReminderApi"])
    assert environment.execute_multi_step("[search_reminders(keyword='Gym')]").content == [f"Error during execution: {env.UNSET_RESULT_ERROR}"]


def test_official_zh_search_reminders_formats_time(defaults: dict):
    environment = make_env(defaults, ["BaseApi", "ReminderApi"], language="zh")
    assert environment.execute_multi_step("[search_reminders(keyword='gym')]").content == [
        "Error during execution: 'str' object has no attribute 'strftime'"]
    assert environment.execute_multi_step("[search_reminders(keyword='none')]").content == [
        {"status": False, "message": "没有找到包含该关键词的提醒"}]


def test_official_insufficient_balance():
    assert not food.official_insufficient_balance("en", 50.0, 50.0)
    assert food.official_insufficient_balance("zh", 50.0, 50.0)


def test_official_search_orders_item_match():
    assert food.official_search_orders_item_match("en", "tea", {"product": "Green Tea"})
    with pytest.raises(AttributeError):
        food.official_search_orders_item_match("zh", "tea", {"product": "Green Tea"})


def test_official_reserve_flight_credentials_not_checked(defaults: dict):
    environment = make_env(defaults, ["Travel"])
    shown = environment.execute_multi_step(
        "[reserve_flight(user_id='u1', password='bad', flight_no='TB100', cabin='Economy Class', payment_method='cash', baggage_count=1)]")
    assert shown.content == ["Error during execution: 'membership_level'"]
    assert travel.official_reserve_flight_credentials_not_checked({"status": "error"}) == {"status": "error"}


def test_official_flight_price_by_cabin():
    flight = {"economy_price": 1, "business_price": 2}
    assert travel.official_flight_price_by_cabin(flight, "Economy Class", "Economy Class") == 1
    assert travel.official_flight_price_by_cabin(flight, "economy", "Economy Class") == 2
    with pytest.raises(TypeError):
        travel.official_flight_price_by_cabin(None, "Economy Class", "Economy Class")


def test_official_cabin_difference_on_old_flight(defaults: dict):
    environment = make_env(defaults, ["Travel"])
    shown = environment.execute_multi_step("[modify_flight(user_id='u1', reservation_id='res_1', new_cabin='Business Class')]")
    assert shown.content == ["Cabin change successful. Price difference paid: 600."]
    assert environment.objects["Travel"].users["u1"]["cash_balance"] == 400.0


def test_official_cancel_keeps_reservation(defaults: dict):
    environment = make_env(defaults, ["Travel"])
    cancel = "[cancel_reservation(user_id='u1', reservation_id='res_1', reason='plans')]"
    assert environment.execute_multi_step(cancel).content == [
        "More than 24 hours before departure. Free cancellation successful, 300 yuan has been refunded."]
    environment.execute_multi_step(cancel)
    state = environment.saved_state()[0]["Travel"]
    assert state["users"]["u1"]["cash_balance"] == 1600.0 and len(state["reservations"]) == 1


def test_official_finish_check():
    assert not rollout.official_finish_check(1, "finish conversation")
    assert rollout.official_finish_check(2, "ok, finish conversation")
    assert not rollout.official_finish_check(2, ["finish conversation now"])
    assert rollout.official_finish_check(2, ["finish conversation"])


def test_official_multi_step_history_without_agent_replies():
    history = rollout.official_multi_step_history_without_agent_replies("", "user", "task")
    assert rollout.official_multi_step_history_without_agent_replies(history, "execution", "[1]") == "user:task\nexecution result:[1]\n"


def test_official_user_sees_agent_text():
    assert rollout.official_user_sees_agent_text("agent:Which one?") == "Which one?"
    assert rollout.official_user_sees_agent_text("Which one?") == "Which one?"


def test_bad_environment_input_is_a_clear_error(defaults: dict):
    with pytest.raises(ValueError, match="unknown API class"):
        make_env(defaults, ["Bank"])
    with pytest.raises(ValueError, match="initial_config must be an object"):
        AgentEnvironment(defaults, ["BaseApi"], [], "en")
