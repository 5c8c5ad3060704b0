"""A finished run as one self-contained, typed document (RunDocument, a pydantic model), the one record of what
the run did: its settings, then sample by sample its prediction, its evidence (the benchmark's own, by the keys its
evidence kinds declare), its gold answer, the last request sent, every model call made for it (events: the tested
model, a judge, a simulated user) and its score in each scoring mode in a generic shape (value, answer,
explanation, metadata); then the reports. A document names the API key's environment variable, never the key;
credentials embedded in a base URL are removed. `export_document` makes one from a store, `read_document` checks
one read as JSON (RunDocumentError says where it is wrong: which sample, which field, what was expected) and
`import_run` inserts its run into another store, all or nothing: the store's rows are its projection. The queue's
result, the hub sync and the results dataset's `runs` config carry runs between stores this way.

Version 2 (this one; every document written since run documents were versioned by the model, and before):
    {"format": "toolboard-run", "version": 2, "schema_version": <store schema>,
     "run": {<the runs row; config as JSON>},
     "samples": [{"id", "subset",
                  "prediction": {"output", "tool_calls", "error", "latency", "prompt_tokens", "completion_tokens",
                                 "attempts", "created_at"} or null (an item an upload left out),
                  "evidence": {key: value} or null, "gold", "request",
                  "events": [event, ...], or the note kept in their place when too large to store, or null,
                  "scores": {mode: {"value", "answer", "explanation", "error_type", "rule", "metrics",
                                    "metadata"}}}],
     "reports": [{"mode", "report", "created_at"}]}
An event (client.EventLog): {"role", "request": body as sent (bounded), "response": {"text", "tool_calls",
"usage"} or null, "error", "latency", "cached"}. Version 1 documents (rows by table) are refused.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, JsonValue, ValidationError, field_validator
from pydantic_core import ErrorDetails

from evaluators.core.errors import ToolboardError
from evaluators.engine.redact import settings_without_credentials, without_credentials
from evaluators.engine.store import Store, json_text, with_row_request

DOCUMENT_FORMAT: Literal["toolboard-run"] = "toolboard-run"
DOCUMENT_VERSION = 2
# Versions this toolboard reads (a later version that only adds optional fields joins this list).
READABLE_VERSIONS = (2,)
EXPORTABLE_STATUSES = ("finished",)
# Run ids become file names in the repo: keep them to one plain path segment.
RUN_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
# Columns stored as JSON text; a document holds them as JSON values, so it reads as plain JSON.
JSON_COLUMNS: dict[str, tuple[str, ...]] = {
    "runs": ("config",),
    "predictions": ("tool_calls", "extra", "gold", "request", "events"),
    "sample_scores": ("decoded", "metrics", "metadata"),
    "reports": ("report",),
}
# A predictions row's columns that a sample holds beside its prediction, under these names.
SAMPLE_FIELDS = {"extra": "evidence", "gold": "gold", "request": "request", "events": "events"}
# A sample_scores row's columns under their generic names (`correct` becomes the number `value`).
SCORE_FIELDS = {"decoded": "answer", "detail": "explanation"}
SCORE_COLUMNS = {name: column for column, name in SCORE_FIELDS.items()}
# Columns every row has that a document holds once, at the sample or run level.
ROW_KEYS = ("run_id", "sample_id", "subset")


class RunDocumentError(ToolboardError):
    """A run document is not in the shape `export_document` writes."""


class DocumentPart(BaseModel):
    """A part of a run document: exactly its fields (an unknown one was written by a newer toolboard), each of its
    type (no conversion: a number in a text is refused, not read)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class RunRecord(DocumentPart):
    """The runs row (without what only the exporting store uses: its lease and byte count)."""

    id: Annotated[str, Field(pattern=f"^(?:{RUN_ID_PATTERN.pattern})$")]
    benchmark: str
    language: str | None = None
    model: str
    base_url: str
    config: dict[str, JsonValue]
    fingerprint: str
    status: Literal["finished"]
    created_at: float
    started_at: float | None = None
    finished_at: float | None = None
    total: int
    message: str | None = None
    source: str = "endpoint"
    notes: str | None = None
    owner: str | None = None
    shared: int = 0


