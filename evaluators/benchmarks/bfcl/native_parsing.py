"""Where BFCL's native tree-sitter parsers run, and the bounds on what they are given: our bounds, not official rules.

tree-sitter 0.21's C code recurses once per level of the tree when it prints a tree (`Node.sexp()`, which the
official Java and JavaScript decoders call on every answer): a balanced answer nested about 14,600 brackets deep
overflows the usual 8 MiB stack and ends the whole process with SIGSEGV (in a thread with a 128 KiB stack, about
250 deep is enough). The official checker crashes the same way, so an answer past these bounds is outside parity already.

Bounds, checked before anything is parsed for scoring (decode_isolated, read_literal), each a decode failure the
checker scores "decoder failed":
- bounded_answer_too_long: the text handed to the parser holds more than MAX_PARSED_CHARS characters (the longest
  real answer, a gold answer written out, has 437; a 1.4 MB answer took seconds of parsing and walking).
- bounded_nesting_too_deep: brackets `(`, `[`, `{` nest more than MAX_BRACKET_NESTING deep (real answers: at most 5).
  The scan ignores quotes and pairs a closer only with the last unclosed opener of its kind, so it can only
  overcount. Within it the Python walks (decode_java's, strict read_literal's) stay far from the recursion limit,
  and the parser does not crash even in a thread with a 128 KiB stack (that takes over 200 levels).

Isolation: scoring (checker.decode_prediction, hence the CLI, uploads and runs) decodes every Java and JavaScript
answer, parse and tree walk, in one long-lived child process (evaluators.core.isolated_call), one answer at a time,
in a thread with a CHILD_STACK_BYTES stack, and reads strict JavaScript literals there too. A child that crashes
gives that sample isolated_parser_crashed, one that runs past NATIVE_CALL_SECONDS isolated_parser_timeout (it is
killed); the next sample gets a fresh child. The stack covers the deep trees the bracket bound does not see: a
65,536-character chain of `!`, of Java generics or of `f()()()` needs less than 32 MiB.

The decoders themselves (decode_java, decode_javascript, javascript_types.read_literal_in_process) stay as the
official ones are, without our bounds, in the calling process: for tests and trusted text only (like the official
ones, they crash the process on an answer nested ~15,000 deep).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from evaluators.benchmarks.bfcl.decode_common import DecodeFailure, bracketed
from evaluators.core.isolated_call import TIMEOUT, IsolatedCallFailed, IsolatedWorker
from evaluators.core.registry import MODES

MAX_PARSED_CHARS = 65_536
MAX_BRACKET_NESTING = 100
NATIVE_CALL_SECONDS = 10.0
CHILD_STACK_BYTES = 256 << 20

BOUNDED_ANSWER_TOO_LONG = "bounded_answer_too_long"
BOUNDED_NESTING_TOO_DEEP = "bounded_nesting_too_deep"
ISOLATED_PARSER_CRASHED = "isolated_parser_crashed"
ISOLATED_PARSER_TIMEOUT = "isolated_parser_timeout"

LANGUAGE_TITLES = {"java": "Java", "javascript": "JavaScript"}
_OPENER_OF = {")": "(", "]": "[", "}": "{"}
_NOT_BRACKETS = re.compile(r"[^()\[\]{}]+")

_WORKER = IsolatedWorker(
    "tree-sitter parser",
    preload=("tree_sitter", "tree_sitter_java", "tree_sitter_javascript", "evaluators.benchmarks.bfcl.decode_java",
             "evaluators.benchmarks.bfcl.decode_javascript", "evaluators.benchmarks.bfcl.javascript_types"),
    stack_bytes=CHILD_STACK_BYTES,
)


def bracket_nesting(text: str) -> int:
    """The deepest nesting of `(`, `[` and `{` in `text`: quotes are not looked at, and a closer closes only the
    last unclosed opener when it is of its kind (anything else closes nothing), so this never undercounts."""
    open_brackets: list[str] = []
    deepest = 0
    for bracket in _NOT_BRACKETS.sub("", text):
        opener = _OPENER_OF.get(bracket)
        if opener is None:
            open_brackets.append(bracket)
            deepest = max(deepest, len(open_brackets))
        elif open_brackets and open_brackets[-1] == opener:
            open_brackets.pop()
    return deepest


def check_parse_bounds(text: str) -> None:
    """Raises DecodeFailure when `text` is longer or nests deeper than the parser is given (see the module doc)."""
    if len(text) > MAX_PARSED_CHARS:
        raise DecodeFailure(BOUNDED_ANSWER_TOO_LONG,
                            f"the answer is {len(text):,} characters long; at most {MAX_PARSED_CHARS:,} are parsed")
    depth = bracket_nesting(text)
    if depth > MAX_BRACKET_NESTING:
        raise DecodeFailure(BOUNDED_NESTING_TOO_DEEP,
                            f"the answer nests brackets {depth:,} deep; at most {MAX_BRACKET_NESTING} are parsed")


def within_parse_bounds(text: str) -> bool:
    """Whether `text` may be handed to the parser (no bound of check_parse_bounds passed)."""
    return len(text) <= MAX_PARSED_CHARS and bracket_nesting(text) <= MAX_BRACKET_NESTING


def decode_isolated(language: str, text: str, mode: str = "official") -> Any:
    """decode_java / decode_javascript of `text`, run in the parser's child process: the decoded calls, or
    DecodeFailure (the decoder's own, or isolated_parser_crashed / isolated_parser_timeout)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    title = LANGUAGE_TITLES[language]
    # The text the decoder hands to the parser: the official decoders drop the outer brackets they add.
    check_parse_bounds(bracketed(text)[1:-1])
    try:
        outcome = _WORKER.call(_decode_in_child, language, text, mode, timeout=NATIVE_CALL_SECONDS)
    except IsolatedCallFailed as failed:
        raise isolated_failure(failed, title) from None
    if outcome[0] == "failed":
        raise DecodeFailure(outcome[1], outcome[2])
    return outcome[1]


def isolated_failure(failed: IsolatedCallFailed, title: str) -> DecodeFailure:
    """The sample's decode failure for a parser child that crashed or ran out of time."""
    if failed.kind == TIMEOUT:
        return DecodeFailure(ISOLATED_PARSER_TIMEOUT,
                             f"the {title} parser did not finish this answer within {NATIVE_CALL_SECONDS:g} s and was "
                             "stopped; it was parsed in a separate process, so only this sample failed")
    return DecodeFailure(ISOLATED_PARSER_CRASHED,
                         f"the {title} parser crashed on this answer ({failed.status}); it was parsed in a separate "
                         "process, so only this sample failed")


def read_isolated(reader: Callable[[str], Any], text: str) -> Any:
    """`reader(text)` in the parser's child process (a module-level reader of one literal, such as
    javascript_types.read_literal_in_process: the caller names it, so this module imports no converter); None
    (not one literal) when the child crashes or runs out of time, so the official conversion applies."""
    try:
        return _WORKER.call(reader, text, timeout=NATIVE_CALL_SECONDS)
    except IsolatedCallFailed:
        return None


def parser_worker() -> IsolatedWorker:
    """The worker that owns the parser's child process."""
    return _WORKER


# ---- in the child --------------------------------------------------------------------------------------------------


def _decode_in_child(language: str, text: str, mode: str) -> tuple:
    if language == "java":
        from evaluators.benchmarks.bfcl.decode_java import decode_java as decode
    else:
        from evaluators.benchmarks.bfcl.decode_javascript import decode_javascript as decode
    try:
        return ("decoded", decode(text, mode))
    except DecodeFailure as failure:
        return ("failed", failure.rule, failure.detail)
