"""Before a run exists: is the endpoint there, does it take the key, does it know the model? One short
look (the model list, and one tiny request only when there is no list), so that a dead endpoint or a
misspelt model is refused with its cause instead of becoming a run of request errors.

A model missing from a non-empty list is refused: many servers (llama.cpp, vLLM with one model) answer
any name with the model they serve, so a tiny request would let a wrong name run to the end under that
name. Whether a model its endpoint does not list may run anyway is the deployment's choice, handed in as an
UnlistedModelRule (the service reads the operator's setting; never on a public deployment).

An endpoint that passed for a model and key is not looked at again for ENDPOINT_CHECK_KEPT_SECONDS (runs made one
after another, a rerun answered from the cache): the look is kept in TOOLBOARD_HOME by a hash of the three, never
the key itself. A run of a fully cached rerun then sends nothing at all and never loads the SDK."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import json
import os
import time
from dataclasses import dataclass
from typing import Any

from evaluators.core.errors import ToolboardError
from evaluators.core.paths import toolboard_home
from evaluators.engine import local_model
from evaluators.engine.client import key_identity
from evaluators.engine.redact import redact
from evaluators.engine.sdk_transport import (
    REDIRECT_REFUSED,
    REDIRECT_STATUS,
    EndpointSpec,
    ResponseTooLarge,
    connection_problem,
    make_sdk_client,
    sdk_errors,
    snippet,
)

PREFLIGHT_SECONDS = 15.0
LISTED_SHOWN = 10
LISTED_ID_CHARS = 60
ENDPOINT_CHECK_KEPT_SECONDS = 300.0
CHECKS_FILE = "endpoint-checks.json"


class EndpointCheckFailed(ToolboardError):
    """The endpoint cannot serve the run: unreachable, the key refused, or the model unknown."""


@dataclass(frozen=True)
class UnlistedModelRule:
    """What a run may do with a model its endpoint's non-empty list does not hold: the deployment's choice (see
    evaluators/service/deployment.py). `allowed`: it runs anyway; `refusal_hint`: said after a refusal, how the
    operator could allow it (empty where no visitor could act on it)."""

    allowed: bool = False
    refusal_hint: str = ""


# An engine handed no rule (a library caller): such a model is refused.
UNLISTED_REFUSED = UnlistedModelRule()


def check_endpoint(base_url: str, model: str, api_key: str | None, what: str = "the endpoint",
                   timeout: float = PREFLIGHT_SECONDS, unlisted: UnlistedModelRule = UNLISTED_REFUSED) -> None:
    """Raise EndpointCheckFailed naming the cause when `base_url` cannot serve `model`; an answer that
    only says the endpoint is busy (429, 5xx) lets the run start (its requests are retried). `unlisted`: whether
    a model the endpoint does not list may run."""
    if local_model.is_local(base_url):
        return  # our own server, started with the run
    passed = _check_name(base_url, model, api_key, unlisted)
    if _recently_passed(passed):
        return
    # In a thread of its own: callers may be inside an event loop (the app) or not (the CLI).
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        problem = pool.submit(asyncio.run, _problem(base_url, model, api_key, min(timeout, PREFLIGHT_SECONDS), unlisted)).result()
    if problem:
        raise EndpointCheckFailed(redact(f"{what} cannot serve the run, nothing was started: {problem}", (api_key,)))
    _remember_passed(passed)


def _check_name(base_url: str, model: str, api_key: str | None, unlisted: UnlistedModelRule) -> str:
    """What a passed check is kept under: the endpoint, model and key, and the rule it passed under (an
    unlisted model passes only while the deployment allows it)."""
    who = key_identity(api_key) if api_key else "no key"
    policy = [unlisted.allowed, unlisted.refusal_hint]
    return hashlib.sha256(json.dumps([base_url.rstrip("/"), model, who, policy]).encode()).hexdigest()


def _passed_checks() -> dict[str, float]:
    """Checks that passed lately (hash -> when), those still kept."""
    try:
        kept = json.loads((toolboard_home() / CHECKS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    now = time.time()
    if not isinstance(kept, dict):
        return {}
    return {name: when for name, when in kept.items()
            if isinstance(when, int | float) and 0 <= now - when < ENDPOINT_CHECK_KEPT_SECONDS}


def _recently_passed(name: str) -> bool:
    return name in _passed_checks()


def _remember_passed(name: str) -> None:
    """Best effort: a look that cannot be kept is made again next time."""
    path = toolboard_home() / CHECKS_FILE
    partial = path.with_name(f".{CHECKS_FILE}.{os.getpid()}.part")
    try:
        partial.write_text(json.dumps({**_passed_checks(), name: time.time()}), encoding="utf-8")
        partial.replace(path)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink()


async def _problem(base_url: str, model: str, api_key: str | None, timeout: float,
                   unlisted: UnlistedModelRule) -> str | None:
    client = make_sdk_client(EndpointSpec(base_url, api_key, timeout))
    try:
        listed = await _listed_models(client, base_url, timeout)
        if isinstance(listed, str):
            return listed
        if listed is None:
            return await _tiny_request_problem(client, base_url, model, timeout)
        if not listed or model in listed or unlisted.allowed:
            return None  # an empty list: the endpoint does not enumerate its models
        return unlisted_problem(base_url, model, listed, unlisted.refusal_hint)
    finally:
        await client.close()


def unlisted_problem(base_url: str, model: str, listed: list[str], hint: str = "") -> str:
    """The refusal of a model name the endpoint's non-empty list does not hold: the names it lists (the
    first LISTED_SHOWN), what to do (`hint`: how the operator could allow it, see UnlistedModelRule)."""
    shown = ", ".join(snippet(name, LISTED_ID_CHARS) for name in listed[:LISTED_SHOWN])
    if len(listed) > LISTED_SHOWN:
        shown += f" … ({len(listed)} in all)"
    close = [name for name in listed if name.lower() == model.lower()]
    close_hint = f"did you mean {snippet(close[0], LISTED_ID_CHARS)!r}? " if close else ""
    return (f"{base_url} does not list the model {model!r}; it lists: {shown}. {close_hint}Give the model name exactly"
            f" as listed{hint}")


async def _listed_models(client: Any, base_url: str, timeout: float) -> list[str] | str | None:
    """The model ids the endpoint lists; None when it has no list (then a tiny request decides); a
    string when the look itself shows the problem."""
    errors = sdk_errors()

    try:
        # The list as JSON, not through the SDK's model classes: building those costs a first run ~15 ms.
        page = await client.get("/models", cast_to=object)
    except errors.APIConnectionError as exc:  # also timeouts: the SDK labels refused and DNS failures so
        return connection_problem(exc, timeout)
    except (errors.AuthenticationError, errors.PermissionDeniedError) as exc:
        return f"{base_url} refused the key (HTTP {exc.status_code}: {_message(exc)})"
    except errors.APIStatusError as exc:
        return _redirected(base_url, exc)  # else no model list here (404, 405, …): a tiny request decides
    except (errors.APIResponseValidationError, ResponseTooLarge, ValueError, TypeError):
        return None  # an answer, but no usable list
    listed = page.get("data") if isinstance(page, dict) else None
    if listed is None:
        return None if not isinstance(page, dict) else []
    if not isinstance(listed, list):
        return None
    return [str(item.get("id", "")) if isinstance(item, dict) else "" for item in listed]


def _redirected(base_url: str, exc: Any) -> str | None:
    """The refusal of an endpoint that answers with a redirect (never where it points, nor its body)."""
    if exc.status_code in REDIRECT_STATUS:
        return f"{base_url} answered with a redirect (HTTP {exc.status_code}); {REDIRECT_REFUSED}"
    return None


async def _tiny_request_problem(client: Any, base_url: str, model: str, timeout: float) -> str | None:
    """One chat request of one token (an endpoint with no model list): a 404 means no such model (or no chat
    endpoint at this URL)."""
    errors = sdk_errors()

    try:
        await client.chat.completions.create(model=model, messages=[{"role": "user", "content": "ping"}], max_tokens=1)
    except errors.APIConnectionError as exc:
        return connection_problem(exc, timeout)
    except (errors.AuthenticationError, errors.PermissionDeniedError) as exc:
        return f"{base_url} refused the key (HTTP {exc.status_code}: {_message(exc)})"
    except errors.NotFoundError as exc:
        return (f"{base_url} does not know the model {model!r}, or has no chat completions there "
                f"(HTTP 404: {_message(exc)})")
    except errors.APIStatusError as exc:
        return _redirected(base_url, exc)  # else busy, or it disliked the tiny request; the run's requests will tell
    except (errors.APIResponseValidationError, ResponseTooLarge, ValueError, TypeError):
        return None  # it answered, but not as expected; the run's requests will tell
    return None


def _message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        detail = body.get("error", body)
        text = detail.get("message") if isinstance(detail, dict) else detail
        if text:
            return snippet(str(text))
    return snippet(str(getattr(exc, "message", "") or exc))
