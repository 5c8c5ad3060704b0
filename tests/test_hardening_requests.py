"""Hardening of the request path (issue 15): keys never stored in error texts, a cache that is not
shared across keys, a whole-request deadline, a strict Retry-After, connection failures named by
their cause, pasted keys with stray characters refused up front, and only listed key variables."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import math
import os
import socket
import sqlite3
import stat
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import pytest
from aiohttp import web

from evaluators.core.errors import ToolboardError
from evaluators.engine import runner as runner_module
from evaluators.engine.client import CACHE_SALT_FILE, RetryPolicy, cache_key, key_identity
from evaluators.engine.endpoint_guard import (
    DEFAULT_KEY_VARS,
    InvalidApiKeyError,
    allowed_key_variables,
    check_api_key,
    check_key_variable,
    check_run_keys,
)
from evaluators.engine.preflight import EndpointCheckFailed
from evaluators.engine.redact import REDACTED, redact
from evaluators.engine.runner import execute, start_run
from evaluators.engine.sdk_transport import MAX_RETRY_AFTER, parse_retry_after, usable_delay
from evaluators.engine.settings import Endpoint, ModelSettings, RunConfig, RunRequest
from evaluators.engine.store import MIGRATIONS, SCHEMA_VERSION, Store
from evaluators.service.run_request import RunPolicy, build_run_request
from tests.conftest import PROJECT
from tests.engine_fixtures import correct_reply, write_dataset
from tests.loopback_app import LoopbackApp
from tests.raw_servers import raw_tcp_server, reset_at_once
from tests.scripted_server import Fault, ScriptedServer

FAST_RETRY = RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.02)
# Not sk-shaped and not after "Bearer": only the exact-text rule can catch it.
SECRET = "tb-live-0123456789abcdefSECRET"


@pytest.fixture(autouse=True)
def private_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLBOARD_PUBLIC", "0")
    monkeypatch.delenv("TOOLBOARD_KEY_VARS", raising=False)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_dataset(tmp_path / "data", 4)


def _config(base_url: str, data: Path, timeout: float = 5.0, **kwargs) -> RunConfig:
    model = ModelSettings(base_url=base_url, model="scripted", api_key_env="", timeout=timeout)
    return RunConfig("acebench", model, language="en", subsets=("normal_atom_bool",), data_dir=str(data),
                     concurrency=2, **kwargs)


def _run(store: Store, config: RunConfig, api_key: str | None = None, retry: RetryPolicy = FAST_RETRY):
    """Start and execute a run."""
    run_id, samples = start_run(RunRequest(config, api_key=api_key), store)
    return asyncio.run(execute(store, run_id, samples, retry=retry, api_key=api_key))


def _stored_errors(db_path: Path) -> dict[str, str | None]:
    with sqlite3.connect(db_path) as db:
        return dict(db.execute("SELECT sample_id, error FROM predictions"))


# --- keys out of error texts ------------------------------------------------------------------------


def test_redact_removes_the_run_key_bearer_tokens_and_sk_tokens():
    text = f"bad key {SECRET}; header was Bearer abc.def-123; other key sk-proj-AbCdEf0123456789 and sk-abc***wxyz"
    cleaned = redact(text, (SECRET, None))
    assert SECRET not in cleaned and "abc.def-123" not in cleaned and "sk-proj" not in cleaned and "***wxyz" not in cleaned
    assert cleaned == (f"bad key {REDACTED}; header was Bearer {REDACTED}; other key {REDACTED} and {REDACTED}")
    assert redact("HTTP 401: no", ("x", "")) == "HTTP 401: no"  # placeholders too short to be keys are left alone


def test_a_broker_urls_password_is_never_said(monkeypatch: pytest.MonkeyPatch):
    """The queue's refusal and its settings' repr show the broker by redact.without_credentials: no password."""
    from evaluators.engine.queue_app import QueueSettings, settings_from_env

    monkeypatch.setenv("TOOLBOARD_BROKER_URL", f"http://user:{SECRET}@broker.example:6379/0")
    with pytest.raises(ToolboardError) as refused:
        settings_from_env()
    assert SECRET not in str(refused.value) and "broker.example:6379/0" in str(refused.value)
    settings = QueueSettings(f"redis://:{SECRET}@broker.example:6379/0")
    assert SECRET not in repr(settings) and "redis://broker.example:6379/0" in repr(settings)


def test_a_key_the_endpoint_echoes_is_never_stored(data: Path, tmp_path: Path):
    # The last message puts the key across the cut at 200 characters (after the SDK's "Error code: 401 - "):
    # no part of it may remain.
    messages = [f"Incorrect API key provided: {SECRET}", f"Authorization: Bearer {SECRET}",
                f"invalid token sk-{SECRET}", "x" * 170 + SECRET]
    by_number = {}

    def fault(key: str, attempt: int) -> Fault:
        return Fault(status=401, message=messages[by_number[key]])

    def remember(body: dict) -> None:
        from tests.scripted_server import last_user_text, prompt_key

        by_number[prompt_key(body)] = int(last_user_text(body).split("number ")[1].split(" ")[0])

    with ScriptedServer(reply=correct_reply, fault=fault, on_request=remember) as server:
        store = Store(tmp_path / "db.sqlite")
        _run(store, _config(server.base_url, data), api_key=SECRET)
        store.close()
    assert server.headers_seen[0]["authorization"] == f"Bearer {SECRET}"  # it was sent
    errors = _stored_errors(tmp_path / "db.sqlite")
    assert len(errors) == 4 and all(e and e.startswith("HTTP 401: ") for e in errors.values())
    assert all(SECRET[:6] not in e for e in errors.values()), errors
    assert all(REDACTED in errors[f"normal_atom_bool_{n}"] for n in range(3)), errors
    assert SECRET[:6].encode() not in (tmp_path / "db.sqlite").read_bytes()  # nor in scores, reports, anywhere


# --- the response cache is per key ------------------------------------------------------------------


def test_runs_with_different_keys_do_not_share_cached_answers(data: Path, tmp_path: Path, isolated_home: Path):
    with ScriptedServer(reply=correct_reply) as server:
        store = Store(tmp_path / "db.sqlite")
        _run(store, _config(server.base_url, data), api_key="key-of-visitor-one")
        assert server.requests == 4
        _run(store, _config(server.base_url, data), api_key="key-of-visitor-two")
        assert server.requests == 8  # its own requests, not the first visitor's answers
        _run(store, _config(server.base_url, data), api_key="key-of-visitor-one")
        assert server.requests == 8  # the same key still hits its cache
        _run(store, _config(server.base_url, data))
        assert server.requests == 12  # no key: apart from both
        _run(store, _config(server.base_url, data))
        assert server.requests == 12
        store.close()
    salt = isolated_home / CACHE_SALT_FILE
    assert stat.S_IMODE(salt.stat().st_mode) == 0o600 and len(bytes.fromhex(salt.read_text())) == 32
    assert b"key-of-visitor" not in (tmp_path / "db.sqlite").read_bytes()


def test_cache_keys_name_the_key_or_its_absence_and_hide_the_key():
    payload = b'{"model": "m", "messages": []}'
    first_form = hashlib.sha256(b"http://host/v1\n" + payload).hexdigest()  # answers paid with any key
    assert cache_key("http://host/v1/", payload) == cache_key("http://host/v1", payload, None) != first_form
    identity = key_identity("sk-some-key")
    assert identity == key_identity("sk-some-key") != key_identity("sk-other-key")
    assert identity != hashlib.sha256(b"sk-some-key").hexdigest()  # salted: no guess can be checked against it
    assert cache_key("http://host/v1", payload, identity) not in (first_form, cache_key("http://host/v1", payload))


@pytest.mark.parametrize("schema", [2, 3])
def test_answers_cached_before_keys_were_part_of_the_cache_key_are_dropped(tmp_path: Path, schema: int):
    """A store of schema 2 or 3 held answers keyed by URL and body only (paid with whatever key): a
    keyless run must not get them, so the upgrade drops them."""
    path = tmp_path / "db.sqlite"
    with sqlite3.connect(path) as db:
        for number, script in enumerate(MIGRATIONS[:schema]):
            db.executescript(f"{script}; PRAGMA user_version={number + 1};")
        db.execute("INSERT INTO cache (key, response, created_at) VALUES ('old', '{}', 0)")
    store = Store(path)
    assert store.schema_version() == SCHEMA_VERSION and store.cache_get("old") is None
    store.close()


def test_a_damaged_salt_file_is_a_clear_error(isolated_home: Path):
    (isolated_home / CACHE_SALT_FILE).write_text("not hex")
    with pytest.raises(ToolboardError, match="damaged.*delete it"):
        key_identity("sk-some-key")


# --- a deadline for the whole request ---------------------------------------------------------------


@pytest.mark.slow
def test_a_body_dripped_slowly_fails_as_a_timeout_of_the_attempt(tmp_path: Path):
    data = write_dataset(tmp_path / "data", 1)
    # One byte every 50 ms: each read is quick, but the ~280-byte answer would take ~14 s.
    with ScriptedServer(reply=correct_reply, fault=lambda key, attempt: Fault(drip=0.05)) as server:
        store = Store(tmp_path / "db.sqlite")
        _run(store, _config(server.base_url, data, timeout=0.5))
        store.close()
    assert list(_stored_errors(tmp_path / "db.sqlite").values()) == ["timeout after 0.5 s (gave up after 2 attempts)"]
    assert len(server.dripped) == 2
    # About 10 bytes fit in 0.5 s; the whole answer is far more: the client hung up early.
    assert all(0 < sent < 100 for sent in server.dripped), server.dripped


# --- Retry-After ------------------------------------------------------------------------------------


@pytest.mark.parametrize("header, expected", [
    ("5", 5.0), ("1.5", 1.5), (" 2 ", 2.0), ("0", 0.0), ("999999", MAX_RETRY_AFTER),
    ("nan", None), ("NaN", None), ("inf", None), ("-inf", None), ("-3", None), ("1e3", None), ("+4", None),
    ("soon", None), ("", None), (None, None), ("5 s", None),
])
def test_retry_after_is_parsed_strictly(header: str | None, expected: float | None):
    assert parse_retry_after(header) == expected


def test_retry_after_as_an_http_date():
    now = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after(format_datetime(now + timedelta(seconds=30), usegmt=True), now) == 30.0
    assert parse_retry_after(format_datetime(now - timedelta(hours=1), usegmt=True), now) == 0.0
    assert parse_retry_after(format_datetime(now + timedelta(days=2), usegmt=True), now) == MAX_RETRY_AFTER
    assert parse_retry_after("Fri, 99 Foo 2026 99:99:99 GMT", now) is None


@pytest.mark.parametrize("wish", [math.nan, math.inf, -math.inf, -5.0, None])
def test_retry_policy_falls_back_to_backoff_for_unusable_waits(wish: float | None):
    policy = RetryPolicy(base_delay=0.5, max_delay=30.0)
    for attempt in (1, 3):
        delay = policy.delay(attempt, wish)
        assert math.isfinite(delay) and 0.0 <= delay <= policy.base_delay * 2 ** (attempt - 1)


def test_retry_policy_honours_and_caps_a_usable_wait():
    policy = RetryPolicy(max_retry_after=20.0)
    assert policy.delay(1, 3.0) == 3.0 and policy.delay(1, 0.0) == 0.0 and policy.delay(1, 500.0) == 20.0
    assert RetryPolicy().max_retry_after == MAX_RETRY_AFTER


def test_an_unusable_wait_is_dropped():
    for wish in (math.nan, math.inf, -1.0, "3", True):
        assert usable_delay(wish) is None
    assert usable_delay(2) == 2.0


# --- connection failures named by their cause -------------------------------------------------------


def _unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _resetting_server() -> contextlib.AbstractContextManager[int]:
    """A port whose server accepts each connection and resets it at once (RST, not a clean close)."""
    return raw_tcp_server(reset_at_once)


def _past_the_preflight_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about the run's own requests: the endpoint check before a run would refuse it."""
    monkeypatch.setattr(runner_module, "check_endpoint", lambda *args, **kwargs: None)


