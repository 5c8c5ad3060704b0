"""Before Start: would the run the form (or an API caller) asks for be ranked beside the published rows,
and if not, why? The settings are built as build_run_request builds them (run_request.run_settings) and
read by the board's own rule (publish/ranking_rule.py): nothing is looked up, no endpoint is called.

One thing only the run itself settles: a benchmark's "auto" prompts are the official ones when the
official prompt files are found with the data; the forecast counts them official and says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from evaluators.core.errors import ToolboardError
from evaluators.core.registry import get_benchmark
from evaluators.publish.ranking_rule import OFFICIAL_STYLE, unranked_reasons
from evaluators.service.run_request import RunPolicy, run_settings

AUTO_NOTE = ("prompts on auto: the official ones when their files are found with the data; without them, own prompts "
             "(not ranked)")


@dataclass(frozen=True)
class RankForecast:
    """`reasons` why the run would not be ranked (none: it would be); `problem`: a setting the run would be
    refused for (then nothing is said of ranking); `note`: what only the run settles."""

    reasons: tuple[str, ...] = ()
    problem: str = ""
    note: str = ""

    @property
    def ranked(self) -> bool:
        return not self.problem and not self.reasons

    def line(self) -> str:
        """One plain line for the form."""
        if self.problem:
            return f"⚠️ This run would be refused: {self.problem}"
        if self.reasons:
            return "Not ranked (shown apart from the ranking): " + "; ".join(self.reasons) + "."
        return "Ranked beside the published rows: the official experiment." + (f" {self.note[0].upper()}{self.note[1:]}."
                                                                                if self.note else "")


def rank_forecast(raw: Mapping[str, Any], policy: RunPolicy) -> RankForecast:
    """Whether the run `raw` asks for (as build_run_request reads it) would be ranked; see RankForecast."""
    try:
        config = run_settings(raw, policy)
    except ToolboardError as exc:
        return RankForecast(problem=str(exc))
    benchmark = get_benchmark(config.benchmark)
    problem = benchmark.run_problem(config) if benchmark.run_problem is not None else None
    if problem:
        return RankForecast(problem=problem)
    note = ""
    if benchmark.request_profile is not None and config.model.prompt_style is None:
        config = replace(config, model=replace(config.model, prompt_style=OFFICIAL_STYLE))
        note = AUTO_NOTE
    return RankForecast(reasons=tuple(unranked_reasons(config.to_json(), benchmark)), note=note)
