"""BFCL v4 declared for the registry: what it is, its categories (single-turn, multi-turn, agentic), metrics and
table."""

from __future__ import annotations

from typing import Any

from evaluators.benchmarks.bfcl.agentic.memory_evidence import MEMORY_EVIDENCE
from evaluators.benchmarks.bfcl.agentic.web_search import BACKEND_OPTION, BACKENDS, SERPAPI
from evaluators.benchmarks.bfcl.categories import (
    AGENTIC,
    CATEGORIES,
    FORMAT_SENSITIVITY,
    IRRELEVANCE,
    LIVE,
    MEMORY,
    MULTI_TURN,
    NO_ANSWER,
    NON_LIVE,
    RELEVANCE,
    SINGLE_TURN,
    UPLOAD_ONLY,
    WEB_SEARCH,
    category_of_id,
)
from evaluators.benchmarks.bfcl.checker import score
from evaluators.benchmarks.bfcl.data import DATA_VERSION, load
from evaluators.benchmarks.bfcl.format_sensitivity.report import MAX_DELTA, STANDARD_DEVIATION
from evaluators.benchmarks.bfcl.item_requests import build_request
from evaluators.benchmarks.bfcl.multi_turn.evidence import MULTI_TURN_EVIDENCE
from evaluators.benchmarks.bfcl.predictions import match_predictions, read_predictions
from evaluators.benchmarks.bfcl.report import LIVE_AST, NON_LIVE_AST_REST, SIMPLE_AST, mean_of, overall_parts, summarize
from evaluators.benchmarks.bfcl.solve import (
    OFFICIAL_STYLE,
    expected_requests,
    request_profile,
    run_problem,
    server_keys,
    solve,
    unavailable_now,
)
from evaluators.core.board_layout import BoardLayout
from evaluators.core.declarations import About, Metric, Option, Overview
from evaluators.core.registry import Benchmark

# The board's figures in the order of the official overall table (Overall, Non-Live, Live, Multi Turn, …).
SUMMARY_COLUMNS = ("overall", "non_live_ast", "live_ast", "multi_turn", "agentic", "web_search", "memory",
                   "irrelevance_detection", "relevance_detection", "non_live_simple_ast")
