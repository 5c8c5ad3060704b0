"""Explore's queries as a visitor asks them: each checks first that the visitor may see the run's outputs
(evaluators/service/ownership.py), then reads the store (evaluators/service/explore.py)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from evaluators.core.errors import ToolboardError
from evaluators.engine.redact import redacted
from evaluators.engine.store import RunRow
from evaluators.service.app_services import AppServices
from evaluators.service.explore import compare_runs, filter_choices, run_label, sample_detail, sample_table
from evaluators.service.ownership import check_may_see_outputs, find_run, may_see_outputs


def visible_runs(services: AppServices, owner: str | None = None) -> list[RunRow]:
    """Finished runs whose outputs `owner` may see, newest first."""
    return [run for run in services.store.list_runs()
            if run.status == "finished" and may_see_outputs(services.public, run, owner)]


def check_outputs_visible(services: AppServices, run_id: str, owner: str | None) -> None:
    """A clear refusal when there is no such run, or its outputs are not `owner`'s to see (the same words for
    both on a public deployment: ownership.run_not_found)."""
    check_may_see_outputs(services.public, find_run(services.store, run_id, services.public), owner)


def samples(services: AppServices, run_id: str, mode: str, subset: str | None, verdict: str | None,
            error_type: str | None, owner: str | None) -> pd.DataFrame:
    """A run's scored samples, filtered (None: any); request errors with the server's paths taken out (one can
    name a server file, e.g. the local model's log)."""
    check_outputs_visible(services, run_id, owner)
    frame = sample_table(services.store, run_id, mode, subset=subset, verdict=verdict, error_type=error_type)
    frame["request_error"] = frame["request_error"].map(lambda text: services.redact_paths(text) if text else text)
    return frame


def sample_filters(services: AppServices, run_id: str, mode: str, owner: str | None) -> dict[str, list[str]]:
    """The subsets and error types of a run's verdicts, each led by "all"."""
    check_outputs_visible(services, run_id, owner)
    return filter_choices(services.store, run_id, mode)


def run_benchmark(services: AppServices, run_id: str | None) -> str:
    """The benchmark a run is of, to name its subsets and error types; "" for no run or an unknown one (its
    table then says why)."""
    if not run_id:
        return ""
    try:
        return services.store.get_run(run_id).benchmark
    except ToolboardError:
        return ""


def sample(services: AppServices, run_id: str, sample_id: str, mode: str, owner: str | None) -> dict[str, Any]:
    """One sample's evidence (evaluators.service.explore.sample_detail); the run's request profile without
    server paths (its note can name the server's data folder)."""
    check_outputs_visible(services, run_id, owner)
    detail = sample_detail(services.store, run_id, sample_id, mode)
    if "request_profile" in detail:
        detail = {**detail, "request_profile": redacted(detail["request_profile"], services.redact_paths)}
    return detail


def flipped_samples(services: AppServices, run_a: str, run_b: str, mode: str, owner: str | None) -> pd.DataFrame:
    """Samples whose verdict differs between two runs `owner` may see; each run's column named by its model,
    short id and day (explore.run_label), "first: " and "second: " before them when the two read the same."""
    check_outputs_visible(services, run_a, owner)
    check_outputs_visible(services, run_b, owner)
    frame = compare_runs(services.store, run_a, run_b, mode)
    labels = [run_label(services.store.get_run(run_id)) for run_id in (run_a, run_b)]
    if labels[0] == labels[1]:
        labels = [f"first: {labels[0]}", f"second: {labels[1]}"]
    return frame.set_axis([*frame.columns[:3], *labels], axis=1)
