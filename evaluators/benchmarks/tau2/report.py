"""The benchmark's `score` and `report` hooks.

`score(sample, prediction, mode)`: every trial of the task's prediction scored by evaluator.py (the official
reward under `EvaluationType.ALL`), the environment parts from the environment host's EnvCheck. SampleScore:
`metadata = {"trials": [official RewardInfo dump, ...], "verdicts": [{trial, termination_reason, reward, rule,
failed_rules, unscored_reason, replay_problems}, ...], "user_model", "judge_model"}`, `metrics = {"reward": mean
reward over the trials with one, "successes", "trials"(, "unscored")(, the agent's tokens: "agent_prompt_tokens",
"agent_completion_tokens" over the "priced_trials" whose answers reported usage)}`, `correct` = every trial
succeeded.
A prediction that is missing or whose requests failed is not scored (`missing_prediction` / `request_error`).

`report(samples, scores, mode, language, subsets)`: per domain `pass_1` … `pass_k` (fractions; k up to the trials
run, pass_1..pass_4 always present, None beyond the trials run), `avg_reward`, `n` = tasks, the termination
reasons' counts (`termination_<reason>`), the failed rules' counts over trials (`failed_<rule>`) and the agent's
tokens summed over the tasks (the board prices them per trajectory: board.AGENT_TOKENS); the summary is
the mean of each figure over the domains run; `intervals` holds their 95% intervals (pass^k as a mean over tasks,
avg_reward over trials, the summary as a mean of the domains' estimates). A domain holding a trial without a reward (a task needing the NL
judge when none was given) has pass^k None, and the summary's `notes` says why.

Modes: "official" and "strict" give the same numbers. The official evaluator has no documented bug to correct
(its quirks — the judge's empty results passing, compare_args None meaning the call's own keys — are the
benchmark's definition), so strict mode changes nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from evaluators.benchmarks.tau2.board import AGENT_TOKENS, PRICED_TRIALS
from evaluators.benchmarks.tau2.data import DEFAULT_SPLIT, DOMAINS, Task, parse_task
from evaluators.benchmarks.tau2.env_checks import official_env_check, source_root_of
from evaluators.benchmarks.tau2.evaluator import (
    INFRASTRUCTURE_ERROR,
    INFRASTRUCTURE_RULE,
    PRODUCT_RULE,
    EnvChecker,
    TrialVerdict,
    dialogue_checks,
    evaluate_trial,
)
from evaluators.benchmarks.tau2.metrics import TrialRow, domain_metrics, is_successful
from evaluators.benchmarks.tau2.official_notes import OfficialNotes, read_notes
from evaluators.benchmarks.tau2.source import Source
from evaluators.benchmarks.tau2.uploads import EXCLUDED_TRIALS
from evaluators.core.declarations import DIALOGUE_CHECKS
from evaluators.core.errors import DataError
from evaluators.core.intervals import Estimate, bounds, mean_estimate, mean_of_estimates
from evaluators.core.types import Prediction, Report, Sample, SampleScore, SubsetResult

BENCHMARK = "tau2"
DECLARED_K = 4  # pass_1 … pass_4: the official leaderboard's columns
MISSING = "missing_prediction"
REQUEST_ERROR = "request_error"
NO_TRIALS = "no_trials_recorded"
# An uploaded trial's own reward (uploads.py), and whether ours differs from it (by more than the official success
# tolerance): reported per task and trial, counted per domain.
RECORDED_REWARD = "recorded_reward"
RECORDED_DIFFERS = "recorded_reward_differs"
SUCCESS_TOLERANCE = 1e-6
NOTES = "notes"


def _not_scored(sample: Sample, error_type: str, detail: str) -> SampleScore:
    return SampleScore(sample.id, sample.subset, correct=False, error_type=error_type, rule=error_type, detail=detail,
                       metrics={"successes": 0.0, "trials": 0.0})


def _verdict_row(trial: Mapping[str, Any], verdict: TrialVerdict) -> dict[str, Any]:
    row = {"trial": trial.get("trial"), "termination_reason": trial.get("termination_reason"),
           "reward": verdict.reward, "rule": verdict.rule, "failed_rules": verdict.failed_rules,
           "unscored_reason": verdict.unscored_reason, "replay_problems": verdict.replay_problems}
    recorded = trial.get(RECORDED_REWARD)  # an upload's own figure: compared, never trusted
    if isinstance(recorded, int | float) and not isinstance(recorded, bool):
        row[RECORDED_REWARD] = recorded
        row[RECORDED_DIFFERS] = verdict.reward is None or abs(float(recorded) - verdict.reward) > SUCCESS_TOLERANCE
    return row


def recorded_differences(scores: list[SampleScore]) -> list[str]:
    """Per task and trial, where an uploaded file's recorded reward differs from the reward scored here."""
    found = []
    for result in scores:
        for row in (result.metadata or {}).get("verdicts") or []:
            if row.get(RECORDED_DIFFERS):
                ours = "none" if row["reward"] is None else f"{row['reward']:g}"
                found.append(f"{result.sample_id} trial {row['trial']}: recorded {row[RECORDED_REWARD]:g}, ours {ours}")
    return found


