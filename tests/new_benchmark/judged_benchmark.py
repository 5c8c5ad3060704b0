"""TinyJudge (test only): a one-word answer, and a judge (a companion model role) that says whether it is
right and why. Its package declares a new evidence kind, the judge's rationale, and a second one its checker
makes; copied into a copy of the project as evaluators/benchmarks/tinyjudge/benchmark.py, nothing else changed."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evaluators.core.declarations import About, EvidenceKind, Metric, Role
from evaluators.core.errors import DataError
from evaluators.core.predictions import MatchSummary, match_rows, raise_on_errors, read_rows, text_prediction
from evaluators.core.registry import Benchmark
from evaluators.core.types import ChatRequest, Prediction, Report, Sample, SampleScore, SubsetResult

SUBSETS = ("easy",)
JUDGE = Role("judge", "Judge", "says whether the answer is right, and why", played_by_tested_model=True)


def load(data_dir: Any = None, language: str | None = None, subsets: Any = None, limit: int | None = None,
         options: Any = None) -> list[Sample]:
    if data_dir is None:
        raise DataError("TinyJudge reads a local folder only: give a data folder")
    items = json.loads((Path(data_dir) / "tinyjudge.json").read_text(encoding="utf-8"))
    return [Sample(f"easy_{index}", "easy", {"question": item["question"]}, item["answer"])
            for index, item in enumerate(items[:limit] if limit else items)]


def match_predictions(path: str | Path, samples: list[Sample]) -> tuple[dict[str, Prediction], MatchSummary]:
    return match_rows(read_rows(path), samples, lambda sample_id: False, text_prediction)


def read_predictions(path: str | Path, samples: list[Sample]) -> dict[str, Prediction]:
    predictions, summary = match_predictions(path, samples)
    raise_on_errors(summary, path)
    return predictions


def score(sample: Sample, prediction: Prediction | None, mode: str = "official") -> SampleScore:
    if prediction is None or prediction.error:
        return SampleScore(sample.id, sample.subset, False, "no_answer", "no_answer")
    rationale = str((prediction.extra or {}).get("rationale") or "")
    right = rationale.lower().startswith("yes")
    check = f"judge_says({rationale.split(':')[0]!r}) for {prediction.output!r} against {sample.gold!r}"
    return SampleScore(sample.id, sample.subset, right, None if right else "judged_wrong", "judge_verdict",
                       decoded=prediction.output, metadata={"check": check})


def report(samples: list[Sample], scores: list[SampleScore], mode: str = "official", language: str | None = None,
           subsets: list[str] | None = None) -> Report:
    accuracy = sum(s.correct for s in scores) / len(scores) if scores else None
    return Report("tinyjudge", mode, {"easy": SubsetResult(len(scores), {"accuracy": accuracy})}, {"accuracy": accuracy},
                  dict(Counter(s.error_type for s in scores if s.error_type)))


def build_request(sample: Sample, mode: str = "prompt") -> ChatRequest:
    return ChatRequest(messages=[{"role": "user", "content": f"Answer with one word: {sample.input['question']}"}])


def judge_request(sample: Sample, answer: str) -> ChatRequest:
    return ChatRequest(messages=[{"role": "user", "content": f"Judge: is {answer!r} right for "
                                  f"{sample.input['question']!r} (the gold is {sample.gold!r})? Say yes or no, then why."}])


async def solve(sample: Sample, clients: Mapping[str, Any], options: Mapping[str, Any]) -> Prediction:
    answer = await clients["model"].complete(build_request(sample))
    verdict = await clients["judge"].complete(judge_request(sample, answer.text or ""))
    return Prediction(sample.id, output=answer.text, latency=answer.latency, usage=answer.usage,
                      extra={"rationale": verdict.text})


BENCHMARK = Benchmark(
    name="tinyjudge",
    title="TinyJudge",
    description="TinyJudge (test only): one-word answers, judged by a model that says why.",
    about=About(measures="one-word answers judged by a model; **accuracy** = judged right.", licence="CC0"),
    subsets=SUBSETS,
    groups={"all": SUBSETS},
    metrics=(Metric("accuracy", "Accuracy"),),
    summary_metrics=(Metric("accuracy", "Accuracy"),),
    languages=(None,),
    data_version="tinyjudge-1",
    load=load,
    read_predictions=read_predictions,
    match_predictions=match_predictions,
    score=score,
    report=report,
    build_request=build_request,
    solve=solve,
    roles=(JUDGE,),
    evidence=(EvidenceKind("rationale", "Judge's rationale", "text", description="why the judge said right or wrong"),
              EvidenceKind("check", "How the verdict was read", "code", source="score")),
)
