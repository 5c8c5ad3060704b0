"""The normal-category checker: decoded calls against one gold candidate (`normal_checker`)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from evaluators.benchmarks.acebench import value_rules as rules
from evaluators.benchmarks.acebench.decode import DecodedCalls
from evaluators.core.text import show


@dataclass(frozen=True)
class Verdict:
    valid: bool
    error_type: str | None = None
    rule: str | None = None
    detail: str = ""


PASS = Verdict(True)


def fail(error_type: str, rule: str, detail: str = "") -> Verdict:
    return Verdict(False, error_type, rule, detail)


_PARALLEL_SUFFIX = re.compile(r"_\d+$")


def official_strips_digit_suffix(name: str) -> str:
    """Gold keys lose any `_<digits>` ending (parallel-call numbering), so real names like
    `personalized_learning_2` can never be matched."""
    return _PARALLEL_SUFFIX.sub("", name)


def strict_strips_digit_suffix(name: str, spec_names: set[str]) -> str:
    """Strip `_<digits>` only when the gold key is not itself the name of a tool."""
    return name if name in spec_names else _PARALLEL_SUFFIX.sub("", name)


def official_find_description(functions: list[dict[str, Any]], gold_key: str) -> dict[str, Any] | None:
    """The spec used for a gold call is the first whose name is a substring of the (unstripped) gold key."""
    for spec in functions:
        if spec["name"] in gold_key:
            return spec
    return None


def strict_find_description(functions: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    for spec in functions:
        if spec.get("name") == name:
            return spec
    return None


def _call_name(call: dict[Any, Any]) -> Any:
    return next(iter(call))


def _call_args(call: dict[Any, Any]) -> Any:
    return next(iter(call.values()))


def official_empty_arguments_rule(model_args: dict[Any, Any], parameters: Any) -> Verdict | None:
    """A call without arguments passes only if the spec's `parameters` is literally `{}`; a call
    with arguments fails against such a spec (`wrong_param`)."""
    if model_args == {} and parameters == {}:
        return PASS
    if model_args == {} or parameters == {}:
        return fail("wrong_param", "official_empty_arguments_rule", "empty arguments or empty spec")
    return None


def official_gold_equals_spec_properties_passes(gold_args: Any, parameters: dict[str, Any]) -> bool:
    """A degenerate gold whose arguments equal the spec's `properties` passes unconditionally."""
    return bool(gold_args == parameters["properties"])


def official_extra_parameter_fails(param: Any, properties: dict[str, Any], gold_args: dict[str, Any]) -> bool:
    """Every argument must be both in the spec and in the gold: any extra optional argument fails."""
    return param not in properties or param not in gold_args


def official_simple_function_check(spec: dict[str, Any] | None, call: dict[Any, Any], gold: dict[str, Any]) -> Verdict:
    """`simple_function_checker`; exceptions propagate (the reference crashes on them too). `spec` is None when
    no tool's name is in the gold key (official_find_description)."""
    gold_args = next(iter(gold.values()))
    model_args = _call_args(call)
    if spec is None:
        raise TypeError("'NoneType' object is not subscriptable")  # the reference's error, as it reads None
    parameters = spec["parameters"]
    empty = official_empty_arguments_rule(model_args, parameters)
    if empty is not None:
        return empty
    if official_gold_equals_spec_properties_passes(gold_args, parameters):
        return PASS
    if gold_args == {}:
        return fail("wrong_param", "official_empty_arguments_rule", "the gold call has no arguments")
    func_name = spec["name"]
    if func_name not in call:
        return fail("wrong_function", "official_find_description", f"expected {func_name}, got {_call_name(call)}")
    model_params = call[func_name]
    properties = parameters["properties"]
    for required in parameters["required"]:
        if required not in model_params:
            return fail("missing_parameter", "required_parameter_missing", f"{func_name}: missing {required}")
    for param, value in model_params.items():
        if official_extra_parameter_fails(param, properties, gold_args):
            return fail("extra_parameter", "official_extra_parameter_fails", f"{func_name}: extra {param}")
        details = properties[param]
        spec_type = details["type"]
        expected = rules.official_number_means_int(spec_type)
        nested_name = rules.official_nested_item_type(spec_type, details)
        nested = rules.PYTHON_TYPE_MAPPING[nested_name] if nested_name is not None else None
        if spec_type == "tuple" and type(value) == tuple:  # noqa: E721
            value = list(value)
        if spec_type == "float" and type(value) == int:  # noqa: E721
            value = float(value)
        gold_value = gold_args[param]
        type_ok, is_variable = rules.official_type_check(value, gold_value, expected, nested)
        if not type_ok:
            rule = (
                "official_empty_gold_list_is_impossible"
                if nested is not None and rules.official_empty_gold_list_is_impossible(gold_value)
                else "official_type_check"
            )
            return fail("wrong_type", rule, f"{func_name}.{param}: {show(value)} does not have type {spec_type}")
        if is_variable:
            continue  # see official_gold_type_mismatch_skips_value_check
        verdict = official_value_check(func_name, param, value, gold_value, spec_type, expected, nested)
        if verdict is not None:
            return verdict
    return PASS


def official_no_value_check_for_scalars(expected: Any) -> bool:
    """Top-level int, float and bool arguments are type-checked but their values are never compared."""
    return expected not in (dict, list, str)


def official_object_array_crashes(value: list[Any], gold: list[Any]) -> None:
    """For spec type `objectArray` the reference calls `dict_checker` with a missing argument, which
    raises as soon as there is one item to compare."""
    if len(value) == len(gold) and len(value) > 0:
        raise TypeError("dict_checker() missing 1 required positional argument: 'func_name'")


