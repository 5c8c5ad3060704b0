"""Submit tab: upload a predictions file, see what it holds, see its score, then add it to the
leaderboard under a model name. Nothing is stored until the user adds a clean file."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import gradio as gr
from gradio.utils import get_upload_folder

from evaluators.core.errors import ToolboardError
from evaluators.core.registry import benchmark_names
from evaluators.submissions import Submission, check_submission, store_submission, without_folder
from ui.context import BUILT_IN_EXAMPLE, AppContext, resolve_data_dir
from ui.format import user_error
from ui.run_form import language_choices

UPLOAD_TYPES = [".jsonl", ".json", ".zip"]


def check_file(context: AppContext, path: str | None, benchmark: str, language: str | None, data_source: str,
               data_folder: str) -> tuple[dict[str, Any] | None, dict[str, Any] | None, Submission | None, str]:
    """Validation summary, official report (when clean) and the pending submission.

    The upload is deleted once checked, kept or not: the pending submission holds all that Add needs."""
    if not path:
        return None, None, None, "Upload a predictions file first."
    upload = Path(path)
    if not upload.is_file():
        return None, None, None, "⚠️ This upload was already checked and removed from the server; upload the file again."
    try:
        data_dir = resolve_data_dir(context, data_source, data_folder, benchmark, language or None)
        submission = check_submission(upload, benchmark, language=language or None, data_dir=data_dir,
                                      max_bytes=context.max_upload_bytes)
    except ToolboardError as exc:
        return None, None, None, user_error(exc, context.redact_paths)
    except Exception as exc:  # noqa: BLE001 - the page explains every failure, without server paths
        return None, None, None, user_error(ToolboardError(without_folder(f"{type(exc).__name__}: {exc}", upload)),
                                            context.redact_paths)
    finally:
        discard_upload(upload)
    validation = submission.validation()
    if not submission.ok:
        reason = "no prediction matched a sample" if not submission.predictions else f"{validation['problems']} problem(s)"
        return validation, None, None, f"⚠️ Not scored: {reason}. Fix the file and upload it again; nothing was stored."
    report = submission.reports["official"].to_json()
    report["strict_summary"] = submission.reports["strict"].to_json()["summary"]
    counts = (f"{validation['lines_read']} lines read, {validation['matched']} matched, {validation['missing']} missing "
              f"(scored as failures) in {len(validation['subsets'])} subsets.")
    return validation, report, submission, f"Scored: {counts} Name the model and add it to the leaderboard if you want it listed."


def discard_upload(path: Path) -> None:
    """Delete a file from Gradio's upload folder, and its per-upload folder when empty. A file
    elsewhere (a caller's own) is never touched."""
    uploads = Path(get_upload_folder()).resolve()
    resolved = path.resolve()
    if uploads not in resolved.parents:
        return
    resolved.unlink(missing_ok=True)
    if resolved.parent != uploads:
        with contextlib.suppress(OSError):  # not empty: another upload shares it
            resolved.parent.rmdir()


def add_to_board(context: AppContext, submission: Submission | None, model: str, notes: str) -> str:
    try:
        if submission is None:
            raise ToolboardError("upload and check a clean file first")
        run_id = store_submission(context.store, submission, model, notes)
    except Exception as exc:  # noqa: BLE001
        return user_error(exc, context.redact_paths)
    context.after_run(run_id)
    return f"Added as run {run_id}: it is on the leaderboard (source: uploaded) and in the Explore tab."


def build(context: AppContext) -> None:
    gr.Markdown(
        "Upload predictions as JSON Lines (`{\"id\": ..., \"output\": ...}` or `tool_calls`), a JSON array, or a zip of "
        "the benchmark's official result files (see its entry in About). "
        f"Limit: {context.max_upload_bytes / 1024 / 1024:.3g} MB. The file is checked "
        "and scored first; nothing is stored until you add it."
    )
    with gr.Row():
        upload = gr.File(label="Predictions file", file_types=UPLOAD_TYPES, type="filepath")
        with gr.Column():
            names = benchmark_names()
            languages = language_choices(names[0])
            benchmark = gr.Dropdown(names, value=names[0], label="Benchmark")
            language = gr.Dropdown(languages, value=languages[0] if languages else None, label="Language",
                                   allow_custom_value=True, visible=bool(languages))
            data_source = gr.Radio(["download", BUILT_IN_EXAMPLE] + ([] if context.public else ["local folder"]),
                                   value="download", label="Data")
            data_folder = gr.Textbox(label="Local data folder", visible=not context.public, value="" if context.public else (context.default_data_dir or ""))
    check = gr.Button("Check and score", variant="primary")
    message = gr.Markdown()
    with gr.Row():
        validation = gr.JSON(label="Validation")
        report = gr.JSON(label="Report (official; strict summary included)")
    pending = gr.State(None)
    with gr.Row():
        model = gr.Textbox(label="Model name", scale=2)
        notes = gr.Textbox(label="Notes (settings, prompt, date…)", scale=3)
        add_button = gr.Button("Add to leaderboard", scale=1)
    added = gr.Markdown()

    def on_check(path, name, lang, source, folder):
        return check_file(context, path, name, lang, source, folder)

    check.click(on_check, [upload, benchmark, language, data_source, data_folder], [validation, report, pending, message],
                api_name="check_upload")
    def add(submission: Submission | None, model_name: str, notes_text: str) -> tuple[str, None]:
        # The pending upload is used once: a second click, or a new file not yet checked, stores nothing.
        return add_to_board(context, submission, model_name, notes_text), None

    add_button.click(add, [pending, model, notes], [added, pending], api_name="add_upload")
    upload.change(lambda: None, None, pending, api_visibility="private")
    benchmark.change(lambda name: gr.update(choices=language_choices(name), value=(language_choices(name) or [None])[0],
                                            visible=bool(language_choices(name))),
                     [benchmark], [language], api_visibility="private")
