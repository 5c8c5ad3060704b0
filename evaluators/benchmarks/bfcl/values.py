"""The official AST checker's type and value rules for one parameter (spec §4.3), as bfcl-eval 2026.3.23 applies them.

Each rule mirrors the official one step for step, including where it would raise on malformed answers (the
caller turns such an exception into a failed item): the gold answers are lists of allowed values, `""` among
them meaning "may be left out".
- official_exact_python_types: `type(value) is expected`; bool is not int, 5.0 is not int.
- official_variable_answers_compare_exactly: when the first allowed value (not `""`) has another type than the
  declared one, a value of either type passes the type check and is then compared with plain `in`.
- official_list_elements_type_checked_one_level: list elements must have the item type (or the allowed list's
  own element type) for some allowed list; an allowed value that is not a list lets it pass.
- official_normalises_strings: spaces and `, . / - _ * ^` removed, lower case, `'` -> `"`, on both sides.
- official_list_order_matters / official_empty_list_matches_optional_array: lists compared whole, in order,
  string elements normalised; an allowed `""` counts as `[]`.
- official_dict_one_level: model keys a subset of some allowed dict, values (normalised strings) among that
  key's allowed values, missing keys need `""`; no deeper.
- official_list_of_dicts_positional: same length as some allowed list, each dict checked at its position.
- official_value_in_allowed_list: every other type by `in` (so 5 == 5.0 and 1 == True).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# Declared type name -> the Python type the value must have, per language (the official mappings).
PYTHON_TYPES: dict[str, type] = {
    "string": str, "integer": int, "float": float, "boolean": bool, "array": list, "tuple": list, "dict": dict,
    "any": str,
}
JAVA_TYPES: dict[str, type] = {
    "byte": int, "short": int, "integer": int, "float": float, "double": float, "long": int, "boolean": bool,
    "char": str, "Array": list, "ArrayList": list, "Set": set, "HashMap": dict, "Hashtable": dict, "Queue": list,
    "Stack": list, "String": str, "any": str,
}
JAVASCRIPT_TYPES: dict[str, type] = {
    "String": str, "integer": int, "float": float, "Bigint": int, "Boolean": bool, "dict": dict, "array": list,
    "any": str,
}
# Declared types whose element type is read from the doc's `items` (Python / Java and JavaScript).
PYTHON_NESTED_TYPES = ("array", "tuple")
CONVERTED_NESTED_TYPES = ("Array", "ArrayList", "array")

_STANDARDIZED_AWAY = re.compile(r"[ ,./\-_*^]")


@dataclass(frozen=True)
class Verdict:
    """One check's outcome: valid, or the kind of failure, the rule that decided it and what was wrong."""

    valid: bool
    error_type: str | None = None
    rule: str | None = None
    detail: str = ""
    is_variable: bool = False


PASS = Verdict(True)


def shown(value: Any, limit: int = 300) -> str:
    """A value for a failure's detail: its repr, cut short; never raises (an int past Python's 4,300-digit
    printing limit is described instead)."""
    try:
        text = repr(value)
    except (ValueError, RecursionError):
        return f"<{type(value).__name__} too large to print>"
    return text if len(text) <= limit else text[:limit] + "…"


def _fail(error_type: str, rule: str, detail: str) -> Verdict:
    return Verdict(False, error_type, rule, detail)


def answer_type(allowed: list) -> type | None:
    """The type of the first allowed value that is not `""` (None when there is none)."""
    for answer in allowed:
        if answer != "":
            return type(answer)
    return None


def official_exact_python_types(param: Any, value: Any, allowed: list, expected: type,
                                nested: type | None) -> Verdict:
    """The official type check: exact types, the variable rule, and list elements one level deep."""
    gold_type = answer_type(allowed)
    is_variable = gold_type is not None and gold_type != expected
    if type(value) is expected:
        if nested is None or not isinstance(value, list):  # element types are declared for list types only
            return Verdict(True, is_variable=is_variable)
        if official_list_elements_type_checked_one_level(value, allowed, nested):
            return Verdict(True, is_variable=is_variable)
        return _fail("type_error", "official_list_elements_type_checked_one_level",
                     f"elements of {param!r} are not all {nested.__name__}: {shown(value)}")
    if gold_type is not None and type(value) is gold_type:
        return Verdict(True, is_variable=True)  # official_variable_answers_compare_exactly
    return _fail("type_error", "official_exact_python_types",
                 f"{param!r} must be {expected.__name__}, got {type(value).__name__}: {shown(value)}")


def official_list_elements_type_checked_one_level(value: list, allowed: list, nested: type) -> bool:
    """True when, for some allowed value, every element passes the element type check; an allowed value that is
    not a list passes trivially."""
    for allowed_item in allowed:
        fits = True
        if type(allowed_item) is list:
            element_gold_type = answer_type(allowed_item)
            for element in value:
                if type(element) is not nested and (element_gold_type is None or type(element) is not element_gold_type):
                    fits = False
                    break
        if fits:
            return True
    return False


def official_normalises_strings(text: str) -> str:
    """Spaces and `, . / - _ * ^` removed, lower case, single quotes turned into double quotes."""
    return _STANDARDIZED_AWAY.sub("", text).lower().replace("'", '"')


