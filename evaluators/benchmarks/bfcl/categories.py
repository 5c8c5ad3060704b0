"""The 22 categories of BFCL v4 (13 single-turn, 4 multi-turn, 5 agentic) and the non-scoring format sensitivity one,
their groups and the language each is decoded in. Of the agentic ones, web search is run against an endpoint (with a
search backend, agentic/web_search.py), and so is memory (agentic/memory.py; memory_vector with its optional extra,
agentic/vector_extra.py). Format sensitivity (format_sensitivity/) is outside every summary and Overall."""

from __future__ import annotations

NON_LIVE = ("simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple",
            "irrelevance")
LIVE = ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple", "live_irrelevance",
        "live_relevance")
SINGLE_TURN = NON_LIVE + LIVE
# Several user turns against stateful environments, steps per turn (multi_turn/).
MULTI_TURN = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")
# Agentic (the official AGENTIC_CATEGORY): one question answered over several steps with memory or web-search
# tools; judged on whether the final text names an expected answer (agentic/checker.py).
MEMORY = ("memory_kv", "memory_vector", "memory_rec_sum")
WEB_SEARCH = ("web_search_base", "web_search_no_snippet")
AGENTIC = MEMORY + WEB_SEARCH
# The official NON_SCORING_CATEGORY: 200 single-turn items under 26 prompt configurations (format_sensitivity/).
FORMAT_SENSITIVITY = "format_sensitivity"
CATEGORIES = SINGLE_TURN + MULTI_TURN + AGENTIC + (FORMAT_SENSITIVITY,)
# Every category can be run against an endpoint; memory_vector only with its optional extra (torch,
# sentence-transformers, faiss and the packaged weights: agentic/vector_extra.py). Without it, a run of every category
# leaves memory_vector out (Benchmark.unavailable_now) and a run naming it is refused with the pip command.
UPLOAD_ONLY: tuple[str, ...] = ()
VECTOR = "memory_vector"
# Categories without an answer file: judged on whether the output holds a call at all.
IRRELEVANCE = ("irrelevance", "live_irrelevance")
RELEVANCE = ("live_relevance",)
NO_ANSWER = IRRELEVANCE + RELEVANCE
# The language the official decoder and checker use per category (every other one: Python).
LANGUAGES = {"simple_java": "java", "simple_javascript": "javascript"}
PYTHON = "python"


def category_of_id(sample_id: str) -> str | None:
    """The category of an official id: everything before its last `_` (`live_simple_12-3-0` -> live_simple,
    `multi_turn_base_7` -> multi_turn_base), in a format sensitivity id the part before its first `:`
    (`format_sensitivity_3:ret_fmt=…:simple_python_58` -> format_sensitivity, as the official
    extract_test_category_from_id reads it); None when that is not one of CATEGORIES."""
    category = sample_id.split(":", 1)[0].rpartition("_")[0]
    return category if category in CATEGORIES else None


def is_multi_turn(category: str) -> bool:
    return category in MULTI_TURN


def is_agentic(category: str) -> bool:
    return category in AGENTIC


def is_format_sensitivity(category: str) -> bool:
    return category == FORMAT_SENSITIVITY


def is_memory(category: str) -> bool:
    return category in MEMORY


def is_web_search(category: str) -> bool:
    return category in WEB_SEARCH


def language_of(category: str) -> str:
    """python, java or javascript: how the category's outputs are decoded and its values typed."""
    return LANGUAGES.get(category, PYTHON)
