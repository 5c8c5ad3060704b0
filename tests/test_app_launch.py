"""A launch stands when Gradio's own one-shot page check misses on a busy machine though the server is up (its
"When localhost is not accessible" refusal); any other launch failure is still raised."""

from __future__ import annotations

import urllib.request
from pathlib import Path

import gradio as gr
import gradio.networking
import pytest

from evaluators.engine.store import Store
from ui.app import build_app, launch_patiently
from ui.context import AppContext

pytestmark = pytest.mark.slow


def test_a_missed_page_check_does_not_stop_a_server_that_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(gradio.networking, "url_ok", lambda url: False)  # as a check that timed out
    context = AppContext(store=Store(tmp_path / "toolboard.db"), public=False)
    demo = build_app(context)
    try:
        launch_patiently(demo, server_name="127.0.0.1", prevent_thread_lock=True, quiet=True)
        with urllib.request.urlopen(demo.local_url, timeout=30) as page:
            assert page.status == 200
    finally:
        demo.close()
        context.close()


def test_another_launch_failure_is_raised(monkeypatch: pytest.MonkeyPatch):
    with gr.Blocks() as demo:
        gr.Markdown("x")
    with pytest.raises(ValueError) as refused:
        launch_patiently(demo, server_name="127.0.0.1", max_file_size="12 parsecs", prevent_thread_lock=True,
                         quiet=True)
    assert "localhost is not accessible" not in str(refused.value)
    demo.close()
