"""τ²-bench on the board: its metrics (pass^1..pass^4, average reward, cost per domain and their means over the
three domains), its table laid out like taubench.com (an overall view and one view per domain, the pass^k columns,
the user simulator beside the numbers), its overview entry, titles, the evidence Explore shows, and which rows are
the ranked experiment (the same user simulator and task version as the published rows ranked; every other row is
kept apart, saying why)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evaluators.benchmarks.tau2.source import COMMIT
from evaluators.core.board_layout import TOKEN_USAGE, BoardLayout, per_subset_run_values
from evaluators.core.declarations import DIALOGUE_CHECKS, EvidenceKind, HubBenchmark, HubTask, Metric, Overview
from evaluators.core.leaderboard import normalised_model_name

BENCHMARK_NAME = "tau2"
DOMAINS = ("airline", "retail", "telecom")
OVERALL = "overall"
# taubench.com's order: Overall, Retail, Airline, Telecom.
VIEWS = (OVERALL, "retail", "airline", "telecom")
TITLES = {OVERALL: "Overall (mean of the 3 domains)", "airline": "Airline", "retail": "Retail", "telecom": "Telecom"}

PASS_K = tuple(f"pass_{k}" for k in range(1, 5))
AVG_REWARD = "avg_reward"
COST = "cost"
# A domain's agent tokens in a run's report (prompt, completion) and the trajectories they were counted over: what
# the board prices as COST for a run (at the model's list price in leaderboard_data/prices.json).
AGENT_TOKENS = ("agent_prompt_tokens", "agent_completion_tokens")
PRICED_TRIALS = "priced_trials"


def _pass_metric(k: int, over: str) -> Metric:
    # A mean over tasks of each task's C(c, k) / C(n, k): a share, but not of the view's items counted once (each
    # task weighs the same whatever its trials), so the board draws the interval the report keeps, not Wilson's.
    return Metric(f"pass_{k}", f"Pass^{k}", f"{over}: the chance that {k} trials of a task all succeed "
                  f"(per task C(c,{k})/C(n,{k}) over its n trials with c successes)", share_of_items=False)


# Per domain, as the official metrics compute them (metrics/agent_metrics.py).
METRICS = (
    *(_pass_metric(k, "mean over the domain's tasks") for k in range(1, 5)),
    Metric(AVG_REWARD, "Avg reward", "mean reward over every trajectory of the domain", share_of_items=False),
    Metric(COST, "Cost ($/trajectory)", "the agent's cost in USD per trajectory: published rows as submitted "
           "(litellm's prices); a run here, its agent tokens at the model's list price in prices.json (blank without "
           "one)", higher_is_better=False, kind="count", share_of_items=False),
)
# The overall view: each figure's mean over the three domains (taubench.com's Overall, there for pass^k only).
SUMMARY_METRICS = (
    *(_pass_metric(k, "mean over the three domains of the domain figure") for k in range(1, 5)),
    Metric(AVG_REWARD, "Avg reward", "mean over the three domains of each domain's mean reward", share_of_items=False),
    Metric(COST, "Cost ($/trajectory)", "a run here: the mean over the three domains of the agent's cost per "
           "trajectory (published rows have none: the site shows no overall cost)",
           higher_is_better=False, kind="count", share_of_items=False),
)

# Labels beside the numbers: rows that differ in them are different experiments.
USER_MODEL = "user_model"
REASONING_EFFORT = "reasoning_effort"
TAU2_VERSION = "tau2_version"
SUBMISSION_TYPE = "submission_type"
LABELS = (USER_MODEL, REASONING_EFFORT, TAU2_VERSION, SUBMISSION_TYPE)
# What a run here is: the pinned commit's tasks (its pyproject says 1.0.1), with the official scaffold.
RUN_VERSION = "1.0.1"
RUN_SUBMISSION_TYPE = "standard"

# The experiment the ranked published rows share (8 of the 26 submissions at the pinned commit: Sierra's, with
# gpt-5.2 as the user simulator on the 1.0.1 tasks, the standard scaffold). A row that differs in one of these is
# another experiment: kept apart, with the reason.
RANKED_USER_MODEL = "gpt-5.2"
RANKED_VERSION = "1.0.1"
# The official default NL-assertion judge (the evaluator's default model), which the ranked rows are taken to use.
OFFICIAL_JUDGE_MODEL = "gpt-4.1-2025-04-14"
RANKED_EXPERIMENT_TEXT = (f"ranked: the rows with user simulator {RANKED_USER_MODEL}, tau2 {RANKED_VERSION} and the "
                          "standard scaffold; every other row is kept apart with its reason (`apart_reason`)")
APART_REASON = "apart_reason"
# The roles a run declares for the two other models (the benchmark's Role names).
USER_ROLE = "user"
JUDGE_ROLE = "judge"

# How the overall figures are made (leaderboard_data/tau2.json's `overall`).
OVERALL_RULE = (
    "overall (computed here, as taubench.com computes its Overall in web/leaderboard/src/components/Leaderboard.jsx, "
    "which the reference archive lacks; read at the repository's commit 03ac466): only for a submission with pass^1 "
    "in all three domains (retail, airline, telecom); then each pass^k is the unweighted mean of the domains that "
    "report it. Cost is not averaged (the site shows no overall cost). A run here: its report's summary, the mean "
    "of the three domains, filled only when all three ran."
)
PUBLISHED_COLUMNS = {
    **{key: f"results.<domain>.{key} / 100 (percent in the file); overall: see `overall`" for key in PASS_K},
    COST: "results.<domain>.cost: USD per trajectory, the agent's side only (null in most files)",
    USER_MODEL: "methodology.user_simulator (the model that played the user; null when the file does not say)",
    REASONING_EFFORT: "reasoning_effort of the tested model (null when the file does not say)",
    TAU2_VERSION: "methodology.tau2_bench_version as written ('0.1.3', 'v0.1.3', 'original tau-bench', '1.0.1')",
    SUBMISSION_TYPE: "submission_type: 'standard' (the default scaffold) or 'custom' (null when absent; the site "
                     "reads absent as standard)",
}
PUBLISHED_CAVEATS = (
    "The user simulator is part of the experiment: only rows with the same user model (and task version) are "
    f"comparable. The ranked rows are the 8 with user simulator {RANKED_USER_MODEL} on tau2 {RANKED_VERSION} "
    "(standard scaffold); 7 rows used gpt-4.1-2025-04-14 on the 0.1.3 tasks, and 11 state no user model or one of "
    "their own choosing. Those are kept apart with the reason.",
    "What the fields do not say, from the methodology notes: the ranked rows' user simulator ran with "
    "reasoning_effort low, 4 trials, seed 300 in most but 123 in gemini-3-flash_sierra_2026-03-02; "
    "gemini-3-pro_sierra_2026-03-02 treated infrastructure errors as failures (reward 0; 3 airline, 20 retail, 2 "
    "telecom), the other rows do not say. So the user model alone does not pin the user, and the rows are not "
    "all computed the same way.",
    "Version 0.1.3 (also written v0.1.3) and 'original tau-bench' rows ran the tasks before the 1.0 task fixes in "
    "airline and retail (the site's 'Legacy (v1)' rows, not comparable to current ones). Which rows the site shows "
    "as legacy comes from its manifest.json, which the archive lacks.",
    "Rows are kept with what they have: 9 submissions report only pass^1; o3 and the three 'original tau-bench' "
    "rows have no telecom and RAFT-30B-A3B reports retail only (so none of these has an overall row); "
    "qwen3-max_qwen_2024_09_23 reports pass^1, pass^2 and pass^4 but not pass^3.",
    "cost is given in 7 of the 26 submissions: the agent's cost per trajectory in USD from litellm's price table; "
    "it is not a share of items and lower is better. Two give 0 (qwen3-max_qwen_2025-10-30, "
    "raft-30b-a3b_neu_2026-04-29: litellm had no price for the model), which the site shows as no cost (it reads "
    "`cost || null`) and this table leaves out, so 5 submissions have a cost here.",
    "GPT-5.2 has two rows (reasoning effort high and none); the `reasoning_effort` column tells them apart.",
    "request_mode: a standard submission ran the official LLM agent, which sends the tools as function "
    "definitions ('native tools'); a custom scaffold's requests are not known (null).",
)


def _domains_ran(report: Mapping[str, Any]) -> bool:
    return all(domain in (report.get("subsets") or {}) for domain in DOMAINS)


def run_values(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A run's report as board rows: a view per domain it ran, and overall (the summary) only when it ran all
    three (as the site shows an overall only for all three), each with the user model and the run's version."""
    views = per_subset_run_values(report)
    summary = views.pop("all", None)
    priced = {domain: _token_part(views[domain]) for domain in DOMAINS if domain in views}
    for domain, part in priced.items():
        if part is not None:
            views[domain][TOKEN_USAGE] = [part]
    if summary is not None and _domains_ran(report):
        views[OVERALL] = summary
        if all(part is not None for part in priced.values()):
            views[OVERALL][TOKEN_USAGE] = list(priced.values())
    given = report.get("summary") or {}
    labels = {USER_MODEL: report.get(USER_MODEL, given.get(USER_MODEL)),
              REASONING_EFFORT: report.get(REASONING_EFFORT, given.get(REASONING_EFFORT)),
              TAU2_VERSION: RUN_VERSION, SUBMISSION_TYPE: RUN_SUBMISSION_TYPE}
    for values in views.values():
        values.update({key: value for key, value in labels.items() if value is not None})
    return views