class PredictionRecord(DocumentPart):
    """A sample's prediction: the model's output as returned, or why the request failed, with its cost."""

    output: str | None = None
    tool_calls: JsonValue = None
    error: str | None = None
    latency: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    attempts: int | None = None
    created_at: float


class ScoreRecord(DocumentPart):
    """A sample's score in one scoring mode: `value` 1.0 right, 0.0 wrong (true/false read as 1/0)."""

    value: float
    answer: JsonValue = None
    explanation: str | None = None
    error_type: str | None = None
    rule: str | None = None
    metrics: JsonValue = None
    metadata: JsonValue = None

    @field_validator("value", mode="before")
    @classmethod
    def _verdict_as_number(cls, value: Any) -> Any:
        return float(value) if isinstance(value, bool) else value


def _calls_or_note(events: JsonValue) -> JsonValue:
    """A sample's events: its model calls, or the note its row keeps in their place when they were too large to
    store (store.oversized_note), or null."""
    if events is None or isinstance(events, list) or isinstance(events, dict) and "note" in events:
        return events
    raise ValueError("must be a list of model calls, the note kept in their place (too large to store), or null")


class SampleRecord(DocumentPart):
    """One sample: its prediction (null: an upload left it out), its evidence and its scores by mode."""

    id: str
    subset: str
    prediction: PredictionRecord | None = None
    evidence: dict[str, JsonValue] | None
    gold: JsonValue
    request: JsonValue
    events: Annotated[JsonValue, AfterValidator(_calls_or_note)]
    scores: dict[str, ScoreRecord]


class ReportRecord(DocumentPart):
    mode: str
    report: dict[str, JsonValue]
    created_at: float


class RunDocument(DocumentPart):
    """A finished run's whole record (the shape in this module's docstring)."""

    format: Literal["toolboard-run"] = DOCUMENT_FORMAT
    version: int = DOCUMENT_VERSION
    schema_version: int
    run: RunRecord
    samples: list[SampleRecord]
    reports: list[ReportRecord]

    def to_json_value(self) -> dict[str, Any]:
        """The document as plain JSON values (what json.dumps writes and read_document reads back). Python mode:
        the values are JSON's already, and a NaN in a metric stays a NaN (JSON mode would write null)."""
        return self.model_dump()


# ---- export ----------------------------------------------------------------------------------------


def export_document(store: Store, run_id: str) -> RunDocument:
    """The run document of a finished run of `store`."""
    rows = store.export_rows(run_id)
    run = _decoded("runs", rows["runs"][0])
    if run["status"] not in EXPORTABLE_STATUSES:
        raise ToolboardError(f"run {run_id!r} is {run['status']}; only finished runs are exported")
    run["base_url"] = without_credentials(run["base_url"])
    run["config"] = settings_without_credentials(run["config"])
    return read_document({
        "format": DOCUMENT_FORMAT, "version": DOCUMENT_VERSION, "schema_version": store.schema_version(), "run": run,
        "samples": _samples(rows["predictions"], rows["sample_scores"]),
        "reports": [_without(_decoded("reports", row), ("run_id",)) for row in rows["reports"]]})


def export_run(store: Store, run_id: str) -> dict[str, Any]:
    """The run document of a finished run as JSON values (export_document)."""
    return export_document(store, run_id).to_json_value()


