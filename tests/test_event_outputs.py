"""What the app's events answer into. Gradio's page keeps every component an event has answered into and, after each
status change of any later event, reads the properties of each of them and of everything inside it
(ui/tab_select.py): an answer into a block around much of the page makes every later event of that page cost as
much as reading it all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evaluators.core.registry import all_benchmarks
from evaluators.engine.store import Store
from ui.app import build_app
from ui.context import AppContext
from ui.tab_select import select_tab_js

# The most components an event may answer into under one block (the board's folded "More filters and columns"
# holds 13). The app's tabs hold all 370-odd. A block that must grow past it: answer into its components instead.
MOST_COMPONENTS_UNDER_AN_OUTPUT = 24


def blocks_under(layout: dict[str, Any]) -> dict[int, int]:
    """Each block of the page's layout: how many blocks it holds, itself included."""
    sizes: dict[int, int] = {}

    def count(node: dict[str, Any]) -> int:
        sizes[node["id"]] = 1 + sum(count(child) for child in node.get("children", []))
        return sizes[node["id"]]

    count(layout)
    return sizes


@pytest.mark.slow  # over half a second in the fast loop
def test_no_event_answers_into_the_tabs_or_a_block_around_many_components(tmp_path: Path):
    context = AppContext(store=Store(tmp_path / "t.db"))
    try:
        config = build_app(context).get_config_file()
    finally:
        context.close()
    kinds = {component["id"]: component["type"] for component in config["components"]}
    sizes = blocks_under(config["layout"])
    assert max(sizes.values()) > 300  # the whole app is measured
    too_wide = sorted({(kinds[output], sizes.get(output, 1)) for dependency in config["dependencies"]
                       for output in dependency["outputs"]
                       if kinds[output] in ("tabs", "tabitem") or sizes.get(output, 1) > MOST_COMPONENTS_UNDER_AN_OUTPUT})
    assert not too_wide, (f"events answer into (kind, components under it): {too_wide}; each later event of the page "
                          "would re-read all of them (ui/tab_select.py)")
    # the tabs are selected by the page's own script instead: on load for a model's address, and from the overview's
    # button for each benchmark
    scripts = [dependency.get("js") or "" for dependency in config["dependencies"]]
    assert select_tab_js("model", only_with_parameter="model") in scripts
    assert scripts.count(select_tab_js("leaderboard")) == len(all_benchmarks()) > 0


def test_the_tab_script_names_the_tab_and_the_parameter_as_javascript_strings():
    script = select_tab_js('mo"del', only_with_parameter="m'x")
    assert 'CSS.escape("mo\\"del")' in script and 'getAll("m\'x")' in script
    # a blank or absent parameter selects nothing; the last of repeated ones counts, as on the server
    assert "given[given.length - 1].trim()" in script
    assert "return []" in select_tab_js("leaderboard") and "URLSearchParams" not in select_tab_js("leaderboard")
