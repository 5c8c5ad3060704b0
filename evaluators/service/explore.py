"""A run's evidence, sample by sample: verdicts, the request as sent, the raw output, the decoded calls,
the gold answer, the rule that decided and the evidence kinds the benchmark declares; and which samples
flipped between two runs. A sample's page
reads its one stored row (the store keeps the gold answer and request with it); only rows stored before
that reload the dataset."""

from __future__ import annotations

import functools
import json
from dataclasses import asdict, is_dataclass
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from evaluators.core.display_names import benchmark_title, subset_title
from evaluators.core.errors import ToolboardError
from evaluators.core.limits import MAX_MODEL_NAME_CHARS, echoed, shown_text
from evaluators.core.registry import MODES, get_benchmark
from evaluators.core.types import Prediction, Sample, SampleScore
from evaluators.engine.settings import RunConfig
from evaluators.engine.store import REBUILT_WHEN_SHOWN, UPLOADED_PROMPT_NOTE, RunRow, Store

# The flipped-samples table before any comparison (and after a refused one): its runs' columns named by role.
COMPARE_COLUMNS = ("sample_id", "subset", "change", "first run", "second run")
SAMPLE_COLUMNS = ("sample_id", "subset", "verdict", "error_type", "rule", "latency_s", "request_error")
VERDICTS = ("right", "wrong", "request error")
ALL = "all"  # a filter's choice that keeps every sample (as does an empty value, for API callers)


def checked_mode(mode: str) -> str:
    """`mode` when it is a scoring mode, else an error (an unknown one would find no verdicts: "0 samples")."""
    if mode not in MODES:
        raise ToolboardError(f"unknown scoring mode {echoed(mode)!r}: expected one of {', '.join(MODES)}")
    return mode


@functools.lru_cache(maxsize=8)
def _samples_for(config_json: str) -> dict[str, Sample]:
    """The samples a run was scored on (loaded once per run configuration)."""
    config = RunConfig.from_json(json.loads(config_json))
    benchmark = get_benchmark(config.benchmark)
    subsets = benchmark.expand_subsets(list(config.subsets) or None)
    samples = benchmark.load(config.data_dir, language=config.language, subsets=subsets, limit=config.limit,
                             options=benchmark.sample_options(config.options))
    return {sample.id: sample for sample in samples}


def run_samples(store: Store, run_id: str) -> dict[str, Sample]:
    run = store.get_run(run_id)
    return _samples_for(json.dumps(run.config, sort_keys=True))


def _verdict(correct: bool, request_error: str | None) -> str:
    if request_error:
        return "request error"
    return "right" if correct else "wrong"


def sample_table(
    store: Store,
    run_id: str,
    mode: str = "official",
    *,
    subset: str | None = None,
    verdict: str | None = None,
    error_type: str | None = None,
) -> pd.DataFrame:
    """One row per scored sample of the run, filtered."""
    checked_mode(mode)
    store.get_run(run_id)  # an unknown run is an error, not an empty table
    predictions = store.load_predictions(run_id)
    rows = []
    for score in store.load_scores(run_id, mode):
        prediction = predictions.get(score.sample_id)
        request_error = prediction.error if prediction else None
        rows.append({
            "sample_id": score.sample_id, "subset": score.subset, "verdict": _verdict(score.correct, request_error),
            "error_type": score.error_type or "", "rule": score.rule or "",
            "latency_s": round(prediction.latency, 3) if prediction and prediction.latency is not None else None,
            "request_error": request_error or "",
        })
    frame = pd.DataFrame(rows, columns=list(SAMPLE_COLUMNS))
    for column, wanted in (("subset", subset), ("verdict", verdict), ("error_type", error_type)):
        if wanted and wanted != ALL:
            frame = frame[frame[column] == wanted]
    return frame.reset_index(drop=True)


def filter_choices(store: Store, run_id: str, mode: str = "official") -> dict[str, list[str]]:
    """The subsets and error types found in a run's stored verdicts in `mode` (one query), sorted, each
    list led by "all": what the sample filters offer once the run is chosen."""
    scores = store.load_scores(run_id, checked_mode(mode))
    subsets = sorted({score.subset for score in scores if score.subset})
    error_types = sorted({score.error_type for score in scores if score.error_type})
    return {"subset": [ALL, *subsets], "error_type": [ALL, *error_types]}


