"""Layout checks run in a real browser page (playwright's `page.evaluate`): what a person cannot read.

- a figure ("80.0", "80.0 ± 8.8", "+8.8/−13.0", "61.7%") laid out on more than one line;
- a header (th, column header) broken inside a word (a break after a hyphen is between words), laid out
  one to three characters per line, or much taller than wide;
- on a phone, content wider than the screen that makes the whole page scroll sideways.

Lines are measured, not guessed: the client rectangles of a Range over the element's text, grouped into
lines by their vertical extent. Used by benchmarks/screenshots.py and by browser tests.
"""

from __future__ import annotations

from typing import Any

# The page-side code: one function taking {phone: bool} and returning a list of problems, each
# {kind, text, lines, where}. Elements with nothing laid out (hidden tabs, closed accordions) are skipped;
# so is SVG text (plotly's labels do not wrap).
CHECKS_JS = r"""
({phone}) => {
  const FIGURE = /^[#(]?[+\-−–±]?\d[\d\s.,%+\-−–±\/()×]*$/;
  const problems = [];
  // The boxes of the element's text alone (a range over the element would add the boxes of its child
  // elements, as tall as the cell, which would merge every line into one), in runs: text in one block
  // (or inline-block) box and between two <br> is one run. A figure may put its interval in a box or after
  // a <br> of its own (a quieter second line); a run laid out on two lines is a figure broken.
  const BOXES = new Set(['block', 'inline-block', 'flex', 'inline-flex', 'grid', 'inline-grid', 'list-item', 'table-cell', 'flow-root']);
  const textRuns = (element) => {
    const runs = new Map();
    const breaks = new Map();
    const boxOf = (node) => {
      for (let e = node.parentElement; e && e !== element; e = e.parentElement) {
        if (BOXES.has(getComputedStyle(e).display)) return e;
      }
      return element;
    };
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT | NodeFilter.SHOW_ELEMENT);
    const range = document.createRange();
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.nodeType === Node.ELEMENT_NODE) {
        if (node.tagName === 'BR') { const box = boxOf(node); breaks.set(box, (breaks.get(box) || 0) + 1); }
        continue;
      }
      if (!node.textContent.trim()) continue;
      const box = boxOf(node);
      const key = box;
      const index = breaks.get(box) || 0;
      if (!runs.has(key)) runs.set(key, new Map());
      const byBreak = runs.get(key);
      if (!byBreak.has(index)) byBreak.set(index, []);
      range.selectNodeContents(node);
      byBreak.get(index).push(...[...range.getClientRects()].filter(r => r.width > 0.5 && r.height > 0.5));
    }
    return [...runs.values()].flatMap(byBreak => [...byBreak.values()]).filter(rects => rects.length);
  };
  const linesOf = (rects) => {
    const lines = [];
    for (const r of [...rects].sort((a, b) => a.top - b.top)) {
      const last = lines[lines.length - 1];
      // Same line when the box overlaps the line's vertical extent by half its own height (mixed font sizes
      // on one line do not count as two lines).
      if (last && Math.min(last.bottom, r.bottom) - Math.max(last.top, r.top) > Math.min(r.height, last.bottom - last.top) / 2) {
        last.top = Math.min(last.top, r.top); last.bottom = Math.max(last.bottom, r.bottom);
        last.left = Math.min(last.left, r.left); last.right = Math.max(last.right, r.right);
      } else {
        lines.push({top: r.top, bottom: r.bottom, left: r.left, right: r.right});
      }
    }
    return lines;
  };
  // Lines of the element's text laid out as one run (headers: every text node together).
  const lineBoxes = (element) => linesOf(textRuns(element).flat());
  // The most lines any one run of the element's text takes.
  const runLines = (element) => Math.max(0, ...textRuns(element).map(rects => linesOf(rects).length));
  const laidOut = (element) => element.getClientRects().length > 0 && !element.closest('svg')
    && getComputedStyle(element).visibility !== 'hidden';
  const where = (element) => {
    const parts = [];
    for (let e = element; e && e !== document.body && parts.length < 4; e = e.parentElement) {
      const id = e.id ? '#' + e.id : '';
      const label = e.getAttribute && (e.getAttribute('aria-label') || e.getAttribute('data-testid') || '');
      parts.unshift(e.tagName.toLowerCase() + id + (label ? `[${label.slice(0, 30)}]` : ''));
    }
    const labelled = element.closest('[aria-label]');
    const inside = labelled ? ` in "${labelled.getAttribute('aria-label').slice(0, 40)}"` : '';
    return parts.join(' > ') + inside;
  };
  // Words a header may break between: spaces, and after a hyphen ("StepEval-" / "Audio-Toolcall").
  const wordsOf = (text) => text.split(/\s+|(?<=-)/).filter(Boolean).length;
  const textOf = (element) => (element.textContent || '').replace(/\s+/g, ' ').trim();

  // (a) figures broken over lines: the outermost element whose whole text is one figure.
  const seen = new Set();
  for (const element of document.body.querySelectorAll('*')) {
    if (['SCRIPT', 'STYLE', 'svg', 'SVG', 'TEXTAREA', 'INPUT', 'SELECT', 'OPTION'].includes(element.tagName)) continue;
    const text = textOf(element);
    if (!text || text.length > 40 || !/\d/.test(text) || !FIGURE.test(text)) continue;
    if (element.parentElement && seen.has(element.parentElement)) { seen.add(element); continue; }
    seen.add(element);
    if (!laidOut(element)) continue;
    const lines = runLines(element);
    if (lines > 1) problems.push({kind: 'figure broken over lines', text, lines, where: where(element)});
  }

  // (b) headers: no more lines than words, not one or two characters a line, not much taller than wide.
  const headers = document.body.querySelectorAll('th, [role=columnheader]');
  for (const header of headers) {
    if (header.parentElement && header.parentElement.closest('th, [role=columnheader]')) continue;
    if (!laidOut(header)) continue;
    // Gradio keeps a menu button (⋮) in its header cells: the header's words are its text without it.
    const label = header.querySelector('.header, .header-content') || header;
    const text = textOf(label);
    if (!text) continue;
    const lines = lineBoxes(label);
    if (lines.length <= 1) continue;
    const words = wordsOf(text);
    const chars = text.replace(/\s/g, '').length;
    const width = Math.max(...lines.map(l => l.right)) - Math.min(...lines.map(l => l.left));
    const height = lines[lines.length - 1].bottom - lines[0].top;
    if (lines.length > words) {
      problems.push({kind: chars / lines.length <= 3 ? 'vertical header' : 'header broken inside a word', text,
                     lines: lines.length, where: where(header)});
    } else if (height > 2 * width) {
      problems.push({kind: 'header taller than wide', text, lines: lines.length, where: where(header)});
    }
  }

  // (c) on a phone, nothing makes the page itself scroll sideways.
  if (phone) {
    const viewport = window.innerWidth;
    const page = document.documentElement.scrollWidth;
    if (page > viewport + 1) {
      let widest = null;
      for (const element of document.body.querySelectorAll('*')) {
        const r = element.getBoundingClientRect();
        if (r.right > viewport + 1 && r.width > 0 && (!widest || r.right > widest.r.right)) {
          // Only elements not clipped by a scrolling ancestor push the page.
          let clipped = false;
          for (let a = element.parentElement; a && a !== document.body; a = a.parentElement) {
            const overflow = getComputedStyle(a).overflowX;
            if (overflow === 'auto' || overflow === 'scroll' || overflow === 'hidden' || overflow === 'clip') { clipped = true; break; }
          }
          if (!clipped) widest = {element, r};
        }
      }
      problems.push({kind: 'page scrolls sideways', text: `page ${page} px wide on a ${viewport} px screen`, lines: 0,
                     where: widest ? where(widest.element) + ` (right edge at ${Math.round(widest.r.right)} px)` : ''});
    }
  }
  return problems;
}
"""

