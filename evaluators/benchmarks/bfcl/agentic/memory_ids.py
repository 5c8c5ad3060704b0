"""What the official memory base class (`func_source_code/memory_api_metaclass.py`) asks of `bfcl_eval.utils`: three
questions about an item id, answered here in our own words. The environment worker serves this module's three
functions as `bfcl_eval.utils` (multi_turn/environments.py), so the official class runs without the official
utils module, whose import pulls `filelock` and the constants modules and creates `result/`, `score/` and
`.file_locks/` folders under BFCL_PROJECT_ROOT (or beside the package) at import time.

tests/test_bfcl_memory.py checks each function equal to the official one (read from the pinned wheel) on every id
the memory categories use and on edge cases.

- `is_memory_prereq(text)`: the text (an id or a category) names a prerequisite conversation ("prereq" in it).
- `is_first_memory_prereq_entry(item_id)`: the first prerequisite conversation of a chain (a prerequisite id whose
  last part ends with "-0"): it starts from an empty memory.
- `get_directory_structure_by_id(item_id)`: the folder, below a model's result folder, of an item's files: the
  item's group (`non_live`, `live`, `multi_turn`, `agentic`, `format_sensitivity`, tested in the official order);
  for a memory id also `memory/<backend>` (the category with "_prereq" dropped, less its "memory_" prefix), e.g.
  `memory_kv_prereq_3-customer-3` -> `agentic/memory/kv`.
"""

from __future__ import annotations

import os

PREREQ = "prereq"


def is_memory_prereq(text: str) -> bool:
    return PREREQ in text


def is_first_memory_prereq_entry(item_id: str) -> bool:
    return PREREQ in item_id and item_id.endswith("-0")


def _group(item_id: str) -> str:
    """The item's group, by the substrings the official predicates look for, in their order."""
    agentic = "web_search" in item_id or "memory" in item_id
    if "format_sensitivity" in item_id:
        return "format_sensitivity"
    if not ("live" in item_id or "multi_turn" in item_id or agentic):
        return "non_live"
    if "live" in item_id:
        return "live"
    if "multi_turn" in item_id:
        return "multi_turn"
    return "agentic"


def _category(item_id: str) -> str:
    """The category of an id with "_prereq" dropped: before the first ':' if any, then all before the last '_'."""
    text = item_id.replace("_" + PREREQ, "").split(":")[0]
    return text.rsplit("_", 1)[0]


def get_directory_structure_by_id(item_id: str) -> str:
    group = _group(item_id)
    if "memory" not in item_id:
        return group
    category = _category(item_id)
    if "memory" not in category:
        raise ValueError(f"Test category {category} is not a memory category.")
    return os.path.join(group, "memory", category[len("memory_"):])


# The names the official memory base class imports from bfcl_eval.utils (and nothing else is served there).
OFFICIAL_NAMES = ("get_directory_structure_by_id", "is_first_memory_prereq_entry", "is_memory_prereq")
