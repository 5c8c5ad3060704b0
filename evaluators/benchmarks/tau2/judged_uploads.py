"""The judge's work on uploaded trajectories (`score --role judge=…` and the Upload tab with a judge), done before
the pure scoring: every trial whose task needs its natural-language assertions judged, and that ended as the
official evaluator evaluates (the user's or the agent's stop), is judged as a run's trial is (the official judge's
request), and the judgement kept in the trial (`nl_judgement`). The recorded rewards of the file are never trusted.
A judge request that fails stops the scoring with the sample named."""

from __future__ import annotations

import asyncio
from typing import Any

from evaluators.benchmarks.tau2.rollout import domain_setting, judge_trial, sample_source
from evaluators.benchmarks.tau2.run_rules import JUDGE_ROLE, ROLES
from evaluators.core.errors import ToolboardError
from evaluators.core.types import Prediction, Sample
from evaluators.engine.client import ChatClient, RequestFailed, RetryPolicy
from evaluators.engine.endpoint_guard import check_endpoint_allowed, key_from_environment
from evaluators.engine.settings import Endpoint, role_settings

JUDGE = next(role for role in ROLES if role.name == JUDGE_ROLE)
CONCURRENCY = 8


async def judge_uploaded(samples: list[Sample], predictions: dict[str, Prediction], judge: Any) -> int:
    """Judge every trial that needs it with the `judge` client; the number of trials judged."""
    todo = [(sample, predictions[sample.id]) for sample in samples
            if sample.id in predictions and not predictions[sample.id].error]
    settings: dict[str, Any] = {}
    judged = 0

    async def one(sample: Sample, prediction: Prediction) -> None:
        nonlocal judged
        domain = sample.subset
        if domain not in settings:
            settings[domain] = domain_setting(sample_source(sample, {}), domain)
        trials = list((prediction.extra or {}).get("trials") or [])
        for index, trial in enumerate(trials):
            if trial.get("nl_judgement") is not None:
                continue
            try:
                judgement = await judge_trial(sample.gold, settings[domain], trial, judge)
            except RequestFailed as exc:
                raise ToolboardError(f"{sample.id}, trial {trial.get('trial', index)}: the judge failed: {exc}") from None
            if judgement is not None:
                trials[index] = {**trial, "nl_judgement": judgement}
                judged += 1
        prediction.extra = {**(prediction.extra or {}), "trials": trials, "judge_model": judge.settings.model}

    await asyncio.gather(*(one(sample, prediction) for sample, prediction in todo))
    return judged


def prepare_uploaded(samples: list[Sample], predictions: dict[str, Prediction], roles: dict[str, Endpoint]) -> int:
    """The pre-scoring step of an upload: the judge's verdicts (none without a judge: those trials get no reward).
    Responses are cached in the store like any request."""
    from evaluators.engine.store import Store

    if JUDGE_ROLE not in roles:
        return 0
    settings = role_settings(JUDGE, roles[JUDGE_ROLE])
    check_endpoint_allowed(settings.base_url)
    store = Store()

    async def go() -> int:
        client = ChatClient(settings, api_key=key_from_environment(settings.api_key_env), store=store,
                            retry=RetryPolicy(), concurrency=CONCURRENCY, role=JUDGE_ROLE)
        try:
            return await judge_uploaded(samples, predictions, client)
        finally:
            await client.close()

    try:
        return asyncio.run(go())
    finally:
        store.close()
