"""Issue 27, item 1: no request follows a redirect to a host the endpoint guard never checked.

A "public host" is a loopback server on 127.0.0.2 that the guard is told to take for a public address (its
resolver pointed at test addresses: nothing leaves this machine); it answers every request with a 302 or
307 to an "internal service" on 127.0.0.1, which counts what reaches it. Before the fix the pre-flight
followed the redirect, quoted the internal service's answer back ("HTTP 404: …; it lists: …") and a 307
re-sent the visitor's key there."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from gradio_client import Client

from evaluators.core import public_hosts
from evaluators.core.archive import download
from evaluators.core.errors import DataError
from evaluators.core.public_hosts import HostNotAllowedError
from evaluators.engine.endpoint_guard import EndpointNotAllowedError, check_endpoint_allowed, guard_hub_requests
from evaluators.engine.preflight import EndpointCheckFailed, check_endpoint
from evaluators.engine.sdk_transport import AttemptFailed, EndpointSpec, make_sdk_client, post_completion
from tests.app_fixtures import running_app
from tests.loopback_app import LoopbackApp

STAND_IN_PUBLIC = "127.0.0.2"
SECRET = "sk-visitor-key-never-to-leave"
INTERNAL_MODEL = "internal-only-model-id"


class InternalService(LoopbackApp):
    """What a deployment's own network holds: it must never be reached."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[dict[str, Any]] = []

    def routes(self, app: web.Application) -> None:
        app.router.add_route("*", "/{tail:.*}", self._answer)

    async def _answer(self, request: web.Request) -> web.Response:
        self.requests.append({"path": request.path, "authorization": request.headers.get("Authorization")})
        if request.path.endswith("/models"):
            return web.json_response({"object": "list", "data": [{"id": INTERNAL_MODEL}]})
        return web.json_response({"error": {"message": "internal secret body"}}, status=404)


class Redirector(LoopbackApp):
    """A host that passed the guard and answers everything with a redirect to `target`."""

    def __init__(self, target: str, status: int):
        super().__init__()
        self.bind_host = STAND_IN_PUBLIC
        self.target, self.status = target, status

    @property
    def base_url(self) -> str:
        return f"http://{STAND_IN_PUBLIC}:{self.port}/v1"

    def routes(self, app: web.Application) -> None:
        app.router.add_route("*", "/{tail:.*}", self._redirect)

    async def _redirect(self, request: web.Request) -> web.Response:
        return web.Response(status=self.status, headers={"Location": self.target + request.path})


@pytest.fixture
def public_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    """Public mode, with the stand-in host taken for a public address (only it: 127.0.0.1 stays loopback)."""
    monkeypatch.setenv("TOOLBOARD_PUBLIC", "1")
    real = public_hosts.non_public_reason
    monkeypatch.setattr(public_hosts, "non_public_reason",
                        lambda address: None if str(address) == STAND_IN_PUBLIC else real(address))


@pytest.fixture
def internal() -> Iterator[InternalService]:
    with InternalService() as service:
        yield service


def redirector(internal: InternalService, status: int) -> Redirector:
    return Redirector(f"http://127.0.0.1:{internal.port}", status)


@pytest.mark.parametrize("status", [302, 307])
def test_the_pre_flight_refuses_a_redirect_and_never_reaches_its_target(public_guard: None, internal: InternalService,
                                                                        status: int):
    with redirector(internal, status) as public:
        check_endpoint_allowed(public.base_url)  # the guard sees a public host
        with pytest.raises(EndpointCheckFailed) as refused:
            check_endpoint(public.base_url, "gpt-x", SECRET)
    message = str(refused.value)
    assert f"answered with a redirect (HTTP {status})" in message and "redirects are not followed" in message
    assert "internal secret body" not in message and INTERNAL_MODEL not in message and "127.0.0.1" not in message
    assert internal.requests == []


@pytest.mark.parametrize("status", [302, 307])
def test_a_role_endpoint_that_redirects_is_refused_the_same_way(public_guard: None, internal: InternalService,
                                                                status: int):
    with redirector(internal, status) as public, pytest.raises(EndpointCheckFailed, match="the judge's endpoint cannot"):
        check_endpoint(public.base_url, "judge-model", SECRET, what="the judge's endpoint")
    assert internal.requests == []


def test_a_run_request_answered_with_a_redirect_fails_without_retrying(public_guard: None, internal: InternalService):
    async def send(base_url: str) -> None:
        client = make_sdk_client(EndpointSpec(base_url, SECRET, 10.0))
        try:
            await post_completion(client, b'{"model": "m", "messages": []}', 10.0)
        finally:
            await client.close()

    with redirector(internal, 307) as public, pytest.raises(AttemptFailed) as failed:
        asyncio.run(send(public.base_url))
    assert "HTTP 307 redirect: redirects are not followed" in failed.value.problem and not failed.value.retryable
    assert internal.requests == []


@pytest.mark.slow
def test_the_app_refuses_a_run_on_an_endpoint_that_redirects(public_guard: None, internal: InternalService,
                                                             tmp_path: Path):
    with running_app(tmp_path, public=True) as app, redirector(internal, 302) as public:
        client = Client(app.url, verbose=False)
        started = client.predict(base_url=public.base_url, model="gpt-x", api_key=SECRET, benchmark="acebench",
                                 language="en", subsets=["normal_atom_bool"], data_source="download", limit=5,
                                 concurrency=2, api_name="/start_run")
        assert started["run_id"] == ""
        assert "redirect" in started["message"] and "internal secret body" not in started["message"]
        assert app.context.store.list_runs() == []
    assert internal.requests == []


def test_hub_requests_follow_no_redirect_to_a_non_public_host(public_guard: None, internal: InternalService):
    from huggingface_hub.utils import get_session

    guard_hub_requests()
    with redirector(internal, 302) as public, pytest.raises(HostNotAllowedError, match="loopback"):
        get_session().get(public.base_url + "/whatever")
    assert internal.requests == []


def test_data_downloads_follow_no_redirect_to_a_non_public_host(public_guard: None, internal: InternalService,
                                                                tmp_path: Path):
    target = tmp_path / "data.zip"
    with redirector(internal, 302) as public, pytest.raises(DataError, match="loopback"):
        download(public.base_url + "/archive.zip", target, "data")
    assert internal.requests == [] and not target.exists() and not target.with_name("data.zip.part").exists()


@pytest.mark.parametrize("base_url", [
    "http://127.0.0.1:18103;@8.8.8.1/v1",
    "http://user:pass@api.example.com/v1",
    "http://:secret@api.example.com/v1",
    "http://api.example.com\\@127.0.0.1/v1",
    "http://api.example.com%2f@127.0.0.1/v1",
])
def test_credentials_or_parser_tricks_in_the_url_are_refused_in_every_mode(base_url: str):
    with pytest.raises(EndpointNotAllowedError) as refused:
        check_endpoint_allowed(base_url)
    assert "user name or password" in str(refused.value) or "characters a host name cannot have" in str(refused.value)
    assert "secret" not in str(refused.value) and "8.8.8.1" not in str(refused.value)


def test_the_package_index_request_follows_no_redirect_to_a_non_public_host(public_guard: None, internal: InternalService,
                                                                            monkeypatch: pytest.MonkeyPatch):
    from evaluators.benchmarks.bfcl.wheel import INDEX_URL_ENV, wheel_url_from_index

    with redirector(internal, 302) as public:
        monkeypatch.setenv(INDEX_URL_ENV, public.base_url)
        with pytest.raises(DataError, match="loopback"):
            wheel_url_from_index()
    assert internal.requests == []