def _normalised_if_string(value: Any) -> Any:
    return official_normalises_strings(value) if type(value) is str else value


def string_check(param: Any, value: str, allowed: list) -> Verdict:
    """official_normalises_strings: the normalised value must equal one normalised allowed string."""
    candidates = [official_normalises_strings(item) for item in allowed if type(item) is str]
    if official_normalises_strings(value) not in candidates:
        return _fail("value_error", "official_normalises_strings",
                     f"{param!r}: {shown(value)} is not one of {shown(allowed)} (normalised)")
    return PASS


def official_empty_list_matches_optional_array(allowed_item: Any) -> list:
    """An allowed value as a list of normalised elements; indexing it like a list turns `""` into `[]`."""
    return [_normalised_if_string(allowed_item[index]) for index in range(len(allowed_item))]


def list_check(param: Any, value: list, allowed: list) -> Verdict:
    """official_list_order_matters: the whole list, string elements normalised, must equal one allowed list."""
    normalised = [_normalised_if_string(element) for element in value]
    candidates = [official_empty_list_matches_optional_array(item) for item in allowed]
    if normalised not in candidates:
        return _fail("value_error", "official_list_order_matters",
                     f"{param!r}: {shown(value)} is not one of {shown(allowed)} (in order, strings normalised)")
    return PASS


def dict_check(param: Any, value: dict, allowed: list) -> Verdict:
    """official_dict_one_level: some allowed dict (skipping `""`) accepts every key and value of the model's dict,
    and every key it left out has `""` allowed."""
    verdict = _fail("value_error", "official_dict_one_level", f"{param!r}: no allowed dict to compare with")
    for allowed_dict in allowed:
        if allowed_dict == "":
            continue
        verdict = _dict_against(param, value, allowed_dict)
        if verdict.valid:
            return PASS
    return verdict


def _dict_against(param: Any, value: dict, allowed_dict: Any) -> Verdict:
    # Both loops always run, as in the official checker (the second one can raise on a malformed answer).
    verdict = PASS
    for key, item in value.items():
        if key not in allowed_dict:
            verdict = _fail("value_error", "official_dict_one_level", f"{param!r}: unexpected dict key {key!r}")
            break
        allowed_values = allowed_dict[key]
        candidates = [_normalised_if_string(allowed_values[index]) for index in range(len(allowed_values))]
        if _normalised_if_string(item) not in candidates:
            verdict = _fail("value_error", "official_dict_one_level",
                            f"{param!r}: dict value {key!r}={shown(item)} is not one of {shown(candidates)}")
            break
    for key, allowed_values in allowed_dict.items():
        if key not in value and "" not in allowed_values:
            if verdict.valid:
                verdict = _fail("value_error", "official_dict_one_level", f"{param!r}: dict key {key!r} missing")
            break
    return verdict


def list_dict_check(param: Any, value: list, allowed: list) -> Verdict:
    """official_list_of_dicts_positional: an allowed list of the same length whose dicts accept the model's dicts
    position by position."""
    verdict = _fail("value_error", "official_list_of_dicts_positional", f"{param!r}: no allowed list of dicts")
    for allowed_list in allowed:
        if len(value) != len(allowed_list):
            verdict = _fail("value_error", "official_list_of_dicts_positional",
                            f"{param!r}: {len(value)} dicts, an allowed list has {len(allowed_list)}")
            continue
        fits = True
        for index in range(len(value)):
            verdict = dict_check(param, value[index], [allowed_list[index]])
            if not verdict.valid:
                verdict = Verdict(False, verdict.error_type, "official_list_of_dicts_positional",
                                  f"dict {index}: {verdict.detail}")
                fits = False
                break
        if fits:
            return PASS
    return verdict


def official_value_in_allowed_list(param: Any, value: Any, allowed: list, is_variable: bool) -> Verdict:
    """The value must be among the allowed values (plain `in`)."""
    if value not in allowed:
        rule = "official_variable_answers_compare_exactly" if is_variable else "official_value_in_allowed_list"
        return _fail("value_error", rule, f"{param!r}: {shown(value)} is not one of {shown(allowed)}")
    return PASS


def check_typed_value(param: Any, value: Any, allowed: list, declared: str, expected: type,
                      nested: type | None, language: str) -> Verdict:
    """The official per-parameter flow once the declared type is known and Java/JS text is converted:
    tuple -> list for `tuple`, int -> float for a Python `float`, the type check, then the value rule."""
    if declared == "tuple" and type(value) is tuple:
        value = list(value)
    if language == "python" and declared == "float" and type(value) is int:
        value = float(value)
    typed = official_exact_python_types(param, value, allowed, expected, nested)
    if not typed.valid:
        return typed
    if not typed.is_variable:
        if expected is dict:
            return dict_check(param, value, allowed)
        if expected is list and nested is dict:
            return list_dict_check(param, value, allowed)
        if expected is str:
            return string_check(param, value, allowed)
        if expected is list:
            return list_check(param, value, allowed)
    return official_value_in_allowed_list(param, value, allowed, typed.is_variable)
