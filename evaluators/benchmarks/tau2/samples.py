"""The benchmark's samples: one per task of the run's split (the `split` option; by default `base`, the board's text
track: airline 50, retail 114, telecom 114), in the official order. A sample holds the task as its file holds it (the gold the evaluator reads, the
record the environment worker validates with the official model) and where the pinned source is (the worker loads
the official code and databases from there)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from evaluators.benchmarks.tau2 import data
from evaluators.benchmarks.tau2.source import open_source
from evaluators.core.types import Sample

SOURCE_ROOT = "source_root"
SPLIT_OPTION = "split"
# The official split file's names: base = train + test in every domain; small and full are telecom's only.
SPLIT_CHOICES = (data.DEFAULT_SPLIT, "test", "train", "small", "full")


def sample_id(domain: str, task_id: str) -> str:
    return f"{domain}_{task_id}"


def task_sample(task: data.Task, source_root: Path, split: str = data.DEFAULT_SPLIT) -> Sample:
    return Sample(id=sample_id(task.domain, task.id), subset=task.domain,
                  input={"domain": task.domain, "task_id": task.id, "split": split, SOURCE_ROOT: str(source_root)},
                  gold=task.record)


def load(data_dir: str | Path | None = None, language: str | None = None, subsets: list[str] | None = None,
         limit: int | None = None, options: Mapping[str, str] | None = None) -> list[Sample]:
    """The tasks of the chosen domains (all three by default) in the run's split (`options["split"]`, default the
    board's `base`), each domain's first `limit`."""
    split = (options or {}).get(SPLIT_OPTION) or data.DEFAULT_SPLIT
    source = open_source(data_dir)
    tasks = data.load(subsets or None, split, limit, source=source)
    return [task_sample(task, source.root, split) for task in tasks]


def subset_of_id(sample_id: str) -> str | None:
    """The domain a sample id starts with (task ids hold underscores, brackets and bars of their own)."""
    domain, _, rest = sample_id.partition("_")
    return domain if domain in data.DOMAINS and rest else None
