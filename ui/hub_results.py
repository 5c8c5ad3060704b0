"""Explore's "Hub eval results" for the operator: the `.eval_results` file the chosen run would add to a model repo
(escaped), or why the run cannot be exported, and a button that opens that pull request with the operator's
HF_TOKEN (read on the server; a visitor never gives a key here). Built only where the service says the operator is
there (evaluators/service/hub_eval_results.py): never on a public deployment, never without HF_TOKEN. The API's
eval_results_file and open_eval_results_pr are declared in ui/api.py."""

from __future__ import annotations

import html
from typing import Any

import gradio as gr

from evaluators.core.limits import message_of
from evaluators.service.hub_eval_results import eval_results_preview, is_operator, open_pr_as_operator
from ui.context import READ_EVENT, AppContext

PANEL_ID = "hub-eval-results"
REPO_LABEL = "Model repo (org/name)"
OPEN_LABEL = "Open pull request"


def _one_line(context: AppContext, exc: Exception) -> str:
    """An error as one escaped line (never the token: the service leaves it out of every message)."""
    return html.escape(" ".join(context.redact_paths(message_of(exc)).split()))


def preview_html(context: AppContext, run_id: str | None) -> str:
    """The file the run's pull request would add, escaped; else why the run cannot be exported."""
    try:
        found = eval_results_preview(context.store, run_id or "", context.public)
    except Exception as exc:  # noqa: BLE001 - NotExportable (the reason), an unknown run: said on the page
        return f"<p class='hub-eval-refused'>⚠️ {_one_line(context, exc)}</p>"
    return (f"<p>The pull request adds <code>{html.escape(found.path)}</code> to the model repo:</p>"
            f"<pre class='hub-eval-yaml' style='white-space:pre-wrap;overflow-wrap:anywhere;max-width:100%'>"
            f"{html.escape(found.text)}</pre>")


def outcome_html(context: AppContext, run_id: str | None, model_repo: str | None) -> str:
    """The pull request's link, or the error in one line."""
    try:
        url = open_pr_as_operator(context.store, run_id or "", model_repo or "", context.public)
    except Exception as exc:  # noqa: BLE001 - refusals and Hub failures: one line on the page
        return f"<p class='hub-pr-status'>⚠️ {_one_line(context, exc)}</p>"
    shown = html.escape(url)
    link = (f"<a href='{shown}' target='_blank' rel='noopener noreferrer'>{shown}</a>"
            if url.startswith(("https://", "http://")) else shown)
    return f"<p class='hub-pr-status'>Pull request opened: {link}</p>"


def build(context: AppContext, run: gr.Dropdown) -> None:
    """The folded panel under the run picker `run`, on the operator's app only (nothing otherwise)."""
    if not is_operator(context.public):
        return
    with gr.Accordion("Hub eval results", open=False, elem_id=PANEL_ID) as panel:
        gr.Markdown("A finished run that ranks on the board can be added to a model repo on the Hugging Face Hub as "
                    "its `.eval_results` entries, by a pull request opened with this server's `HF_TOKEN`.")
        preview = gr.HTML(preview_html(context, run.value), elem_id=f"{PANEL_ID}-preview")
        with gr.Row():
            repo = gr.Textbox(label=REPO_LABEL, placeholder="org/model", max_lines=1, scale=3, min_width=160)
            send = gr.Button(OPEN_LABEL, variant="primary", scale=1, min_width=160)
        status = gr.HTML(elem_id=f"{PANEL_ID}-status")

    def show_preview(run_id: str | None) -> tuple[str, str]:
        """A new run: its file (or why not), and the last pull request's line cleared."""
        return preview_html(context, run_id), ""

    def refreshed(run_id: str | None) -> str:
        return preview_html(context, run_id)

    def waiting(model_repo: str | None) -> tuple[str, Any]:
        shown = html.escape((model_repo or "").strip() or "the model repo")
        return f"<p class='hub-pr-status'>Opening a pull request on {shown}…</p>", gr.update(interactive=False)

    def send_pr(run_id: str | None, model_repo: str | None) -> tuple[str, Any]:
        return outcome_html(context, run_id, model_repo), gr.update(interactive=True)

    run.change(show_preview, run, [preview, status], api_visibility="private", **READ_EVENT)
    panel.expand(refreshed, run, preview, api_visibility="private", **READ_EVENT)  # the run may have finished since
    send.click(waiting, repo, [status, send], api_visibility="private", show_progress="hidden").then(
        send_pr, [run, repo], [status, send], api_visibility="private")
