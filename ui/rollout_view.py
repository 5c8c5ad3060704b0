"""The "rollout" evidence render (see evaluators/core/declarations.py): a turn-by-turn rollout against stateful
environments as Explore shows it. Per turn: the user's query, each step's model text with its decoded calls and
their results, then what changed in the environments' state during the turn (paths added, removed, changed; not
the whole state); the turn of the first failed check is marked, with the checker's differences and missing items.
Every piece of model, file or state text is escaped."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import Any

from evaluators.core.limits import cut_text
from evaluators.core.state_diff import ADDED, CHANGED, REMOVED, StateChange, state_diff

# What one turn lists of its state changes, and of each value shown in a change (the rest is counted).
MAX_CHANGES_SHOWN = 60
MAX_VALUE_CHARS = 400
MAX_STATE_CHARS = 200_000
MAX_RESULT_CHARS = 20_000  # an execution result (a long file's content) as a turn shows it
PRE = "white-space:pre-wrap;overflow-wrap:anywhere;margin:.2em 0"
TURN = "border-left:4px solid #9ca3af;padding:.2em .4em .2em .7em;margin:.6em 0;min-width:0"
FAILED_TURN = "border-left:4px solid #dc2626;background:rgba(220,38,38,.08);padding:.2em .4em .2em .7em;margin:.6em 0;min-width:0"
FAILURE_BOX = "border:2px solid #dc2626;border-radius:4px;padding:.3em .6em;margin:.4em 0"
CHANGE_COLORS = {ADDED: "#15803d", REMOVED: "#b91c1c", CHANGED: "#b45309"}
CHANGE_MARKS = {ADDED: "+", REMOVED: "−", CHANGED: "~"}


def is_rollout(value: Any) -> bool:
    """A value of the render's shape: turns that are objects (with their evidence) or lists of step texts."""
    return isinstance(value, list) and bool(value) and (
        all(isinstance(turn, dict) for turn in value)
        or all(isinstance(turn, list) and all(isinstance(step, str) for step in turn) for turn in value))


def rollout_html(title: str, turns: list[Any], initial_state: Any = None, failed_turn: Any = None,
                 differences: Any = None, missing_items: Any = None, turn_states: Any = None,
                 failure_note: str = "") -> str:
    """The rollout, its turn `failed_turn` (0-based) marked with `failure_note` (the checker's message), its
    `differences` and its `missing_items`; `initial_state` is what the first turn's changes are measured from, and
    `turn_states` (per turn {"model", "ground_truth"}) what the checker compared after each turn."""
    failed = failed_turn if isinstance(failed_turn, int) and not isinstance(failed_turn, bool) else None
    failure = _failure_html(failure_note, differences, missing_items)
    compared = turn_states if isinstance(turn_states, list) else []
    parts = [f"<h4>{html.escape(title)}</h4>"]
    if failed is not None:
        parts.append(f"<p class='rollout-failed-note'>The first failed check is in <b>turn {failed}</b> (marked in red)."
                     "</p>")
    if isinstance(initial_state, dict):
        parts.append(_folded("State before the first turn", initial_state))
    before = initial_state if isinstance(initial_state, dict) else None
    for index, turn in enumerate(turns):
        record = dict(turn) if isinstance(turn, dict) else {"steps": [{"text": text} for text in turn]}
        checked = compared[index] if index < len(compared) and isinstance(compared[index], dict) else None
        if not isinstance(record.get("state"), dict) and checked is not None and isinstance(checked.get("model"), dict):
            record["state"] = checked["model"]  # the model's state as the checker rebuilt it
        parts.append(_turn_html(index, record, before, failure if index == failed else None, checked))
        state = record.get("state")
        before = state if isinstance(state, dict) else None
    if failure and (failed is None or failed >= len(turns)):
        where = f"turn {failed}, which this rollout does not hold" if failed is not None else "no turn named"
        parts.append(f"<div style='{FAILURE_BOX}'><b>First failed check ({html.escape(where)})</b>{failure}</div>")
    return "<div class='rollout'>" + "".join(parts) + "</div>"


