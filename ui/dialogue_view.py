"""The "dialogues" evidence render (see evaluators/core/declarations.py): conversations between an agent, a
simulated user and tools, e.g. one per trial of a task. Per dialogue, folded: its label, how it ended and its
reward in the summary; inside, every message (the agent's and the user's words, each tool call with who made it,
each tool result, errors marked), then the checks the score made with why each failed, what the conversation changed
in the environment, and where the end state differs from the expected one. Every piece of model or tool text is
escaped."""

from __future__ import annotations

import html
import json
from typing import Any

from evaluators.core.limits import cut_text

MAX_TEXT_CHARS = 20_000  # one message's text or one tool result as shown
MAX_CHANGES_SHOWN = 60
MAX_VALUE_CHARS = 400
PRE = "white-space:pre-wrap;overflow-wrap:anywhere;margin:.15em 0"
SPEAKER_STYLES = {
    "assistant": "border-left:4px solid #2563eb;padding:.15em .5em;margin:.4em 0",
    "user": "border-left:4px solid #16a34a;padding:.15em .5em;margin:.4em 0",
    "tool": "border-left:4px solid #9ca3af;padding:.15em .5em;margin:.4em 0 .4em 1.2em",
    "system": "border-left:4px solid #6b7280;padding:.15em .5em;margin:.4em 0",
}
ERROR_STYLE = "border-left:4px solid #dc2626;background:rgba(220,38,38,.08);padding:.15em .5em;margin:.4em 0 .4em 1.2em"
SPEAKERS = {"assistant": "Agent", "user": "User", "system": "System"}
MARKS = {True: "✓", False: "✗", None: "–"}


def is_dialogues(value: Any) -> bool:
    """A value of the render's shape: a non-empty list of objects, each with a list of messages."""
    return isinstance(value, list) and bool(value) and all(
        isinstance(item, dict) and isinstance(item.get("messages"), list) for item in value)


def _text(value: Any, limit: int = MAX_TEXT_CHARS) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr)
    return html.escape(str(cut_text(text, limit)))


def _call_text(call: Any) -> str:
    if not isinstance(call, dict):
        return _text(call)
    arguments = call.get("arguments")
    shown = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False, default=repr)
    return _text(f"{call.get('name', '?')}({shown})")


def message_html(message: Any) -> str:
    """One message: who speaks, the text, and each tool call (the user's own tools marked); a tool result says
    whose call it answers and is marked when it is an error."""
    if not isinstance(message, dict):
        return f"<div style='{SPEAKER_STYLES['system']}'><pre style='{PRE}'>{_text(message)}</pre></div>"
    role = str(message.get("role", "?"))
    parts = []
    if role == "tool":
        whose = "the user's" if message.get("requestor") == "user" else "the agent's"
        failed = bool(message.get("error"))
        head = f"Tool result for {whose} call" + (" (error)" if failed else "")
        parts.append(f"<b>{html.escape(head)}</b><pre style='{PRE}'>{_text(message.get('content'))}</pre>")
        return f"<div style='{ERROR_STYLE if failed else SPEAKER_STYLES['tool']}'>{''.join(parts)}</div>"
    parts.append(f"<b>{html.escape(SPEAKERS.get(role, role))}</b>")
    if message.get("content") is not None:
        parts.append(f"<pre style='{PRE}'>{_text(message['content'])}</pre>")
    for call in message.get("tool_calls") or []:
        mine = " (a tool of the user's own)" if isinstance(call, dict) and call.get("requestor") == "user" else ""
        parts.append(f"<div>calls <code>{_call_text(call)}</code>{html.escape(mine)}</div>")
    return f"<div style='{SPEAKER_STYLES.get(role, SPEAKER_STYLES['system'])}'>{''.join(parts)}</div>"


def _checks_html(checks: Any) -> str:
    if not isinstance(checks, list) or not checks:
        return ""
    rows = []
    for check in checks:
        if not isinstance(check, dict):
            continue
        met = check.get("met")
        mark = MARKS.get(met if isinstance(met, bool) else None, "–")
        detail = f": {_text(check['detail'], 2_000)}" if check.get("detail") else ""
        rows.append(f"<li>{mark} <b>{_text(check.get('rule', '?'), 200)}</b>{detail}</li>")
    return "<h5>Checks</h5><ul>" + "".join(rows) + "</ul>"


def _value(value: Any) -> str:
    """A state value as JSON (a text in quotes), cut."""
    return html.escape(str(cut_text(json.dumps(value, ensure_ascii=False, default=repr), MAX_VALUE_CHARS)))


def _changes_html(title: str, changes: Any, before: str, after: str) -> str:
    if not isinstance(changes, list) or not changes:
        return ""
    rows = []
    for change in changes[:MAX_CHANGES_SHOWN]:
        if not isinstance(change, dict):
            continue
        values = []
        if "before" in change and change.get("kind") != "added":
            values.append(f"{before} {_value(change['before'])}")
        if "after" in change and change.get("kind") != "removed":
            values.append(f"{after} {_value(change['after'])}")
        rows.append(f"<li>{_text(change.get('kind', '?'), 20)} <code>{_text(change.get('path', ''), 400)}</code> "
                    f"{'; '.join(values)}</li>")
    more = len(changes) - MAX_CHANGES_SHOWN
    tail = f"<li>… and {more} more</li>" if more > 0 else ""
    return f"<h5>{html.escape(title)} ({len(changes)})</h5><ul>{''.join(rows)}{tail}</ul>"


def _summary(number: int, dialogue: dict[str, Any], check: dict[str, Any]) -> str:
    label = dialogue.get("label") or (f"Trial {dialogue['trial'] + 1}" if isinstance(dialogue.get("trial"), int)
                                      else f"Dialogue {number}")
    parts = [str(label)]
    outcome = dialogue.get("outcome") or dialogue.get("termination_reason")
    if outcome:
        parts.append(f"ended: {outcome}")
    reward = check.get("reward")
    if isinstance(reward, (int, float)) and not isinstance(reward, bool):
        parts.append(f"reward {reward:g}")
    elif "reward" in check:
        parts.append("no reward")
    parts.append(f"{len(dialogue['messages'])} messages")
    return " · ".join(parts)


def dialogues_html(title: str, dialogues: list[dict[str, Any]], checks: Any = None) -> str:
    """The dialogues, each folded (the first open), with the score's per-dialogue checks (DIALOGUE_CHECKS, in the
    same order) inside."""
    per_dialogue = checks if isinstance(checks, list) else []
    blocks = []
    for number, dialogue in enumerate(dialogues, 1):
        check = per_dialogue[number - 1] if number <= len(per_dialogue) and isinstance(per_dialogue[number - 1], dict) else {}
        inside = []
        if dialogue.get("error"):
            inside.append(f"<p style='color:#b91c1c'>{_text(dialogue['error'], 2_000)}</p>")
        inside.extend(message_html(message) for message in dialogue["messages"])
        inside.append(_checks_html(check.get("checks")))
        inside.append(_changes_html("What the conversation changed", check.get("state_changes"), "from", "to"))
        inside.append(_changes_html("End state against the expected one", check.get("state_differences"),
                                    "expected", "reached"))
        opened = " open" if number == 1 else ""
        blocks.append(f"<details{opened}><summary>{html.escape(_summary(number, dialogue, check))}</summary>"
                      f"{''.join(inside)}</details>")
    return f"<h4>{html.escape(title)}</h4>" + "".join(blocks)