def _detail(verdicts: list[dict[str, Any]], successes: int, scored: int) -> str:
    parts = [f"{successes}/{scored} scored trial(s) succeeded"]
    for row in verdicts:
        if row["reward"] is None:
            parts.append(f"trial {row['trial']}: no reward ({row['unscored_reason']})")
        elif not is_successful(row["reward"]):
            parts.append(f"trial {row['trial']}: {row['termination_reason']}, reward {row['reward']:g} "
                         f"({', '.join(row['failed_rules']) or row['rule']})")
    return "; ".join(parts)


def notes_of(sample: Sample) -> OfficialNotes:
    """The official notes of the folder the sample's environments come from (it holds every pinned file)."""
    return read_notes(Source(source_root_of(sample)))


def score_with(sample: Sample, prediction: Prediction | None, mode: str = "official",
               env_check: EnvChecker | None = None, notes: OfficialNotes | None = None) -> SampleScore:
    """`score` with the environment check and the official notes given (tests inject their own); None: the
    environment host's check and the notes of the sample's pinned source."""
    if prediction is None:
        return _not_scored(sample, MISSING, "no prediction for this task")
    if prediction.error is not None:
        return _not_scored(sample, REQUEST_ERROR, f"the requests failed: {prediction.error}")
    extra = prediction.extra or {}
    trials = extra.get("trials")
    if not isinstance(trials, list) or not trials:
        return _not_scored(sample, NO_TRIALS, "the prediction holds no trials")
    domain = str(sample.input.get("domain") or sample.subset)
    record = sample.gold
    env_check = env_check or partial(official_env_check, source_root=source_root_of(sample))
    try:
        task: Task = parse_task(domain, record, f"task {sample.id}", 0)
    except DataError as exc:
        raise DataError(f"{sample.id}: the task record cannot be scored: {exc}") from None
    notes = notes or notes_of(sample)
    verdicts = [(trial, evaluate_trial(domain, record, trial, env_check, task, notes=notes)) for trial in trials]
    rows = [_verdict_row(trial, verdict) for trial, verdict in verdicts]
    # An upload's simulations that ended in infrastructure_error (uploads.py keeps them apart, without messages):
    # listed so the report counts them; the metrics leave them out.
    rows += [{"trial": item.get("trial"), "termination_reason": INFRASTRUCTURE_ERROR, "reward": None,
              "rule": INFRASTRUCTURE_RULE, "failed_rules": [], "unscored_reason": item.get("error"),
              "replay_problems": []}
             for item in extra.get(EXCLUDED_TRIALS) or [] if isinstance(item, Mapping)]
    # Infrastructure errors (uploads only) are left out of the task's figures, as the official metrics do.
    counted = [verdict for trial, verdict in verdicts if trial.get("termination_reason") != "infrastructure_error"]
    rewards = [reward for verdict in counted if (reward := verdict.reward) is not None]
    successes = sum(is_successful(reward) for reward in rewards)
    unscored = len(counted) - len(rewards)
    correct = bool(counted) and not unscored and successes == len(counted)
    metrics: dict[str, float] = {"successes": float(successes), "trials": float(len(counted))}
    if rewards:
        metrics["reward"] = sum(rewards) / len(rewards)
    if unscored:
        metrics["unscored"] = float(unscored)
    metrics |= agent_tokens(trials)
    deciding = next((verdict for verdict in counted if verdict.reward is None), None) or next(
        (verdict for verdict in counted if verdict.reward is not None and not is_successful(verdict.reward)), None)
    return SampleScore(
        sample.id, sample.subset, correct=correct,
        error_type=None if correct or deciding is None else deciding.rule,
        rule=PRODUCT_RULE if deciding is None else deciding.rule,
        detail=_detail(rows, successes, len(rewards)),
        decoded=prediction.output,
        metrics=metrics,
        metadata={"trials": [verdict.reward_info for _, verdict in verdicts], "verdicts": rows,
                  DIALOGUE_CHECKS: [dialogue_checks(verdict) for _, verdict in verdicts],
                  "user_model": extra.get("user_model"), "judge_model": extra.get("judge_model")},
    )