def _turn_html(index: int, turn: Mapping[str, Any], before: dict[str, Any] | None, failure: str | None,
               checked: Mapping[str, Any] | None) -> str:
    marked = failure is not None
    head = f"Turn {index}" + (" — ✗ first failed check" if marked else "")
    parts = [f"<h5 style='margin:.2em 0'>{html.escape(head)}</h5>"]
    query = turn.get("query")
    if isinstance(query, list) and query:
        parts.append(_messages_html(query))
    elif isinstance(query, list):
        parts.append("<p><i>No new user message at this turn.</i></p>")
    found = turn.get("steps")
    steps = found if isinstance(found, list) else []
    parts += [_step_html(number, step) for number, step in enumerate(steps) if isinstance(step, dict)]
    if not steps:
        parts.append("<p><i>No step recorded for this turn.</i></p>")
    texts_only = not any(isinstance(step, dict) and "calls" in step for step in steps)
    if texts_only and steps:
        parts.append("<p><i>Only the model's text was kept (an upload of result files): no calls or results to "
                     "show.</i></p>")
    parts.append(_state_changes_html(before, turn.get("state")))
    if checked is not None:
        parts.append(_folded("States the checker compared after this turn (model, ground truth)", checked))
    if marked:
        parts.append(f"<div class='rollout-failure' style='{FAILURE_BOX}'><b>First failed check</b>{failure}</div>")
    css = "rollout-turn rollout-turn-failed" if marked else "rollout-turn"
    return f"<div class='{css}' data-turn='{index}' style='{FAILED_TURN if marked else TURN}'>{''.join(parts)}</div>"


def _messages_html(messages: list[Any]) -> str:
    blocks = []
    for message in messages:
        role = str(message.get("role", "?")) if isinstance(message, dict) else "?"
        content = message.get("content", "") if isinstance(message, dict) else message
        text = content if isinstance(content, str) else _json(content)
        blocks.append(f"<div><b>{html.escape(role)}</b><pre style='{PRE}'>{html.escape(text)}</pre></div>")
    return "".join(blocks)


def _step_html(number: int, step: Mapping[str, Any]) -> str:
    text = step.get("text")
    parts = [f"<div class='rollout-step'><b>Step {number}</b> · model"
             f"<pre style='{PRE}'>{html.escape(text if isinstance(text, str) else _json(text))}</pre>"]
    calls, results = step.get("calls"), step.get("results")
    results = results if isinstance(results, list) else []
    if isinstance(step.get("decode_error"), str) and step["decode_error"]:
        parts.append(f"<p>Not decoded into calls (the turn ends here): <code>{html.escape(step['decode_error'])}</code></p>")
    if isinstance(calls, list) and calls:
        rows = []
        for position, call in enumerate(calls):
            result = results[position] if position < len(results) else None
            shown_result = "" if result is None else (f" → <pre style='{PRE};display:inline'>"
                                                      f"{html.escape(str(cut_text(str(result), MAX_RESULT_CHARS)))}</pre>")
            rows.append(f"<li><code>{html.escape(str(call))}</code>{shown_result}</li>")
        parts.append(f"<ol start='0' style='margin:.2em 0'>{''.join(rows)}</ol>")
    elif isinstance(calls, list):
        parts.append("<p><i>No call: the turn ends.</i></p>")
    return "".join(parts) + "</div>"


def _state_changes_html(before: dict[str, Any] | None, after: Any) -> str:
    if not isinstance(after, dict):
        return "<p class='rollout-state'><i>The state after this turn was not kept.</i></p>"
    if before is None:
        return _folded("State after this turn (no earlier state kept to compare with)", after)
    changes = state_diff(before, after)
    if not changes:
        return "<p class='rollout-state'><b>State changes</b>: none.</p>"
    return (f"<div class='rollout-state'><b>State changes</b> ({len(changes)})"
            f"{_changes_list(changes, ('added', 'removed', 'was'))}</div>")