def _token_part(values: Mapping[str, Any]) -> tuple[int, int, int] | None:
    """A domain's agent tokens and the trajectories they cover, as the board prices them; None when not counted."""
    found = [int(n) for name in (*AGENT_TOKENS, PRICED_TRIALS)
             if isinstance(n := values.get(name), int | float) and not isinstance(n, bool)]
    if len(found) != 3 or not found[2]:
        return None
    return found[0], found[1], found[2]


def published_values(row: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A published row of leaderboard_data/tau2.json: its view, figures and labels."""
    return row.get("view", OVERALL), {**dict(row.get("summary") or {}),
                                       **{key: row[key] for key in LABELS if row.get(key) is not None}}


LAYOUT = BoardLayout(
    view_label="Domain", views=VIEWS, columns=PASS_K, run_values=run_values, published_values=published_values,
    detail_columns=(AVG_REWARD, COST), text_columns=LABELS, sort_by=PASS_K[0], priced_column=COST,
)

# Overall pass^1 is the site's default view and order; pass^4 beside it says how reliably.
OVERVIEW = Overview(OVERALL, (PASS_K[0], PASS_K[3]), PASS_K[0],
                    why="the mean of the three domains, as taubench.com's Overall (rows with all three domains only)")

# The Hub's τ²-bench benchmark dataset (its eval.yaml, proposed in the dataset's pull request 1, names one task per
# domain, scored by pass@1). A ranked run enters its pass^1 per domain there; the notes say the task set, which is
# not the one that eval.yaml describes (airline 43, retail 112, telecom 114 tasks).
HUB = HubBenchmark(
    dataset_id="HuggingFaceH4/tau2-bench-data",
    tasks=tuple(HubTask(f"tau2_bench_{domain}", domain, PASS_K[0]) for domain in DOMAINS),
    file_stem="tau2_bench",
    setup=f"pass^1 over 4 trials per task, tau2-bench {RUN_VERSION} text track at commit {COMMIT[:7]}, base split "
          "(airline 50, retail 114, telecom 114 tasks), the official agent and user prompts",
    tasks_from="https://huggingface.co/datasets/HuggingFaceH4/tau2-bench-data/blob/refs%2Fpr%2F1/eval.yaml "
               "(read 2026-12-06)",
)

# Where Explore finds a task's evidence (Prediction.extra / SampleScore.metadata keys of the contracts).
TRIALS = "trials"
JUDGE_MODEL = "judge_model"
EVIDENCE = (
    EvidenceKind(TRIALS, "Trials: the agent, the simulated user and the tools", "dialogues", "prediction",
                 "each trial's messages in order (the agent's, the user's, each tool call with who made it and its "
                 "result), why it ended, and inside it each reward component with why it failed and where the end "
                 "database differs from the gold actions'"),
    EvidenceKind(DIALOGUE_CHECKS, "Checks per trial", "json", "score",
                 "per trial: the reward, each rule met or not with why, the database differences (shown inside each "
                 "trial)"),
    EvidenceKind(TRIALS, "Reward info per trial (the official fields)", "json", "score",
                 "per trial the official reward info: reward, its basis and breakdown, the DB check, env assertions, "
                 "gold actions called, information communicated, NL assertions met"),
    EvidenceKind(USER_MODEL, "User simulator", "text", "prediction", "the model that played the user"),
    EvidenceKind(JUDGE_MODEL, "NL assertion judge", "text", "prediction",
                 "the model that judged the NL assertions (none: tasks that need it get no reward)"),
)


def same_model(name: Any, reference: str) -> bool:
    return isinstance(name, str) and normalised_model_name(name) == normalised_model_name(reference)


def published_apart_reasons(labels: Mapping[str, Any], domains: Sequence[str]) -> list[str]:
    """Why a published row is not the ranked experiment (empty when it is): another or no stated user model,
    another task version, a custom scaffold; and, for the overall view's sake, a domain missing."""
    reasons = []
    user = labels.get(USER_MODEL)
    if user is None:
        reasons.append("user simulator not stated")
    elif not same_model(user, RANKED_USER_MODEL):
        reasons.append(f"user simulator {user} (the ranked rows': {RANKED_USER_MODEL})")
    version = labels.get(TAU2_VERSION)
    if version is None:
        reasons.append("tau2 version not stated")
    elif version.lstrip("v") != RANKED_VERSION:
        legacy = " (tasks before the 1.0 task fixes)" if version.lstrip("v").startswith("0.") or "original" in version \
            else ""
        reasons.append(f"tau2 {version}{legacy}")
    if labels.get(SUBMISSION_TYPE) == "custom":
        reasons.append("custom scaffold")
    missing = [domain for domain in DOMAINS if domain not in domains]
    if missing:
        reasons.append("no " + " or ".join(missing))
    return reasons


def user_simulator_reasons(config: Mapping[str, Any]) -> list[str]:
    """Why a run with these settings (a stored RunConfig) is not the ranked experiment for its user simulator: not
    the ranked rows' (none given: the model under test would play it, which a run refuses)."""
    roles = config.get("roles") or {}
    user = (roles.get(USER_ROLE) or {}).get("model")
    tested = (config.get("model") or {}).get("model")
    if user is None:
        return [f"user simulator: the model under test ({tested}); the ranked rows': {RANKED_USER_MODEL}"]
    if not same_model(user, RANKED_USER_MODEL):
        return [f"user simulator {user} (the ranked rows': {RANKED_USER_MODEL})"]
    return []
