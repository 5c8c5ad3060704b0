"""Submit tab: upload a predictions file, see what it holds, see its score, then add it to the
leaderboard under a model name. Nothing is stored until the user adds a clean file.

On a public deployment an added upload counts against its visitor's daily quota (the page's visitor token,
an API caller's owner_token, else its session; see ui/visitor.py) and the model name, notes and file name
have length limits (core/limits.py): over them, nothing is stored and the message says why."""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr
from gradio.utils import get_upload_folder

from evaluators.core.errors import ToolboardError
from evaluators.core.limits import MAX_MODEL_NAME_CHARS, MAX_NOTES_CHARS
from evaluators.core.registry import benchmark_names
from evaluators.service.submissions import Submission, without_folder
from evaluators.service.uploads import HELD_SECONDS, HeldUploads, add_upload, check_read_upload, read_uploaded_file
from ui.api import declare_add_upload, declare_check_upload
from ui.context import AppContext, as_markdown, plain_error
from ui.format import benchmark_choices, markdown_text
from ui.report_view import build_report_panel, score_text
from ui.run_form import data_line, data_source_choices, language_choices, language_ids
from ui.visitor import BROWSER_STORAGE_KEY, owner_of

UPLOAD_TYPES = [".jsonl", ".json", ".zip"]


# Said when the file box shows a file the server no longer holds (never read here, or let go after a while).
NOT_HELD = ("⚠️ This upload is no longer held on the server (what was read of a file is kept for "
            f"{HELD_SECONDS // 60} minutes after its last check); upload the file again.")


@dataclass(frozen=True)
class HeldFile:
    """What a visitor's session holds of the file in its file box: the box's path, and the key of what was read
    of it (HeldUploads), or why it could not be read at all (said again at each check)."""

    path: str
    key: str | None = None
    refusal: str | None = None


def read_into(context: AppContext, path: Path, uploads: HeldUploads) -> HeldFile:
    """Read the file once and hold what was read; the file is deleted from Gradio's upload folder, read or not."""
    try:
        return HeldFile(str(path), key=uploads.hold(read_uploaded_file(context, path)))
    except ToolboardError as exc:
        return HeldFile(str(path), refusal=without_upload_paths(plain_error(exc, context.redact_paths)))
    except Exception as exc:  # noqa: BLE001 - the page explains every failure, without server paths
        return HeldFile(str(path), refusal=without_upload_paths(
            plain_error(ToolboardError(without_folder(f"{type(exc).__name__}: {exc}", path)), context.redact_paths)))
    finally:
        discard_upload(path)


Checked = tuple[dict[str, Any] | None, dict[str, Any] | None, Submission | None, str, HeldFile | None]


def check_file(context: AppContext, path: str | None, benchmark: str, language: str | None, data_source: str,
               data_folder: str, held: HeldFile | None = None, uploads: HeldUploads | None = None) -> Checked:
    """(validation summary, official report when clean, the pending submission, message, what the session now
    holds of the file).

    A file is read once, then deleted from the server; what was read is held (`uploads`, under the key `held`
    names) so the same file box checks again against another Data choice, benchmark or language without a new
    upload. A new file in the box is read anew; a file the server no longer holds is said so (held: None)."""
    uploads = uploads if uploads is not None else HeldUploads()
    if not path:
        uploads.drop(held.key if held else None)
        return None, None, None, "Upload a predictions file first.", None
    if Path(path).is_file():
        uploads.drop(held.key if held else None)
        held = read_into(context, Path(path), uploads)
    elif held is None or held.path != path:
        return None, None, None, NOT_HELD, None
    if held.refusal is not None:
        return None, None, None, held.refusal, held
    upload = uploads.get(held.key)
    if upload is None:
        return None, None, None, NOT_HELD, None
    try:
        submission = check_read_upload(context, upload, benchmark, language or None, data_source, data_folder)
    except ToolboardError as exc:
        return None, None, None, without_upload_paths(plain_error(exc, context.redact_paths)), held
    except Exception as exc:  # noqa: BLE001 - the page explains every failure, without server paths
        return None, None, None, without_upload_paths(
            plain_error(ToolboardError(f"{type(exc).__name__}: {exc}"), context.redact_paths)), held
    validation = submission.validation()
    validation["first_errors"] = [without_upload_paths(error) for error in validation["first_errors"]]
    if not submission.ok:
        reason = "no prediction matched a sample" if not submission.predictions else f"{validation['problems']} problem(s)"
        return validation, None, None, not_scored(reason, validation["first_errors"], validation["problems"]), held
    report = submission.reports["official"].to_json()
    report["strict_summary"] = submission.reports["strict"].to_json()["summary"]
    counts = (f"{validation['lines_read']} lines read, {validation['matched']} matched, {validation['missing']} missing "
              f"(scored as failures) in {len(validation['subsets'])} subsets.")
    if submission.on_example_data:
        return validation, report, submission, example_scored(report, counts), held
    return (validation, report, submission,
            f"Scored: {counts} Name the model and add it to the leaderboard if you want it listed.\n\n"
            f"Once added, its row is listed among the rows not ranked, with the reason: {submission.board_preview()}.",
            held)


