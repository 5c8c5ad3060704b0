"""Explore tab: a run's samples with their verdicts, one sample's full evidence, and the samples that
flipped between two runs. Every piece of model or file text is escaped before it is shown.

On a public deployment a run's raw outputs are shown to its owner, and to everyone once the owner
shares the run (or when it is the operator's); API callers are their owner_token, else their session."""

from __future__ import annotations

import html
import json
from typing import Any

import gradio as gr
import pandas as pd

from evaluators.core.errors import ToolboardError
from evaluators.core.registry import MODES
from evaluators.explore import SAMPLE_COLUMNS, VERDICTS, compare_runs, sample_detail, sample_table
from ui.context import AppContext
from ui.format import escaped_block, picked_value, table_json, user_error
from ui.visitor import check_may_see_outputs, find_run, may_see_outputs


def run_choices(context: AppContext, owner: str | None = None) -> list[tuple[str, str]]:
    """Finished runs whose outputs the visitor may see."""
    return [(f"{run.id} · {run.benchmark}{' ' + run.language if run.language else ''} · {run.model} ({run.source})", run.id)
            for run in context.store.list_runs()
            if run.status == "finished" and may_see_outputs(context.public, run, owner)]


def check_outputs_visible(context: AppContext, run_id: str, owner: str | None) -> None:
    check_may_see_outputs(context.public, find_run(context.store, run_id), owner)


def samples_view(context: AppContext, run_id: str | None, mode: str, subset: str, verdict: str,
                 error_type: str, owner: str | None = None) -> tuple[pd.DataFrame, str]:
    if not run_id:
        return pd.DataFrame(columns=list(SAMPLE_COLUMNS)), "Pick a run."
    try:
        check_outputs_visible(context, run_id, owner)
        frame = sample_table(context.store, run_id, mode or "official", subset=subset or None, verdict=verdict or None,
                             error_type=error_type or None)
    except Exception as exc:  # noqa: BLE001
        return pd.DataFrame(columns=list(SAMPLE_COLUMNS)), user_error(exc, context.redact_paths)
    # A request error can name a server file (e.g. the local model's log): not on a public deployment.
    frame["request_error"] = frame["request_error"].map(lambda text: context.redact_paths(text) if text else text)
    return frame, f"{len(frame)} samples"


def _audio_elided(content: Any) -> Any:
    """Message content with each audio part's base64 data replaced by its length (a request as sent
    in audio mode holds whole recordings)."""
    if not isinstance(content, list):
        return content
    parts = []
    for part in content:
        audio = part.get("input_audio") if isinstance(part, dict) else None
        if isinstance(audio, dict) and isinstance(audio.get("data"), str):
            part = {**part, "input_audio": {**audio, "data": f"<{len(audio['data']):,} characters of base64 audio>"}}
        parts.append(part)
    return parts


def request_besides_messages(request: Any) -> Any:
    """A stored request (see store.Evidence) without its messages, shown beside them: how many requests,
    and the model, tools, tool choice and sampling sent (or the note kept instead)."""
    if not isinstance(request, dict):
        return None
    shown = {key: value for key, value in request.items() if key != "body"}
    body = request.get("body")
    if isinstance(body, dict):
        shown["body"] = {key: value for key, value in body.items() if key != "messages"}
    return shown


def turns_html(title: str, turns: list[dict[str, Any]] | None) -> str:
    """Chat messages or an agent rollout (agent, user, execution turns) as escaped blocks."""
    if not turns:
        return ""
    blocks = []
    for turn in turns:
        role = html.escape(str(turn.get("role", "?")))
        content = _audio_elided(turn.get("content", ""))
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, indent=1, default=repr)
        if turn.get("tool_calls"):  # an assistant turn of a request's history that called tools
            calls = json.dumps(turn["tool_calls"], ensure_ascii=False, indent=1, default=repr)
            text = calls if content is None else f"{text}\n{calls}"
        blocks.append(f"<div class='turn turn-{role}'><b>{role}</b><pre style='white-space:pre-wrap'>"
                      f"{html.escape(text)}</pre></div>")
    return f"<h4>{html.escape(title)}</h4>" + "".join(blocks)


