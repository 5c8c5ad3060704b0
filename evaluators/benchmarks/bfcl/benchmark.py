"""BFCL v4 (single-turn) declared for the registry: what it is, its categories, metrics and table."""

from __future__ import annotations

from typing import Any

from evaluators.benchmarks.bfcl.categories import (
    CATEGORIES,
    IRRELEVANCE,
    LIVE,
    NO_ANSWER,
    NON_LIVE,
    RELEVANCE,
    SINGLE_TURN,
    category_of_id,
)
from evaluators.benchmarks.bfcl.checker import score
from evaluators.benchmarks.bfcl.data import DATA_VERSION, load
from evaluators.benchmarks.bfcl.predictions import match_predictions, read_predictions
from evaluators.benchmarks.bfcl.prompts import build_request
from evaluators.benchmarks.bfcl.report import LIVE_AST, NON_LIVE_AST_REST, SIMPLE_AST, summarize
from evaluators.benchmarks.bfcl.solve import OFFICIAL_STYLE, request_profile, solve
from evaluators.core.board_layout import BoardLayout
from evaluators.core.declarations import About, Metric, Overview
from evaluators.core.registry import Benchmark

SUMMARY_COLUMNS = ("non_live_ast", "live_ast", "irrelevance_detection", "relevance_detection", "non_live_simple_ast")
GROUPS = {
    "non_live": NON_LIVE,
    "live": LIVE,
    "ast": tuple(c for c in SINGLE_TURN if c not in NO_ANSWER),
    "non_live_ast": SIMPLE_AST + NON_LIVE_AST_REST,
    "live_ast": LIVE_AST,
    "irrelevance_detection": IRRELEVANCE,
    "relevance_detection": RELEVANCE,
    "all": CATEGORIES,
}
ALL_VIEW = "all"
# What a person reads for each category, group and view: the official leaderboard's names.
TITLES = {
    "simple_python": "Simple (Python)",
    "simple_java": "Simple (Java)",
    "simple_javascript": "Simple (JavaScript)",
    "multiple": "Multiple",
    "parallel": "Parallel",
    "parallel_multiple": "Parallel multiple",
    "irrelevance": "Non-live irrelevance",
    "live_simple": "Live simple",
    "live_multiple": "Live multiple",
    "live_parallel": "Live parallel",
    "live_parallel_multiple": "Live parallel multiple",
    "live_irrelevance": "Live irrelevance",
    "live_relevance": "Live relevance",
    "multi_turn_base": "Multi-turn base",
    "multi_turn_miss_func": "Multi-turn missing function",
    "multi_turn_miss_param": "Multi-turn missing parameter",
    "multi_turn_long_context": "Multi-turn long context",
    "non_live": "Non-live",
    "live": "Live",
    "ast": "AST categories",
    "non_live_ast": "Non-live AST",
    "live_ast": "Live AST",
    "irrelevance_detection": "Irrelevance detection",
    "relevance_detection": "Relevance detection",
    ALL_VIEW: "All single-turn",
}


