"""The "dialogues" evidence render: conversations between an agent, a user and tools, with the score's checks."""

from __future__ import annotations

from evaluators.core.declarations import DIALOGUE_CHECKS
from ui.dialogue_view import dialogues_html, is_dialogues
from ui.explore_tab import evidence_parts

TRIAL = {
    "trial": 0, "termination_reason": "user_stop",
    "messages": [
        {"role": "assistant", "content": "Hi! How can I help you today?"},
        {"role": "user", "content": "Cancel order <b>#W1</b> please"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "name": "cancel_pending_order", "arguments": {"order_id": "#W1"},
                         "requestor": "assistant"}]},
        {"role": "tool", "id": "c1", "content": "Error: order not found", "requestor": "assistant", "error": True},
        {"role": "user", "content": None,
         "tool_calls": [{"id": "c2", "name": "toggle_airplane_mode", "arguments": {}, "requestor": "user"}]},
        {"role": "tool", "id": "c2", "content": "Airplane mode: OFF", "requestor": "user", "error": False},
        {"role": "user", "content": "###STOP###"},
    ],
}
CHECKS = [{"reward": 0.0,
           "checks": [{"rule": "db_matches_gold", "met": False, "detail": "the orders table differs"},
                      {"rule": "every_gold_action_called", "met": True, "detail": ""}],
           "state_changes": [{"kind": "changed", "path": "orders[\"#W1\"].status", "before": "pending",
                              "after": "cancelled"}],
           "state_differences": [{"kind": "changed", "path": "orders[\"#W1\"].reason", "before": "ordered by mistake",
                                  "after": "no longer needed"}]}]


def test_a_dialogue_shows_each_speaker_call_result_and_check_escaped():
    assert is_dialogues([TRIAL]) and not is_dialogues([]) and not is_dialogues([{"turns": []}])
    page = dialogues_html("Trials", [TRIAL], CHECKS)
    assert "Trial 1 · ended: user_stop · reward 0 · 7 messages" in page
    assert "&lt;b&gt;#W1&lt;/b&gt;" in page and "<b>#W1</b>" not in page  # model text is escaped
    assert "cancel_pending_order({&quot;order_id&quot;: &quot;#W1&quot;})" in page
    assert "Tool result for the agent&#x27;s call (error)" in page and "rgba(220,38,38" in page
    assert "(a tool of the user&#x27;s own)" in page and "Tool result for the user&#x27;s call" in page
    assert "✗ <b>db_matches_gold</b>: the orders table differs" in page and "✓ <b>every_gold_action_called</b>" in page
    assert "What the conversation changed (1)" in page and "from &quot;pending&quot;" in page
    assert "End state against the expected one (1)" in page and "expected &quot;ordered by mistake&quot;" in page


def test_a_dialogue_without_checks_or_with_no_reward_still_shows():
    page = dialogues_html("Trials", [TRIAL, {**TRIAL, "trial": 1, "error": "the agent's arguments are not JSON"}],
                          [{"reward": None}])
    assert "Trial 1 · ended: user_stop · no reward" in page
    assert "Trial 2 · ended: user_stop · 7 messages" in page and "the agent&#x27;s arguments are not JSON" in page


def test_explore_shows_the_checks_inside_the_dialogues_not_again_apart():
    items = [{"source": "prediction", "key": "trials", "title": "Trials", "render": "dialogues", "value": [TRIAL]},
             {"source": "score", "key": DIALOGUE_CHECKS, "title": "Checks", "render": "json", "value": CHECKS},
             {"source": "prediction", "key": "user_model", "title": "User model", "render": "text", "value": "u-1"}]
    parts = evidence_parts(items)
    assert len(parts) == 2 and "db_matches_gold" in parts[0] and "u-1" in parts[1]
