"""How one argument value is compared with the gold value (the official checker's value rules).

Each official quirk is a function named `official_*` whose docstring says what the reference does;
its `strict_*` counterpart, where there is one, is the corrected rule.
"""

from __future__ import annotations

import math
import re
from typing import Any, cast

# The official type table: spec type string -> the Python type the value must have exactly.
PYTHON_TYPE_MAPPING: dict[str, Any] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "any": str,
    "list": list,
    "object": dict,
    "objectArray": list,
    "list(string)": list,
    "list(enum)": list,
    "int": int,
    "enum": enumerate,
    "number": int,
}
# Types whose items are type-checked too (note: `object` is one of them, `list` and `dict` are not).
NESTED_TYPE_CHECK_LIST = ("array", "tuple", "list(string)", "list(enum)", "object", "objectArray")

_STANDARDIZE = re.compile(r"[ ,./\-_*^]")


def standardize_string(text: str) -> str:
    """Delete spaces and , . / - _ * ^, lower-case, and turn ' into " (official `standardize_string`)."""
    return _STANDARDIZE.sub("", text).lower().replace("'", '"')


def official_number_means_int(spec_type: str) -> Any:
    """The reference maps spec type `number` to `int`, so a float for a `number` is a type mismatch."""
    return PYTHON_TYPE_MAPPING[spec_type]


def official_nested_item_type(spec_type: str, details: dict[str, Any]) -> str | None:
    """Item type of a nested spec: `items.type`, else `string`/`enum`/`dict` guessed from the type text."""
    if spec_type not in NESTED_TYPE_CHECK_LIST:
        return None
    items = details.get("items")
    if isinstance(items, dict) and "type" in items:
        return cast(str, items["type"])  # the spec's JSON; another value fails where it is looked up
    if "string" in spec_type:
        return "string"
    if "enum" in spec_type:
        return "enum"
    return "dict"


def _gold_type(gold: Any) -> Any:
    """`get_possible_answer_type`: the gold's type, or None for an empty-string gold."""
    return None if gold == "" else type(gold)


def official_true_false_strings_pass_as_bool(value: Any) -> Any:
    """The type check reads the strings "true"/"false" as booleans (the value itself is kept)."""
    if value == "true":
        return True
    if value == "false":
        return False
    return value


def official_type_check(value: Any, gold: Any, expected: Any, nested: Any) -> tuple[bool, bool]:
    """The reference `type_checker`: returns (valid, is_variable).

    is_variable is True whenever the gold's type differs from the spec's type; the value check is
    then skipped (`official_gold_type_mismatch_skips_value_check`).
    """
    gold_type = _gold_type(gold)
    is_variable = official_gold_type_mismatch_skips_value_check(gold, expected)
    value = official_true_false_strings_pass_as_bool(value)
    if type(value) == expected:  # noqa: E721 - the reference compares exact types (bool is not int)
        if nested is None:
            return True, is_variable
        # A failed nested check stays invalid whatever the gold-type test that follows it says.
        return official_nested_type_check(value, gold, nested), is_variable
    if gold_type is not None and (type(value) == gold_type or gold == value):  # noqa: E721
        return True, True
    return False, is_variable


def official_gold_type_mismatch_skips_value_check(gold: Any, expected: Any) -> bool:
    """When the gold's type is not the spec's mapped type (e.g. a float gold for a `number`, which
    maps to int), the reference marks the argument "variable" and never compares its value."""
    gold_type = _gold_type(gold)
    return gold_type is not None and gold_type != expected


def official_nested_type_check(value: Any, gold: Any, nested: Any) -> bool:
    """Passes at the first gold element that is not a list, or whose inner items all type-check.

    An empty gold list (or empty gold dict for `object`) has no element, so it always fails:
    `official_empty_gold_list_is_impossible`.
    """
    for gold_item in gold:
        ok = True
        if type(gold_item) == list:  # noqa: E721
            for value_item in value:
                if not official_type_check(value_item, gold_item, nested, None)[0]:
                    ok = False
                    break
        if ok:
            return True
    return False


