"""Which model endpoints a run may call.

Every deployment refuses URLs that are not http(s) or have no host. A public deployment
(`TOOLBOARD_PUBLIC=1`, e.g. a public Space) also refuses hosts that are, or resolve to, private,
loopback, link-local or otherwise non-public addresses: anyone can type a base URL into the app, and
the Space must not become a way to probe its own network.

Limits: the check resolves the name once; a DNS answer that changes between this check and the
request (rebinding) is not caught here.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
import unicodedata
from typing import TYPE_CHECKING
from urllib.parse import SplitResult, urlsplit

from evaluators.core.errors import ToolboardError
from evaluators.engine.local_model import is_local, local_model

if TYPE_CHECKING:
    from evaluators.engine.settings import RunConfig

PUBLIC_MODE_ENV = "TOOLBOARD_PUBLIC"
ALLOWED_SCHEMES = ("http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}
_TRUE_VALUES = {"1", "true", "yes", "on"}
# RFC 6052 well-known NAT64 prefix: the last 32 bits are an IPv4 address the gateway will reach.
_NAT64_PREFIX = ipaddress.IPv6Network("64:ff9b::/96")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class EndpointNotAllowedError(ToolboardError):
    """The base URL is malformed, or points somewhere a public deployment must not call."""


def is_public_mode() -> bool:
    """True when TOOLBOARD_PUBLIC is set to 1 (or true/yes/on); on a Hugging Face Space (SPACE_ID set)
    also when it is unset, so a Space is public unless TOOLBOARD_PUBLIC=0 says otherwise."""
    configured = os.environ.get(PUBLIC_MODE_ENV)
    if configured is None or not configured.strip():
        return bool(os.environ.get("SPACE_ID"))
    return configured.strip().lower() in _TRUE_VALUES


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
    configured = os.environ.get(KEY_VARS_ENV)
    if configured is None or not configured.strip():
        return DEFAULT_KEY_VARS
    return tuple(name.strip() for name in configured.split(",") if name.strip())


def check_key_variable(name: str) -> None:
    """Only variables that hold API keys may be sent to an endpoint, and only those the operator lists
    in TOOLBOARD_KEY_VARS (default: OPENAI_API_KEY): a name ending in _KEY alone is not enough
    (AWS_SECRET_ACCESS_KEY is no model key)."""
    if not name:
        return
    allowed = allowed_key_variables()
    if name in allowed:
        return
    if not KEY_VARIABLE.match(name):
        raise ToolboardError(f"{name!r} is not an API key variable: its name must end in _KEY (e.g. OPENAI_API_KEY)")
    raise ToolboardError(f"{name!r} is not one of the key variables this server allows ({', '.join(allowed)}); "
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


def check_endpoint_allowed(base_url: str) -> None:
    """Raise EndpointNotAllowedError unless `base_url` may be called; see the module docstring."""
    if isinstance(base_url, str) and is_local(base_url):
        local_model(base_url)  # a known built-in model (our own child process), or a clear error
        return
    parts = _parse_base_url(base_url)
    if not is_public_mode():
        return
    host = parts.hostname or ""
    if _is_localhost_name(host):
        raise EndpointNotAllowedError(f"host {host!r} is not allowed on a public deployment: it is this machine (localhost)")
    for address in _resolve_host(host, _port_of(parts)):
        reason = non_public_reason(address)
        if reason is not None:
            raise EndpointNotAllowedError(
                f"host {host!r} is not allowed on a public deployment: it resolves to {address}, {reason}"
            )


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
    if not parts.hostname:
        raise EndpointNotAllowedError("the base URL has no host; expected an http:// or https:// URL such as https://api.example.com/v1")
    _port_of(parts)  # a malformed port is a malformed URL, public mode or not
    return parts


def _port_of(parts: SplitResult) -> int:
    try:
        port = parts.port
    except ValueError:
        raise EndpointNotAllowedError(f"host {parts.hostname!r} has an invalid port; expected a number from 1 to 65535") from None
    return port or DEFAULT_PORTS[parts.scheme.lower()]


def _is_localhost_name(host: str) -> bool:
    """`localhost` and `*.localhost` are this machine by definition (RFC 6761), whatever DNS says."""
    name = host.rstrip(".").lower()
    return name == "localhost" or name.endswith(".localhost")


def _resolve_host(host: str, port: int) -> list[IPAddress]:
    """Every address the host resolves to; a literal IP (in any form getaddrinfo accepts) is normalised."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError) as error:
        raise EndpointNotAllowedError(f"host {host!r} could not be resolved ({_resolver_reason(error)})") from None
    addresses = [_parse_address(str(info[4][0])) for info in infos]
    if not addresses:
        raise EndpointNotAllowedError(f"host {host!r} could not be resolved (no addresses)")
    return addresses


def _resolver_reason(error: BaseException) -> str:
    if isinstance(error, socket.gaierror) and error.strerror:
        return error.strerror
    return type(error).__name__


def _parse_address(text: str) -> IPAddress:
    return ipaddress.ip_address(text.split("%", 1)[0])  # drop an IPv6 zone id such as %eth0


def non_public_reason(address: IPAddress) -> str | None:
    """Why a public deployment must not call this address, or None if it is a public address."""
    embedded = _embedded_ipv4(address)
    if embedded is not None:
        reason = non_public_reason(embedded)
        return f"which embeds {embedded}, {reason}" if reason else None
    checks = (
        ("is_unspecified", "an unspecified address"),
        ("is_loopback", "a loopback address"),
        ("is_link_local", "a link-local address"),
        ("is_multicast", "a multicast address"),
        ("is_private", "a private address"),
        ("is_reserved", "a reserved address"),
    )
    for attribute, reason in checks:
        if getattr(address, attribute):
            return reason
    if not address.is_global:  # e.g. 100.64.0.0/10 shared (carrier-grade NAT) space
        return "not a globally routable address"
    return None


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for (mapped ::ffff:a.b.c.d, 6to4, NAT64), if any."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64_PREFIX:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None
