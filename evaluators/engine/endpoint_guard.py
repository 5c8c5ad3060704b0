"""Which model endpoints a run may call.

Every deployment refuses URLs that are not http(s) or have no host. A public deployment
(`TOOLBOARD_PUBLIC=1`, e.g. a public Space) also refuses hosts that are, or resolve to, private,
loopback, link-local or otherwise non-public addresses: anyone can type a base URL into the app, and
the Space must not become a way to probe its own network.

Whether the deployment is public is read here (core/public_hosts.is_public_mode), not handed in as the rest of
the deployment's policy is (evaluators/service/deployment.py): the guard must hold on every path that reaches an
endpoint (a new run, a resume, a queue worker, a judge, a server key), also one whose caller passed no flag.

Limits: the check resolves the name once; a DNS answer that changes between this check and the
request (rebinding) is not caught here.
"""

from __future__ import annotations

import os
import re
import unicodedata
from typing import TYPE_CHECKING, Any
from urllib.parse import SplitResult, urlsplit

from evaluators.core.environment import read_setting
from evaluators.core.errors import ToolboardError
from evaluators.core.limits import echoed
from evaluators.core.public_hosts import (
    DEFAULT_PORTS,
    PUBLIC_MODE_ENV,
    check_public_host,
    check_redirect_hop,
    is_public_mode,
    non_public_reason,
)
from evaluators.engine.local_model import is_local, local_model

if TYPE_CHECKING:
    from evaluators.engine.settings import RunConfig

__all__ = ["PUBLIC_MODE_ENV", "EndpointNotAllowedError", "check_endpoint_allowed", "non_public_reason"]

ALLOWED_SCHEMES = ("http", "https")
# What a base URL's host and port may be written with: a name, an IPv4 or a bracketed IPv6 address, and
# a port. Anything else (user:pass@, ";", "\\", spaces, percent escapes) is read differently by different
# URL parsers, so the host the check sees may not be the host the request reaches.
_PLAIN_NETLOC = re.compile(r"[A-Za-z0-9._~\-]+(:[0-9]*)?|\[[0-9A-Fa-f:.]+\](:[0-9]*)?")


class EndpointNotAllowedError(ToolboardError):
    """The base URL is malformed, or points somewhere a public deployment must not call."""


KEY_VARIABLE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*_KEY$")
# The variables whose keys a run started from the app may name, comma-separated (e.g.
# "OPENAI_API_KEY,GROQ_API_KEY"); the operator lists them. Unset: OPENAI_API_KEY only, so a server's
# other secrets (AWS_SECRET_ACCESS_KEY, ...) can never be sent to an endpoint a form names.
KEY_VARS_ENV = "TOOLBOARD_KEY_VARS"
DEFAULT_KEY_VARS = ("OPENAI_API_KEY",)
# Characters a pasted key picks up, named so the message says what to remove.
_CHARACTER_NAMES = {
    "\n": "a newline", "\r": "a carriage return", "\t": "a tab", " ": "a space",
    "\u00a0": "a non-breaking space (U+00A0)", "\u200b": "a zero-width space (U+200B)",
    "\u200c": "a zero-width non-joiner (U+200C)", "\u200d": "a zero-width joiner (U+200D)",
    "\u2060": "a word joiner (U+2060)", "\ufeff": "a zero-width no-break space (U+FEFF)",
}


class InvalidApiKeyError(ToolboardError):
    """An API key that cannot be sent as given (it holds a character no key has)."""


def allowed_key_variables() -> tuple[str, ...]:
    """The key variables the operator allows a form to name (TOOLBOARD_KEY_VARS, else OPENAI_API_KEY)."""
    configured = read_setting("key_vars")
    if configured is None:
        return DEFAULT_KEY_VARS
    return tuple(name.strip() for name in configured.split(",") if name.strip())


def check_key_variable(name: str, allowed: tuple[str, ...] | None) -> None:
    """Only variables that hold API keys may be sent to an endpoint: `allowed` lists those a deployment
    allows (the app's: TOOLBOARD_KEY_VARS, default OPENAI_API_KEY: a name ending in _KEY alone is not
    enough, AWS_SECRET_ACCESS_KEY is no model key); None allows any name ending in _KEY (the command
    line of the user whose environment it is). An empty name names no variable."""
    if not name or (allowed is not None and name in allowed):
        return
    if not KEY_VARIABLE.match(name):
        raise ToolboardError(f"{echoed(name)!r} is not an API key variable: its name must end in _KEY (e.g. OPENAI_API_KEY)")
    if allowed is not None:
        raise ToolboardError(f"{name!r} is not one of the key variables this server allows ({', '.join(allowed) or 'none'}); "
                             f"its operator can allow more in {KEY_VARS_ENV}")