def agent_tokens(trials: list[Any]) -> dict[str, float]:
    """The agent's tokens over the trials whose answers reported usage (what litellm prices for the official
    `agent_cost`), with how many such trials; nothing when none did (an endpoint reporting no usage)."""
    totals = dict.fromkeys((*AGENT_TOKENS, PRICED_TRIALS), 0.0)
    for trial in trials:
        usage = ((trial.get("usage") or {}).get("agent") or {}) if isinstance(trial, Mapping) else {}
        counts = [n for name in ("prompt_tokens", "completion_tokens")
                  if isinstance(n := usage.get(name), int) and not isinstance(n, bool) and n >= 0]
        if trial.get("termination_reason") == INFRASTRUCTURE_ERROR or len(counts) != 2 or sum(counts) == 0:
            continue
        for name, count in zip(AGENT_TOKENS, counts):
            totals[name] += count
        totals[PRICED_TRIALS] += 1
    return totals if totals[PRICED_TRIALS] else {}


def score(sample: Sample, prediction: Prediction | None, mode: str = "official") -> SampleScore:
    """The task's verdict over its trials; "official" and "strict" score alike (see the module docstring)."""
    return score_with(sample, prediction, mode)


def _trial_rows(result: SampleScore) -> list[TrialRow]:
    verdicts = (result.metadata or {}).get("verdicts") or []
    return [TrialRow(result.sample_id, row.get("reward"), str(row.get("termination_reason"))) for row in verdicts]


def _mean(values: list[float | None]) -> float | None:
    if not values or any(value is None for value in values):
        return None
    present = [value for value in values if value is not None]
    return sum(present) / len(present)


@dataclass
class DomainFigures:
    """One domain's report metrics, its notes, and the estimates (value, variance) behind pass_k and avg_reward."""

    metrics: dict[str, float | None]
    notes: list[str]
    estimates: dict[str, Estimate | None]


def domain_figures(scores: list[SampleScore], requested_k: int | None) -> DomainFigures:
    """One domain's metrics (pass_k, avg_reward, termination and failed-rule counts), notes and estimates: pass^k
    is a mean over tasks (each task's C(c,k)/C(n,k)), avg_reward a mean over trials (core/intervals.mean_estimate)."""
    rows = [row for result in scores for row in _trial_rows(result)]
    absent = sum(1 for result in scores if not _trial_rows(result))
    figures = domain_metrics(rows, requested_k, absent_tasks=absent)
    metrics: dict[str, float | None] = {}
    estimates: dict[str, Estimate | None] = {}
    for k in range(1, max(DECLARED_K, figures.max_k) + 1):
        metrics[f"pass_{k}"] = figures.pass_hat_ks.get(k)
        estimates[f"pass_{k}"] = (mean_estimate(figures.task_pass_hat_ks[k])
                                  if figures.pass_hat_ks.get(k) is not None else None)
    metrics["avg_reward"] = figures.avg_reward
    estimates["avg_reward"] = mean_estimate(figures.rewards)
    terminations = Counter(row.termination_reason for row in rows)
    failed = Counter(rule for result in scores for verdict in (result.metadata or {}).get("verdicts") or []
                     for rule in verdict.get("failed_rules") or [])
    for reason, count in sorted(terminations.items()):
        metrics[f"termination_{reason}"] = float(count)
    for rule, count in sorted(failed.items()):
        metrics[f"failed_{rule}"] = float(count)
    if figures.unscored:
        metrics["unscored_trials"] = float(figures.unscored)
    priced = [found for result in scores if (found := result.metrics or {}).get(PRICED_TRIALS)]
    if priced:
        for name in (*AGENT_TOKENS, PRICED_TRIALS):
            metrics[name] = float(sum(found[name] for found in priced))
    differing = recorded_differences(scores)
    if any(RECORDED_REWARD in row for result in scores for row in (result.metadata or {}).get("verdicts") or []):
        metrics[RECORDED_DIFFERS] = float(len(differing))
    return DomainFigures(metrics, figures.notes, estimates)


