"""What a τ²-bench run needs and how it differs from the published experiment: its roles (the user simulator, the
judge of natural-language assertions), its options (trials), the request profile recorded with it, what refuses
it before it starts, and why it would not be ranked.

The published text-track rows were made with 4 trials per task, the official judge model (fixed in the official
code, not a setting there) and one user simulator each; a row is comparable with another only when their user
simulators are the same, which the board shows in a column of its own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaluators.benchmarks.tau2.board import JUDGE_ROLE, OFFICIAL_JUDGE_MODEL, USER_ROLE, same_model, user_simulator_reasons
from evaluators.benchmarks.tau2.data import DEFAULT_SPLIT
from evaluators.benchmarks.tau2.samples import SPLIT_CHOICES, SPLIT_OPTION
from evaluators.benchmarks.tau2.source import COMMIT, REPOSITORY
from evaluators.core.declarations import Option, Role
from evaluators.core.errors import ToolboardError
from evaluators.core.hooks import RunSettings
from evaluators.core.types import RequestProfile

TRIALS_OPTION = "trials"
# The domain whose tasks need the judge (only retail's reward bases name NL assertions with assertions given).
JUDGED_DOMAIN = "retail"
BOARD_TRIALS = 4  # what the board asks of a submission (pass^1..4)
TRIAL_CHOICES = tuple(str(k) for k in range(1, 9))
# The official agent and user sampling (config.py: temperature 0.0) plus the trial's seed, which both receive.
OFFICIAL_SAMPLING: dict[str, Any] = {"temperature": 0.0}
TRIAL_SEEDS_NOTE = "seed: one per trial from random.seed(300) (626729, 373753, 361454, 1567, …), sent by agent and user"

ROLES = (
    Role(USER_ROLE, "User simulator",
         "plays the customer from the task's scenario and the official user guidelines (the published rows name "
         "theirs: gpt-5.2 or gpt-4.1-2025-04-14); rows are comparable only with the same user simulator",
         fallback="the run is refused (the model under test never plays the user)", temperature=0.0),
    Role(JUDGE_ROLE, "Assertion judge",
         f"judges the natural-language assertions of the tasks whose reward needs them (40 of retail's 114 base "
         f"tasks); the official judge is {OFFICIAL_JUDGE_MODEL} at temperature 0",
         fallback="those tasks get no reward, their domain no pass^k, and the run is not ranked", temperature=0.0,
         used_when_scoring_files=True),
)
OPTIONS = (
    Option(TRIALS_OPTION, TRIAL_CHOICES, str(BOARD_TRIALS),
           "how many times each task is played; pass^k is reported for k up to it (the board asks for 4)"),
    Option(SPLIT_OPTION, SPLIT_CHOICES, DEFAULT_SPLIT,
           "the official task split: base (the board's; airline 50, retail 114, telecom 114 tasks) is train + test; "
           "small (20) and full (2,285) exist for telecom only", selects_samples=True),
)
NO_USER = (f"τ²-bench needs a user simulator: give one with --role {USER_ROLE}=URL,MODEL[,KEY_ENV] (the Evaluate "
           "form's User simulator box); the published rows used gpt-5.2 or gpt-4.1-2025-04-14")
DIFFERENCES = (
    "an answer the official code cannot read (tool-call arguments that are not a JSON object, an empty message) ends "
    "its trajectory as agent_error or user_error with reward 0; the official runner re-runs the whole simulation "
    "and, after 3 retries, records an infrastructure error left out of pass^k",
    "a judge answer that is not bare JSON fails the trajectory's assertions (reward 0); the official code re-runs "
    "the simulation",
    "request bodies are those of the official agent through an OpenAI-compatible endpoint for a model name litellm "
    "does not rewrite (for gpt-5* and o* names litellm drops temperature and renames max_tokens)",
)


def trials_of(options: Mapping[str, Any]) -> int:
    """The trials a run plays per task (its option, else the board's 4)."""
    return int(options.get(TRIALS_OPTION) or BOARD_TRIALS)


def run_problem(config: RunSettings) -> str | None:
    """Why the run would be refused, from its settings alone: no user simulator."""
    return None if USER_ROLE in config.roles else NO_USER


def request_profile(config: RunSettings) -> RequestProfile:
    """The requests a run sends (the official agent's, user simulator's and judge's) and where they differ from the
    official runner's; refuses a run without a user simulator."""
    problem = run_problem(config)
    if problem:
        raise ToolboardError(problem)
    model = config.model
    sampling = {"agent": model.sampling_for(OFFICIAL_SAMPLING), "user": dict(OFFICIAL_SAMPLING)}
    differences = list(DIFFERENCES)
    judge = config.roles.get(JUDGE_ROLE)
    judged = not config.subsets or JUDGED_DOMAIN in config.subsets
    if judge is not None:
        sampling["judge"] = dict(OFFICIAL_SAMPLING)
        if judge.model != OFFICIAL_JUDGE_MODEL:
            differences.append(f"the judge is {judge.model} (the official judge is {OFFICIAL_JUDGE_MODEL})")
    note = f"{TRIAL_SEEDS_NOTE}; user simulator {config.roles[USER_ROLE].model}"
    if judge is None and judged:
        note += ("; no judge: tasks whose reward needs natural-language assertions get no reward, so their domain "
                 "reports no pass^k and the run is not ranked")
    return RequestProfile(prompt_style="official", source=f"{REPOSITORY} at {COMMIT[:7]}", sampling=sampling,
                          differences=tuple(differences), note=note)


def unranked_reasons(config: Mapping[str, Any]) -> list[str]:
    """Why a stored run is not the ranked experiment, for reasons of this benchmark's own: another user simulator
    than the ranked rows', fewer or more trials than the board's 4, no judge (when a domain that needs one ran),
    another judge than the official one."""
    roles = config.get("roles") or {}
    options = config.get("options") or {}
    reasons = user_simulator_reasons(config)
    try:
        trials = trials_of(options)
    except (TypeError, ValueError):
        trials = 0
    if trials != BOARD_TRIALS:
        reasons.append(f"{trials or options.get(TRIALS_OPTION)!s} trials per task, not the board's {BOARD_TRIALS}")
    split = options.get(SPLIT_OPTION) or DEFAULT_SPLIT
    if split != DEFAULT_SPLIT:
        reasons.append(f"the {split} split, not the board's {DEFAULT_SPLIT}")
    judge = roles.get(JUDGE_ROLE)
    subsets = list(config.get("subsets") or [])
    if not isinstance(judge, Mapping):
        if not subsets or JUDGED_DOMAIN in subsets:
            reasons.append("no NL judge: tasks with NL assertions get no reward")
    elif not same_model(str(judge.get("model")), OFFICIAL_JUDGE_MODEL):
        reasons.append(f"NL judge {judge.get('model')} (official: {OFFICIAL_JUDGE_MODEL})")
    return reasons