GROUPS = {
    "non_live": NON_LIVE,
    "live": LIVE,
    "ast": tuple(c for c in SINGLE_TURN if c not in NO_ANSWER),
    "non_live_ast": SIMPLE_AST + NON_LIVE_AST_REST,
    "live_ast": LIVE_AST,
    "irrelevance_detection": IRRELEVANCE,
    "relevance_detection": RELEVANCE,
    "single_turn": SINGLE_TURN,
    "multi_turn": MULTI_TURN,
    # memory: run with its prerequisite chains (memory_vector with its optional extra)
    "agentic": AGENTIC,
    "memory": MEMORY,
    "web_search": WEB_SEARCH,
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
    "memory_kv": "Memory (key-value)",
    "memory_vector": "Memory (vector)",
    "memory_rec_sum": "Memory (recursive summarization)",
    "web_search_base": "Web search (base)",
    "web_search_no_snippet": "Web search (no snippet)",
    FORMAT_SENSITIVITY: "Format sensitivity",
    "agentic": "Agentic",
    "memory": "Memory",
    "web_search": "Web search",
    "single_turn": "Single-turn",
    "multi_turn": "Multi-turn",
    "non_live": "Non-live",
    "live": "Live",
    "ast": "AST categories",
    "non_live_ast": "Non-live AST",
    "live_ast": "Live AST",
    "irrelevance_detection": "Irrelevance detection",
    "relevance_detection": "Relevance detection",
    ALL_VIEW: "All categories",
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
        "function calling as the official checker (`bfcl-eval` 2026.3.23) judges a prompt-mode model: the model "
        "answers in text with a list of calls, `[func(a=1), …]`. **Single-turn**, 13 categories judged on the calls' "
        "abstract syntax tree: *non-live* simple (Python, Java, JavaScript), multiple (pick the right function), "
        "parallel (several calls), parallel multiple and irrelevance (no function fits: make no call); *live* "
        "(user-contributed) simple, multiple, parallel, parallel multiple, irrelevance and relevance (some call is "
        "expected). **Multi-turn**, 4 categories of 200 conversations: over several user turns the model works "
        "against stateful environments (a file system, messaging, posting, tickets, trading, travel booking, vehicle "
        "control, math), step by step: each step's calls are executed and their results shown to it, until it "
        "answers without a call. *Base*; *missing function* (a function the request needs is withheld, then added "
        "in a later turn: the model should not make do with the wrong ones); *missing parameter* (a turn leaves out "
        "a detail the call needs, given in the next turn: the model should not guess it); *long context* (the "
        "environments hold long listings, histories and messages). A conversation passes when, after every turn "
        "that has an answer, each environment's state equals the ground truth's and the ground truth's call "
        "results are among the model's results so far; one cut short at the official limit of 20 steps in a turn "
        "fails. Accuracy per category; **Non-Live AST** = mean of simple (itself the mean of the three languages), "
        "multiple, parallel and parallel multiple; **Live AST** = correct live AST items / 1,351 (item weighted, as "
        "the official table); **Irrelevance** = mean of non-live and live irrelevance; **Relevance** = live "
        "relevance; **Multi Turn** = mean of the four multi-turn categories (a share of their 800 items). The "
        "**Agentic**, 5 categories: one question answered over several steps with tools, *memory* (what the user "
        "said in earlier conversations, kept in a key-value store, a vector store or a recursive summary; 155 "
        "questions each) and *web search* (multi-hop questions, with and without result snippets; 100 each); an item "
        "passes when the model's last text that is not a call names an expected answer (after the official "
        "standardization). Web search is played against an endpoint as the official prompting loop plays it, its "
        "searches answered by SerpAPI (the official backend, a key needed) or by a recording of searches and pages; "
        "the three memory categories are played as the official generator plays them: per scenario the prerequisite "
        "conversations first (37 conversations, 323 user turns per backend, not scored), one after another, each "
        "flushing the memory the next one and the scenario's questions start from; memory_vector needs an optional "
        "extra (torch, sentence-transformers, faiss and the packaged all-MiniLM-L6-v2 weights). "
        "**Web Search** = mean of its "
        "two variants, **Memory** = mean of its three stores, **Agentic** = mean of the two. The official "
        "*Overall* = 10% Non-Live AST + 10% Live AST + 10% Irrelevance + 30% Multi Turn + 40% Agentic: shown where "
        "every part is present (published rows, uploads holding every category, or a run of every category); a run "
        "without a part (memory_vector without its extra, web search without a backend) has no Overall and its report "
        "names the parts it lacks (the official "
        "table would count them as 0). **Format sensitivity** (the official non-scoring category, outside every "
        "summary and Overall): 200 single-turn items under 26 system-prompt configurations (return format python, "
        "JSON, verbose or concise XML; with or without a `<TOOLCALL>` tag; docs as Python, XML or JSON; plain text or "
        "markdown; classic or experimental wording), 5,200 requests, prompt mode only, run only when named; per "
        "configuration its accuracy, and over them the official **Max Delta** (best minus worst) and **Standard "
        "Deviation** (sample). Not included: multi-turn in native-tools mode (a multi-turn run is prompt mode)."
    ),
    paper="Patil et al., The Berkeley Function Calling Leaderboard (BFCL), ICML 2025; blog posts v1-v4",
    paper_url="https://gorilla.cs.berkeley.edu/blogs/8_berkeley_function_calling_leaderboard.html",
    source_url="https://github.com/ShishirPatil/gorilla/tree/main/berkeley-function-call-leaderboard",
    data=f"the data files of the `bfcl-eval` wheel on PyPI ({DATA_VERSION}), downloaded once, checked against its "
         "sha256 and read from the zip (multi-turn: its conversations, ground truth and function docs; agentic: "
         "the memory and web-search questions and their possible answers; the "
         "environments are the official classes of the same wheel, run in worker processes with bounded memory and "
         "time); or a folder laid out like its `bfcl_eval/data/`",
    licence="Apache-2.0",
    citation=("Patil, Mao, Yan, Ji, Suresh, Stoica, Gonzalez: The Berkeley Function Calling Leaderboard (BFCL): "
              "From Tool Use to Agentic Evaluation of Large Language Models, ICML 2025; Yan et al., Berkeley "
              "Function Calling Leaderboard, 2024"),
    strict_fixes="the `+5` -> -5 sign, dropped positional arguments (refused), a python code fence around the "
                 "calls; Java: a missing `;`, double-brace HashMaps, text after non-ASCII characters, quoted "
                 "`String[]` elements; JavaScript: nested object and array literals; multi-turn: a call made in a "
                 "missing-function or missing-parameter turn fails (the official runner never checks those turns)",
    published="the official leaderboard's published tables (see leaderboard_data/bfcl.json)",
)