def summarize(samples: list[Sample], scores: list[SampleScore], mode: str = "official", language: str | None = None,
              subsets: list[str] | None = None) -> Report:
    """Per-domain pass^k and average reward, and their means over the domains run."""
    by_domain: dict[str, list[SampleScore]] = {}
    for result in scores:
        by_domain.setdefault(result.subset, []).append(result)
    counts = [len(_trial_rows(result)) for result in scores]
    requested_k = max(counts, default=0) or None
    report_subsets: dict[str, SubsetResult] = {}
    domain_estimates: dict[str, dict[str, Estimate | None]] = {}
    notes: list[str] = []
    for domain in [*DOMAINS, *sorted(set(by_domain) - set(DOMAINS))]:
        if domain not in by_domain:
            continue
        figures = domain_figures(by_domain[domain], requested_k)
        report_subsets[domain] = SubsetResult(len(by_domain[domain]), figures.metrics)
        domain_estimates[domain] = figures.estimates
        notes.extend(f"{domain}: {note}" for note in figures.notes)
    summary: dict[str, Any] = {}
    summary_intervals: dict[str, list[float]] = {}
    pass_keys = sorted({key for sub in report_subsets.values() for key in sub.metrics if key.startswith("pass_")},
                       key=lambda key: int(key.removeprefix("pass_")))
    for key in [*pass_keys, "avg_reward"]:
        summary[key] = _mean([sub.metrics.get(key) for sub in report_subsets.values()])
        parts = [estimates.get(key) for estimates in domain_estimates.values()]
        present = [part for part in parts if part is not None]
        if summary[key] is not None and len(present) == len(parts) and (found := bounds(mean_of_estimates(present))):
            summary_intervals[key] = found
    intervals = {"summary": summary_intervals, "subsets": {
        domain: {key: found for key, estimate in estimates.items() if (found := bounds(estimate)) is not None}
        for domain, estimates in domain_estimates.items()}}
    if notes:
        summary[NOTES] = "; ".join(notes)
    differing = recorded_differences(scores)
    if differing:
        summary[RECORDED_DIFFERS] = "; ".join(differing)
    for label in ("user_model", "judge_model"):  # the board shows who played the user beside the figures
        named = sorted({str(model) for result in scores if (model := (result.metadata or {}).get(label))})
        if named:
            summary[label] = ", ".join(named)
    splits = sorted({str(sample.input.get("split") or DEFAULT_SPLIT) for sample in samples})
    if splits and splits != [DEFAULT_SPLIT]:  # not the board's tasks: said beside the figures
        summary["split"] = ", ".join(splits)
    errors = Counter(result.error_type for result in scores if not result.correct and result.error_type)
    return Report(
        benchmark=BENCHMARK,
        mode=mode,
        subsets=report_subsets,
        summary=summary,
        errors=dict(sorted(errors.items())),
        language=language,
        missing=[result.sample_id for result in scores if result.error_type == MISSING],
        unavailable=[name for name in subsets or () if name not in by_domain],
        intervals=intervals,
    )


report = summarize
