"""The web app's hold on the application services (evaluators/service/app_services.py): built once from the
environment, shared by every tab and by the API (ui/api.py); and how the page shows service messages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, TypedDict

from evaluators.core.limits import message_of
from evaluators.engine.redact import shown_as_is
from evaluators.engine.store import Store
from evaluators.service.app_services import (
    BUILT_IN_EXAMPLE,
    AppServices,
    example_folder,
    resolve_data_dir,
    services_from_env,
)
from ui.format import markdown_text

# What the tabs call the application services they are built over.
AppContext = AppServices
__all__ = ["BUILT_IN_EXAMPLE", "READ_EVENT", "AppContext", "ReadEvent", "as_markdown", "context_from_env",
           "example_folder", "plain_error", "resolve_data_dir"]


class ReadEvent(TypedDict):
    """The options of a read-only event, passed as `**READ_EVENT` to Gradio's event listeners (`.click`,
    `gr.api`, ...): typed as those listeners' keywords of the same name."""

    concurrency_limit: int | Literal["default"] | None


# Read-only events (board, charts, downloads, samples) run side by side instead of one at a time in the
# queue: each serves a cached view (AppServices.board_frame), so many visitors are answered at once.
READ_EVENT: ReadEvent = {"concurrency_limit": None}


def context_from_env(store: Store | None = None) -> AppContext:
    """The application services as the environment configures them (service.app_services.services_from_env)."""
    return services_from_env(store)


def plain_error(exc: Exception, redact: Callable[[str], str] = shown_as_is) -> str:
    """ui.format.user_error as plain text, for API callers: the same words, no Markdown escapes."""
    return f"⚠️ {redact(message_of(exc))}"


def as_markdown(text: str) -> str:
    """Plain text (a message also returned to API callers) for a Markdown component: shown as written,
    every line escaped; lines starting with "- " stay list items."""
    return "\n".join("- " + markdown_text(line[2:]) if line.startswith("- ") else markdown_text(line)
                      for line in text.split("\n"))