BENCHMARK = Benchmark(
    name="bfcl",
    title="BFCL v4",
    description="Berkeley Function Calling Leaderboard v4: the 13 single-turn AST categories and the 4 multi-turn "
                "categories against executable environments, prompt mode; web search with a search backend (SerpAPI "
                "or a recording); memory after its prerequisite conversations (memory_vector with an "
                "optional extra); format sensitivity (26 prompt formats, outside Overall) run when named.",
    about=ABOUT,
    subsets=CATEGORIES,
    groups=GROUPS,
    metrics=(Metric("accuracy", "Accuracy", "share of the category's items the official checker accepts"),),
    summary_metrics=(
        Metric("non_live_ast", "Non-Live AST", "mean of simple (mean of Python, Java, JavaScript), multiple, parallel "
               "and parallel_multiple", share_of_items=False, made_of=mean_of(("non_live_simple_ast", *NON_LIVE_AST_REST))),
        Metric("live_ast", "Live AST", "correct items of live simple, multiple, parallel and parallel_multiple, over "
               "their items"),
        Metric("irrelevance_detection", "Irrelevance", "mean of irrelevance and live_irrelevance: no call made where "
               "no function fits", share_of_items=False, made_of=mean_of(IRRELEVANCE)),
        Metric("relevance_detection", "Relevance", "live_relevance: some call made where one fits"),
        Metric("non_live_simple_ast", "Non-Live Simple AST", "mean of simple_python, simple_java, simple_javascript",
               share_of_items=False, made_of=mean_of(SIMPLE_AST)),
        # Four categories of 200 items each: their mean is the share of the 800 items right.
        Metric("multi_turn", "Multi Turn", "mean of the four multi-turn categories (base, missing function, missing "
               "parameter, long context)"),
        # Equal-sized parts (100 and 155 items): their mean is the share of the 200 and 465 items right, an item
        # share as Multi Turn is (published rows carry only these figures, with n from the table's n_by_view).
        Metric("web_search", "Web Search", "mean of web_search_base and web_search_no_snippet (run with a search "
               "backend, or scored from uploaded result files)"),
        Metric("memory", "Memory", "mean of memory_kv, memory_vector and memory_rec_sum (run against an endpoint; "
               "memory_vector with its optional extra)"),
        Metric("agentic", "Agentic", "mean of Web Search and Memory (the official Agentic Overall Acc)",
               share_of_items=False, made_of=mean_of(("web_search", "memory"))),
        Metric("overall", "Overall", "the official weighting: 10% Non-Live AST, 10% Live AST, 10% Irrelevance, 30% "
               "Multi Turn, 40% Agentic (web search and memory); only where every part is present (published rows, "
               "or uploads holding every category, or a run of every category with memory_vector's extra)",
               share_of_items=False, made_of=overall_parts()),
        # Format sensitivity, outside every summary and Overall (the official score header's statistics).
        Metric(MAX_DELTA, "Format Sensitivity Max Delta", "format sensitivity: the best configuration's accuracy "
               "minus the worst's, over the 26 prompt configurations (not in Overall)", higher_is_better=False,
               share_of_items=False),
        Metric(STANDARD_DEVIATION, "Format Sensitivity Standard Deviation", "format sensitivity: the sample "
               "standard deviation of the 26 configurations' accuracies (not in Overall)", higher_is_better=False,
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
    expected_requests=expected_requests,
    request_profile=request_profile,
    run_problem=run_problem,
    options=(Option(BACKEND_OPTION, BACKENDS, SERPAPI, "what answers the web search tools: serpapi (the official "
                    "backend, key in SERPAPI_API_KEY) or recorded (a recording of searches and pages, in "
                    "TOOLBOARD_BFCL_WEB_SEARCH_RECORDING)"),),
    prompt_styles=(OFFICIAL_STYLE,),  # request_profile refuses any other style
    subset_of_id=category_of_id,
    titles=TITLES,
    upload_only=UPLOAD_ONLY,
    unavailable_now=unavailable_now,
    server_keys=server_keys,
    evidence=MULTI_TURN_EVIDENCE + MEMORY_EVIDENCE,
    layout=BoardLayout(
        view_label="Set", views=(ALL_VIEW,), columns=SUMMARY_COLUMNS, detail_columns=(*SINGLE_TURN, *MULTI_TURN, *AGENTIC,
                                                                                    MAX_DELTA, STANDARD_DEVIATION),
        run_values=run_values, published_values=published_values, sort_by="overall",
    ),
    # Overall, as the official board ranks: its headline. A run against an endpoint has no Overall yet
    # without memory_vector's extra, so it enters the overview with its other figures shown and no BFCL win rate.
    overview=Overview(ALL_VIEW, ("overall", "non_live_ast", "live_ast"), "overall",
                      why="Overall, the official board's headline and order: 10% non-live AST, 10% live AST, 10% "
                          "irrelevance, 30% multi-turn, 40% agentic (web search and memory; a run without "
                          "memory_vector's optional extra has no Overall)"),
)
