"""Before a run exists: is the endpoint there, does it take the key, does it know the model? One short
look (the model list, and one tiny request only when the list cannot answer), so that a dead endpoint
is refused with its cause instead of becoming a run of request errors."""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Any

from evaluators.core.errors import ToolboardError
from evaluators.engine import local_model
from evaluators.engine.redact import redact
from evaluators.engine.sdk_transport import (
    REDIRECT_REFUSED,
    REDIRECT_STATUS,
    EndpointSpec,
    ResponseTooLarge,
    connection_problem,
    make_sdk_client,
    snippet,
)

PREFLIGHT_SECONDS = 15.0
LISTED_SHOWN = 8
LISTED_ID_CHARS = 60


class EndpointCheckFailed(ToolboardError):
    """The endpoint cannot serve the run: unreachable, the key refused, or the model unknown."""


def check_endpoint(base_url: str, model: str, api_key: str | None, what: str = "the endpoint",
                   timeout: float = PREFLIGHT_SECONDS) -> None:
    """Raise EndpointCheckFailed naming the cause when `base_url` cannot serve `model`; an answer that
    only says the endpoint is busy (429, 5xx) lets the run start (its requests are retried)."""
    if local_model.is_local(base_url):
        return  # our own server, started with the run
    # In a thread of its own: callers may be inside an event loop (the app) or not (the CLI).
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        problem = pool.submit(asyncio.run, _problem(base_url, model, api_key, min(timeout, PREFLIGHT_SECONDS))).result()
    if problem:
        raise EndpointCheckFailed(redact(f"{what} cannot serve the run, nothing was started: {problem}", (api_key,)))


async def _problem(base_url: str, model: str, api_key: str | None, timeout: float) -> str | None:
    client = make_sdk_client(EndpointSpec(base_url, api_key, timeout))
    try:
        listed = await _listed_models(client, base_url, timeout)
        if isinstance(listed, str):
            return listed
        if listed is not None and (not listed or model in listed):
            return None  # an empty list: the endpoint does not enumerate its models
        return await _tiny_request_problem(client, base_url, model, timeout, listed)
    finally:
        await client.close()


async def _listed_models(client: Any, base_url: str, timeout: float) -> list[str] | str | None:
    """The model ids the endpoint lists; None when it has no list (then a tiny request decides); a
    string when the look itself shows the problem."""
    import openai

    try:
        page = await client.models.list()
    except openai.APIConnectionError as exc:  # also timeouts: the SDK labels refused and DNS failures so
        return connection_problem(exc, timeout)
    except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
        return f"{base_url} refused the key (HTTP {exc.status_code}: {_message(exc)})"
    except openai.APIStatusError as exc:
        return _redirected(base_url, exc)  # else no model list here (404, 405, …): a tiny request decides
    except (openai.APIResponseValidationError, ResponseTooLarge, ValueError, TypeError):
        return None  # an answer, but no usable list
    return [snippet(str(getattr(item, "id", "")), LISTED_ID_CHARS) for item in getattr(page, "data", None) or []]


def _redirected(base_url: str, exc: Any) -> str | None:
    """The refusal of an endpoint that answers with a redirect (never where it points, nor its body)."""
    if exc.status_code in REDIRECT_STATUS:
        return f"{base_url} answered with a redirect (HTTP {exc.status_code}); {REDIRECT_REFUSED}"
    return None


async def _tiny_request_problem(client: Any, base_url: str, model: str, timeout: float,
                                listed: list[str] | None) -> str | None:
    """One chat request of one token: a 404 means no such model (or no chat endpoint at this URL)."""
    import openai

    try:
        await client.chat.completions.create(model=model, messages=[{"role": "user", "content": "ping"}], max_tokens=1)
    except openai.APIConnectionError as exc:
        return connection_problem(exc, timeout)
    except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
        return f"{base_url} refused the key (HTTP {exc.status_code}: {_message(exc)})"
    except openai.NotFoundError as exc:
        known = f"; it lists: {', '.join(listed[:LISTED_SHOWN])}{' …' if len(listed) > LISTED_SHOWN else ''}" if listed else ""
        return (f"{base_url} does not know the model {model!r}, or has no chat completions there "
                f"(HTTP 404: {_message(exc)}){known}")
    except openai.APIStatusError as exc:
        return _redirected(base_url, exc)  # else busy, or it disliked the tiny request; the run's requests will tell
    except (openai.APIResponseValidationError, ResponseTooLarge, ValueError, TypeError):
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