def example_scored(report: dict[str, Any], counts: str) -> str:
    """The message for a file scored against the built-in example: its score, and plainly that it stays off the
    board."""
    score = score_text(report)
    return (f"Scored on the built-in example data{': ' + score if score else ''} ({counts.rstrip('.')}).\n\n"
            "⚠️ Not on the leaderboard: results on example data (a few items to try the app) never join it. "
            "To be listed, choose another Data choice and check again. Added as it is, it is kept for you in the "
            "Explore tab, labelled example data.")


def not_scored(reason: str, errors: list[str], total: int) -> str:
    """The message for a file that was not scored: the reason, then every listed problem, one a line
    (plain text: API callers get it as it is, the page through as_markdown)."""
    lines = [f"⚠️ Not scored: {reason}. Fix the file and upload it again; nothing was stored."]
    lines += [f"- {error}" for error in errors]
    if total > len(errors):
        lines.append(f"- … and {total - len(errors)} more")
    return "\n".join(lines)


def without_upload_paths(text: str) -> str:
    """`text` with any file in Gradio's upload folder (`…/gradio/<hash>/file.jsonl`) shown by its base
    name, whether the text is plain or already escaped for Markdown."""
    folder = Path(get_upload_folder())
    spellings = {spelling for path in (str(folder), str(folder.resolve()))
                 for spelling in (path.rstrip("/"), markdown_text(path.rstrip("/")))}
    for spelling in sorted(spellings, key=len, reverse=True):
        text = re.sub(re.escape(spelling) + r"(?:/[^\s/:,'\"]+)+", lambda match: match.group().rsplit("/", 1)[-1], text)
    return text


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


def add_to_board(context: AppContext, submission: Submission | None, model: str, notes: str,
                 owner: str | None = None) -> str:
    return add_pending(context, submission, model, notes, owner)[0]


def add_pending(context: AppContext, submission: Submission | None, model: str,
                notes: str, owner: str | None = None) -> tuple[str, Submission | None]:
    """(message, what stays pending): a stored submission is used once; one that could not be added
    (no model name yet, a name or notes too long, the visitor's daily quota used) stays, so the user can
    fix it and add it again. `owner`: the visitor's hash (None on a private deployment)."""
    try:
        if submission is None:
            raise ToolboardError("upload and check a clean file first")
        run_id = add_upload(context, submission, model, notes, owner)
    except Exception as exc:  # noqa: BLE001
        keep = submission if submission is not None and submission.ok and submission.reports else None
        return without_upload_paths(plain_error(exc, context.redact_paths)), keep
    if submission.on_example_data:
        return (f"Added as run {run_id}: scored on example data, so it is not on the leaderboard; it is in the Explore "
                "tab, labelled example data.", None)
    return f"Added as run {run_id}: it is on the leaderboard (source: uploaded) and in the Explore tab.", None


def quota_line(context: AppContext) -> str:
    """The daily upload quota, as the tab's introduction says it (nothing when there is none)."""
    limit = context.limits.max_uploads_per_day
    if limit is None:
        return ""
    if not limit:
        return " This deployment adds no uploads to the board."
    uploads = f"{limit} upload{'s' if limit != 1 else ''}"
    if context.public:
        return f" One visitor may add at most {uploads} to the board in any 24 hours."
    return f" This deployment adds at most {uploads} to the board in any 24 hours."


def page_visitor(context: AppContext) -> gr.BrowserState:
    """A visitor token for a tab built on its own (the page passes its own, made before the tabs): one of its
    own over the same browser storage."""
    return gr.BrowserState(None, storage_key=BROWSER_STORAGE_KEY, secret=context.visitors.browser_secret() or None)


