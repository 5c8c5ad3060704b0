"""Who sends a request to the page or the API: the page's visitor token (gr.BrowserState, kept by the browser so
it survives reloads), an API caller's `owner_token`, else its Gradio session. What that identity may do is
evaluators/service/ownership.py's.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from evaluators.service.app_services import AppServices

# Where the browser keeps its token (localStorage key).
BROWSER_STORAGE_KEY = "toolboard-visitor"


def owner_of(services: AppServices, token: Any, request: gr.Request | None) -> str | None:
    """Who acts: the page's visitor token, or an API caller's owner_token, else the Gradio session."""
    return services.visitors.owner(token, getattr(request, "session_hash", None))