def run_values(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """One view: the summaries and each category's accuracy."""
    values: dict[str, Any] = dict(report.get("summary") or {})
    for name, subset in (report.get("subsets") or {}).items():
        values[name] = (subset.get("metrics") or {}).get("accuracy")
    return {ALL_VIEW: values}


def published_values(row: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return ALL_VIEW, dict(row.get("summary") or row.get("metrics") or {})


ABOUT = About(
    measures=(
        "single-turn function calling, judged on the calls' abstract syntax tree as the official checker "
        "(`bfcl-eval` 2026.3.23) judges a prompt-mode model: the model answers in text with a list of calls, "
        "`[func(a=1), …]`. 13 categories: *non-live* simple (Python, Java, JavaScript), multiple (pick the right "
        "function), parallel (several calls), parallel multiple and irrelevance (no function fits: make no call); "
        "*live* (user-contributed) simple, multiple, parallel, parallel multiple, irrelevance and relevance (some "
        "call is expected). Accuracy per category; **Non-Live AST** = mean of simple (itself the mean of the three "
        "languages), multiple, parallel and parallel multiple; **Live AST** = correct live AST items / 1,351 (item "
        "weighted, as the official table); **Irrelevance** = mean of non-live and live irrelevance; "
        "**Relevance** = live relevance. Not included yet: multi-turn, web search, memory and format sensitivity "
        "(multi-step environments and a search backend, a different harness). The official *Overall* weighs "
        "those at 70%, so it is not shown: from single-turn categories alone it would be at most 30%."
    ),
    paper="Patil et al., The Berkeley Function Calling Leaderboard (BFCL), ICML 2025; blog posts v1-v4",
    paper_url="https://gorilla.cs.berkeley.edu/blogs/8_berkeley_function_calling_leaderboard.html",
    source_url="https://github.com/ShishirPatil/gorilla/tree/main/berkeley-function-call-leaderboard",
    data=f"the data files of the `bfcl-eval` wheel on PyPI ({DATA_VERSION}), downloaded once, checked against its "
         "sha256 and read from the zip; or a folder laid out like its `bfcl_eval/data/`",
    licence="Apache-2.0",
    citation=("Patil, Mao, Yan, Ji, Suresh, Stoica, Gonzalez: The Berkeley Function Calling Leaderboard (BFCL): "
              "From Tool Use to Agentic Evaluation of Large Language Models, ICML 2025; Yan et al., Berkeley "
              "Function Calling Leaderboard, 2024"),
    strict_fixes="the `+5` -> -5 sign, dropped positional arguments (refused), a python code fence around the "
                 "calls; Java: a missing `;`, double-brace HashMaps, text after non-ASCII characters, quoted "
                 "`String[]` elements; JavaScript: nested object and array literals",
    published="the official leaderboard's published tables (see leaderboard_data/bfcl.json)",
)

BENCHMARK = Benchmark(
    name="bfcl",
    title="BFCL v4 (single-turn)",
    description="Berkeley Function Calling Leaderboard v4: the 13 single-turn AST categories, prompt mode.",
    about=ABOUT,
    subsets=CATEGORIES,
    groups=GROUPS,
    metrics=(Metric("accuracy", "Accuracy", "share of the category's items the official checker accepts"),),
    summary_metrics=(
        Metric("non_live_ast", "Non-Live AST", "mean of simple (mean of Python, Java, JavaScript), multiple, parallel "
               "and parallel_multiple", share_of_items=False),
        Metric("live_ast", "Live AST", "correct items of live simple, multiple, parallel and parallel_multiple, over "
               "their items"),
        Metric("irrelevance_detection", "Irrelevance", "mean of irrelevance and live_irrelevance: no call made where "
               "no function fits", share_of_items=False),
        Metric("relevance_detection", "Relevance", "live_relevance: some call made where one fits"),
        Metric("non_live_simple_ast", "Non-Live Simple AST", "mean of simple_python, simple_java, simple_javascript",
               share_of_items=False),
    ),
    languages=(None,),
    data_version=DATA_VERSION,
    load=load,
    read_predictions=read_predictions,
    match_predictions=match_predictions,
    score=score,
    report=summarize,
    build_request=build_request,
    solve=solve,
    request_profile=request_profile,
    prompt_styles=(OFFICIAL_STYLE,),  # request_profile refuses any other style
    subset_of_id=category_of_id,
    titles=TITLES,
    layout=BoardLayout(
        view_label="Set", views=(ALL_VIEW,), columns=SUMMARY_COLUMNS, detail_columns=CATEGORIES,
        run_values=run_values, published_values=published_values, sort_by="live_ast",
    ),
    # Live AST: the user-contributed queries, a share of 1,351 items (so it has an interval), and further from
    # saturation than the non-live mean of means, which strong models nearly fill.
    overview=Overview(ALL_VIEW, ("non_live_ast", "live_ast"), "live_ast",
                      why="Live AST: real user queries, a share of 1,351 items; the non-live figure is a mean of "
                          "category means that strong models nearly fill"),
)