def official_empty_gold_list_is_impossible(gold: Any) -> bool:
    """True when the reference's nested type check can never pass: the gold list or dict is empty."""
    return isinstance(gold, (list, dict)) and len(gold) == 0


def official_string_substring_match(value: str, gold: str) -> bool:
    """Strings pass when the standardized gold is a substring of the standardized value."""
    return standardize_string(gold) in standardize_string(value)


def strict_string_equal(value: str, gold: str) -> bool:
    """Strings pass when equal after standardization (case, spaces and punctuation ignored)."""
    return standardize_string(gold) == standardize_string(value)


def official_list_ordered_equal(value: list[Any], gold: list[Any]) -> bool:
    """Lists pass only when equal element by element, in order, strings standardized."""
    norm_value = [standardize_string(v) if type(v) == str else v for v in value]  # noqa: E721
    norm_gold = [standardize_string(g) if type(g) == str else g for g in gold]  # noqa: E721
    return norm_value == norm_gold


def official_flatten_single_item_lists(gold: dict[str, Any]) -> dict[str, Any]:
    """`flatten_dates`: one-element lists inside a gold dict are replaced by their element."""
    return {k: v[0] if isinstance(v, list) and len(v) == 1 else v for k, v in gold.items()}


def official_nested_value_substring_match(value: Any, gold: Any) -> bool:
    """Inside dicts, non-dict values pass if str(standardized gold) is a substring of str(value).

    So nested numbers are lax (37.9838 matches 137.98381) and nested lists compare by their repr.
    """
    norm_value = standardize_string(value) if type(value) == str else value  # noqa: E721
    if type(gold) == str:  # noqa: E721
        norm_gold: Any = standardize_string(gold)
    elif type(gold) == dict:  # noqa: E721
        norm_gold = official_flatten_single_item_lists(gold)
    else:
        norm_gold = gold
    return str(norm_gold) in str(norm_value)


def official_dict_match(value: Any, gold: dict[str, Any]) -> bool:
    """`dict_checker`: same number of keys, every value key in the gold, values by the nested rule."""
    if not isinstance(value, dict):
        return False
    if len(value) != len(gold.keys()):  # a gold that is not a dict raises here, as in the reference
        return False
    for key, item in value.items():
        item = official_true_false_strings_pass_as_bool(item)
        if key not in gold:
            return False
        expected = gold[key]
        if isinstance(expected, dict):
            if not official_dict_match(item, expected):
                return False
        elif not official_nested_value_substring_match(item, expected):
            return False
    return True


def official_list_of_dicts_match(value: list[Any], gold: list[Any]) -> bool:
    """`list_dict_checker`: equal length, then each dict against the gold at the same position."""
    if len(value) != len(gold):
        return False
    return all(official_dict_match(v, g) for v, g in zip(value, gold))


def strict_values_equal(value: Any, gold: Any) -> bool:
    """Exact comparison at every depth: numbers by value, strings standardized, lists in order."""
    if isinstance(gold, bool) or isinstance(value, bool):
        return isinstance(value, bool) and isinstance(gold, bool) and value == gold
    if isinstance(gold, int) and isinstance(value, int):
        return value == gold  # exact; isclose would overflow on integers beyond a float's range
    if isinstance(gold, (int, float)) and isinstance(value, (int, float)):
        return math.isclose(value, gold, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(gold, str) and isinstance(value, str):
        return strict_string_equal(value, gold)
    if isinstance(gold, dict) and isinstance(value, dict):
        return set(gold) == set(value) and all(strict_values_equal(value[k], gold[k]) for k in gold)
    if isinstance(gold, (list, tuple)) and isinstance(value, (list, tuple)):
        return len(gold) == len(value) and all(strict_values_equal(v, g) for v, g in zip(value, gold))
    return bool(value == gold)
