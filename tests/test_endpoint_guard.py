"""The endpoint guard: http(s) URLs with a host everywhere; public hosts only in public mode. No network:
literal addresses, `localhost`, and a patched resolver for names."""

from __future__ import annotations

import socket

import pytest

from evaluators.core import public_hosts
from evaluators.core.errors import ToolboardError
from evaluators.core.public_hosts import is_public_mode
from evaluators.engine.endpoint_guard import EndpointNotAllowedError, check_endpoint_allowed

PUBLIC_V4 = "93.184.215.14"
PUBLIC_V6 = "2606:4700:4700::1111"


@pytest.fixture
def public(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLBOARD_PUBLIC", "1")


def resolve_to(monkeypatch: pytest.MonkeyPatch, *addresses: str) -> list[str]:
    """Make every name resolve to `addresses`; returns the list of names looked up."""
    looked_up: list[str] = []

    def fake_getaddrinfo(host: str, port: int, *args: object, **kwargs: object) -> list[tuple]:
        looked_up.append(host)
        return [(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in addresses]

    monkeypatch.setattr(public_hosts.socket, "getaddrinfo", fake_getaddrinfo)
    return looked_up


def test_public_mode_reads_the_environment(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("TOOLBOARD_PUBLIC", raising=False)
    assert not is_public_mode()
    monkeypatch.setenv("TOOLBOARD_PUBLIC", "1")
    assert is_public_mode()
    monkeypatch.setenv("TOOLBOARD_PUBLIC", "0")
    assert not is_public_mode()


@pytest.mark.parametrize("url, expected", [
    ("ftp://example.com/v1", "scheme 'ftp'"),
    ("file:///etc/passwd", "scheme 'file'"),
    ("example.com/v1", "no scheme"),
    ("http:///v1", "no host"),
    ("", "empty"),
    ("http://example.com:99999/v1", "invalid port"),
])
def test_malformed_urls_are_refused_everywhere(monkeypatch: pytest.MonkeyPatch, url: str, expected: str):
    monkeypatch.delenv("TOOLBOARD_PUBLIC", raising=False)
    with pytest.raises(EndpointNotAllowedError, match=expected) as caught:
        check_endpoint_allowed(url)
    assert "http:// or https://" in str(caught.value) or "port" in str(caught.value)
    assert isinstance(caught.value, ToolboardError)


def test_private_hosts_are_allowed_outside_public_mode(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("TOOLBOARD_PUBLIC", raising=False)
    looked_up = resolve_to(monkeypatch, "10.0.0.1")
    for url in ("http://127.0.0.1:8000/v1", "http://localhost:11434/v1", "https://internal.corp/v1"):
        check_endpoint_allowed(url)
    assert looked_up == []  # nothing is resolved when nothing is checked


@pytest.mark.parametrize("host, reason", [
    ("127.0.0.1", "loopback"),
    ("127.8.9.10", "loopback"),
    ("[::1]", "loopback"),
    ("0.0.0.0", "unspecified"),
    ("[::]", "unspecified"),
    ("10.1.2.3", "private"),
    ("172.16.0.1", "private"),
    ("192.168.1.1", "private"),
    ("[fd00::1]", "private"),
    ("169.254.169.254", "link-local"),  # the cloud metadata service
    ("[fe80::1]", "link-local"),
    ("224.0.0.1", "multicast"),
    ("[ff02::1]", "multicast"),
    ("100.64.0.1", "not a globally routable"),
    ("[::ffff:127.0.0.1]", "embeds 127.0.0.1, a loopback"),
    ("[::ffff:10.0.0.1]", "embeds 10.0.0.1, a private"),
    ("[64:ff9b::a9fe:a9fe]", "embeds 169.254.169.254, a link-local"),
    ("[2002:c0a8:101::1]", "embeds 192.168.1.1, a private"),
])
def test_public_mode_refuses_non_public_literal_addresses(public: None, host: str, reason: str):
    with pytest.raises(EndpointNotAllowedError, match=reason) as caught:
        check_endpoint_allowed(f"http://{host}:8000/v1")
    assert host.strip("[]") in str(caught.value)


@pytest.mark.parametrize("host", ["2130706433", "0x7f.0.0.1", "0177.0.0.1", "127.1"])
def test_public_mode_refuses_loopback_written_oddly(public: None, host: str):
    with pytest.raises(EndpointNotAllowedError, match=f"'{host}'.*127.0.0.1, a loopback"):
        check_endpoint_allowed(f"http://{host}/v1")


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST", "localhost.", "api.localhost"])
def test_public_mode_refuses_localhost_names_without_resolving(public: None, monkeypatch: pytest.MonkeyPatch, host: str):
    looked_up = resolve_to(monkeypatch, PUBLIC_V4)
    with pytest.raises(EndpointNotAllowedError, match="localhost"):
        check_endpoint_allowed(f"http://{host}:8000/v1")
    assert looked_up == []


def test_public_mode_refuses_a_name_resolving_to_a_private_address(public: None, monkeypatch: pytest.MonkeyPatch):
    looked_up = resolve_to(monkeypatch, PUBLIC_V4, "10.0.0.7")  # every address counts, not just the first
    with pytest.raises(EndpointNotAllowedError, match=r"'models\.example\.com'.*10\.0\.0\.7, a private address"):
        check_endpoint_allowed("https://models.example.com/v1")
    assert looked_up == ["models.example.com"]


def test_public_mode_allows_a_name_resolving_to_public_addresses(public: None, monkeypatch: pytest.MonkeyPatch):
    resolve_to(monkeypatch, PUBLIC_V4, PUBLIC_V6)
    check_endpoint_allowed("https://api.example.com/v1")
    check_endpoint_allowed(f"http://{PUBLIC_V4}:8000/v1")


def test_public_mode_allows_public_literal_addresses(public: None):
    check_endpoint_allowed(f"http://{PUBLIC_V4}:8000/v1")
    check_endpoint_allowed(f"https://[{PUBLIC_V6}]/v1")


def test_public_mode_refuses_a_name_that_does_not_resolve(public: None, monkeypatch: pytest.MonkeyPatch):
    def no_such_name(*args: object, **kwargs: object) -> list[tuple]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(public_hosts.socket, "getaddrinfo", no_such_name)
    with pytest.raises(EndpointNotAllowedError, match=r"'nowhere\.example' could not be resolved \(Name or service not known\)"):
        check_endpoint_allowed("https://nowhere.example/v1")


def test_errors_never_repeat_credentials(public: None, monkeypatch: pytest.MonkeyPatch):
    resolve_to(monkeypatch, "192.168.0.5")
    for url in ("https://alice:s3cret-pass@models.example.com/v1", "https://alice:s3cret-pass@10.0.0.1/v1",
                "ftp://alice:s3cret-pass@example.com/", "http://alice:s3cret-pass@/v1",
                "http://alice:s3cret-pass@example.com:port/v1"):
        with pytest.raises(EndpointNotAllowedError) as caught:
            check_endpoint_allowed(url)
        assert "s3cret-pass" not in str(caught.value) and "alice" not in str(caught.value)
