"""τ²-bench test fixtures shared by the test files: a folder holding every pinned file of the official repository
(data, prompt texts and the environments' code), filled once from the reference archive (../shared/reference) and
the inspect-evals wheel (the two files the archive lacks), cached outside the project; skipped with the reason
where either is out of reach."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from evaluators.benchmarks.tau2 import source
from evaluators.core.downloads import DownloadFailed

PROJECT = Path(__file__).resolve().parent.parent
REFERENCE_ARCHIVE = PROJECT.parent / "shared" / "reference" / "tau2-bench-a2c0247.tar.gz"


def _cache_root() -> Path:
    configured = os.environ.get("TOOLBOARD_TEST_CACHE")
    base = Path(configured) if configured else Path.home() / ".cache" / "toolboard-tests"
    return base / f"tau2-source-{source.COMMIT[:7]}"


def full_source_root() -> Path:
    """The folder, filled on first use (each file written whole and renamed into place, so two test processes may
    fill it at once)."""
    folder = _cache_root()
    if not source._cache_complete(folder):
        if not REFERENCE_ARCHIVE.is_file():
            pytest.skip(f"the τ²-bench reference archive not found at {REFERENCE_ARCHIVE}: place ../shared beside "
                        "the project")
        folder.parent.mkdir(parents=True, exist_ok=True)
        downloads = Path(tempfile.mkdtemp(dir=folder.parent))
        try:
            try:
                wheel = source.download_wheel(downloads)
            except DownloadFailed as exc:
                pytest.skip(f"the package index is unreachable (the inspect-evals wheel is needed): {exc}")
            source.fill_cache(folder, REFERENCE_ARCHIVE, wheel)
        finally:
            shutil.rmtree(downloads, ignore_errors=True)
    return folder


# ---- scripted participants that play each task's gold path ----------------------------------------------------

AGENT, USER = "agent-model", "user-model"
DONE = "All done."
CASE = "My case is "
CASE_NAMED = re.compile(re.escape(CASE) + r"(\S+)")


class GoldPlayer:
    """Agent, user and judge on one scripted server (the model name tells the agent and the user; anything else
    is the judge), each answering from what its own request shows: the user opens with the task's sample id (found
    from its scenario), then stops once the agent is done; the agent calls the task's gold assistant actions one by
    one, then says the facts the task wants communicated; the judge finds every assertion met."""

    def __init__(self, samples: list[Any]):
        from evaluators.benchmarks.tau2 import data
        from evaluators.benchmarks.tau2.prompts import scenario_text

        self.by_id = {sample.id: sample for sample in samples}
        self.by_scenario = {scenario_text(data.parse_task(s.subset, s.gold, "test", 0).user_scenario).strip(): s.id
                            for s in samples}

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        return {AGENT: self.agent, USER: self.user}.get(body["model"], self.judge)(body)

    def opening(self, sample_id: str) -> str:
        return f"Hello. {CASE}{sample_id}"

    def user(self, body: dict[str, Any]) -> dict[str, Any]:
        system, history = body["messages"][0]["content"], body["messages"][1:]
        if not any(message["role"] == "assistant" for message in history):  # the user's own lines are "assistant"
            scenario = system.split("<scenario>", 1)[1].rsplit("</scenario>", 1)[0].strip()
            return {"content": self.opening(self.by_scenario[scenario])}
        said = history[-1].get("content") or ""
        return {"content": "###STOP###" if said.startswith(DONE) else "Please go on."}

    def agent(self, body: dict[str, Any]) -> dict[str, Any]:
        opening = next(m["content"] for m in body["messages"] if m["role"] == "user")
        found = CASE_NAMED.search(opening)
        assert found is not None, "the agent's request holds no opening"
        criteria = self.by_id[found.group(1)].gold.get("evaluation_criteria") or {}
        actions = [a for a in criteria.get("actions") or [] if a.get("requestor", "assistant") == "assistant"]
        done = sum(message["role"] == "tool" for message in body["messages"])
        if done < len(actions):
            action = actions[done]
            return {"tool_calls": [{"id": f"call_{done}", "type": "function",
                                    "function": {"name": action["name"], "arguments": json.dumps(action["arguments"])}}]}
        return {"content": " ".join([DONE, *(criteria.get("communicate_info") or [])])}

    def judge(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"content": json.dumps({"results": [{"expectedOutcome": "as asked", "reasoning": "it was done",
                                                    "metExpectation": True}]})}
