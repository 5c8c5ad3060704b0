"""Who owns a run, and who may see and act on it: the rules of a public deployment (a private one allows everything).

A visitor is a random token their browser keeps; an API caller is the `owner_token` it passes, else its Gradio
session (the front door reads those: ui/visitor.py). A run stores only a salted hash of that identity (HMAC-SHA256
keyed by a secret made once per installation and kept next to the store, apart from the API-key cache salt so
neither secret serves two purposes), never the token itself. On a private deployment nobody is anyone: every run
is everyone's.

On a public deployment a run the visitor may not see (`may_see_job`: not theirs, and not finished and shared or
the operator's) does not exist for them: every refusal about it (find_run, check_owns, check_may_see_job,
check_may_see_outputs) is word for word the one an id nobody has gets (`run_not_found`), so no message tells
"someone else's" from "no such run". A run they may see but not act on (another visitor's finished shared run, an
operator's finished run) is refused with its own reason.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import logging
import secrets
from pathlib import Path

from evaluators.core.errors import ToolboardError
from evaluators.core.limits import echoed
from evaluators.core.secret_file import secret_file
from evaluators.engine.store import RunRow, Store

log = logging.getLogger(__name__)

SECRET_FILE = "visitor-secret"
SECRET_BYTES = 32
MIN_TOKEN_CHARS = 16
MAX_TOKEN_CHARS = 200
# How a public board names a run whose id only its visitor may know (Visitors.run_ref).
PRIVATE_RUN_PREFIX = "unshared-"


def installation_secret(folder: Path) -> bytes:
    """The installation's secret, made on first use with owner-only permissions (evaluators.core.secret_file)."""
    try:
        secret = secret_file(folder / SECRET_FILE, secrets.token_bytes(SECRET_BYTES))
    except OSError as error:
        if error.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise
        log.warning("the visitor secret cannot be written in a read-only folder (%s): this process uses one of "
                    "its own, so visitors lose access to their runs' outputs when it restarts", error.strerror)
        return secrets.token_bytes(SECRET_BYTES)
    if len(secret) < SECRET_BYTES:
        raise ToolboardError(f"the visitor secret {SECRET_FILE} next to the store is damaged (too short): delete it to"
                             " make a new one (visitors then no longer own the runs they started)")
    return secret


def new_token() -> str:
    return secrets.token_urlsafe(32)


class Visitors:
    """Turns a browser token, API token or session into the owner hash stored with runs."""

    def __init__(self, public: bool, folder: Path):
        self.public = public
        # A private deployment has no owners, and so no secret file to make.
        self._secret = installation_secret(folder) if public else b""

    def browser_secret(self) -> str:
        """The key the browser encrypts its stored token with. It is sent to every page, so it is derived
        from the installation secret (stable across restarts, so tokens stay readable) and reveals nothing of it."""
        if not self.public:
            return ""
        return hmac.new(self._secret, b"browser-state", hashlib.sha256).hexdigest()[:32]

    def session_token(self, session_hash: str) -> str:
        """The token a page that has none is given (ui/app.keep_or_make_token): its session's, an HMAC with the
        installation's secret, so that a run started before the token reached the browser's storage (a visitor
        quicker than a busy page's load) is already that token's, and the visitor keeps it after a reload."""
        return hmac.new(self._secret, f"session-token:{session_hash}".encode(), hashlib.sha256).hexdigest()[:43]

    def owner(self, token: object, session_hash: str | None) -> str | None:
        """The owner hash of whoever sends a request: their token when they give one, else their session's token
        (session_token). None on a private deployment."""
        if not self.public:
            return None
        text = token.strip() if isinstance(token, str) else ""
        if text:
            if not MIN_TOKEN_CHARS <= len(text) <= MAX_TOKEN_CHARS:
                raise ToolboardError(f"owner_token must be a secret of {MIN_TOKEN_CHARS} to {MAX_TOKEN_CHARS} characters"
                                     " (e.g. 32 random letters and digits); leave it empty to use your session")
            return self._hash("token", text)
        if session_hash:
            return self._hash("token", self.session_token(session_hash))
        raise ToolboardError("this request has no visitor identity: pass owner_token (a random secret you keep)")

    def run_ref(self, run_id: str) -> str:
        """What a public board shows instead of the id of a run whose visitor has not shared it: stable (the same
        run, the same reference, across restarts), and telling nothing of the id (an HMAC with the installation's
        secret). AppServices.board_run_id turns it back for the server's own reads (charts)."""
        return PRIVATE_RUN_PREFIX + hmac.new(self._secret, f"run:{run_id}".encode(), hashlib.sha256).hexdigest()[:12]

    def _hash(self, kind: str, value: str) -> str:
        return hmac.new(self._secret, f"{kind}:{value}".encode(), hashlib.sha256).hexdigest()


def run_not_found(run_id: str, public: bool) -> ToolboardError:
    """The refusal of an id with no run behind it; on a public deployment also of a run the visitor may not see
    (the same words, so neither is told from the other)."""
    if not public:
        return ToolboardError(f"no run {run_id!r} here")
    return ToolboardError(f"no run {echoed(run_id)!r} here that you can see (a run another visitor started is shown"
                          " only to them until it has finished and they share it)")


def find_run(store: Store, run_id: str, public: bool = False) -> RunRow:
    """The run, with an error that names no server path (the store's names its file): run_not_found's."""
    if not store.has_run(run_id):
        raise run_not_found(run_id, public)
    return store.get_run(run_id)


# ---- what a visitor may do (public deployments; a private one allows everything) ---------------------


def owns(public: bool, run: RunRow, owner: str | None) -> bool:
    """The visitor started the run (every run is everyone's on a private deployment)."""
    return not public or (run.owner is not None and run.owner == owner)


def may_see_outputs(public: bool, run: RunRow, owner: str | None) -> bool:
    """Raw outputs: the owner's, or everyone's when the run is shared or the operator's (no owner)."""
    return not public or run.owner is None or bool(run.shared) or run.owner == owner


def may_see_job(public: bool, run: RunRow, owner: str | None) -> bool:
    """A run's progress and report, its id and its fields (the Model page, errors naming it): its owner's while it
    runs; once finished, whoever may see its outputs."""
    return owns(public, run, owner) or (run.status == "finished" and may_see_outputs(public, run, owner))


def check_owns(public: bool, run: RunRow, owner: str | None, action: str) -> None:
    """Only the owner acts on a run; a run the visitor may not see is refused as an id with no run is."""
    if owns(public, run, owner):
        return
    if not may_see_job(public, run, owner):
        raise run_not_found(run.id, public)
    if run.owner is None:
        raise ToolboardError(f"run {run.id} belongs to the operator of this deployment: visitors cannot {action} it")
    raise ToolboardError(f"run {run.id} was started by another visitor: only they can {action} it")


def check_may_see_outputs(public: bool, run: RunRow, owner: str | None) -> None:
    """Outputs the visitor may not see: refused as an id with no run is (such a run is never one they may see)."""
    if not may_see_outputs(public, run, owner):
        raise run_not_found(run.id, public)


def check_may_see_job(public: bool, run: RunRow, owner: str | None) -> None:
    """A run the visitor may not see: refused as an id with no run is."""
    if not may_see_job(public, run, owner):
        raise run_not_found(run.id, public)