def _samples(predictions: list[dict[str, Any]], scores: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The samples of a run's rows: in the order they were scored, then any prediction not scored."""
    samples: dict[str, dict[str, Any]] = {}
    for row in scores:
        sample = samples.setdefault(row["sample_id"], _sample(row["sample_id"], row["subset"]))
        sample["scores"][row["mode"]] = _score_of_row(row)
    for row in predictions:
        sample = samples.setdefault(row["sample_id"], _sample(row["sample_id"], row["subset"]))
        sample["subset"] = row["subset"]
        decoded = _decoded("predictions", row)
        sample.update({field: decoded.get(column) for column, field in SAMPLE_FIELDS.items()})
        sample["events"] = with_row_request(sample["events"], sample["request"])
        sample["prediction"] = _without(decoded, (*ROW_KEYS, *SAMPLE_FIELDS))
    return list(samples.values())


def _sample(sample_id: str, subset: str) -> dict[str, Any]:
    return {"id": sample_id, "subset": subset, "prediction": None, "evidence": None, "gold": None, "request": None,
            "events": None, "scores": {}}


def _score_of_row(row: dict[str, Any]) -> dict[str, Any]:
    decoded = _decoded("sample_scores", row)
    score = {"value": 1.0 if decoded["correct"] else 0.0}
    score.update({SCORE_FIELDS.get(name, name): value for name, value in decoded.items()
                  if name not in (*ROW_KEYS, "mode", "correct")})
    return score


# ---- import ----------------------------------------------------------------------------------------


def read_document(value: Any) -> RunDocument:
    """A run document read as JSON values, checked; RunDocumentError names what is wrong and where."""
    if isinstance(value, RunDocument):
        return value
    if not isinstance(value, dict):
        raise RunDocumentError(f"a run document is a JSON object, not {type(value).__name__}")
    if value.get("format") != DOCUMENT_FORMAT:
        raise RunDocumentError(f"not a run document: 'format' is {value.get('format')!r}, expected {DOCUMENT_FORMAT!r}")
    version = value.get("version")
    if isinstance(version, bool) or version not in READABLE_VERSIONS:
        raise RunDocumentError(f"run document version {version!r} is not supported: this toolboard reads version"
                               f" {' or '.join(map(str, READABLE_VERSIONS))} only (export the run again with this"
                               " version)")
    try:
        return RunDocument.model_validate(value)
    except ValidationError as problem:
        raise RunDocumentError(_problem_text(value, problem)) from None


# What a JSON value of each kind is called in an error (pydantic's error type -> what was expected).
EXPECTED_KINDS = {"string_type": "a string", "int_type": "a whole number", "float_type": "a number",
                  "dict_type": "an object", "model_type": "an object", "list_type": "a list",
                  "bool_type": "true or false"}
JSON_KINDS = {str: "a string", int: "a number", float: "a number", bool: "true or false", dict: "an object",
              list: "a list", type(None): "null"}
# Fields whose values are keyed by names of the document's own (a score per mode), not by field names.
KEYED_FIELDS = ("scores",)


def _problem_text(document: dict[str, Any], problem: ValidationError) -> str:
    """The first of pydantic's errors, as one sentence: the run, where in the document, what was expected; and how
    many more were found."""
    errors = problem.errors(include_url=False)
    run_id = (document.get("run") or {}).get("id") if isinstance(document.get("run"), dict) else None
    text = _error_text(errors[0])
    if isinstance(run_id, str) and RUN_ID_PATTERN.fullmatch(run_id):
        text = f"run {run_id!r}: {text}"
    more = len(errors) - 1
    return text + (f" (and {more} more problem{'' if more == 1 else 's'})" if more else "")


def _error_text(error: ErrorDetails) -> str:
    *parents, name = error["loc"] or ("document",)
    where = _path(parents) or "the document"
    kind = error["type"]
    found = JSON_KINDS.get(type(error.get("input")), type(error.get("input")).__name__)
    if kind == "missing":
        return f"{where}: missing field {name!r}"
    if kind == "extra_forbidden":
        return f"{where}: unknown field {name!r} (written by a newer toolboard?)"
    if kind == "string_pattern_mismatch" and name == "id":
        return f"{where}: the id must be letters, digits, '.', '_' or '-' (128 at most), not {error['input']!r}"
    if kind == "literal_error" and name == "status":
        return f"{where}: status is {error['input']!r}; only finished runs are imported"
    if kind == "model_type":
        return f"{_path([*parents, name])} must be an object, not {found}"
    if kind in EXPECTED_KINDS:
        expected = EXPECTED_KINDS[kind] + (" or null" if _accepts_null(error["loc"]) else "")
        return f"{where}: field {name!r} must be {expected}, not {found}"
    if kind == "value_error":
        return f"{where}: field {name!r} {error['msg'].removeprefix('Value error, ')}"
    return f"{where}: field {name!r}: {error['msg']}"


def _accepts_null(loc: tuple[int | str, ...]) -> bool:
    """Whether the document's field at `loc` may be null (what an error about it says was expected)."""
    model: type[BaseModel] | None = RunDocument
    field = None
    for part in loc:
        if isinstance(part, str) and model is not None and part in model.model_fields:
            field = model.model_fields[part]
            model = _part_model(field.annotation)
    return field is not None and type(None) in get_args(field.annotation)


def _part_model(annotation: Any) -> type[BaseModel] | None:
    """The document part a field holds, directly or in a list, a dict or an optional value."""
    if isinstance(annotation, type) and issubclass(annotation, DocumentPart):
        return annotation
    for inner in get_args(annotation):
        model = _part_model(inner)
        if model is not None:
            return model
    return None


def _path(loc: list[int | str]) -> str:
    """A location in the document as a reader writes it: samples[2].scores['strict']."""
    text = ""
    for index, part in enumerate(loc):
        if isinstance(part, int):
            text += f"[{part}]"
        elif index and loc[index - 1] in KEYED_FIELDS:
            text += f"[{part!r}]"
        else:
            text += f".{part}" if text else part
    return text


def import_run(store: Store, document: Any, replacing: tuple[str, ...] = ()) -> bool:
    """Insert the run of a document (a RunDocument, or its JSON values) if the store does not have it (one
    transaction). False if already there, unless the stored run's status is one of `replacing` (see
    Store.import_rows)."""
    rows = document_rows(document)
    if store.has_run(rows["runs"][0]["id"]) and store.get_run(rows["runs"][0]["id"]).status not in replacing:
        return False
    return store.import_rows(rows, replacing)


def document_rows(document: Any) -> dict[str, list[dict[str, Any]]]:
    """The store rows of a run document, after checking it (read_document)."""
    checked = read_document(document)
    run = checked.run
    rows: dict[str, list[dict[str, Any]]] = {"runs": [_encoded("runs", run.model_dump())], "predictions": [],
                                             "sample_scores": []}
    modes: dict[str, list[dict[str, Any]]] = {}
    for sample in checked.samples:
        keys = {"run_id": run.id, "sample_id": sample.id, "subset": sample.subset}
        if sample.prediction is not None:
            kept = {column: getattr(sample, field) for column, field in SAMPLE_FIELDS.items()}
            rows["predictions"].append(_encoded("predictions", {**keys, **sample.prediction.model_dump(), **kept}))
        for mode, score in sample.scores.items():
            row = {**keys, "mode": mode, "correct": int(bool(score.value))}
            row.update({SCORE_COLUMNS.get(name, name): value for name, value in score.model_dump().items()
                        if name != "value"})
            modes.setdefault(mode, []).append(_encoded("sample_scores", row))
    rows["sample_scores"] = [row for mode_rows in modes.values() for row in mode_rows]
    rows["reports"] = [_encoded("reports", {**report.model_dump(), "run_id": run.id}) for report in checked.reports]
    return rows


def _decoded(table: str, row: dict[str, Any]) -> dict[str, Any]:
    decoded = dict(row)
    for column in JSON_COLUMNS[table]:
        if decoded.get(column) is not None:
            decoded[column] = json.loads(decoded[column])
    return decoded


def _encoded(table: str, row: dict[str, Any]) -> dict[str, Any]:
    encoded = dict(row)
    for column in JSON_COLUMNS[table]:
        if encoded.get(column) is not None:
            encoded[column] = json_text(encoded[column])
    return encoded


def _without(row: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {name: value for name, value in row.items() if name not in names}
