"""How a visitor works the board's controls in benchmarks/board_browser_speed.py, for the board as main
renders it (Gradio dropdowns, a Dataframe sorted from its header's menu) and as an HTML board (`.board-html`
with its own header to click; radios or buttons instead of dropdowns).

Each `*_action` does the untimed part of a gesture (opening a dropdown, a header's menu, selecting the search
box's text) and returns the timed part: a call that makes the input that changes the view.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Action = Callable[[], Any]

# Columns that are not a figure to sort by (the HTML board and the Dataframe alike).
NOT_FIGURES = {"", "#", "★", "rank", "model", "source", "n", "organisation", "params (b)", "licence", "open weights",
               "mode", "link", "updated", "details", "why not ranked", "notes"}
MARK = re.compile(r"^[\s✓▲▼↑↓⇅⋮]+|[\s✓▲▼↑↓⇅⋮]+$")  # a chosen option's tick, a header's sort arrow


def clean(text: str) -> str:
    return MARK.sub("", text.replace("\u00ad", "")).strip()


def exactly(text: str) -> re.Pattern[str]:
    return re.compile(rf"^[\s✓▲▼↑↓⇅⋮]*{re.escape(text)}[\s✓▲▼↑↓⇅⋮]*$")


def _dropdown(page: Any, label: str) -> Any | None:
    box = page.get_by_label(label, exact=True).filter(visible=True)
    if box.count() and box.first.get_attribute("role") in ("combobox", "listbox"):
        return box.first
    return None


def _group(page: Any, label: str) -> Any:
    """The innermost block holding the label's text (a radio group, a segmented control)."""
    return page.locator(".block, fieldset, [role=radiogroup]").filter(
        has=page.get_by_text(label, exact=True)).last


def choices(page: Any, label: str) -> list[str]:
    """The options a visitor can pick in the control labelled `label`."""
    box = _dropdown(page, label)
    if box is not None:
        box.click()
        options = [clean(text) for text in page.get_by_role("option").filter(visible=True).all_inner_texts()]
        page.keyboard.press("Escape")
        box.blur()
        return [o for o in options if o]
    group = _group(page, label)
    radios = group.get_by_role("radio")
    if radios.count():
        return [clean(radios.nth(i).evaluate("(r) => r.labels?.[0]?.innerText ?? r.value")) for i in range(radios.count())]
    return [clean(text) for text in group.get_by_role("button").all_inner_texts() if clean(text)]


def choice_action(page: Any, label: str, option: str) -> Action:
    """Pick `option` in the control labelled `label`: a dropdown is opened first (untimed)."""
    box = _dropdown(page, label)
    if box is not None:
        box.click()
        item = page.get_by_role("option").filter(has_text=exactly(option)).first
        item.wait_for(state="visible")
        return item.click
    group = _group(page, label)
    radio = group.get_by_role("radio", name=option, exact=True)
    if radio.count():
        return radio.first.check
    return group.get_by_role("button", name=exactly(option)).first.click


def _sort_buttons(page: Any) -> Any:
    """The HTML board's sort buttons a visitor sees: its header's (a desktop), else its sort bar's (a phone's
    cards have no header)."""
    html = page.locator(".board-html")
    headers = html.locator("th [data-sort]").filter(visible=True)
    return headers if headers.count() else html.locator("[data-sort]").filter(visible=True)


def _headers(page: Any) -> Any:
    if page.locator(".board-html").count():
        return _sort_buttons(page)
    return page.locator(".board-ranked th").filter(visible=True)


def sort_columns(page: Any) -> list[str]:
    """The header texts of the board's figure columns it is not sorted by, in the table's order (the Dataframe
    does not mark its sorted column: there, every figure column but the first, the headline it is sorted by)."""
    if not page.locator(".board-html").count():
        return [clean(text) for text in _headers(page).all_inner_texts() if clean(text).lower() not in NOT_FIGURES][1:]
    found = _headers(page).evaluate_all("""(buttons) => buttons.filter((b) => !b.classList.contains("sorted")
        && !["ascending", "descending"].includes(b.closest("th")?.getAttribute("aria-sort"))).map((b) => b.innerText)""")
    return [clean(text) for text in found if clean(text).lower() not in NOT_FIGURES]


def sort_action(page: Any, column: str, sort_label: str) -> Action:
    """Sort by `column` as a visitor would: the HTML board's header button (a phone: its sort bar's button); the
    Dataframe's header menu (opened untimed), "Sort descending"; else the control labelled `sort_label`."""
    header = _headers(page).filter(has_text=exactly(column)).first
    if not header.count():
        return choice_action(page, sort_label, column)
    if page.locator(".board-html").count():
        return header.click
    header.hover()
    header.locator(".cell-menu-button").click()
    item = page.get_by_role("menuitem", name="Sort descending")
    item.wait_for(state="visible")
    return item.click


def search_box(page: Any, label: str) -> Any:
    box = page.get_by_label(label, exact=True).filter(visible=True)
    if box.count():
        return box.first
    return page.get_by_role("searchbox").or_(page.get_by_placeholder(re.compile("model", re.IGNORECASE))).first


def search_action(page: Any, label: str, text: str, key_delay_ms: int) -> Action:
    """Type `text` over the search box's content (selected first, untimed), a key at a time as a person types."""
    box = search_box(page, label)
    box.click()
    page.keyboard.press("Control+A")
    return lambda: page.keyboard.type(text, delay=key_delay_ms)