def build(context: AppContext, visitor: gr.BrowserState | None = None) -> None:
    """The tab; `visitor` holds the page's visitor token (one of the tab's own when not given)."""
    from ui.evaluate_tab import wire_data_choice  # the Evaluate tab's Data choice, shared

    visitor = visitor if visitor is not None else page_visitor(context)

    gr.Markdown(
        "Upload predictions as JSON Lines (`{\"id\": ..., \"output\": ...}` or `tool_calls`), a JSON array, or a zip of "
        "the benchmark's official result files (see its entry in About). "
        f"Limit: {context.max_upload_bytes / 1024 / 1024:.3g} MB. The file is checked "
        "and scored first; nothing is stored until you add it. Change the Data choice and check again without a new "
        "upload; a file scored on the built-in example data is never on the leaderboard." + quota_line(context)
    )
    with gr.Row():
        upload = gr.File(label="Predictions file", file_types=UPLOAD_TYPES, type="filepath", elem_id="submit-file")
        with gr.Column():
            names = benchmark_names()
            languages = language_ids(names[0])
            benchmark = gr.Dropdown(benchmark_choices(), value=names[0], label="Benchmark")
            language = gr.Dropdown(language_choices(names[0]), value=languages[0] if languages else None, label="Language",
                                   allow_custom_value=True, visible=bool(languages))
            data_source = gr.Radio(data_source_choices(context, names[0]), value="download", label="Data")
            # Shown only when "local folder" is chosen: it is read only then.
            data_folder = gr.Textbox(label="Local data folder", visible=False,
                                     value="" if context.public else (context.default_data_dir or ""))
            data_note = gr.Markdown(as_markdown(data_line(context, "download", "", names[0],
                                                          languages[0] if languages else None)))
    check = gr.Button("Check and score", variant="primary")
    # Messages are plain text for API callers (these hidden boxes are what the API returns) and escaped
    # Markdown on the page.
    message_text = gr.Textbox(visible=False)
    message = gr.Markdown(elem_id="submit-message")
    # The scored upload as the board shows it; the validation and the raw report stay one click away.
    report = build_report_panel("Report (official; strict summary included)")
    with gr.Accordion("Validation (JSON)", open=False):
        validation = gr.JSON(label="Validation")
    pending = gr.State(None)
    # What was read of the file in the box (never the file: it is deleted once read), for this session; the
    # parsed rows themselves are in `uploads`, bounded in size and time, and let go when the session ends.
    uploads = HeldUploads()
    held = gr.State(None, delete_callback=lambda gone: uploads.drop(gone.key if gone else None))
    with gr.Row():
        # Limits said, not imposed by the browser (which would cut a pasted text silently): a longer one is
        # refused with a message, nothing stored.
        model = gr.Textbox(label="Model name", scale=2, info=f"at most {MAX_MODEL_NAME_CHARS} characters")
        notes = gr.Textbox(label="Notes (settings, prompt, date…)", scale=3, info=f"at most {MAX_NOTES_CHARS:,} characters")
        add_button = gr.Button("Add to leaderboard", scale=1)
    added_text = gr.Textbox(visible=False)
    added = gr.Markdown(elem_id="submit-added")
    # The API's /add_upload: the same Add, by an API caller who names itself with owner_token (else its session).
    api_owner_token = gr.Textbox(visible=False, value="", label="owner_token")
    api_add = gr.Button(visible=False)

    def on_check(path: str | None, name: str, lang: str | None, source: str, folder: str,
                 held_file: HeldFile | None) -> Checked:
        return check_file(context, path, name, lang, source, folder, held_file, uploads)

    def box_agrees(path: str | None, held_file: HeldFile | None) -> Any:
        # A file the server no longer holds leaves the box, so the box never shows what cannot be checked.
        return gr.update(value=None) if path and held_file is None else gr.update()

    def checked_message(text: str) -> tuple[str, str]:
        # A new check answers for the file now in the box: an earlier Add's answer (a warning, a run id) is gone.
        return as_markdown(text), ""

    declare_check_upload(check, on_check, [upload, benchmark, language, data_source, data_folder, held],
                         [validation, report.raw, pending, message_text, held]).then(
        checked_message, [message_text], [message, added], api_visibility="private").then(
        report.updates, [report.raw], report.outputs(), api_visibility="private").then(
        box_agrees, [upload, held], [upload], api_visibility="private")

    def add_as(submission: Submission | None, model_name: str, notes_text: str, token: Any,
               request: gr.Request | None) -> tuple[str, Submission | None]:
        # The pending upload is used once: a second click, or a new file not yet checked, stores nothing;
        # a failed Add (no name yet) keeps it.
        try:
            owner = owner_of(context, token, request)
        except ToolboardError as exc:
            return plain_error(exc), submission
        return add_pending(context, submission, model_name, notes_text, owner)

    def add_on_page(submission: Submission | None, model_name: str, notes_text: str, token: Any,
                    request: gr.Request) -> tuple[str, Submission | None]:
        return add_as(submission, model_name, notes_text, token, request)

    add_button.click(add_on_page, [pending, model, notes, visitor], [added_text, pending],
                     api_visibility="private").then(as_markdown, [added_text], [added], api_visibility="private")
    declare_add_upload(api_add, add_as, [pending, model, notes, api_owner_token], [added_text, pending])
    def new_file(held_file: HeldFile | None) -> tuple[Any, ...]:
        # A new file, or the box cleared: nothing pending, nothing held of the previous file, its report gone.
        uploads.drop(held_file.key if held_file else None)
        return None, None, *report.all_updates(None)

    upload.change(new_file, [held], [pending, held, *report.all_outputs()], api_visibility="private")
    def languages_of(name: str) -> dict[str, Any]:
        ids = language_ids(name)
        return gr.update(choices=language_choices(name), value=ids[0] if ids else None, visible=bool(ids))

    benchmark.change(languages_of, [benchmark], [language], api_visibility="private")
    wire_data_choice(context, {"benchmark": benchmark, "language": language, "data_source": data_source,
                               "data_folder": data_folder}, data_note)
