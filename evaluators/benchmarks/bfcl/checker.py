"""One BFCL item's verdict, as bfcl-eval 2026.3.23 evaluates a prompt-mode answer (spec §4, §5).

The output is decoded in the category's language (Python for irrelevance and relevance), must be a list of
one-key `{name: {argument: value}}` dicts (official_function_calling_format), then the AST checker runs:
- routing by the category name (official_routes_by_category_substring): `parallel` in it -> the order-free
  parallel check (official_parallel_greedy_unordered: for each gold call in order, the first unmatched model
  call that passes); else `multiple` -> one call checked against the doc of the gold function; else one call
  checked against the first doc. A different number of calls fails (official_call_count_must_match).
- one call (official_single_call_check_order): the doc's function name exactly (official_function_name_exact),
  every name in the doc's `required` given (official_required_from_doc), each model argument in the model's
  order in both the doc and the gold answer (official_unlisted_optional_param_is_unexpected) and of the right
  type and value (values.py), and every gold parameter left out having `""` allowed
  (official_missing_param_needs_empty_string).
- Java and JavaScript values are text; the declared type of the ORIGINAL function doc (the official evaluation
  loads the test data without the language hints, so the Java/JS types are not yet turned into "string") maps
  them to Python types (official_java_value_must_be_text, then java_types.java_value /
  javascript_types.javascript_value convert the text) and the Python rules apply.
- Irrelevance and relevance (official_irrelevance_is_not_decodable_or_empty, official_relevance_needs_a_call):
  only whether the Python decode succeeds with at least one call counts.
- Where the official checker would raise on an answer (it stops the whole official run), the item fails
  (official_checker_crash_scores_wrong).
- Native tool calls (fc_tool_calls_when_present): a prediction's `tool_calls`, when it has any, decode to
  `[{name: arguments}]` with string arguments read as JSON, as the official FC decoding does; then the same checks.
- A Java or JavaScript answer with no call in it (decode_java / decode_javascript WRONG_FORMAT_RULES): the
  official decoder returns an empty result, which the runner scores as "wrong output format", not as a decoder
  failure (official_no_call_is_wrong_output_format).
- Java and JavaScript answers are decoded in the parser's child process, within our bounds (native_parsing:
  bounded_answer_too_long, bounded_nesting_too_deep, isolated_parser_crashed, isolated_parser_timeout), each a
  decode failure scored "decoder failed": the official decoders have no bounds and crash the process on such text.
The mode (official / strict) changes the decoders and the Java/JS value converters only; the checker's rules
are the same in both.
The four multi-turn categories are scored by multi_turn/checker.py (the official multi-turn checker, executed in
the environment host's workers), the five agentic ones by agentic/checker.py, format sensitivity by
format_sensitivity/checker.py (its decoders, then this module's format check and AST checker); `score` hands them
over.
"""

from __future__ import annotations

import json
from typing import Any

from evaluators.benchmarks.bfcl.agentic.checker import score as score_agentic
from evaluators.benchmarks.bfcl.categories import (
    IRRELEVANCE,
    NO_ANSWER,
    is_agentic,
    is_format_sensitivity,
    is_multi_turn,
    language_of,
)
from evaluators.benchmarks.bfcl.decode_common import DecodeFailure
from evaluators.benchmarks.bfcl.decode_java import WRONG_FORMAT_RULES as JAVA_WRONG_FORMAT_RULES
from evaluators.benchmarks.bfcl.decode_javascript import WRONG_FORMAT_RULES as JAVASCRIPT_WRONG_FORMAT_RULES
from evaluators.benchmarks.bfcl.decode_python import decode_python
from evaluators.benchmarks.bfcl.format_sensitivity.checker import score as score_format_sensitivity
from evaluators.benchmarks.bfcl.native_parsing import decode_isolated
from evaluators.benchmarks.bfcl.values import (
    CONVERTED_NESTED_TYPES,
    JAVA_TYPES,
    JAVASCRIPT_TYPES,
    PASS,
    PYTHON_NESTED_TYPES,
    PYTHON_TYPES,
    Verdict,
    check_typed_value,
    shown,
)
from evaluators.core.types import Prediction, Sample, SampleScore, ToolCall

PASS_RULE = "official_call_matches"
# Decode failures that are an empty official decode (no call found), scored "wrong output format".
WRONG_FORMAT_RULES = JAVA_WRONG_FORMAT_RULES | JAVASCRIPT_WRONG_FORMAT_RULES