def official_value_check(
    func_name: str, param: Any, value: Any, gold: Any, spec_type: str, expected: Any, nested: Any
) -> Verdict | None:
    if official_no_value_check_for_scalars(expected):
        return None
    rule = None
    if expected is dict:
        if not rules.official_dict_match(value, gold):
            rule = "official_dict_match"
    elif expected is list and nested is dict:
        if spec_type == "objectArray":
            if len(value) != len(gold):
                return _wrong_value("official_list_of_dicts_match", func_name, param, value, gold)
            official_object_array_crashes(value, gold)
        if not rules.official_list_of_dicts_match(value, gold):
            rule = "official_list_of_dicts_match"
    elif expected is str:
        if not rules.official_string_substring_match(value, gold):
            rule = "official_string_substring_match"
    elif expected is list:
        if not rules.official_list_ordered_equal(value, gold):
            rule = "official_list_ordered_equal"
    return _wrong_value(rule, func_name, param, value, gold) if rule else None


def _wrong_value(rule: str, func_name: str, param: Any, value: Any, gold: Any) -> Verdict:
    return fail("wrong_value", rule, f"{func_name}.{param}: got {show(value)}, expected {show(gold)}")


def strict_simple_function_check(spec: dict[str, Any] | None, call: dict[Any, Any], name: str, gold_args: Any) -> Verdict:
    """Every required and every gold argument present, nothing extra, each value strictly equal."""
    if spec is None:
        return fail("wrong_function", "strict_find_description", f"no tool named {name}")
    model_args = _call_args(call)
    parameters = spec.get("parameters") or {}
    properties = parameters.get("properties") or {}
    for required in parameters.get("required") or []:
        if required not in model_args:
            return fail("missing_parameter", "required_parameter_missing", f"{name}: missing {required}")
    if not isinstance(gold_args, dict):
        gold_args = {}
    for param in gold_args:
        if param not in model_args:
            return fail("missing_parameter", "strict_gold_parameters_must_be_present", f"{name}: missing {param}")
    for param, value in model_args.items():
        if param not in properties or param not in gold_args:
            return fail("extra_parameter", "official_extra_parameter_fails", f"{name}: extra {param}")
        if not rules.strict_values_equal(value, gold_args[param]):
            return _wrong_value("strict_values_equal", name, param, value, gold_args[param])
    return PASS


def _name_mismatch(decoded: DecodedCalls, gold_names: list[str]) -> Verdict | None:
    output_counts = Counter(name for call in decoded for name in call)
    gold_counts = Counter(gold_names)
    for name in output_counts:
        if name not in gold_counts:
            return fail("wrong_function", "function_name_mismatch", f"unexpected call to {name}")
    for name in gold_counts:
        if name not in output_counts:
            return fail("wrong_function", "function_name_mismatch", f"no call to {name}")
    for name, count in output_counts.items():
        if count != gold_counts[name]:
            return fail("wrong_count", "function_name_mismatch", f"{name} called {count} times, expected {gold_counts[name]}")
    return None


def official_parallel_match_not_one_to_one(
    functions: list[dict[str, Any]], decoded: DecodedCalls, gold: dict[str, Any], names: list[str]
) -> Verdict:
    """Each gold call needs some same-named model call that passes; one model call may serve two."""
    last = PASS
    for gold_key, name in zip(gold, names):
        spec = official_find_description(functions, gold_key)
        found = False
        for call in decoded:
            if _call_name(call) != name:
                continue
            last = official_simple_function_check(spec, call, {name: gold[gold_key]})
            if last.valid:
                found = True
                break
        if not found:
            return last
    return last


def strict_one_to_one_parallel_match(
    functions: list[dict[str, Any]], decoded: DecodedCalls, gold: dict[str, Any], names: list[str]
) -> Verdict:
    """Gold calls and model calls are paired one to one (a bipartite matching)."""
    gold_items = list(zip(names, gold.values()))
    verdicts = [
        [
            strict_simple_function_check(strict_find_description(functions, name), call, name, args)
            if _call_name(call) == name
            else fail("wrong_function", "function_name_mismatch")
            for call in decoded
        ]
        for name, args in gold_items
    ]
    owner: dict[int, int] = {}

    def assign(g: int, seen: set[int]) -> bool:
        for c, verdict in enumerate(verdicts[g]):
            if verdict.valid and c not in seen:
                seen.add(c)
                if c not in owner or assign(owner[c], seen):
                    owner[c] = g
                    return True
        return False

    for g in range(len(gold_items)):
        if not assign(g, set()):
            same_name = [v for v in verdicts[g] if v.rule != "function_name_mismatch"]
            return next((v for v in same_name if not v.valid), fail("wrong_value", "strict_one_to_one_parallel_match"))
    return PASS


def check_calls(functions: list[dict[str, Any]], decoded: DecodedCalls, gold: dict[str, Any], strict: bool) -> Verdict:
    """`normal_checker`: count, names, then each gold call against the model's calls."""
    if len(decoded) != len(gold):
        return fail("wrong_count", "function_count_mismatch", f"{len(decoded)} calls, expected {len(gold)}")
    if strict:
        spec_names = {name for spec in functions if isinstance(name := spec.get("name"), str)}
        names = [strict_strips_digit_suffix(key, spec_names) for key in gold]
    else:
        names = [official_strips_digit_suffix(key) for key in gold]
    mismatch = _name_mismatch(decoded, names)
    if mismatch is not None:
        return mismatch
    if strict:
        return strict_one_to_one_parallel_match(functions, decoded, gold, names)
    return official_parallel_match_not_one_to_one(functions, decoded, gold, names)
