"""Uploaded predictions files: check them against the benchmark, score them (both modes), and only
when the user asks, store them as a run that joins the leaderboard. A bad file stores nothing."""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluators import __version__
from evaluators.core.environment import declared_number
from evaluators.core.errors import DataError, ToolboardError
from evaluators.core.limits import (
    MAX_FILE_NAME_CHARS,
    MAX_MODEL_NAME_CHARS,
    MAX_NOTES_CHARS,
    TextTooLongError,
    UnprintableTextError,
    visitor_text,
)
from evaluators.core.predictions import MAX_LISTED_ERRORS, MatchSummary, ParsedPredictions, parse_predictions
from evaluators.core.registry import MODES, Benchmark, get_benchmark
from evaluators.core.selection import resolve_language
from evaluators.core.types import Prediction, Report, Sample, SampleScore
from evaluators.engine.scoring import score_and_report
from evaluators.engine.settings import ModelSettings, RunConfig
from evaluators.engine.store import Store
from evaluators.publish.board_table import on_example_data, upload_preview
from evaluators.service.quota import Admission

DEFAULT_MAX_UPLOAD_BYTES = int(declared_number("max_upload_mb") * 1024 * 1024)

UPLOAD_BASE_URL = "upload"
# A visitor's daily upload quota is checked and their upload's row created under this lock, so two adds at once
# never both take the last slot.
_ADDING = threading.Lock()


@dataclass
class Submission:
    """A checked (and, when clean, scored) predictions file, not stored yet."""

    benchmark: Benchmark
    language: str | None
    file_name: str
    data_dir: str | None
    digest: str
    samples: list[Sample]
    predictions: dict[str, Prediction]
    summary: MatchSummary
    subsets: list[str]
    scores: dict[str, list[SampleScore]] = field(default_factory=dict)
    reports: dict[str, Report] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.summary.errors and bool(self.predictions)

    @property
    def on_example_data(self) -> bool:
        """Scored against the benchmark's built-in example: stored, it stays off the board (board_table)."""
        return on_example_data({"data_dir": self.data_dir}, self.benchmark)

    def board_preview(self) -> str:
        """How its row will read on the board once added (before anything is stored): never ranked, and why."""
        report = self.reports.get("official")
        return upload_preview(report.to_json(), self.benchmark) if report is not None else ""

    def validation(self) -> dict[str, Any]:
        """What the file held, measured against the benchmark: shown before anything is scored."""
        summary = self.summary
        return {
            "ok": self.ok,
            "lines_read": summary.lines_read,
            "matched": summary.matched,
            "unknown": len(summary.unknown),
            "duplicate": len(summary.duplicates),
            "missing": len(summary.missing),
            "other_subsets": summary.other_subsets,
            "problems": len(summary.errors),
            "first_errors": summary.errors[:MAX_LISTED_ERRORS],
            "notes": summary.notes[:MAX_LISTED_ERRORS],
            "benchmark": self.benchmark.name,
            "language": self.language,
            "subsets": self.subsets,
            "example_data": self.on_example_data,
        }


def check_upload_size(path: Path, max_bytes: int = DEFAULT_MAX_UPLOAD_BYTES) -> None:
    size = path.stat().st_size
    if size > max_bytes:
        raise ToolboardError(f"{path.name} is {size / 1e6:.1f} MB; uploads are limited to {max_bytes / 1e6:.0f} MB")
    if size == 0:
        raise ToolboardError(f"{path.name} is empty")


@dataclass(frozen=True)
class ReadUpload:
    """A predictions file as read once for checking: its base name, its digest and its parsed rows (unreadable
    lines among them). Kept instead of the file, so it can be checked again against other data."""

    name: str
    digest: str
    parsed: ParsedPredictions

    @property
    def held_bytes(self) -> int:
        """Roughly the memory its parsed rows take."""
        return self.parsed.parsed_bytes


def read_upload(path: str | Path, max_bytes: int = DEFAULT_MAX_UPLOAD_BYTES) -> ReadUpload:
    """The file read once (its name's length and its size checked first); a file that cannot be read as a whole
    (too large, empty, a damaged zip, an invalid JSON array file…) is a ToolboardError naming it by its base
    name. Lines that are not JSON are kept as problems, reported with the file's others when it is matched."""
    path = Path(path)
    try:
        checked_text(path.name, "the file name", MAX_FILE_NAME_CHARS, "rename the file and upload it again")
        check_upload_size(path, max_bytes)
        return ReadUpload(path.name, _digest(path), parse_predictions(path))
    except ToolboardError as exc:
        raise without_folder_in(exc, path) from None


