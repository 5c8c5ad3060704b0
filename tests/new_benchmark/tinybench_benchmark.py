"""TinyBench (test only): answer a question with one word; exact match. Copied into a copy of the
project as evaluators/tinybench/benchmark.py."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evaluators.core.declarations import About, Metric, Option, Overview
from evaluators.core.errors import DataError
from evaluators.core.predictions import MatchSummary, match_rows, raise_on_errors, read_rows, text_prediction
from evaluators.core.registry import Benchmark
from evaluators.core.types import ChatRequest, Prediction, Report, Sample, SampleScore, SubsetResult

SUBSETS = ("easy", "hard")
STYLES = {"plain": "Answer with one word: {question}", "terse": "One word. {question}"}


def load(data_dir: Any = None, language: str | None = None, subsets: Any = None, limit: int | None = None,
         options: Any = None) -> list[Sample]:
    if data_dir is None:
        raise DataError("TinyBench reads a local folder only: give a data folder")
    items = json.loads((Path(data_dir) / "tinybench.json").read_text(encoding="utf-8"))
    samples: list[Sample] = []
    counts: Counter[str] = Counter()
    for item in items:
        subset = item["subset"]
        if (subsets and subset not in subsets) or (limit and counts[subset] >= limit):
            continue
        samples.append(Sample(f"{subset}_{counts[subset]}", subset, {"question": item["question"]}, item["answer"]))
        counts[subset] += 1
    return samples


def match_predictions(path: str | Path, samples: list[Sample]) -> tuple[dict[str, Prediction], MatchSummary]:
    loaded = {sample.subset for sample in samples}
    return match_rows(read_rows(path), samples, lambda i: i.split("_")[0] in SUBSETS and i.split("_")[0] not in loaded,
                      text_prediction)


def read_predictions(path: str | Path, samples: list[Sample]) -> dict[str, Prediction]:
    predictions, summary = match_predictions(path, samples)
    raise_on_errors(summary, path)
    return predictions


def score(sample: Sample, prediction: Prediction | None, mode: str = "official") -> SampleScore:
    if prediction is None:
        return SampleScore(sample.id, sample.subset, False, "missing_prediction", "no_prediction")
    if prediction.error:
        return SampleScore(sample.id, sample.subset, False, "request_error", "request_failed")
    answer = (prediction.output or "").strip().rstrip(".")
    right = answer.lower() == sample.gold.lower() if mode == "official" else answer == sample.gold
    return SampleScore(sample.id, sample.subset, right, None if right else "wrong_answer",
                       "official_case_blind" if mode == "official" else "exact", decoded=answer)


def report(samples: list[Sample], scores: list[SampleScore], mode: str = "official", language: str | None = None,
           subsets: list[str] | None = None) -> Report:
    by_subset: dict[str, list[SampleScore]] = {}
    for result in scores:
        by_subset.setdefault(result.subset, []).append(result)
    parts = {name: SubsetResult(len(got), {"accuracy": sum(s.correct for s in got) / len(got)})
             for name, got in by_subset.items()}
    errors = Counter(s.error_type for s in scores if s.error_type)
    return Report("tinybench", mode, parts, {"accuracy": sum(s.correct for s in scores) / len(scores) if scores else None},
                  dict(errors), missing=[s.sample_id for s in scores if s.error_type == "missing_prediction"])


def build_request(sample: Sample, mode: str = "prompt", language: str | None = None, style: str = "plain") -> ChatRequest:
    return ChatRequest(messages=[{"role": "user", "content": STYLES[style].format(**sample.input)}])


async def solve(sample: Sample, clients: Mapping[str, Any], options: Mapping[str, Any]) -> Prediction:
    result = await clients["model"].complete(build_request(sample, style=options["style"]))
    return Prediction(sample.id, output=result.text, latency=result.latency, usage=result.usage)


BENCHMARK = Benchmark(
    name="tinybench",
    title="TinyBench",
    description="TinyBench (test only): one-word answers, exact match.",
    about=About(measures="one-word answers to short questions; **accuracy** = exact match, case-blind.",
                paper="a test fixture", licence="CC0", citation="nobody", data="written by the test"),
    subsets=SUBSETS,
    groups={"all": SUBSETS},
    metrics=(Metric("accuracy", "Accuracy", "answers equal to the gold word"),),
    summary_metrics=(Metric("accuracy", "Accuracy", "answers equal to the gold word"),),
    languages=(None,),
    data_version="tiny-1",
    load=load,
    read_predictions=read_predictions,
    match_predictions=match_predictions,
    score=score,
    report=report,
    build_request=build_request,
    solve=solve,
    options=(Option("style", tuple(STYLES), "plain", "how the question is put"),),
    # Its accuracy over both subsets joins the overview across benchmarks (and its aggregate).
    overview=Overview("all", ("accuracy",), "accuracy"),
)
