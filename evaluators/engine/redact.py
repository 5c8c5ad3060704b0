"""Keys out of error texts: an endpoint may echo the key it was sent (a 401 body quoting
`Bearer sk-…`), and error texts are stored, exported, logged and shown to visitors."""

from __future__ import annotations

import re
from collections.abc import Iterable

REDACTED = "[redacted]"
# A "key" shorter than this is a placeholder (e.g. "x"); replacing its text everywhere would only garble messages.
MIN_SECRET_LENGTH = 4
_BEARER_TOKEN = re.compile(r"(\bBearer\s+)[^\s\"',;]+", re.IGNORECASE)
# OpenAI-style keys (sk-…, sk-proj-…), also when an endpoint masks part of them with *.
_SK_TOKEN = re.compile(r"\bsk-[A-Za-z0-9_\-*.]{6,}")


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` with each of `secrets` (the run's keys), any `Bearer <token>` and any sk-…-shaped token
    replaced by [redacted]."""
    for secret in sorted({s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    text = _BEARER_TOKEN.sub(lambda match: match.group(1) + REDACTED, text)
    return _SK_TOKEN.sub(REDACTED, text)