def check_submission(
    path: str | Path,
    benchmark_name: str,
    *,
    language: str | None = None,
    subsets: list[str] | None = None,
    data_dir: str | Path | None = None,
    max_bytes: int = DEFAULT_MAX_UPLOAD_BYTES,
) -> Submission:
    """Read, match and (when clean) score the file: read_upload, then check_read.

    Every message names the file by its base name only (an upload lives in a server folder no
    visitor should see), and the Submission keeps all it needs, so the file can be deleted after."""
    return check_read(read_upload(path, max_bytes), benchmark_name, language=language, subsets=subsets, data_dir=data_dir)


def check_read(upload: ReadUpload, benchmark_name: str, *, language: str | None = None, subsets: list[str] | None = None,
               data_dir: str | Path | None = None) -> Submission:
    """Match a file read before against the benchmark's samples (from `data_dir`), every problem of the file
    collected in one pass, and score it when it is clean. Without chosen subsets, the subsets the file covers
    are scored, so a file with only some categories is not charged for the rest."""
    benchmark = get_benchmark(benchmark_name)
    if benchmark.match_predictions is None:
        raise ToolboardError(f"{benchmark.name} does not accept uploaded predictions")
    language = resolve_language(benchmark, language)
    chosen = benchmark.expand_subsets(subsets or None)
    if not subsets:
        chosen = subsets_in_file(upload, benchmark, chosen)
    # No subset covered (a file whose every line has a problem): no data to load, every problem still reported.
    samples = benchmark.load(data_dir, language=language, subsets=chosen) if chosen else []
    predictions, summary = benchmark.match_predictions(upload.parsed, samples)
    submission = Submission(benchmark, language, upload.name, str(data_dir) if data_dir else None, upload.digest,
                            samples, predictions, summary, chosen)
    if submission.ok:
        for mode, result in score_and_report(benchmark, samples, predictions, language=language, subsets=chosen).items():
            submission.scores[mode], submission.reports[mode] = result.scores, result.report
    return submission


def without_folder_in(exc: ToolboardError, path: Path) -> ToolboardError:
    """`exc` with `path`'s folder left out of its message (and of a DataError's path)."""
    exc.args = tuple(without_folder(arg, path) if isinstance(arg, str) else arg for arg in exc.args)
    if isinstance(exc, DataError) and exc.path:
        exc.path = without_folder(exc.path, path)
    return exc


def without_folder(text: str, path: Path) -> str:
    """`text` with `path` (and its folder) shown as the file's base name."""
    text = text.replace(str(path), path.name)
    return text.replace(str(path.parent) + os.sep, "") if path.parent != Path(".") else text


def checked_text(value: str, field: str, limit: int, fix: str, *, lines: bool = False) -> str:
    """`value` stripped when it passes the rule of visitors' text (core/limits.visitor_text: at most `limit`
    characters, none of them a control or invisible one; `lines`: line breaks allowed); else its error saying
    `fix` (what to do about the length) and that nothing was stored."""
    try:
        return visitor_text(value, field, limit, lines=lines)
    except TextTooLongError as exc:
        raise TextTooLongError(f"{exc}: {fix} (nothing was stored)") from None
    except UnprintableTextError as exc:
        raise UnprintableTextError(f"{exc} (nothing was stored)") from None


def subsets_in_file(upload: ReadUpload, benchmark: Benchmark, subsets: list[str]) -> list[str]:
    """The subsets the file's ids belong to (the benchmark says which subset an id is of), and those of its whole
    documents for a benchmark that reads them (subset_of_document); none when no line has an id, so its lines' problems are reported, but a file of well-formed lines none of which is of the benchmark
    is refused as such."""
    with_ids = [row.data for row in upload.parsed.rows if isinstance(row.data, dict) and isinstance(row.data.get("id"), str)]
    ids = {data["id"] for data in with_ids}
    found = {benchmark.subset_of(sample_id) for sample_id in ids}
    if benchmark.subset_of_document is not None:  # whole documents (an official results file each): their subsets
        of_documents = [benchmark.subset_of_document(row.data) for row in upload.parsed.rows
                        if not (isinstance(row.data, dict) and isinstance(row.data.get("id"), str))]
        found |= {subset for subset in of_documents if subset is not None}
        with_ids += [{} for subset in of_documents if subset is not None]  # counted as rows that name a subset
    covered = [name for name in subsets if name in found]
    if not covered and len(with_ids) < len(upload.parsed.rows):
        return []
    if not covered:
        shown = ", ".join(sorted(ids)[:3]) or "none"
        raise ToolboardError(f"no id in {upload.name} belongs to this benchmark's subsets (first ids: {shown})")
    return covered