def detail_html(context: AppContext, run_id: str | None, sample_id: str | None, mode: str,
                owner: str | None = None) -> str:
    if not run_id or not sample_id:
        return "<p>Pick a sample in the table.</p>"
    try:
        check_outputs_visible(context, run_id, owner)
        detail = sample_detail(context.store, run_id, sample_id.strip(), mode or "official")
    except Exception as exc:  # noqa: BLE001
        return f"<p>⚠️ {html.escape(context.redact_paths(str(exc)))}</p>"
    verdict = html.escape(str(detail["verdict"]))
    head = (f"<h3>{html.escape(detail['sample_id'])} — {verdict}</h3>"
            f"<p>subset <code>{html.escape(detail['subset'])}</code>; error type "
            f"<code>{html.escape(str(detail['error_type'] or '—'))}</code>; decided by rule "
            f"<code>{html.escape(str(detail['rule'] or '—'))}</code></p>")
    parts = [
        head,
        escaped_block("Checker detail", detail["detail"]),
        escaped_block("Request error", detail["request_error"] and context.redact_paths(detail["request_error"])),
        turns_html("Prompt messages" + (f" ({context.redact_paths(detail['prompt_note'])})" if detail["prompt_note"] else ""),
                   detail["prompt_messages"]),
        escaped_block("Request as sent, besides its messages (how many requests; model, tools, sampling)",
                      request_besides_messages(detail["request_as_sent"])),
        escaped_block("Request profile of the run (prompt style, sampling sent, known differences)",
                      detail["request_profile"]),
        turns_html("Transcript", detail["transcript"]),
        escaped_block("Raw output", detail["raw_output"]),
        escaped_block("Native tool calls", detail["tool_calls"]),
        escaped_block("Decoded calls", detail["decoded"]),
        escaped_block("End state (agent)", detail["result"]),
        escaped_block("Process (agent)", detail["process"]),
        escaped_block("Judge", detail["judge"]),
        escaped_block("Per-sample metrics", detail["metrics"]),
        escaped_block("Gold answer", detail["gold"]),
    ]
    return "".join(part for part in parts if part)


def compare_view(context: AppContext, run_a: str | None, run_b: str | None, mode: str,
                 owner: str | None = None) -> tuple[pd.DataFrame, str]:
    if not run_a or not run_b:
        return pd.DataFrame(), "Pick two runs."
    try:
        check_outputs_visible(context, run_a, owner)
        check_outputs_visible(context, run_b, owner)
        frame = compare_runs(context.store, run_a, run_b, mode or "official")
    except Exception as exc:  # noqa: BLE001
        return pd.DataFrame(), user_error(exc, context.redact_paths)
    fixed = int((frame["change"] == "fixed").sum()) if len(frame) else 0
    return frame, f"{len(frame)} samples flipped: {fixed} fixed, {len(frame) - fixed} broken (second run against first)."


