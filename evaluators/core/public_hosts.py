"""Which hosts a public deployment may send a request to: whether this deployment is public, and whether a
host is, or resolves to, only public addresses. Every outgoing request of a public deployment is held to
this, also each hop of a redirect that a download follows (the model endpoints follow none).

Limits: a name is resolved once per check; a DNS answer that changes between the check and the
connection (rebinding) is not caught here, unless the caller connects to the addresses the check returns
(`public_addresses`; web search's fetches do).
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from evaluators.core.environment import read_flag, read_other
from evaluators.core.errors import ToolboardError

PUBLIC_MODE_ENV = "TOOLBOARD_PUBLIC"
DEFAULT_PORTS = {"http": 80, "https": 443}
# RFC 6052 well-known NAT64 prefix: the last 32 bits are an IPv4 address the gateway will reach.
_NAT64_PREFIX = ipaddress.IPv6Network("64:ff9b::/96")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class HostNotAllowedError(ToolboardError):
    """A host that a public deployment must not send requests to."""


def is_public_mode() -> bool:
    """True when TOOLBOARD_PUBLIC is on (1/true/yes/on); when it is unset, on a Hugging Face Space (SPACE_ID set),
    so a Space is public unless TOOLBOARD_PUBLIC=0 says otherwise. Another value is refused (read_flag)."""
    return read_flag("public", unset=bool(read_other("SPACE_ID")))


def check_public_host(host: str, port: int, error: type[ToolboardError] = HostNotAllowedError) -> None:
    """Raise `error` unless `host` is a name or address whose every address is public."""
    public_addresses(host, port, error)


def public_addresses(host: str, port: int, error: type[ToolboardError] = HostNotAllowedError) -> list[IPAddress]:
    """The addresses `host` resolves to, every one checked public; `error` otherwise. A caller that connects to one
    of these (not to the name, resolved again) cannot be sent elsewhere by a DNS answer that changed meanwhile."""
    if is_localhost_name(host):
        raise error(f"host {host!r} is not allowed on a public deployment: it is this machine (localhost)")
    addresses = resolve_host(host, port, error)
    for address in addresses:
        reason = non_public_reason(address)
        if reason is not None:
            raise error(f"host {host!r} is not allowed on a public deployment: it resolves to {address}, {reason}")
    return addresses


def check_redirect_hop(url: str, error: type[ToolboardError] = HostNotAllowedError) -> None:
    """On a public deployment, the next hop of a redirect that a download follows must be http(s) to a
    public host; elsewhere every hop is allowed."""
    if not is_public_mode():
        return
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        raise error("a redirect to something other than an http(s) URL with a host is not followed")
    try:
        port = parts.port or DEFAULT_PORTS[scheme]
    except ValueError:
        raise error(f"a redirect to host {parts.hostname!r} with an invalid port is not followed") from None
    check_public_host(parts.hostname, port, error)


def is_localhost_name(host: str) -> bool:
    """`localhost` and `*.localhost` are this machine by definition (RFC 6761), whatever DNS says."""
    name = host.rstrip(".").lower()
    return name == "localhost" or name.endswith(".localhost")


def resolve_host(host: str, port: int, error: type[ToolboardError] = HostNotAllowedError) -> list[IPAddress]:
    """Every address the host resolves to; a literal IP (in any form getaddrinfo accepts) is normalised."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError) as failure:
        raise error(f"host {host!r} could not be resolved ({_resolver_reason(failure)})") from None
    addresses = [_parse_address(str(info[4][0])) for info in infos]
    if not addresses:
        raise error(f"host {host!r} could not be resolved (no addresses)")
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