def _changes_list(changes: list[StateChange], words: tuple[str, str, str]) -> str:
    """The changes as a list: `words` say what an addition, a removal and an earlier value are."""
    added, removed, was = words
    items = []
    for change in changes[:MAX_CHANGES_SHOWN]:
        mark = f"<b style='color:{CHANGE_COLORS[change.kind]}'>{CHANGE_MARKS[change.kind]}</b>"
        path = f"<code>{html.escape(change.path or '(the whole value)')}</code>"
        if change.kind == ADDED:
            said = f"{added}: {_value(change.after)}"
        elif change.kind == REMOVED:
            said = f"{removed} ({was} {_value(change.before)})"
        else:
            said = f"{_value(change.before)} → {_value(change.after)}"
        items.append(f"<li>{mark} {path} {said}</li>")
    more = len(changes) - MAX_CHANGES_SHOWN
    tail = f"<li>… and {more} more</li>" if more > 0 else ""
    return f"<ul style='margin:.2em 0;padding-left:1.2em;overflow-wrap:anywhere'>{''.join(items)}{tail}</ul>"


def _failure_html(note: str, differences: Any, missing_items: Any) -> str:
    parts = [f"<pre style='{PRE}'>{html.escape(note)}</pre>"] if note else []
    if differences not in (None, {}, []):
        parts.append(_differences_html(differences))
    if missing_items not in (None, []):
        if isinstance(missing_items, list):
            rows = "".join(f"<li><pre style='{PRE}'>{html.escape(str(item))}</pre></li>" for item in missing_items)
            parts.append(f"<div><b>Execution results the ground truth gave and the model's calls did not</b>"
                         f"<ul style='margin:.2em 0'>{rows}</ul></div>")
        else:
            parts.append(f"<div><b>Missing items</b><pre style='{PRE}'>{html.escape(_json(missing_items))}</pre></div>")
    return "".join(parts)


def _differences_html(differences: Any) -> str:
    """Each {"model", "ground_truth"} pair found in `differences` (under the attribute, or class and attribute,
    that holds it) as what differs inside it; anything else as JSON."""
    pairs = list(_model_vs_truth(differences, ""))
    if not pairs:
        return f"<div><b>Differences</b><pre style='{PRE}'>{html.escape(_json(differences))}</pre></div>"
    blocks = []
    for path, model, truth in pairs:
        inside = [StateChange(change.kind, _joined(path, change.path), change.before, change.after)
                  for change in state_diff(truth, model)]
        blocks.append(_changes_list(inside, ("only the model has", "only the ground truth has", "the ground truth:")))
    return ("<div><b>State differences</b> (model against ground truth: ~ ground truth → model)"
            + "".join(blocks) + "</div>")


def _model_vs_truth(value: Any, path: str) -> list[tuple[str, Any, Any]]:
    if not isinstance(value, dict):
        return []
    if "model" in value and "ground_truth" in value:
        return [(path, value["model"], value["ground_truth"])]
    found = []
    for key, inner in value.items():
        found += _model_vs_truth(inner, _joined(path, str(key)))
    return found


def _joined(path: str, inner: str) -> str:
    if not path:
        return inner
    return path + inner if inner.startswith("[") or not inner else f"{path}.{inner}"


def _folded(summary: str, state: Any) -> str:
    text = str(cut_text(_json(state), MAX_STATE_CHARS))
    return f"<details><summary>{html.escape(summary)}</summary><pre style='{PRE}'>{html.escape(text)}</pre></details>"


def _value(value: Any) -> str:
    return f"<code>{html.escape(str(cut_text(_json(value, indent=None), MAX_VALUE_CHARS)))}</code>"


def _json(value: Any, indent: int | None = 1) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, indent=indent, default=repr)
    except (ValueError, TypeError, RecursionError):
        return repr(value)
