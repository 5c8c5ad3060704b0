"""Redaction: the one module that takes out of a text or a record what its reader may not see. Each job is named
for its reader:

- `redact`: API keys out of any text. An endpoint may echo the key it was sent (a 401 body quoting
  `Bearer sk-…`), and error texts are stored, exported, logged and shown to visitors.
- `without_credentials`, `settings_without_credentials`: user:pass@ and secret-looking query parameters out of
  base URLs (a run document names endpoints, never their credentials).
- `PathRedactor`, `server_path_redactor`: the server's folders out of what visitors of a public deployment read,
  each known folder shown by a short name (`<data folder>/…`).
- `public_text`, `public_error`, `public_settings`, `public_request`, `public_events`: what a published results
  dataset may hold (published by someone else's machine: local folders keep only their last part, endpoint
  hosts and key variable names go).
- `paths_as_words`: every path in a note a visitor reads said as words (a note about the server's data files).
- `redacted`, `redacted_by_key`: one of these rules applied to every text in a JSON-like value.

In the engine, the lowest layer that needs it (the chat client redacts its errors); the layers above import it.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from evaluators.core.paths import toolboard_home
from evaluators.engine.store import storable_text

REDACTED = "[redacted]"
# A "key" shorter than this is a placeholder (e.g. "x"); replacing its text everywhere would only garble messages.
MIN_SECRET_LENGTH = 4
_BEARER_TOKEN = re.compile(r"(\bBearer\s+)[^\s\"',;]+", re.IGNORECASE)
# OpenAI-style keys (sk-…, sk-proj-…), also when an endpoint masks part of them with *.
_SK_TOKEN = re.compile(r"\bsk-[A-Za-z0-9_\-*.]{6,}")
SECRET_QUERY_WORDS = ("key", "token", "secret", "password", "signature", "sig", "auth")
# The application's own folder (the project's checkout), named in tracebacks and notes.
APP_ROOT = Path(__file__).resolve().parents[2]
# An absolute path of two parts or more, not inside a URL (so its "/" is not right after a letter, digit,
# ":", "/" or ".").
ABSOLUTE_PATH = re.compile(r"(?<![\w:/.])(?:/\.?[\w@+-]+(?:\.[\w@+-]+)*){2,}/?")
# An absolute local path (POSIX, home-relative or Windows) that is not part of a URL or a relative path:
# group 1 is its last part, which is all a published text keeps.
LOCAL_PATH = re.compile(r"(?<![\w:/.~\\-])(?:~|[A-Za-z]:)?[/\\](?:[^\s/\\,;:()'\"]+[/\\])+([^\s/\\,;:()'\"]*)")
# Any absolute or home-relative path standing on its own in a message, one part being enough; not a URL's path.
STANDALONE_PATH = re.compile(r"(?<![\w.~:/-])~?/[^\s,;:()'\"]+")
# Settings that name where a run's endpoints and files are: a published run's settings leave them empty.
ENDPOINT_SETTINGS = ("base_url", "api_key_env")
LOCAL_SETTINGS = ("data_dir",)


# ---- any JSON-like value ---------------------------------------------------------------------------


def redacted(value: Any, redact_text: Callable[[str], str]) -> Any:
    """`value` (text, or JSON-like lists and dicts of it) with `redact_text` applied to every string in it."""
    return redacted_by_key(value, lambda key, leaf: redact_text(leaf) if isinstance(leaf, str) else leaf)


def redacted_by_key(value: Any, redact_leaf: Callable[[str, Any], Any], key: str = "") -> Any:
    """`value` with every leaf (a value that is not a dict or list) replaced by `redact_leaf(key, leaf)`, where
    `key` is the name of the nearest dict entry holding it ("" at the top)."""
    if isinstance(value, dict):
        return {name: redacted_by_key(item, redact_leaf, name) for name, item in value.items()}
    if isinstance(value, list | tuple):
        return [redacted_by_key(item, redact_leaf, key) for item in value]
    return redact_leaf(key, value)


# ---- API keys --------------------------------------------------------------------------------------


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` with each of `secrets` (the run's keys), any `Bearer <token>` and any sk-…-shaped token
    replaced by [redacted]."""
    for secret in sorted({s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    text = _BEARER_TOKEN.sub(lambda match: match.group(1) + REDACTED, text)
    return _SK_TOKEN.sub(REDACTED, text)


# ---- credentials in URLs ---------------------------------------------------------------------------


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


def settings_without_credentials(config: Any) -> Any:
    """Every `base_url` in a run's settings (the model's and every role's) without credentials."""
    return redacted_by_key(config, lambda key, leaf: without_credentials(leaf)
                           if key == "base_url" and isinstance(leaf, str) else leaf)


# ---- server paths, for visitors of a public deployment ---------------------------------------------


def shown_as_is(text: str) -> str:
    return text


class PathRedactor:
    """Server paths out of text shown to visitors of a public deployment: known folders become short
    names (`<data folder>/<benchmark>`), any other absolute path keeps only its last part (`…/toolboard.db`)."""

    def __init__(self, folders: Mapping[str | Path, str]):
        spellings: dict[str, str] = {}
        for folder, name in folders.items():
            for spelling in (str(folder), str(Path(folder).resolve())):
                if spelling not in ("", "/", "."):
                    spellings[spelling.rstrip("/")] = name
        # Longest first, so a folder inside another gets its own name.
        self.folders = sorted(spellings.items(), key=lambda item: len(item[0]), reverse=True)

    def __call__(self, text: str) -> str:
        return ABSOLUTE_PATH.sub(lambda match: self._short(match.group()), text)

    def _short(self, path: str) -> str:
        for folder, name in self.folders:
            if path == folder or path.startswith(folder + "/"):
                return name + path[len(folder):]
        return "…/" + path.rstrip("/").rsplit("/", 1)[-1]


def server_path_redactor(store_folder: Path, data_dir: str | None) -> PathRedactor:
    """Short names for the server's folders: the temporary folder, the app's, the toolboard home (and the
    store's folder), the home folder and the operator's data folder."""
    folders: dict[str | Path, str] = {
        tempfile.gettempdir(): "<temp>",
        APP_ROOT: "<app>",
        toolboard_home(): "<toolboard home>",
        store_folder: "<toolboard home>",
        Path.home(): "~",
    }
    if data_dir:
        folders[data_dir] = "<data folder>"
    return PathRedactor(folders)


def paths_as_words(text: str) -> str:
    """`text` with every path in it said as "(a local path)": for a note shown to visitors about files of the
    server's data, where which folder it is helps nobody."""
    return STANDALONE_PATH.sub("(a local path)", text)


# ---- published results -----------------------------------------------------------------------------


def public_text(text: str) -> str:
    """Free text a user typed, as it may be published: no key-shaped tokens, no local folders (an absolute path
    keeps only its last part: vLLM names a model by the folder it was loaded from)."""
    return LOCAL_PATH.sub(lambda match: match.group(1), redact(storable_text(text)))


def endpoint_names(config: dict[str, Any]) -> list[str]:
    """The hosts (and host:port) of a run's endpoints (the model's and every role's), longest first."""
    urls = [(config.get("model") or {}).get("base_url")]
    urls += [(role or {}).get("base_url") for role in (config.get("roles") or {}).values()]
    names = set()
    for url in urls:
        try:
            parts = urlsplit(url or "")
            if parts.hostname:
                names.update({parts.hostname, parts.netloc.rpartition("@")[2]})
        except ValueError:
            continue
    return sorted(names, key=len, reverse=True)


def public_error(text: str | None, config: dict[str, Any]) -> str | None:
    """An error or status message as it may be published: the run's endpoint hosts (a connection error names
    them) replaced by `<endpoint>`, then as public_text."""
    if text is None:
        return None
    for name in endpoint_names(config):
        text = text.replace(name, "<endpoint>")
    return public_text(text)


def public_settings(config: Any) -> Any:
    """A run's settings without endpoints, key variable names or local folders; other text as public_text."""
    def leaf(key: str, value: Any) -> Any:
        if key in ENDPOINT_SETTINGS:
            return ""
        if key in LOCAL_SETTINGS:
            return None
        return public_text(value) if isinstance(value, str) else value

    return redacted_by_key(config, leaf)


def public_request(body: Any) -> Any:
    """A kept request body as it may be published: `model` names (a local server names a model by its folder)
    as public_text, any other text without key-shaped tokens (a body names no endpoint and no key: those travel
    in the URL and headers)."""
    def leaf(key: str, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        return public_text(value) if key == "model" else redact(value)

    return redacted_by_key(body, leaf)


def public_events(events: Any, config: dict[str, Any]) -> Any:
    """A sample's model calls as they may be published: requests and responses as public_request makes them,
    errors as public_error (a connection error names the endpoint)."""
    if not isinstance(events, list):
        return events
    return [{**public_request(event), "error": public_error(event.get("error"), config)}
            if isinstance(event, dict) else event for event in events]
