"""Keep finished runs in a Hugging Face dataset repo, so a restarted Space keeps its leaderboard.

Each finished run is one JSON document, `runs/<run id>.json` (one file per run: concurrent writers
never touch the same file). `push` uploads one; `pull` downloads them all and imports the runs the
local store does not have. Enabled by TOOLBOARD_HUB_REPO (e.g. `org/toolboard-results`), with the
token from HF_TOKEN; HF_ENDPOINT points at another Hub.

A document holds the run's settings (its config names the API key's environment variable, never the
key), predictions, per-sample scores and reports, in both scoring modes. Credentials embedded in a
base URL (user:pass@, key-like query parameters) are removed on export.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from evaluators.core.errors import ToolboardError
from evaluators.core.paths import toolboard_home
from evaluators.engine.store import Store, json_text

logger = logging.getLogger(__name__)

REPO_ENV = "TOOLBOARD_HUB_REPO"
TOKEN_ENV = "HF_TOKEN"
DOCUMENT_FORMAT = "toolboard-run"
DOCUMENT_VERSION = 1
EXPORTABLE_STATUSES = ("finished",)
RUNS_FOLDER = "runs"
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


class HubDocumentError(ToolboardError):
    """A run document is not in the shape `export_run` writes."""


# ---- documents -------------------------------------------------------------------------------


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


def import_run(store: Store, document: Any) -> bool:
    """Insert the run of a document if the store does not have it (one transaction). False if already there."""
    rows = document_rows(document)
    if store.has_run(rows["runs"][0]["id"]):
        return False
    return store.import_rows(rows)


def document_rows(document: Any) -> dict[str, list[dict[str, Any]]]:
    """The store rows of a run document, after checking its shape; HubDocumentError says what is wrong."""
    _check_document(document)
    run = document["run"]
    rows: dict[str, list[dict[str, Any]]] = {"runs": [_encode_row("runs", run)]}
    for section in CHILD_SECTIONS:
        rows[section] = [_encode_row(section, {**row, "run_id": run["id"]}) for row in document[section]]
    return rows


def _check_document(document: Any) -> None:
    if not isinstance(document, dict):
        raise HubDocumentError(f"a run document is a JSON object, not {type(document).__name__}")
    if document.get("format") != DOCUMENT_FORMAT:
        raise HubDocumentError(f"not a run document: 'format' is {document.get('format')!r}, expected {DOCUMENT_FORMAT!r}")
    version = document.get("version")
    if not isinstance(version, int) or version > DOCUMENT_VERSION:
        raise HubDocumentError(f"run document version {version!r} is not supported (this toolboard reads {DOCUMENT_VERSION})")
    run = _checked_row("run", document.get("run"), "run")
    where = f"run {run['id']!r}"
    if not RUN_ID_PATTERN.fullmatch(run["id"]):
        raise HubDocumentError(f"{where}: the id must be letters, digits, '.', '_' or '-'")
    if run["status"] not in EXPORTABLE_STATUSES:
        raise HubDocumentError(f"{where}: status is {run['status']!r}; only finished runs are imported")
    for section in CHILD_SECTIONS:
        items = document.get(section)
        if not isinstance(items, list):
            raise HubDocumentError(f"{where}: '{section}' must be a list")
        for index, item in enumerate(items):
            _checked_row(f"{where}: {section}[{index}]", item, section)
            if item.get("run_id", run["id"]) != run["id"]:
                raise HubDocumentError(f"{where}: {section}[{index}] belongs to run {item['run_id']!r}")


def _checked_row(where: str, row: Any, kind: str) -> dict[str, Any]:
    """The row, once its required fields have the right types and other columns hold a scalar (any JSON in JSON columns)."""
    if not isinstance(row, dict):
        raise HubDocumentError(f"{where} must be an object")
    for name, types in REQUIRED_FIELDS[kind].items():
        if name not in row:
            raise HubDocumentError(f"{where}: missing field {name!r}")
        if not isinstance(row[name], types) or (bool not in types and isinstance(row[name], bool)):
            raise HubDocumentError(f"{where}: field {name!r} must be {' or '.join(t.__name__ for t in types)}")
    table = "runs" if kind == "run" else kind
    for name, value in row.items():
        if name not in JSON_COLUMNS[table] and not isinstance(value, SCALAR_TYPES):
            raise HubDocumentError(f"{where}: field {name!r} must be a string, number, boolean or null")
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


# ---- the Hub -----------------------------------------------------------------------------------


class HubSync:
    """Push finished runs to, and pull them from, the dataset repo `repo_id`."""

    def __init__(self, repo_id: str, token: str | None, store: Store, endpoint: str | None = None,
                 cache_dir: str | Path | None = None):
        if repo_id.count("/") != 1 or not all(repo_id.split("/")):
            raise ToolboardError(f"hub repo {repo_id!r} should look like 'org/name'")
        self.repo_id = repo_id
        self.store = store
        self._token = token or None
        # huggingface_hub reads HF_ENDPOINT once, at import; read it here so a later setting counts.
        self.endpoint = endpoint or os.environ.get("HF_ENDPOINT") or None
        self.cache_dir = Path(cache_dir) if cache_dir else toolboard_home() / "hub_sync" / repo_id.replace("/", "--")
        self._repo_ready = False
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # never shows the token
        return f"HubSync(repo_id={self.repo_id!r}, endpoint={self.endpoint!r})"

    def push(self, run_id: str) -> str:
        """Upload the run's document as runs/<run id>.json; returns that path in the repo."""
        if not RUN_ID_PATTERN.fullmatch(run_id):
            raise ToolboardError(f"run id {run_id!r} cannot be a file name in the hub repo")
        data = json_text(export_run(self.store, run_id)).encode("utf-8")  # a lone surrogate goes escaped
        path_in_repo = f"{RUNS_FOLDER}/{run_id}.json"
        api = self._api()
        try:
            self._ensure_repo(api)
            api.upload_file(path_or_fileobj=data, path_in_repo=path_in_repo, repo_id=self.repo_id,
                            repo_type="dataset", commit_message=f"Add run {run_id}")
        except Exception as error:  # network, auth, server: one clear error, without the token
            raise self._error(f"push run {run_id} to", error) from None
        return path_in_repo

    def pull(self) -> int:
        """Download every run document and import the runs this store does not have; returns how many."""
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import RepositoryNotFoundError

        api = self._api()
        try:
            # Resolving the head first makes auth and network failures raise here, instead of
            # snapshot_download quietly returning an older local copy.
            head = api.repo_info(self.repo_id, repo_type="dataset").sha
            folder = snapshot_download(self.repo_id, repo_type="dataset", revision=head,
                                       allow_patterns=[f"{RUNS_FOLDER}/*.json"], local_dir=self.cache_dir,
                                       token=self._token, endpoint=self.endpoint)
        except RepositoryNotFoundError:
            logger.warning("hub sync: dataset repo %s does not exist yet (or the token cannot read it); nothing to pull",
                           self.repo_id)
            return 0
        except Exception as error:
            raise self._error("pull runs from", error) from None
        return self._import_folder(Path(folder) / RUNS_FOLDER)

    def push_in_background(self, run_id: str) -> threading.Thread:
        """Push from a daemon thread; a failure is logged (without the token), never raised."""
        thread = threading.Thread(target=self._push_logging_failures, args=(run_id,), daemon=True,
                                  name=f"hub-sync-push-{run_id}")
        thread.start()
        return thread

    def _push_logging_failures(self, run_id: str) -> None:
        try:
            self.push(run_id)
        except Exception as error:
            logger.warning("hub sync: %s", self._redact(str(error)))

    def _import_folder(self, folder: Path) -> int:
        """Import each document whose run is new; a bad file is logged and skipped so the others still load."""
        imported = 0
        for path in sorted(folder.glob("*.json")):
            if self.store.has_run(path.stem):
                continue
            try:
                imported += import_run(self.store, json.loads(path.read_text(encoding="utf-8")))
            except (ToolboardError, ValueError, OSError) as error:
                logger.warning("hub sync: skipped %s/%s: %s", RUNS_FOLDER, path.name, self._redact(str(error)))
        return imported

    def _api(self) -> Any:
        from huggingface_hub import HfApi

        return HfApi(endpoint=self.endpoint, token=self._token)

    def _ensure_repo(self, api: Any) -> None:
        with self._lock:
            if not self._repo_ready:
                api.create_repo(self.repo_id, repo_type="dataset", private=True, exist_ok=True)
                self._repo_ready = True

    def _error(self, action: str, error: BaseException) -> ToolboardError:
        detail = self._redact(str(error)).strip().splitlines()
        reason = f"{type(error).__name__}: {detail[0]}" if detail else type(error).__name__
        status = getattr(getattr(error, "response", None), "status_code", None)
        hint = f"; check that {TOKEN_ENV} is set to a token with write access to it" if status in (401, 403) else ""
        return ToolboardError(f"hub sync: could not {action} dataset {self.repo_id} ({reason}){hint}")

    def _redact(self, text: str) -> str:
        return text.replace(self._token, "***") if self._token else text


def from_env(store: Store) -> HubSync | None:
    """A HubSync for TOOLBOARD_HUB_REPO with the token in HF_TOKEN, or None when TOOLBOARD_HUB_REPO is unset."""
    repo_id = os.environ.get(REPO_ENV, "").strip()
    if not repo_id:
        return None
    return HubSync(repo_id, os.environ.get(TOKEN_ENV) or None, store)
