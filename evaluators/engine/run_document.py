"""A finished run as one self-contained JSON document, the one record of what the run did: its settings,
then sample by sample its prediction, its evidence (the benchmark's own, by the keys its evidence kinds
declare), its gold answer, the last request sent, every model call made for it (events: the tested model,
a judge, a simulated user) and its score in each scoring mode in a generic shape (value, answer,
explanation, metadata); then the reports. A document names the API key's environment variable, never the
key; credentials embedded in a base URL are removed. `export_run` writes one from a store, `import_run`
checks one and inserts its run into another store, all or nothing: the store's rows are its projection.
The hub sync, the results dataset's `runs` config and the queue carry runs between stores this way.

Version 2 (this one):
    {"format": "toolboard-run", "version": 2, "schema_version": <store schema>,
     "run": {<the runs row; config as JSON>},
     "samples": [{"id", "subset",
                  "prediction": {"output", "tool_calls", "error", "latency", "prompt_tokens", "completion_tokens",
                                 "attempts", "created_at"} or null (an item an upload left out),
                  "evidence": {key: value} or null, "gold", "request", "events": [event, ...] or null,
                  "scores": {mode: {"value", "answer", "explanation", "error_type", "rule", "metrics",
                                    "metadata"}}}],
     "reports": [{"mode", "report", "created_at"}]}
An event (client.EventLog): {"role", "request": body as sent (bounded), "response": {"text", "tool_calls",
"usage"} or null, "error", "latency", "cached"}. Version 1 documents (rows by table) are refused.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from evaluators.core.errors import ToolboardError
from evaluators.engine.store import Store, json_text, with_row_request

DOCUMENT_FORMAT = "toolboard-run"
DOCUMENT_VERSION = 2
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
REQUIRED_RUN_FIELDS: dict[str, tuple[type, ...]] = {
    "id": (str,), "benchmark": (str,), "model": (str,), "base_url": (str,), "config": (dict,), "fingerprint": (str,),
    "status": (str,), "created_at": (int, float), "total": (int,)}
SCALAR_TYPES = (str, int, float, bool, type(None))
SECRET_QUERY_WORDS = ("key", "token", "secret", "password", "signature", "sig", "auth")


class RunDocumentError(ToolboardError):
    """A run document is not in the shape `export_run` writes."""


def export_run(store: Store, run_id: str) -> dict[str, Any]:
    """One self-contained JSON document for a finished run (the shape in this module's docstring)."""
    rows = store.export_rows(run_id)
    run = _decoded("runs", rows["runs"][0])
    if run["status"] not in EXPORTABLE_STATUSES:
        raise ToolboardError(f"run {run_id!r} is {run['status']}; only finished runs are exported")
    run["base_url"] = without_credentials(run["base_url"])
    run["config"] = _config_without_credentials(run["config"])
    return {"format": DOCUMENT_FORMAT, "version": DOCUMENT_VERSION, "schema_version": store.schema_version(),
            "run": run, "samples": _samples(rows["predictions"], rows["sample_scores"]),
            "reports": [_without(_decoded("reports", row), ("run_id",)) for row in rows["reports"]]}


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


def import_run(store: Store, document: Any, replacing: tuple[str, ...] = ()) -> bool:
    """Insert the run of a document if the store does not have it (one transaction). False if already there,
    unless the stored run's status is one of `replacing` (see Store.import_rows)."""
    rows = document_rows(document)
    if store.has_run(rows["runs"][0]["id"]) and store.get_run(rows["runs"][0]["id"]).status not in replacing:
        return False
    return store.import_rows(rows, replacing)


def document_rows(document: Any) -> dict[str, list[dict[str, Any]]]:
    """The store rows of a run document, after checking its shape; RunDocumentError says what is wrong."""
    _check_document(document)
    run = document["run"]
    rows: dict[str, list[dict[str, Any]]] = {"runs": [_encoded("runs", run)], "predictions": [], "sample_scores": []}
    modes: dict[str, list[dict[str, Any]]] = {}
    for sample in document["samples"]:
        keys = {"run_id": run["id"], "sample_id": sample["id"], "subset": sample["subset"]}
        if sample.get("prediction") is not None:
            kept = {column: sample.get(field) for column, field in SAMPLE_FIELDS.items()}
            rows["predictions"].append(_encoded("predictions", {**keys, **sample["prediction"], **kept}))
        for mode, score in sample["scores"].items():
            fields = {name: value for name, value in score.items() if name != "value"}
            row = {**keys, "mode": mode, "correct": int(bool(score["value"]))}
            row.update({_column_of(name): value for name, value in fields.items()})
            modes.setdefault(mode, []).append(_encoded("sample_scores", row))
    rows["sample_scores"] = [row for mode_rows in modes.values() for row in mode_rows]
    rows["reports"] = [_encoded("reports", {**report, "run_id": run["id"]}) for report in document["reports"]]
    return rows


def _column_of(field: str) -> str:
    return SCORE_COLUMNS.get(field, field)


def _check_document(document: Any) -> None:
    if not isinstance(document, dict):
        raise RunDocumentError(f"a run document is a JSON object, not {type(document).__name__}")
    if document.get("format") != DOCUMENT_FORMAT:
        raise RunDocumentError(f"not a run document: 'format' is {document.get('format')!r}, expected {DOCUMENT_FORMAT!r}")
    version = document.get("version")
    if version != DOCUMENT_VERSION:
        raise RunDocumentError(f"run document version {version!r} is not supported: this toolboard reads version"
                               f" {DOCUMENT_VERSION} only (export the run again with this version)")
    _check_fields("run", document.get("run"), REQUIRED_RUN_FIELDS, JSON_COLUMNS["runs"])
    run: dict[str, Any] = document["run"]
    where = f"run {run['id']!r}"
    if not RUN_ID_PATTERN.fullmatch(run["id"]):
        raise RunDocumentError(f"{where}: the id must be letters, digits, '.', '_' or '-'")
    if run["status"] not in EXPORTABLE_STATUSES:
        raise RunDocumentError(f"{where}: status is {run['status']!r}; only finished runs are imported")
    for section in ("samples", "reports"):
        if not isinstance(document.get(section), list):
            raise RunDocumentError(f"{where}: '{section}' must be a list")
    for index, sample in enumerate(document["samples"]):
        _check_sample(f"{where}: samples[{index}]", sample)
    for index, report in enumerate(document["reports"]):
        _check_fields(f"{where}: reports[{index}]", report, {"mode": (str,), "report": (dict,), "created_at": (int, float)},
                      JSON_COLUMNS["reports"])


def _check_sample(where: str, sample: Any) -> None:
    _check_fields(where, sample, {"id": (str,), "subset": (str,), "scores": (dict,)}, ("prediction", *SAMPLE_FIELDS.values()))
    prediction = sample.get("prediction")
    if prediction is not None:
        _check_fields(f"{where}.prediction", prediction, {"created_at": (int, float)}, JSON_COLUMNS["predictions"])
    for name in SAMPLE_FIELDS.values():
        if name not in sample:
            raise RunDocumentError(f"{where}: missing field {name!r}")
    if sample["evidence"] is not None and not isinstance(sample["evidence"], dict):
        raise RunDocumentError(f"{where}: 'evidence' must be an object or null")
    if sample["events"] is not None and not isinstance(sample["events"], list):
        raise RunDocumentError(f"{where}: 'events' must be a list or null")
    for mode, score in sample["scores"].items():
        _check_fields(f"{where}.scores[{mode!r}]", score, {"value": (int, float, bool)},
                      ("answer", "metrics", "metadata"))


def _check_fields(where: str, row: Any, required: dict[str, tuple[type, ...]], json_fields: tuple[str, ...]) -> None:
    """The row is an object whose required fields have the right types and whose other fields hold a scalar
    (any JSON in `json_fields`)."""
    if not isinstance(row, dict):
        raise RunDocumentError(f"{where} must be an object")
    for name, types in required.items():
        if name not in row:
            raise RunDocumentError(f"{where}: missing field {name!r}")
        if not isinstance(row[name], types) or (bool not in types and isinstance(row[name], bool)):
            raise RunDocumentError(f"{where}: field {name!r} must be {' or '.join(t.__name__ for t in types)}")
    for name, value in row.items():
        if name not in required and name not in json_fields and not isinstance(value, SCALAR_TYPES):
            raise RunDocumentError(f"{where}: field {name!r} must be a string, number, boolean or null")


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


def without_credentials(url: str) -> str:
    """The URL without user:pass@ and without query parameters whose names look like secrets."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return url if "@" not in url else "<url with credentials removed>"
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{port}" if port is not None else "")
    query = urlencode([(name, value) for name, value in parse_qsl(parts.query, keep_blank_values=True)
                       if not any(word in name.lower() for word in SECRET_QUERY_WORDS)])
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _config_without_credentials(config: Any) -> Any:
    """Every `base_url` in the run's settings (the model's and every role's) without credentials."""
    if isinstance(config, dict):
        return {name: without_credentials(value) if name == "base_url" and isinstance(value, str)
                else _config_without_credentials(value) for name, value in config.items()}
    if isinstance(config, list):
        return [_config_without_credentials(value) for value in config]
    return config