def score(sample: Sample, prediction: Prediction | None, mode: str = "official") -> SampleScore:
    """The verdict on one item; pure."""
    category = sample.meta.get("category") or sample.subset
    language = sample.meta.get("language") or language_of(category)
    # Every category: an item without an answer (none given, or its request failed) is wrong.
    if prediction is None:
        return _verdict(sample, False, "missing", "official_every_item_needs_an_answer", "no prediction for this item")
    if prediction.error:
        return _verdict(sample, False, "request_error", "official_every_item_needs_an_answer",
                        f"the request failed: {prediction.error}")
    if is_multi_turn(category):
        from evaluators.benchmarks.bfcl.multi_turn.checker import score as score_multi_turn

        return score_multi_turn(sample, prediction, mode)
    if is_agentic(category):
        return score_agentic(sample, prediction, mode)
    if is_format_sensitivity(category):
        return score_format_sensitivity(sample, prediction, mode, ast_check, official_function_calling_format)
    if category in NO_ANSWER:
        return _score_relevance(sample, prediction, category, mode)
    try:
        decoded = decode_prediction(prediction, language, mode)
    except DecodeFailure as failure:
        return _verdict(sample, False, official_no_call_is_wrong_output_format(failure), failure.rule,
                        failure.detail)
    if not official_function_calling_format(decoded):
        return _verdict(sample, False, "wrong_output_format", "official_function_calling_format",
                        "the decoded output is not a list of {name: {argument: value}}", decoded)
    try:
        verdict = ast_check(sample.input["function"], decoded, sample.gold, language, category, mode)
    except ImportError:
        raise
    except Exception as exc:  # noqa: BLE001 - the official checker raises here too (and stops its run)
        return _verdict(sample, False, "checker_crash", "official_checker_crash_scores_wrong",
                        f"the official checker raises on this answer: {type(exc).__name__}: {shown(exc)}", decoded)
    if verdict.valid:
        return _verdict(sample, True, None, PASS_RULE, "", decoded)
    return _verdict(sample, False, verdict.error_type, verdict.rule, verdict.detail, decoded)


def _verdict(sample: Sample, correct: bool, error_type: str | None, rule: str | None, detail: str,
             decoded: Any = None) -> SampleScore:
    return SampleScore(sample_id=sample.id, subset=sample.subset, correct=correct, error_type=error_type, rule=rule,
                       detail=detail, decoded=decoded)


# ---- decoding ----------------------------------------------------------------------------------------------


def official_no_call_is_wrong_output_format(failure: DecodeFailure) -> str:
    """The error kind of a decode failure: the Java/JS decoders' "no call found" is an empty official decode,
    which the official runner reports as "wrong output format"; any other failure is "decoder failed"."""
    return "wrong_output_format" if failure.rule in WRONG_FORMAT_RULES else "decoder_failed"


def decode_prediction(prediction: Prediction, language: str, mode: str) -> Any:
    """Native tool calls when the prediction has any, else its text in the language's decoder (no text at all
    fails the decode, as it does officially)."""
    if prediction.tool_calls:
        return fc_tool_calls_when_present(prediction.tool_calls)
    text = prediction.output
    if text is None:  # the official decoders fail on a missing text (no `.strip` on None)
        raise DecodeFailure("official_output_must_be_text", "the prediction has no output text")
    if language in ("java", "javascript"):
        # tree-sitter runs in the parser's child process (native_parsing): a crash there fails this sample only.
        return decode_isolated(language, text, mode)
    return decode_python(text, mode=mode)


def fc_tool_calls_when_present(tool_calls: list[ToolCall]) -> list[dict[str, Any]]:
    """`[{name: arguments}]`, string arguments read as JSON (a failure fails the decode, as `json.loads` does in
    the official FC decoding; arguments that are not an object fail the format check afterwards)."""
    decoded: list[dict[str, Any]] = []
    for call in tool_calls:
        arguments: Any = call.arguments
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except (ValueError, RecursionError) as exc:
                raise DecodeFailure("fc_arguments_are_json", f"arguments of {call.name} are not JSON: {exc}") from None
        decoded.append({call.name: arguments})
    return decoded


def official_function_calling_format(decoded: Any) -> bool:
    """A list of dicts with one key each whose value is a dict (`[]` included)."""
    if type(decoded) is not list:
        return False
    return all(type(item) is dict and len(item) == 1 and type(next(iter(item.values()))) is dict
               for item in decoded)


# ---- irrelevance and relevance -----------------------------------------------------------------------------


def contains_call(prediction: Prediction, mode: str) -> tuple[bool, Any, str]:
    """Whether the answer decodes (as Python) to at least one call; with the decoded value and why not."""
    try:
        decoded = decode_prediction(prediction, "python", mode)
    except DecodeFailure as failure:
        return False, None, f"not decodable ({failure.rule}): {failure.detail}"
    if not official_function_calling_format(decoded) or len(decoded) == 0:
        return False, decoded, "decodes to no call"
    if len(decoded) == 1 and len(decoded[0]) == 0:
        return False, decoded, "decodes to no call"
    return True, decoded, "decodes to a call"


def _score_relevance(sample: Sample, prediction: Prediction, category: str, mode: str) -> SampleScore:
    has_call, decoded, why = contains_call(prediction, mode)
    if category in IRRELEVANCE:
        if has_call:
            return _verdict(sample, False, "contains_call", "official_irrelevance_is_not_decodable_or_empty", why,
                            decoded)
        return _verdict(sample, True, None, "official_irrelevance_is_not_decodable_or_empty", why, decoded)
    if not has_call:
        return _verdict(sample, False, "no_call", "official_relevance_needs_a_call", why, decoded)
    return _verdict(sample, True, None, "official_relevance_needs_a_call", why, decoded)