# The header measurements alone (for a test of one table): each laid-out header cell under the element
# the code runs on, with its text, lines, words and box.
HEADERS_JS = r"""
(root) => {
  const wordsOf = (text) => text.split(/\s+|(?<=-)/).filter(Boolean).length;
  const out = [];
  for (const header of root.querySelectorAll('th, [role=columnheader]')) {
    if (header.getClientRects().length === 0) continue;
    const label = header.querySelector('.header, .header-content') || header;
    const text = (label.textContent || '').replace(/\s+/g, ' ').trim();
    if (!text) continue;
    const rects = [];
    const walker = document.createTreeWalker(label, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.textContent.trim()) continue;
      range.selectNodeContents(node);
      rects.push(...[...range.getClientRects()].filter(r => r.width > 0.5 && r.height > 0.5));
    }
    if (!rects.length) continue;
    const tops = [];
    for (const r of rects) if (!tops.some(t => Math.abs(t - r.top) < r.height / 2)) tops.push(r.top);
    const width = Math.max(...rects.map(r => r.right)) - Math.min(...rects.map(r => r.left));
    const height = Math.max(...rects.map(r => r.bottom)) - Math.min(...rects.map(r => r.top));
    out.push({text, lines: tops.length, words: wordsOf(text), width, height});
  }
  return out;
}
"""


def layout_problems(page: Any, phone: bool) -> list[dict[str, Any]]:
    """The problems `CHECKS_JS` finds on the page as it is drawn now."""
    return page.evaluate(CHECKS_JS, {"phone": phone})


def header_lines(within: Any) -> list[dict[str, Any]]:
    """Each laid-out header cell inside a playwright locator (a table, or the block holding it): its text,
    lines, words, width and height in px."""
    return within.evaluate(HEADERS_JS)


def unreadable_headers(headers: list[dict[str, Any]]) -> list[str]:
    """The headers a person cannot read at a glance: on more lines than they have words (broken inside a
    word), or much taller than wide (standing vertically)."""
    return [f"{h['text']!r}: {h['lines']} lines for {h['words']} words, {h['width']:.0f}x{h['height']:.0f} px"
            for h in headers if h["lines"] > h["words"] or (h["lines"] > 1 and h["height"] > 2 * h["width"])]


def describe(problem: dict[str, Any]) -> str:
    lines = f" on {problem['lines']} lines" if problem.get("lines") else ""
    return f"{problem['kind']}: {problem['text']!r}{lines} at {problem['where']}"
