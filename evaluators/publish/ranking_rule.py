"""Whether a run's settings make it the experiment of the published rows, so that it ranks beside them:
one rule, read by the board for a finished run (evaluators/publish/board_table.apart_reason, which adds
what only a finished run shows: its request errors) and by the Evaluate form before Start
(evaluators/service/rank_forecast.py).

The settings are a run's stored config (RunConfig.to_json()): a run stored by an older version, with
fields this one does not know, is read as well.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evaluators.core.registry import Benchmark
from evaluators.engine.settings import SAMPLING_FIELDS

OFFICIAL_STYLE = "official"


def unranked_reasons(config: Mapping[str, Any], benchmark: Benchmark) -> list[str]:
    """Why a run with `config` is not the published experiment (the reference's requests and sampling, text
    prompts, every item of every subset of the benchmark's data), in plain words; empty when it is."""
    model = config.get("model") or {}
    reasons = []
    mode = model.get("request_mode", "prompt")
    if mode != benchmark.request_modes[0]:
        reasons.append("native tools" if mode == "tools" else "tools described in the prompt")
    if benchmark.request_profile is not None:
        if model.get("prompt_style") != OFFICIAL_STYLE:
            reasons.append("own prompts")
        changed = [name for name in SAMPLING_FIELDS if model.get(name) is not None]
        if changed:
            reasons.append("own sampling (" + ", ".join(f"{name} {model[name]}" for name in changed) + ")")
    if model.get("extra_body"):
        reasons.append("extra request fields")
    if config.get("limit"):
        reasons.append(f"partial: {config['limit']} per subset")
    chosen = benchmark.expand_subsets(list(config.get("subsets") or []) or None)
    if len(chosen) < len(benchmark.subsets):
        reasons.append(f"partial: {len(chosen)} of {len(benchmark.subsets)} subsets")
    if benchmark.unranked_reasons is not None:
        reasons.extend(benchmark.unranked_reasons(config))
    if on_example_data(config, benchmark):
        reasons.append("example data: the few items of the built-in example, never on the board")
    return reasons


def on_example_data(config: Mapping[str, Any], benchmark: Benchmark) -> bool:
    """Whether a run (evaluated or uploaded; `config` its RunConfig as stored) read the benchmark's built-in
    example (see core.registry.Example) instead of its data: that folder, here or in another install of this
    package (a store copied from elsewhere). Such a run never joins the board, and is never pushed to the hub;
    a copy pulled from the hub carries no data folder, so an older version's pushed example runs are not
    recognised here once pulled."""
    folder, example = config.get("data_dir"), benchmark.example
    if not isinstance(folder, str) or not folder or example is None:
        return False
    given = Path(folder)
    return given.resolve() == example.folder.resolve() or given.parts[-4:] == example.folder.parts[-4:]