# ---- the AST checker ---------------------------------------------------------------------------------------


def ast_check(functions: list[dict], decoded: list[dict], gold: list[dict], language: str, category: str,
              mode: str = "official") -> Verdict:
    """official_routes_by_category_substring."""
    if "parallel" in category:
        return official_parallel_greedy_unordered(functions, decoded, gold, language, mode)
    if "multiple" in category:
        if len(decoded) != len(gold):
            return _wrong_count(decoded, gold)
        return single_call_check(find_description(functions, next(iter(gold[0]))), decoded[0], gold[0], language,
                                 mode)
    if len(decoded) != 1:
        return _wrong_count(decoded, [None])
    return single_call_check(functions[0], decoded[0], gold[0], language, mode)


def _wrong_count(decoded: list, gold: list) -> Verdict:
    return Verdict(False, "wrong_count", "official_call_count_must_match",
                   f"{len(decoded)} call(s), the answer needs {len(gold)}")


def find_description(functions: list[dict], name: str) -> dict | None:
    for function in functions:
        if function["name"] == name:
            return function
    return None


def official_parallel_greedy_unordered(functions: list[dict], decoded: list[dict], gold: list[dict],
                                       language: str, mode: str = "official") -> Verdict:
    """Same number of calls; each gold call, in gold order, takes the first unmatched model call that passes."""
    if len(decoded) != len(gold):
        return _wrong_count(decoded, gold)
    matched: set[int] = set()
    for gold_index, gold_call in enumerate(gold):
        description = find_description(functions, next(iter(gold_call)))
        last = PASS
        for index, call in enumerate(decoded):
            if index in matched:
                continue
            last = single_call_check(description, call, gold_call, language, mode)
            if last.valid:
                matched.add(index)
                break
        if not last.valid:
            return Verdict(False, "no_match", "official_parallel_greedy_unordered",
                           f"no unmatched call fits gold call {gold_index}; last failure: {last.detail}")
    return PASS


def single_call_check(description: Any, call: dict, gold_call: dict, language: str,
                      mode: str = "official") -> Verdict:
    """official_single_call_check_order: name, required, each argument, then gold parameters left out."""
    gold_params: dict = next(iter(gold_call.values()))
    name = description["name"]
    properties = description["parameters"]["properties"]
    required = description["parameters"]["required"]
    if name not in call:
        return Verdict(False, "wrong_func_name", "official_function_name_exact",
                       f"expected a call to {name!r}, got {shown(list(call))}")
    arguments = call[name]
    for param in required:
        if param not in arguments:
            return Verdict(False, "missing_required", "official_required_from_doc",
                           f"required parameter {param!r} missing")
    for param, value in arguments.items():
        if param not in properties or param not in gold_params:
            return Verdict(False, "unexpected_param", "official_unlisted_optional_param_is_unexpected",
                           f"parameter {param!r} is not in both the doc and the answer")
        verdict = check_argument(param, value, gold_params[param], properties[param], language, mode)
        if not verdict.valid:
            return verdict
    for param in gold_params:
        if param not in arguments and "" not in gold_params[param]:
            return Verdict(False, "missing_optional", "official_missing_param_needs_empty_string",
                           f"parameter {param!r} left out but the answer needs it")
    return PASS


def check_argument(param: Any, value: Any, allowed: list, param_doc: dict, language: str,
                   mode: str = "official") -> Verdict:
    """The declared type mapped for the language (Java/JS text converted first, with the mode's strict fixes),
    then the value rules."""
    declared = param_doc["type"]
    nested: type | None = None
    if language == "java":
        expected = JAVA_TYPES[declared]
        if type(value) is not str:
            return Verdict(False, "type_error", "official_java_value_must_be_text",
                           f"{param!r} must be Java source text, got {type(value).__name__}")
        if declared in CONVERTED_NESTED_TYPES:
            nested = JAVA_TYPES[param_doc["items"]["type"]]
        from evaluators.benchmarks.bfcl.java_types import java_value

        value = java_value(value, param_doc, mode)
    elif language == "javascript":
        expected = JAVASCRIPT_TYPES[declared]
        if type(value) is not str:
            return Verdict(False, "type_error", "official_javascript_value_must_be_text",
                           f"{param!r} must be JavaScript source text, got {type(value).__name__}")
        if declared in CONVERTED_NESTED_TYPES:
            nested = JAVASCRIPT_TYPES[param_doc["items"]["type"]]
        from evaluators.benchmarks.bfcl.javascript_types import javascript_value

        value = javascript_value(value, param_doc, mode)
    else:
        expected = PYTHON_TYPES[declared]
        if declared in PYTHON_NESTED_TYPES:
            nested = PYTHON_TYPES[param_doc["items"]["type"]]
    return check_typed_value(param, value, allowed, declared, expected, nested, language)
