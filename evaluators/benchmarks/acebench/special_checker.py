"""Special categories: the output must name the problem, checked by case-sensitive substrings.

The zh prompts ask for the same English sentences, and the reference checks English keywords for
both languages. Outputs are not parsed.
"""

from __future__ import annotations

from typing import Any

from evaluators.benchmarks.acebench.normal_checker import PASS, Verdict, fail
from evaluators.core.text import show

MISSING_KEYWORD = "Missing necessary parameters"
INCORRECT_KEYWORD = "There is incorrect value"
IRRELEVANT_KEYWORD = "the limitations of the function"


def check_incomplete(output: str, gold: dict[str, list[str]]) -> Verdict:
    """Needs the keyword, the API name and every missing parameter name."""
    verdict = PASS
    for api_name, missing in gold.items():
        if MISSING_KEYWORD not in output:
            verdict = fail("not_detected", "special_incomplete_keyword", f"no {MISSING_KEYWORD!r}")
        elif api_name not in output:
            verdict = fail("wrong_correction", "special_incomplete_names_api", f"{api_name} not named")
        else:
            for name in missing:
                if name not in output:
                    verdict = fail("wrong_correction", "special_incomplete_names_parameters", f"{name} not named")
    return verdict


def check_error_param(output: str, gold: dict[str, list[str]]) -> Verdict:
    """Needs the keyword and every wrong value; the parameter name itself is not checked."""
    verdict = PASS
    for _param, values in gold.items():
        if INCORRECT_KEYWORD not in output:
            verdict = fail("not_detected", "special_error_param_keyword", f"no {INCORRECT_KEYWORD!r}")
        else:
            for value in values:
                if value not in output:
                    verdict = fail("wrong_correction", "special_error_param_names_values", f"{show(value)} not named")
    return verdict


def check_irrelevant(output: str, gold: Any) -> Verdict:
    if IRRELEVANT_KEYWORD not in output:
        return fail("not_detected", "special_irrelevant_keyword", f"no {IRRELEVANT_KEYWORD!r}")
    return PASS


SPECIAL_CHECKS = {
    "special_incomplete": check_incomplete,
    "special_error_param": check_error_param,
    "special_irrelevant": check_irrelevant,
}
