"""A format sensitivity item's verdict, as the official `format_sensitivity_runner` gives it (eval_runner.py of
bfcl-eval 2026.3.23): the answer decoded for the configuration in its id (decode.py), then, as for any single-turn
item, the function-calling format check and the AST checker, in Python, routed by the ORIGINAL id
(official_routes_by_original_id: `parallel` / `multiple` in `simple_python_58`, `live_parallel_3-2-1`, …).

The error types are the official runner's (as its score file writes them): `ast_decoder:decoder_failed`,
`ast_decoder:decoder_wrong_output_format`, and the AST checker's (`simple_function_checker:wrong_count`,
`parallel_function_checker_no_order:cannot_find_match`, `type_error:simple`, `value_error:string`, …), each found
from the checker rule that decided (official_error_type). The AST checker and the format check are bfcl.checker's,
handed in by it (the two modules do not import each other).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evaluators.benchmarks.bfcl.decode_common import DecodeFailure
from evaluators.benchmarks.bfcl.format_sensitivity.data import official_configuration_from_id, official_routing_id
from evaluators.benchmarks.bfcl.format_sensitivity.decode import official_format_sensitivity_decode
from evaluators.benchmarks.bfcl.values import Verdict, shown
from evaluators.core.types import Prediction, Sample, SampleScore

PASS_RULE = "official_call_matches"
DECODER_FAILED = "ast_decoder:decoder_failed"
WRONG_OUTPUT_FORMAT = "ast_decoder:decoder_wrong_output_format"
CHECKER_CRASH = "checker_crash"
# The simple checker's own failures (single_call_check's error kinds), as the official types name them.
_SIMPLE = ("wrong_func_name", "missing_required", "unexpected_param", "missing_optional")
# A rule of values.py -> the official error type (the dict rules are told apart by what was wrong: _DICT_FAILURES).
_VALUE_RULES = {
    "official_exact_python_types": "type_error:simple",
    "official_list_elements_type_checked_one_level": "type_error:nested",
    "official_normalises_strings": "value_error:string",
    "official_list_order_matters": "value_error:list/tuple",
    "official_value_in_allowed_list": "value_error:others",
    "official_variable_answers_compare_exactly": "value_error:others",
}
# The dict checkers' failures, by the start of the detail values.py writes (after "'param': " and "dict N: ").
_DICT_FAILURES = (
    ("unexpected dict key", "value_error:dict_key"),
    ("dict key", "value_error:dict_key"),
    ("dict value", "value_error:dict_value"),
    ("no allowed dict", "dict_checker:unclear"),
    ("no allowed list of dicts", "list_dict_checker:unclear"),
)

AstCheck = Callable[..., Verdict]


def official_routes_by_original_id(sample: Sample) -> str:
    """What the AST checker's `parallel` / `multiple` substring routing reads: the original item's id."""
    return str(sample.meta.get("original_id") or official_routing_id(sample.id))


def _checker_of(routing: str) -> str:
    if "parallel" in routing:
        return "parallel_function_checker_no_order"
    if "multiple" in routing:
        return "multiple_function_checker"
    return "simple_function_checker"


def _dict_failure(detail: str) -> str:
    text = detail
    while True:  # "dict 0: 'p': dict value …" -> "dict value …"
        head, colon, rest = text.partition(": ")
        if not colon or not (head.startswith("'") or head.startswith("dict ") and head[5:].isdigit()):
            break
        text = rest
    for start, error_type in _DICT_FAILURES:
        if text.startswith(start):
            return error_type
    if " dicts, an allowed list has " in text:
        return "value_error:list_dict_count"
    return "dict_checker:unclear"


def official_error_type(verdict: Verdict, routing: str) -> str:
    """The official error type of a failed AST check."""
    rule, kind = verdict.rule or "", verdict.error_type or ""
    if rule == "official_call_count_must_match":
        return f"{_checker_of(routing)}:wrong_count"
    if rule == "official_parallel_greedy_unordered":
        return "parallel_function_checker_no_order:cannot_find_match"
    if kind in _SIMPLE:
        return f"simple_function_checker:{kind}"
    if rule in ("official_dict_one_level", "official_list_of_dicts_positional"):
        return _dict_failure(verdict.detail)
    return _VALUE_RULES.get(rule, kind or "unclear")


def score(sample: Sample, prediction: Prediction, mode: str, ast_check: AstCheck,
          calling_format: Callable[[Any], bool]) -> SampleScore:
    """The verdict on one answered item (bfcl.checker.score rules on an item without an answer); pure."""
    config = official_configuration_from_id(sample.id)
    routing = official_routes_by_original_id(sample)
    metadata = {"configuration": config.text, "original_id": routing}
    try:
        decoded = official_format_sensitivity_decode(prediction.output, config.return_format, config.tool_call_tag,
                                                     mode)
    except DecodeFailure as failure:
        return _verdict(sample, False, DECODER_FAILED, failure.rule, failure.detail, None, metadata)
    if not calling_format(decoded):
        return _verdict(sample, False, WRONG_OUTPUT_FORMAT, "official_function_calling_format",
                        "the decoded output is not a list of {name: {argument: value}}", decoded, metadata)
    try:
        verdict = ast_check(sample.input["function"], decoded, sample.gold, "python", routing, mode)
    except ImportError:
        raise
    except Exception as exc:  # noqa: BLE001 - the official checker raises here too (and stops its run)
        return _verdict(sample, False, CHECKER_CRASH, "official_checker_crash_scores_wrong",
                        f"the official checker raises on this answer: {type(exc).__name__}: {shown(exc)}", decoded,
                        metadata)
    if verdict.valid:
        return _verdict(sample, True, None, PASS_RULE, "", decoded, metadata)
    return _verdict(sample, False, official_error_type(verdict, routing), verdict.rule or "", verdict.detail, decoded,
                    metadata)


def _verdict(sample: Sample, correct: bool, error_type: str | None, rule: str, detail: str, decoded: Any,
             metadata: dict[str, Any]) -> SampleScore:
    return SampleScore(sample_id=sample.id, subset=sample.subset, correct=correct, error_type=error_type, rule=rule,
                       detail=detail, decoded=decoded, metadata=metadata)
