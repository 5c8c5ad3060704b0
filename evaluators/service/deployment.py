"""The deployment's policy that the engine is handed rather than reading it: whether this deployment is public,
and what a run may do with a model its endpoint does not list. The limits on runs and uploads are in quota.py.

Whether a deployment is public is read in one place, core/public_hosts.is_public_mode (TOOLBOARD_PUBLIC, a
Space by default): the public-host network guard (core/public_hosts, engine/endpoint_guard) reads it there
itself, so that it holds on every path that sends a request even where no caller passed the flag down.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from evaluators.core.environment import read_flag
from evaluators.core.public_hosts import is_public_mode

if TYPE_CHECKING:  # the preflight (and the chat client under it) is imported only by what checks an endpoint
    from evaluators.engine.preflight import UnlistedModelRule

__all__ = ["ALLOW_UNLISTED_ENV", "is_public_mode", "unlisted_model_rule"]

# An operator whose gateway serves models it does not list sets this to 1 (not honoured on a public deployment).
ALLOW_UNLISTED_ENV = "TOOLBOARD_ALLOW_UNLISTED_MODELS"


def unlisted_model_rule(public: bool, environ: Mapping[str, str] | None = None) -> UnlistedModelRule:
    """Whether a run may name a model its endpoint's list does not hold: only off a public deployment, when the
    operator allows it; a refusal off a public deployment says how."""
    from evaluators.engine.preflight import UnlistedModelRule

    if public:
        return UnlistedModelRule()
    allowed = read_flag("allow_unlisted_models", unset=False, environ=environ)
    return UnlistedModelRule(allowed, "; if this endpoint serves models it does not list, its operator can set "
                                      f"{ALLOW_UNLISTED_ENV}=1")
