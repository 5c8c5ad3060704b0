"""Replaying agent messages through an item's environment, without a model: for debugging a
rollout and for checking the environment against the reference."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from evaluators.benchmarks.acebench.agent.calls import official_multi_turn_routing
from evaluators.benchmarks.acebench.agent.env import AgentEnvironment
from evaluators.benchmarks.acebench.agent.scenarios import default_states
from evaluators.benchmarks.acebench.categories import AGENT
from evaluators.core.errors import DataError
from evaluators.core.jsonl import decode_utf8, iter_json_lines
from evaluators.core.types import Sample


def environment_for(sample: Sample) -> AgentEnvironment:
    """A fresh environment for an agent item, with the default state found next to its data."""
    language = sample.meta.get("language", "en")
    data_dir = sample.meta.get("data_dir")
    if not data_dir:
        raise DataError(f"{sample.id}: the sample does not say where its data came from (meta['data_dir'])")
    defaults = default_states(Path(data_dir), language)
    return AgentEnvironment(defaults, sample.input["involved_classes"], sample.input["initial_config"], language)


def replay_messages(sample: Sample, messages: list[str]) -> AgentEnvironment:
    """Run agent messages as the item's driver would: multi_step executes every message;
    multi_turn executes those routed to execution and passes the rest to the user (skipped here)."""
    env = environment_for(sample)
    for message in messages:
        if sample.subset == "agent_multi_step":
            env.execute_multi_step(message)
        elif official_multi_turn_routing(message):
            env.execute_multi_turn(message)
    return env


def read_calls_file(path: Path) -> Iterator[tuple[int, str, list[str]]]:
    """(line, item id, messages) for each line `{"id": ..., "calls": [...]}` of a JSON Lines file."""
    if not path.is_file():
        raise DataError("file not found", path)
    for line, row in iter_json_lines(decode_utf8(path.read_bytes(), path), path):
        if not isinstance(row, dict):
            raise DataError(f"expected a JSON object, got {type(row).__name__}", path, line)
        if not isinstance(row.get("id"), str):
            raise DataError("missing or non-string field 'id'", path, line)
        calls = row.get("calls")
        if not isinstance(calls, list) or not all(isinstance(c, str) for c in calls):
            raise DataError("field 'calls' must be a list of strings (agent messages)", path, line)
        yield line, row["id"], calls


def replay_file(samples: list[Sample], path: Path, out: TextIO) -> int:
    """Print one `{"id", "state"}` JSON line per input line; returns the number of lines replayed."""
    by_id = {s.id: s for s in samples if s.subset in AGENT}
    count = 0
    for line, item_id, calls in read_calls_file(path):
        sample = by_id.get(item_id)
        if sample is None:
            raise DataError(f"unknown agent item id {item_id!r} (expected agent_multi_turn_N or agent_multi_step_N)", path, line)
        state: Any = replay_messages(sample, calls).saved_state()
        out.write(json.dumps({"id": item_id, "state": state}, ensure_ascii=False) + "\n")
        count += 1
    return count