def build(context: AppContext, visitor: gr.BrowserState) -> dict[str, Any]:
    """The tab; `visitor` holds the page's visitor token (see ui/app.py)."""
    # Built once for every visitor: on a public deployment only runs everyone may see, until the page loads.
    choices = run_choices(context)
    with gr.Row():
        run = gr.Dropdown(choices, value=choices[0][1] if choices else None, label="Run", scale=4, allow_custom_value=True)
        mode = gr.Radio(list(MODES), value="official", label="Scoring mode", scale=1)
        reload_runs = gr.Button("Reload runs", size="sm", scale=1)
    with gr.Row():
        subset = gr.Textbox(label="Subset", placeholder="e.g. normal_atom_bool")
        verdict = gr.Dropdown(["", *VERDICTS], value="", label="Verdict")
        error_type = gr.Textbox(label="Error type", placeholder="e.g. wrong_value")
    count = gr.Markdown()
    samples = gr.Dataframe(pd.DataFrame(columns=list(SAMPLE_COLUMNS)), interactive=False, max_height=400, label="Samples")
    sample_id = gr.Textbox(label="Sample id")
    detail = gr.HTML()
    gr.Markdown("### Compare two runs")
    with gr.Row():
        run_a = gr.Dropdown(choices, label="First run", allow_custom_value=True)
        run_b = gr.Dropdown(choices, label="Second run", allow_custom_value=True)
        compare = gr.Button("Compare", size="sm")
    flipped_note = gr.Markdown()
    flipped = gr.Dataframe(pd.DataFrame(columns=["sample_id", "subset", "change"]), interactive=False, max_height=360,
                           label="Flipped samples")

    def owner_of(token: Any, request: gr.Request | None) -> str | None:
        return context.visitors.owner(token, getattr(request, "session_hash", None))

    def list_samples(run_id: str | None, mode: str, subset: str, verdict: str, error_type: str, token: Any,
                     request: gr.Request) -> tuple[pd.DataFrame, str]:
        try:
            owner = owner_of(token, request)
        except ToolboardError as exc:
            return pd.DataFrame(columns=list(SAMPLE_COLUMNS)), user_error(exc)
        return samples_view(context, run_id, mode, subset, verdict, error_type, owner)

    def show_sample(run_id: str | None, chosen: str | None, mode: str, token: Any, request: gr.Request) -> str:
        try:
            owner = owner_of(token, request)
        except ToolboardError as exc:
            return f"<p>⚠️ {html.escape(str(exc))}</p>"
        return detail_html(context, run_id, chosen, mode, owner)

    def show_flipped(first: str | None, second: str | None, mode: str, token: Any,
                     request: gr.Request) -> tuple[pd.DataFrame, str]:
        try:
            owner = owner_of(token, request)
        except ToolboardError as exc:
            return pd.DataFrame(), user_error(exc)
        return compare_view(context, first, second, mode, owner)

    filters = [run, mode, subset, verdict, error_type]
    for control in filters:
        control.change(list_samples, [*filters, visitor], [samples, count], api_visibility="private")

    def samples_api(run_id: str, mode: str = "official", subset: str = "", verdict: str = "",
                    error_type: str = "", owner_token: str = "", request: gr.Request = None) -> dict[str, Any]:
        """A run's scored samples, filtered: {"headers", "data", "count"} (count says why when the run is unknown
        or its outputs are not yours to see)."""
        frame, note = list_samples(run_id, mode, subset, verdict, error_type, owner_token, request)
        return table_json(frame, count=note)

    def sample_api(run_id: str, sample_id: str, mode: str = "official", owner_token: str = "",
                   request: gr.Request = None) -> str:
        """One sample's evidence as escaped HTML."""
        return show_sample(run_id, sample_id, mode, owner_token, request)

    def compare_api(run_a: str, run_b: str, mode: str = "official", owner_token: str = "",
                    request: gr.Request = None) -> dict[str, Any]:
        """Samples whose verdict flipped between two runs: {"headers", "data", "note"}."""
        frame, note = show_flipped(run_a, run_b, mode, owner_token, request)
        return table_json(frame, note=note)

    def runs_api(owner_token: str = "", request: gr.Request = None) -> list[list[str]]:
        """The finished runs whose outputs you may see, as [label, run_id] pairs."""
        try:
            owner = owner_of(owner_token, request)
        except ToolboardError as exc:
            raise gr.Error(user_error(exc)) from None
        return [[label, run_id] for label, run_id in run_choices(context, owner)]

    gr.api(samples_api, api_name="samples")
    gr.api(sample_api, api_name="sample")
    gr.api(compare_api, api_name="compare")
    gr.api(runs_api, api_name="explore_runs")

    def pick(evt: gr.SelectData, table: pd.DataFrame) -> str:
        return picked_value(table, evt.index, "sample_id")

    samples.select(pick, [samples], [sample_id], api_visibility="private")
    sample_id.change(show_sample, [run, sample_id, mode, visitor], detail, api_visibility="private")
    compare.click(show_flipped, [run_a, run_b, mode, visitor], [flipped, flipped_note], api_visibility="private")

    def reload(token: Any, request: gr.Request) -> tuple[Any, Any, Any]:
        try:
            fresh = run_choices(context, owner_of(token, request))
        except ToolboardError:
            fresh = run_choices(context)
        return (gr.update(choices=fresh, value=fresh[0][1] if fresh else None), gr.update(choices=fresh),
                gr.update(choices=fresh))

    reload_runs.click(reload, [visitor], [run, run_a, run_b], api_visibility="private")
    return {"reload": reload, "run_controls": [run, run_a, run_b]}