def test_a_refused_connection_is_named_not_called_a_timeout(data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    port = _unused_port()
    store = Store(tmp_path / "db.sqlite")
    with pytest.raises(EndpointCheckFailed, match=rf"nothing was started: connection refused by 127.0.0.1:{port}$"):
        start_run(RunRequest(_config(f"http://127.0.0.1:{port}/v1", data)), store)
    assert store.list_runs() == []  # refused before a run exists
    _past_the_preflight_check(monkeypatch)
    _run(store, _config(f"http://127.0.0.1:{port}/v1", data))
    store.close()
    errors = set(_stored_errors(tmp_path / "db.sqlite").values())
    assert errors == {f"connection refused by 127.0.0.1:{port} (gave up after 2 attempts)"}


def test_reset_and_tls_failures_are_named(data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    store = Store(tmp_path / "db.sqlite")
    with _resetting_server() as port, pytest.raises(EndpointCheckFailed, match=f"connection reset by 127.0.0.1:{port}"):
        start_run(RunRequest(_config(f"http://127.0.0.1:{port}/v1", data)), store)
    with ScriptedServer() as server, pytest.raises(EndpointCheckFailed, match=f"TLS error with 127.0.0.1:{server.port}"):
        start_run(RunRequest(_config(server.base_url.replace("http://", "https://"), data)), store)
    _past_the_preflight_check(monkeypatch)
    with _resetting_server() as port:
        reset = _run(store, _config(f"http://127.0.0.1:{port}/v1", data))
    with ScriptedServer(reply=correct_reply) as server:  # plain HTTP, asked for TLS
        tls = _run(store, _config(server.base_url.replace("http://", "https://"), data))
    reset_errors = {p.error for p in store.load_predictions(reset.run_id).values()}
    tls_errors = {p.error for p in store.load_predictions(tls.run_id).values()}
    store.close()
    assert reset_errors == {f"connection reset by 127.0.0.1:{port} (gave up after 2 attempts)"}
    assert len(tls_errors) == 1 and tls_errors.pop().startswith(f"TLS error with 127.0.0.1:{server.port}: ")


@pytest.mark.slow
def test_a_real_timeout_is_still_called_a_timeout(tmp_path: Path):
    data = write_dataset(tmp_path / "data", 1)
    with ScriptedServer(reply=correct_reply, fault=lambda key, attempt: Fault(hang=3.0)) as server:
        store = Store(tmp_path / "db.sqlite")
        _run(store, _config(server.base_url, data, timeout=0.3), retry=RetryPolicy(max_attempts=1))
        store.close()
    assert list(_stored_errors(tmp_path / "db.sqlite").values()) == ["timeout after 0.3 s (gave up after 1 attempts)"]


# --- keys with stray characters ---------------------------------------------------------------------


@pytest.mark.parametrize("key, message", [
    ("sk-abcdefg\nhij", "the API key holds a newline (character 11): paste it again without it"),
    ("sk-abc\u200bdef", "the API key holds a zero-width space (U+200B) (character 7): paste it again without it"),
    ("sk-abc def", "the API key holds a space (character 7)"),
    ("  sk-ab\tc", "the API key holds a tab (character 8)"),
    ("sk-ab\x07c", "the API key holds an invisible character (U+0007) (character 6)"),
    ("sk-abé", "the API key holds the character 'é' (U+00E9): keys are plain ASCII (character 6)"),
])
def test_a_key_with_a_stray_character_is_refused_clearly(key: str, message: str):
    with pytest.raises(InvalidApiKeyError) as caught:
        check_api_key(key)
    assert str(caught.value).startswith(message)


def test_surrounding_whitespace_is_stripped_and_no_key_is_none():
    assert check_api_key("  sk-abc-123\n") == "sk-abc-123"
    assert check_api_key(None) is None and check_api_key(" \n") is None
    with pytest.raises(InvalidApiKeyError, match="^the API key in X_KEY holds a newline"):
        check_api_key("sk-a\nb", "the API key in X_KEY")


def test_a_run_with_a_broken_key_sends_nothing(data: Path, tmp_path: Path):
    with ScriptedServer(reply=correct_reply) as server:
        store = Store(tmp_path / "db.sqlite")
        # The run request refuses it before anything is sent (not six attempts each as a "malformed response") ...
        raw = {"benchmark": "acebench", "base_url": server.base_url, "model": "scripted", "language": "en",
               "subsets": ["normal_atom_bool"], "data_folder": str(data), "api_key": "sk-abc\u200bdef"}
        with pytest.raises(InvalidApiKeyError, match=r"^the API key holds a zero-width space \(U\+200B\) \(character 7\)"):
            build_run_request(raw, RunPolicy())
        # ... and so does a stored run executed again (a resume) with such a key.
        run_id, _ = start_run(RunRequest(_config(server.base_url, data)), store)
        sent = server.requests
        with pytest.raises(InvalidApiKeyError, match=r"^the API key holds a zero-width space"):
            asyncio.run(execute(store, run_id, api_key="sk-abc\u200bdef"))
        store.close()
    assert server.requests == sent and _stored_errors(tmp_path / "db.sqlite") == {}


def test_check_run_keys_checks_the_given_key_and_every_key_variable(monkeypatch: pytest.MonkeyPatch):
    judge = Endpoint("http://127.0.0.1:9/v1", "judge-m", api_key_env="TOOLBOARD_TEST_JUDGE_KEY")
    config = RunConfig("stepeval_audio", ModelSettings("http://127.0.0.1:9/v1", "m", api_key_env="TOOLBOARD_TEST_KEY"),
                       roles={"judge": judge})
    monkeypatch.setenv("TOOLBOARD_TEST_KEY", "sk-model-key\n")  # a trailing newline is only stripped
    monkeypatch.setenv("TOOLBOARD_TEST_JUDGE_KEY", "sk-judge-key")
    check_run_keys(config)
    with pytest.raises(InvalidApiKeyError, match="^the API key holds a space"):
        check_run_keys(config, "sk-given key")
    monkeypatch.setenv("TOOLBOARD_TEST_JUDGE_KEY", "sk-judge\u200bkey")
    with pytest.raises(InvalidApiKeyError, match="^the API key in TOOLBOARD_TEST_JUDGE_KEY holds a zero-width space"):
        check_run_keys(config, "sk-given-key")


@pytest.mark.slow
def test_the_cli_refuses_a_broken_key_before_creating_a_run(data: Path, tmp_path: Path):
    home = tmp_path / "home"
    env = {**os.environ, "TOOLBOARD_HOME": str(home), "TOOLBOARD_TEST_KEY": "sk-pasted\n-twice"}
    with ScriptedServer(reply=correct_reply) as server:
        run = subprocess.run(
            [sys.executable, "-m", "evaluators", "run", "acebench", "--base-url", server.base_url, "--model", "scripted",
             "--api-key-env", "TOOLBOARD_TEST_KEY", "--data-dir", str(data), "--subset", "normal_atom_bool"],
            cwd=PROJECT, env=env, capture_output=True, text=True, timeout=120,
        )
    assert run.returncode == 2
    assert "error: the API key in TOOLBOARD_TEST_KEY holds a newline (character 10): paste it again" in run.stderr
    assert server.requests == 0 and "sk-pasted" not in run.stderr
    listed = subprocess.run([sys.executable, "-m", "evaluators", "runs", "--json"], cwd=PROJECT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert json.loads(listed.stdout) == []


# --- which key variables a form may name ------------------------------------------------------------


def test_only_listed_key_variables_may_be_named(monkeypatch: pytest.MonkeyPatch):
    assert DEFAULT_KEY_VARS == ("OPENAI_API_KEY",) == allowed_key_variables()
    check_key_variable("OPENAI_API_KEY", allowed_key_variables())
    check_key_variable("", allowed_key_variables())  # none named: no key
    with pytest.raises(ToolboardError, match="'AWS_SECRET_ACCESS_KEY' is not one of the key variables this server"
                                             r" allows \(OPENAI_API_KEY\); its operator can allow more in TOOLBOARD_KEY_VARS"):
        check_key_variable("AWS_SECRET_ACCESS_KEY", allowed_key_variables())
    with pytest.raises(ToolboardError, match="must end in _KEY"):
        check_key_variable("HF_TOKEN", allowed_key_variables())
    monkeypatch.setenv("TOOLBOARD_KEY_VARS", " GROQ_API_KEY, OPENAI_API_KEY ,")
    check_key_variable("GROQ_API_KEY", allowed_key_variables())
    check_key_variable("OPENAI_API_KEY", allowed_key_variables())
    with pytest.raises(ToolboardError, match=r"allows \(GROQ_API_KEY, OPENAI_API_KEY\)"):
        check_key_variable("ANTHROPIC_API_KEY", allowed_key_variables())
    # No list (the command line's own environment): any API key variable, still never one that is none.
    check_key_variable("AWS_SECRET_ACCESS_KEY", None)
    with pytest.raises(ToolboardError, match="must end in _KEY"):
        check_key_variable("HF_TOKEN", None)


@pytest.mark.slow
def test_an_answer_larger_than_the_bound_is_refused_while_it_arrives(data: Path, tmp_path: Path):
    """An endpoint answering 20 MB of text (a visitor's own, on a public deployment) is cut off at the
    bound, once, with a plain error: no run holds such answers in memory or sends for them again."""
    from evaluators.engine.sdk_transport import MAX_RESPONSE_BYTES

    with ScriptedServer(reply=lambda body: {"content": "x" * (MAX_RESPONSE_BYTES + (12 << 20))}) as server:
        store = Store(tmp_path / "db.sqlite")
        _run(store, _config(server.base_url, data))
        store.close()
    errors = set(_stored_errors(tmp_path / "db.sqlite").values())
    announced = (MAX_RESPONSE_BYTES + (12 << 20)) >> 20
    assert errors == {f"the response announces {announced} MiB; at most {MAX_RESPONSE_BYTES >> 20} MiB is read"}
    assert server.requests == 4  # one attempt per sample: not retried


class ChunkedFlood(LoopbackApp):
    """An endpoint that streams an endless chunked body (no Content-Length to refuse it by)."""

    def __init__(self) -> None:
        super().__init__()
        self.sent = 0

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._flood)

    async def _flood(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        await response.write(b'{"choices": [{"message": {"content": "')
        try:
            for _ in range(64):  # 64 MiB per request, unless the client hangs up first
                await response.write(b"x" * (1 << 20))
                self.sent += 1 << 20
        except ConnectionError:
            pass
        return response


def test_a_chunked_answer_is_counted_while_it_arrives(data: Path, tmp_path: Path):
    with ChunkedFlood() as server:
        store = Store(tmp_path / "db.sqlite")
        _run(store, _config(f"http://127.0.0.1:{server.port}/v1", data))
        store.close()
    from evaluators.engine.sdk_transport import MAX_RESPONSE_BYTES

    assert set(_stored_errors(tmp_path / "db.sqlite").values()) == {f"the response is larger than {MAX_RESPONSE_BYTES >> 20} MiB"}


@pytest.mark.slow
def test_a_large_answer_under_the_bound_arrives_intact(data: Path, tmp_path: Path):
    """1.5 M non-ASCII characters (~9 MB as JSON escapes, as a long answer can be) pass the bound whole."""
    long_text = "é" * 1_500_000 + " end"
    with ScriptedServer(reply=lambda body: {"content": long_text}) as server:
        store = Store(tmp_path / "db.sqlite")
        _run(store, _config(server.base_url, data))
        outputs = {prediction.output for prediction in store.load_predictions(store.list_runs()[0].id).values()}
        store.close()
    assert outputs == {long_text}