def kept_choice(value: str | None, choices: list[str]) -> str:
    """The current filter value when the new choices still hold it, else "all"."""
    return value if value in choices else ALL


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return value


def _prompt_of(request: Any) -> tuple[list[dict[str, Any]], str]:
    """The prompt messages of a stored request (see store.Evidence), and what the page says about them."""
    if not isinstance(request, dict):
        return [], ""
    body = request.get("body")
    messages = body.get("messages") if isinstance(body, dict) else None
    messages = [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
    count = request.get("requests")
    if request.get("not_sent") or request.get("truncated") or request.get("unstorable") or request.get("shortened"):
        note = str(request.get("note") or "")
    elif count == 0:
        note = "no request was sent for this sample"
    elif isinstance(count, int) and count > 1:
        note = f"the last of {count} requests sent for this sample (it holds the conversation so far)"
    else:
        note = ""
    return messages, note


def _rebuilt_prompt(run: RunRow, sample: Sample) -> tuple[list[dict[str, Any]], str]:
    """The prompt built again from the sample (rows stored without their request)."""
    benchmark = get_benchmark(run.benchmark)
    if benchmark.build_request is None:
        return [], ""
    model = run.config.get("model", {})
    options = {} if benchmark.request_profile is None else {"prompt_style": model.get("prompt_style") or "toolboard"}
    try:
        messages = benchmark.build_request(sample, mode=model.get("request_mode", "prompt"), **options).messages
    except Exception as exc:  # noqa: BLE001 - some items (agent rollouts) have no single prompt
        return [], f"no single prompt for this item ({exc})"
    if run.source == "upload" and messages:
        return messages, UPLOADED_PROMPT_NOTE
    return messages, ""


def _upload_prompt(store: Store, run: RunRow, sample_id: str) -> tuple[list[dict[str, Any]], str]:
    """The prompt this tool would send for an uploaded prediction, built from the run's data now (the upload kept
    a note, not the body); what the page says instead when the data cannot be read any more."""
    try:
        sample = run_samples(store, run.id).get(sample_id)
    except (ToolboardError, OSError):  # its message may name server folders: the page says what it means
        return [], f"{UPLOADED_PROMPT_NOTE}: it is built from the data when shown, and the run's data cannot be read here"
    if sample is None:
        return [], f"{UPLOADED_PROMPT_NOTE}: it is built from the data when shown, and the data no longer holds this item"
    messages, note = _rebuilt_prompt(run, sample)
    return messages, UPLOADED_PROMPT_NOTE if messages else f"uploaded predictions: {note}"


def sample_detail(store: Store, run_id: str, sample_id: str, mode: str = "official") -> dict[str, Any]:
    """Everything behind one verdict, from the sample's one stored row: its prediction, its verdict and its
    evidence (the gold answer, the request as sent, the benchmark's own evidence as its declarations show it,
    and every model call made for the sample as `events`). Rows stored before the evidence was kept fall back
    to reloading the dataset and rebuilding the prompt, and `prompt_note` says so. Model text is returned
    as data; the app escapes it."""
    run = store.get_run(run_id)
    stored = store.load_sample_evidence(run_id, sample_id, checked_mode(mode))
    prediction, score = stored.prediction, stored.score
    if stored.evidence_kept:
        subset, gold = stored.subset, stored.gold
        messages, prompt_note = _prompt_of(stored.request)
        if isinstance(stored.request, dict) and stored.request.get(REBUILT_WHEN_SHOWN):
            messages, prompt_note = _upload_prompt(store, run, sample_id)
    else:
        sample = run_samples(store, run_id).get(sample_id)
        if sample is None:
            raise ToolboardError(f"run {run_id} has no sample {sample_id!r}")
        subset = sample.subset
        gold = stored.gold if stored.gold_kept else _plain(sample.gold)
        messages, note = _prompt_of(stored.request) if stored.request_kept else _rebuilt_prompt(run, sample)
        if prediction is None:
            why = "no prediction stored for this sample"
        elif not stored.gold_kept and not stored.request_kept:
            why = "stored before evidence was kept"
        else:
            why = "stored without all its evidence"
        redone = [what for what, kept in (("prompt rebuilt", stored.request_kept), ("gold reloaded", stored.gold_kept))
                  if not kept]
        prompt_note = f"{why}: {', '.join(redone)}" + (f"; {note}" if note else "")
    return {
        "run_id": run_id,
        "benchmark": run.benchmark,
        "sample_id": sample_id,
        "subset": subset,
        "verdict": _verdict(score.correct, prediction.error if prediction else None) if score else "not scored",
        "error_type": score.error_type if score else None,
        "rule": score.rule if score else None,
        "detail": score.detail if score else "",
        "metrics": score.metrics if score else None,
        "prompt_messages": messages,
        "prompt_note": prompt_note,
        "request_as_sent": stored.request,
        "request_profile": run.config.get("request_profile"),
        "raw_output": prediction.output if prediction else None,
        "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in prediction.tool_calls or []] if prediction else [],
        "decoded": score.decoded if score else None,
        "evidence": sample_evidence(run.benchmark, prediction, score),
        "events": stored.events if isinstance(stored.events, list) else [],
        "request_error": prediction.error if prediction else None,
        "latency_s": prediction.latency if prediction else None,
        "gold": gold,
    }


def sample_evidence(benchmark_name: str, prediction: Prediction | None, score: SampleScore | None) -> list[dict[str, Any]]:
    """A sample's benchmark-specific evidence, as its benchmark declares it (EvidenceKind): each kind the sample
    has, in the declared order, then whatever else its prediction and score keep under keys not declared
    (shown as JSON under the key, so nothing kept is hidden). Each item: key, title, render, source, value."""
    kept = {"prediction": dict(prediction.extra or {}) if prediction else {},
            "score": dict(score.metadata or {}) if score else {}}
    found = []
    for kind in get_benchmark(benchmark_name).evidence:
        value = kind.value_in(kept["prediction"], kept["score"])
        kept[kind.source].pop(kind.key, None)
        if value is not None:
            found.append({"key": kind.key, "title": kind.title, "render": kind.render, "source": kind.source,
                          "value": value})
    for source, rest in kept.items():
        found += [{"key": key, "title": key, "render": "json", "source": source, "value": value}
                  for key, value in rest.items() if value is not None]
    return found


def run_label(run: RunRow) -> str:
    """How a person tells a run apart where it names a column: its model, the short end of its id (unique among
    runs started the same second) and the day it finished (or was created)."""
    day = datetime.fromtimestamp(run.finished_at or run.created_at, UTC).date().isoformat()
    return f"{shown_text(run.model, MAX_MODEL_NAME_CHARS)} · {run.id.rsplit('-', 1)[-1]} · {day}"


def compare_runs(store: Store, run_a: str, run_b: str, mode: str = "official") -> pd.DataFrame:
    """Samples whose verdict differs between two different runs of the same benchmark (and language); one column
    per run named by its id (the page names them by run_label)."""
    checked_mode(mode)
    if run_a == run_b:
        raise ToolboardError(f"both pickers hold run {echoed(run_a)}: choose two different runs to compare")
    first, second = store.get_run(run_a), store.get_run(run_b)
    if first.benchmark != second.benchmark or first.language != second.language:
        def named(run: RunRow) -> str:
            language = f" {subset_title(run.benchmark, run.language)}" if run.language else ""
            return f"{run.id} ({benchmark_title(run.benchmark)}{language})"

        raise ToolboardError(f"runs {named(first)} and {named(second)} are not on the same benchmark and language: "
                             "only runs of the same items can be compared")
    verdicts_a = {s.sample_id: s for s in store.load_scores(run_a, mode)}
    failed_a = store.prediction_states(run_a)
    failed_b = store.prediction_states(run_b)
    rows = []
    for score_b in store.load_scores(run_b, mode):
        score_a = verdicts_a.get(score_b.sample_id)
        if score_a is None or score_a.correct == score_b.correct:
            continue
        # A request that failed says nothing about the model: such flips are listed apart.
        failed = failed_a.get(score_b.sample_id) or failed_b.get(score_b.sample_id)
        rows.append({
            "sample_id": score_b.sample_id, "subset": score_b.subset,
            "change": "request error" if failed else ("fixed" if score_b.correct else "broken"),
            f"{run_a}": "right" if score_a.correct else (score_a.error_type or "wrong"),
            f"{run_b}": "right" if score_b.correct else (score_b.error_type or "wrong"),
        })
    return pd.DataFrame(rows, columns=["sample_id", "subset", "change", run_a, run_b])
