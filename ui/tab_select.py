"""Selecting one of the app's tabs from the page's own script (a click on its button, as a visitor makes), never by
an event's answer into the gr.Tabs.

Why: Gradio's page (6.31) keeps every component an event has ever answered into, and after each status change of
any later event it reads the properties of each of them and of everything inside it. One answer into the gr.Tabs
(which holds the whole app, 376 components) made every later event of that page read the whole app: between a
third and a half of the renderer's work per event, and up to a sixth of a page load's (docs/architecture.md, "No
event answers into a tab"). tests/test_event_outputs.py keeps any event from answering into a block that holds many components."""

from __future__ import annotations

import json


def select_tab_js(tab_id: str, only_with_parameter: str | None = None) -> str:
    """A `js=` function, for an event without a server function, that selects the tab whose `id` is `tab_id`; with
    `only_with_parameter`, only when the page's address gives that query parameter a value that is not blank, read
    as the server reads it (the last of repeated ones, trimmed). Gradio marks each tab's button with the tab's id
    (`data-tab-id`); a click on the first one found selects the tab at a desktop's and a phone's width
    (tests/test_model_page.py, tests/test_overview.py). The click is a visitor's: it also fires the tab's `select`
    events, if one is ever wired."""
    condition = ("" if only_with_parameter is None else
                 f"const given = new URLSearchParams(window.location.search).getAll({json.dumps(only_with_parameter)});\n"
                 "  if (!given.length || !given[given.length - 1].trim()) return [];\n  ")
    return ("() => {\n  " + condition
            + f"const button = document.querySelector('button[data-tab-id=\"' + CSS.escape({json.dumps(tab_id)}) + '\"]');\n"
            "  if (button) button.click();\n  return [];\n}")
