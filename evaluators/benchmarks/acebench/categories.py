"""ACEBench's 17 categories, their groups and the leaderboard's sub-columns."""

from __future__ import annotations

ATOM = (
    "normal_atom_bool",
    "normal_atom_enum",
    "normal_atom_number",
    "normal_atom_list",
    "normal_atom_object_short",
    "normal_atom_object_deep",
)
SINGLE_TURN = ("normal_single_turn_single_function", "normal_single_turn_parallel_function")
MULTI_TURN = ("normal_multi_turn_user_switch", "normal_multi_turn_user_adjust")
SIMILAR_API = ("normal_similar_api",)
PREFERENCE = ("normal_preference",)
NORMAL = SINGLE_TURN + MULTI_TURN + SIMILAR_API + PREFERENCE + ATOM
SPECIAL = ("special_incomplete", "special_error_param", "special_irrelevant")
AGENT = ("agent_multi_turn", "agent_multi_step")
CATEGORIES = NORMAL + SPECIAL + AGENT

GROUPS: dict[str, tuple[str, ...]] = {
    "normal": NORMAL,
    "special": SPECIAL,
    "agent": AGENT,
    "atom": ATOM,
    "single_turn": SINGLE_TURN,
    "multi_turn": MULTI_TURN,
    "all": CATEGORIES,
}

LANGUAGES = ("en", "zh")

# The leaderboard site's sub-columns of the normal group.
SUB_COLUMNS: dict[str, tuple[str, ...]] = {
    "atom": ATOM,
    "single": SINGLE_TURN,
    "multi": MULTI_TURN,
    "api": SIMILAR_API,
    "pref": PREFERENCE,
}

# What a person reads for each category, group and view: the names the ACEBench paper (arXiv 2501.12851)
# and the leaderboard site give them.
TITLES: dict[str, str] = {
    "normal_atom_bool": "Atom: Bool",
    "normal_atom_enum": "Atom: Enum",
    "normal_atom_number": "Atom: Number",
    "normal_atom_list": "Atom: List",
    "normal_atom_object_short": "Atom: Object (short)",
    "normal_atom_object_deep": "Atom: Object (deep)",
    "normal_single_turn_single_function": "Single-turn: single function",
    "normal_single_turn_parallel_function": "Single-turn: parallel functions",
    "normal_multi_turn_user_switch": "Multi-turn: user switch",
    "normal_multi_turn_user_adjust": "Multi-turn: user adjust",
    "normal_similar_api": "Normal: similar API",
    "normal_preference": "Normal: preference",
    "special_incomplete": "Special: incomplete",
    "special_error_param": "Special: error parameter",
    "special_irrelevant": "Special: irrelevant",
    "agent_multi_turn": "Agent: multi-turn",
    "agent_multi_step": "Agent: multi-step",
    "normal": "Normal",
    "special": "Special",
    "agent": "Agent",
    "atom": "Atom",
    "single_turn": "Single-turn",
    "multi_turn": "Multi-turn",
    "all": "All categories",
    "en": "English",
    "zh": "Chinese",
    "combined": "English + Chinese",
}

# Weights of the overall score in the official evaluation helper (they add up to 1.0001).
OVERALL_WEIGHTS = {"normal": 0.578, "special": 0.2676, "agent": 0.1545}


def is_multi_turn(category: str) -> bool:
    return category.startswith("normal_multi_turn")


def is_special(category: str) -> bool:
    return category.startswith("special")


def is_agent(category: str) -> bool:
    return category.startswith("agent")


def category_of_id(sample_id: str) -> str | None:
    """`normal_multi_turn_user_adjust_3_1` -> `normal_multi_turn_user_adjust`; None if unknown."""
    for category in sorted(CATEGORIES, key=len, reverse=True):
        if sample_id.startswith(category + "_"):
            return category
    return None
