"""What changed between two JSON states: the paths added, removed and changed, not the whole state. Objects are
compared key by key; lists element by element after aligning them (difflib), so an item put in front of a list is
one addition, not a change at every index after it."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

ADDED, REMOVED, CHANGED = "added", "removed", "changed"
# Lists longer than this are compared index by index (aligning costs up to the square of their length).
MAX_ALIGNED_ITEMS = 2_000
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class StateChange:
    """One difference: `path` (e.g. `Files.root.contents["a.txt"]`, `Inbox.messages[3]`; "" for the whole value)
    was added (`after` its value), removed (`before` its value) or changed from `before` to `after`."""

    kind: str
    path: str
    before: Any = None
    after: Any = None


def state_diff(before: Any, after: Any) -> list[StateChange]:
    """The changes that turn `before` into `after`, in the order of their paths (objects in key order, `before`'s
    keys first)."""
    changes: list[StateChange] = []
    _diff(before, after, "", changes)
    return changes


def child_path(path: str, key: str | int) -> str:
    """`path` then one key: `.name` for a plain name (a bare name at the top), `["a.txt"]` for any other key and
    `[3]` for a list index."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _PLAIN_KEY.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def _diff(before: Any, after: Any, path: str, changes: list[StateChange]) -> None:
    if _same(before, after):
        return
    if isinstance(before, dict) and isinstance(after, dict):
        for key, value in before.items():
            if key not in after:
                changes.append(StateChange(REMOVED, child_path(path, str(key)), before=value))
            else:
                _diff(value, after[key], child_path(path, str(key)), changes)
        changes.extend(StateChange(ADDED, child_path(path, str(key)), after=value)
                       for key, value in after.items() if key not in before)
    elif isinstance(before, list) and isinstance(after, list):
        _diff_lists(before, after, path, changes)
    else:
        changes.append(StateChange(CHANGED, path, before=before, after=after))


def _diff_lists(before: list[Any], after: list[Any], path: str, changes: list[StateChange]) -> None:
    opcodes: Sequence[tuple[str, int, int, int, int]] = [("replace", 0, len(before), 0, len(after))]
    if max(len(before), len(after)) <= MAX_ALIGNED_ITEMS:
        matcher = difflib.SequenceMatcher(None, [_canonical(item) for item in before],
                                          [_canonical(item) for item in after], autojunk=False)
        opcodes = matcher.get_opcodes()
    for operation, start_a, end_a, start_b, end_b in opcodes:
        if operation == "equal":
            continue
        paired = min(end_a - start_a, end_b - start_b)
        for offset in range(paired):  # replaced items: what changed inside each, at its new index
            _diff(before[start_a + offset], after[start_b + offset], child_path(path, start_b + offset), changes)
        changes.extend(StateChange(REMOVED, child_path(path, index), before=before[index])
                       for index in range(start_a + paired, end_a))
        changes.extend(StateChange(ADDED, child_path(path, index), after=after[index])
                       for index in range(start_b + paired, end_b))


def _same(before: Any, after: Any) -> bool:
    """Equal as Python compares them (1, 1.0 and True alike), as a checker comparing states does."""
    try:
        return bool(before == after)
    except Exception:  # noqa: BLE001 - values that cannot be compared differ
        return False


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)
