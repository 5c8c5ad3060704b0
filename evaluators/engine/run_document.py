"""A finished run as one self-contained JSON document: its settings, predictions, per-sample scores and
reports in both scoring modes (a document names the API key's environment variable, never the key;
credentials embedded in a base URL are removed). `export_run` writes one from a store, `import_run` checks
one and inserts its run into another store, all or nothing. The hub sync and the results dataset's `runs`
config carry runs between stores this way.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from evaluators.core.errors import ToolboardError
from evaluators.engine.store import Store, json_text

DOCUMENT_FORMAT = "toolboard-run"
DOCUMENT_VERSION = 1
EXPORTABLE_STATUSES = ("finished",)
# Run ids become file names in the repo: keep them to one plain path segment.
RUN_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
# Columns stored as JSON text; a document holds them as JSON values, so it reads as plain JSON.
JSON_COLUMNS: dict[str, tuple[str, ...]] = {
    "runs": ("config",),
    "predictions": ("tool_calls", "result", "process", "extra", "gold", "request"),
    "sample_scores": ("decoded", "metrics"),
    "reports": ("report",),
}
CHILD_SECTIONS = ("predictions", "sample_scores", "reports")
# Fields a document must have, with the JSON types they must be (the rest may be null or absent).
REQUIRED_FIELDS: dict[str, dict[str, tuple[type, ...]]] = {
    "run": {"id": (str,), "benchmark": (str,), "model": (str,), "base_url": (str,), "config": (dict,),
            "fingerprint": (str,), "status": (str,), "created_at": (int, float), "total": (int,)},
    "predictions": {"sample_id": (str,), "subset": (str,), "created_at": (int, float)},
    "sample_scores": {"mode": (str,), "sample_id": (str,), "subset": (str,), "correct": (bool, int)},
    "reports": {"mode": (str,), "report": (dict,), "created_at": (int, float)},
}
SCALAR_TYPES = (str, int, float, bool, type(None))
SECRET_QUERY_WORDS = ("key", "token", "secret", "password", "signature", "sig", "auth")


class RunDocumentError(ToolboardError):
    """A run document is not in the shape `export_run` writes."""


def export_run(store: Store, run_id: str) -> dict[str, Any]:
    """One self-contained JSON document for a finished run: its settings, predictions, scores and reports."""
    rows = store.export_rows(run_id)
    run = _decode_row("runs", rows["runs"][0])
    if run["status"] not in EXPORTABLE_STATUSES:
        raise ToolboardError(f"run {run_id!r} is {run['status']}; only finished runs are exported")
    run["base_url"] = without_credentials(run["base_url"])
    run["config"] = _config_without_credentials(run["config"])
    document: dict[str, Any] = {"format": DOCUMENT_FORMAT, "version": DOCUMENT_VERSION,
                                "schema_version": store.schema_version(), "run": run}
    for section in CHILD_SECTIONS:
        document[section] = [_decode_row(section, _without_run_id(row)) for row in rows[section]]
    return document


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
    rows: dict[str, list[dict[str, Any]]] = {"runs": [_encode_row("runs", run)]}
    for section in CHILD_SECTIONS:
        rows[section] = [_encode_row(section, {**row, "run_id": run["id"]}) for row in document[section]]
    return rows


def _check_document(document: Any) -> None:
    if not isinstance(document, dict):
        raise RunDocumentError(f"a run document is a JSON object, not {type(document).__name__}")
    if document.get("format") != DOCUMENT_FORMAT:
        raise RunDocumentError(f"not a run document: 'format' is {document.get('format')!r}, expected {DOCUMENT_FORMAT!r}")
    version = document.get("version")
    if not isinstance(version, int) or version > DOCUMENT_VERSION:
        raise RunDocumentError(f"run document version {version!r} is not supported (this toolboard reads {DOCUMENT_VERSION})")
    run = _checked_row("run", document.get("run"), "run")
    where = f"run {run['id']!r}"
    if not RUN_ID_PATTERN.fullmatch(run["id"]):
        raise RunDocumentError(f"{where}: the id must be letters, digits, '.', '_' or '-'")
    if run["status"] not in EXPORTABLE_STATUSES:
        raise RunDocumentError(f"{where}: status is {run['status']!r}; only finished runs are imported")
    for section in CHILD_SECTIONS:
        items = document.get(section)
        if not isinstance(items, list):
            raise RunDocumentError(f"{where}: '{section}' must be a list")
        for index, item in enumerate(items):
            _checked_row(f"{where}: {section}[{index}]", item, section)
            if item.get("run_id", run["id"]) != run["id"]:
                raise RunDocumentError(f"{where}: {section}[{index}] belongs to run {item['run_id']!r}")


def _checked_row(where: str, row: Any, kind: str) -> dict[str, Any]:
    """The row, once its required fields have the right types and other columns hold a scalar (any JSON in JSON columns)."""
    if not isinstance(row, dict):
        raise RunDocumentError(f"{where} must be an object")
    for name, types in REQUIRED_FIELDS[kind].items():
        if name not in row:
            raise RunDocumentError(f"{where}: missing field {name!r}")
        if not isinstance(row[name], types) or (bool not in types and isinstance(row[name], bool)):
            raise RunDocumentError(f"{where}: field {name!r} must be {' or '.join(t.__name__ for t in types)}")
    table = "runs" if kind == "run" else kind
    for name, value in row.items():
        if name not in JSON_COLUMNS[table] and not isinstance(value, SCALAR_TYPES):
            raise RunDocumentError(f"{where}: field {name!r} must be a string, number, boolean or null")
    return row


def _decode_row(table: str, row: dict[str, Any]) -> dict[str, Any]:
    decoded = dict(row)
    for column in JSON_COLUMNS[table]:
        if decoded.get(column) is not None:
            decoded[column] = json.loads(decoded[column])
    return decoded


def _encode_row(table: str, row: dict[str, Any]) -> dict[str, Any]:
    encoded = dict(row)
    for column in JSON_COLUMNS[table]:
        if encoded.get(column) is not None:
            encoded[column] = json_text(encoded[column])
    if table == "sample_scores":
        encoded["correct"] = int(encoded["correct"])
    return encoded


def _without_run_id(row: dict[str, Any]) -> dict[str, Any]:
    """Child rows carry their run's id in the store; in a document it is the run's, once."""
    return {name: value for name, value in row.items() if name != "run_id"}


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