def store_submission(store: Store, submission: Submission, model: str, notes: str = "", *, owner: str | None = None,
                     admission: Admission | None = None) -> str:
    """Add a clean, scored submission to the leaderboard as an uploaded run, in one transaction: a crash at any
    moment (kill -9 included) leaves the whole row or nothing. The model name, the notes and the file name are
    refused outside the rule of visitors' text (core/limits.visitor_text), and the upload over `admission`'s daily
    quota of `owner` (a public deployment's visitor; None: the operator, or everyone on a private deployment) or
    its room on disk (checked before, and again with the upload's own bytes written, which then roll back), before
    anything is kept. An upload with an owner is counted against its owner's quota and stays shared: its
    outputs are shown to every visitor, as the operator's are."""
    model = checked_text(model, "the model name", MAX_MODEL_NAME_CHARS, "shorten it and add the file again")
    notes = checked_text(notes, "the notes field", MAX_NOTES_CHARS, "shorten it and add the file again", lines=True)
    if not model:
        raise ToolboardError("give the model a name before adding it to the leaderboard")
    checked_text(submission.file_name, "the file name", MAX_FILE_NAME_CHARS, "rename the file and upload it again")
    if not submission.ok or not submission.reports:
        raise ToolboardError("this file has problems; fix them and upload it again (nothing was stored)")
    written = False
    try:
        with _ADDING, store.atomic():
            if admission is not None:
                admission.check_uploads_quota(store, owner)
                admission.check_room(store, owner)
            run_id, config = _create_upload_run(store, submission, model, notes, owner)
            written = True
            _store_upload(store, submission, run_id, config, owner)
            if admission is not None:
                admission.check_room(store, owner)  # with this upload's bytes: past a limit, it all rolls back
    finally:
        if written:
            store.checkpoint()  # the log holds the whole upload (kept or rolled back) until emptied
    return run_id


def _create_upload_run(store: Store, submission: Submission, model: str, notes: str,
                       owner: str | None) -> tuple[str, RunConfig]:
    config = RunConfig(
        benchmark=submission.benchmark.name, model=ModelSettings(base_url=UPLOAD_BASE_URL, model=model, api_key_env=""),
        language=submission.language, subsets=tuple(submission.subsets), data_dir=submission.data_dir,
    )
    fingerprint = hashlib.sha256(
        f"{submission.digest}|{submission.benchmark.data_version}|{__version__}".encode()
    ).hexdigest()[:16]
    return store.create_run(
        submission.benchmark.name, submission.language, model, UPLOAD_BASE_URL, config.to_json(), fingerprint,
        len(submission.samples), source="upload", notes=notes or None, owner=owner,
    ), config


def _store_upload(store: Store, submission: Submission, run_id: str, config: RunConfig, owner: str | None) -> None:
    """The predictions, scores and reports of the upload whose run was just created, inside its transaction. The
    request kept with each prediction is a note, not the body this tool would send: that body is the sample's and
    the benchmark's alone, so Explore builds it again when the sample is shown (service/explore.py) instead of
    every upload storing a copy of every prompt (most of an upload's bytes when its answers are short)."""
    from evaluators.engine.store import REBUILT_WHEN_SHOWN, UPLOADED_PROMPT_NOTE, Evidence

    if owner is not None:
        store.set_shared(run_id, True)  # counted as the visitor's, shown as every upload is
    by_id = {s.id: s for s in submission.samples}
    note = {"not_sent": True, "body": None, REBUILT_WHEN_SHOWN: True, "note": UPLOADED_PROMPT_NOTE}
    if submission.benchmark.build_request is None:
        note = {"not_sent": True, "body": None, "note": "uploaded predictions: the request they answered is not known"}
    store.save_batch(run_id, [], [(by_id[p.sample_id].subset, p, 0, Evidence(by_id[p.sample_id].gold, note))
                                  for p in submission.predictions.values() if p.sample_id in by_id])
    for mode in MODES:
        store.save_scores(run_id, mode, submission.scores[mode], submission.reports[mode])
    store.set_status(run_id, "finished", f"uploaded {submission.file_name}: {submission.summary.matched} predictions")


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