def check_api_key(key: str | None, what: str = "the API key") -> str | None:
    """The key without surrounding whitespace (None when there is none), or InvalidApiKeyError when it
    holds a character no key has (only printable ASCII, no spaces): sent as is, it would fail every
    request as a malformed one. `what` names the key in the message (e.g. "the key in OPENAI_API_KEY")."""
    if key is None:
        return None
    stripped = key.strip()
    start = len(key) - len(key.lstrip())
    for index, character in enumerate(stripped):
        if not ("!" <= character <= "~"):
            raise InvalidApiKeyError(f"{what} holds {_describe(character)} (character {start + index + 1}): "
                                     "paste it again without it")
    return stripped or None


def check_run_keys(config: RunConfig, given: str | None = None) -> None:
    """Refuse, before a run is created or resumed, a key that cannot be sent: `given` (a key handed in
    for this run, e.g. the app's password field, which stands in for the model's variable), else the
    model's variable, and the judge's and the simulated user's variables."""
    if given:
        check_api_key(given)
    names = [] if given else [config.model.api_key_env]
    names += [endpoint.api_key_env for endpoint in config.roles.values()]
    for name in dict.fromkeys(n for n in names if n):
        check_api_key(key_from_environment(name), f"the API key in {name}")


def _describe(character: str) -> str:
    if character in _CHARACTER_NAMES:
        return _CHARACTER_NAMES[character]
    code = f"U+{ord(character):04X}"
    if unicodedata.category(character).startswith("C"):
        return f"an invisible character ({code})"
    return f"the character {character!r} ({code}): keys are plain ASCII"


def key_from_environment(name: str | None) -> str | None:
    """The key held by the variable `name`, never on a public deployment (the server's own keys must
    not reach an endpoint a visitor chose, even for a run stored before public mode was switched on)."""
    if not name or is_public_mode():
        return None
    return os.environ.get(name)


def check_endpoint_allowed(base_url: str, public: bool | None = None) -> None:
    """Raise EndpointNotAllowedError unless `base_url` may be called; see the module docstring. `public`:
    the deployment's policy (None: TOOLBOARD_PUBLIC, see is_public_mode)."""
    if isinstance(base_url, str) and is_local(base_url):
        local_model(base_url)  # a known built-in model (our own child process), or a clear error
        return
    parts = _parse_base_url(base_url)
    if is_public_mode() if public is None else public:
        check_public_host(parts.hostname or "", _port_of(parts), EndpointNotAllowedError)


def _parse_base_url(base_url: str) -> SplitResult:
    """Scheme and host checks that hold everywhere. Messages never repeat the URL (it may hold user:pass@)."""
    if not isinstance(base_url, str) or not base_url.strip():
        raise EndpointNotAllowedError("the base URL is empty; expected an http:// or https:// URL such as https://api.example.com/v1")
    parts = urlsplit(base_url.strip())
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        shown = f"scheme {scheme!r}" if scheme else "no scheme"
        raise EndpointNotAllowedError(
            f"the base URL has {shown}; expected an http:// or https:// URL such as https://api.example.com/v1"
        )
    if "@" in parts.netloc:
        raise EndpointNotAllowedError("the base URL holds a user name or password (user:pass@host): give the key in "
                                      "the API key field instead; expected a URL such as https://api.example.com/v1")
    if not parts.hostname:
        raise EndpointNotAllowedError("the base URL has no host; expected an http:// or https:// URL such as https://api.example.com/v1")
    if not _PLAIN_NETLOC.fullmatch(parts.netloc):
        raise EndpointNotAllowedError("the base URL's host holds characters a host name cannot have; expected a host "
                                      "name or IP address and an optional port, such as https://api.example.com:8443/v1")
    _port_of(parts)  # a malformed port is a malformed URL, public mode or not
    return parts


def _port_of(parts: SplitResult) -> int:
    try:
        port = parts.port
    except ValueError:
        raise EndpointNotAllowedError(f"host {parts.hostname!r} has an invalid port; expected a number from 1 to 65535") from None
    return port or DEFAULT_PORTS[parts.scheme.lower()]


def _check_next_hop(response: Any) -> None:
    """An httpx2 response hook: a redirect goes on only to an address the public-mode check lets through."""
    if response.has_redirect_location:
        check_redirect_hop(str(response.request.url.join(response.headers["location"])))


def guard_hub_requests() -> None:
    """Every redirect the Hugging Face Hub client follows from now on (the Hub sends file downloads on to its
    CDN) goes, on a public deployment, only to a public host. The Hub's own address is the operator's."""
    import httpx2
    from huggingface_hub import get_session, set_client_factory

    # The client the Hub library makes (its own request hooks: offline mode, request ids), read through its
    # public attributes, is what each new client copies; with the check added to its response hooks.
    made = get_session()
    request_hooks = list(made.event_hooks["request"])
    response_hooks = [hook for hook in made.event_hooks["response"] if hook is not _check_next_hop]
    follow_redirects, timeout, headers = made.follow_redirects, made.timeout, made.headers.copy()

    def guarded_client() -> Any:
        return httpx2.Client(event_hooks={"request": request_hooks, "response": [*response_hooks, _check_next_hop]},
                             follow_redirects=follow_redirects, timeout=timeout, headers=headers)

    set_client_factory(guarded_client)  # the client made above is closed: the next Hub request makes a guarded one
