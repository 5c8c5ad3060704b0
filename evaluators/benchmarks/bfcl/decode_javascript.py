"""simple_javascript outputs -> `[{name: {argument: value_text}}]`, as the official prompt-mode decoder reads them.

The official decoder parses the text between the outer brackets with tree-sitter (`tree_sitter==0.21.3`,
grammar `tree-sitter-javascript==0.21.4`, pinned in requirements.txt); we use the same parser so that what
parses, and how, is the same. JavaScript's automatic semicolon insertion means a lone call needs no `;`.

Official rules (each a name a reader can grep):
- official_js_tree_sitter_error: "ERROR" anywhere in the tree's S-expression fails the decode.
- official_js_first_call_only: only top-level expression statements are looked at, in order; the first one
  holding a call expression is the result (`f(a=1); g(b=2)` -> f only).
- official_js_no_call_is_wrong_format: no such statement (prose, `[]`, two calls joined by a comma, which
  make one sequence expression): the official decoder returns nothing, scored as "wrong output format".
- official_js_named_and_bare_arguments: `name=value` assignments give `name: value source text`; bare
  identifiers and `true` go under the key None; other positional arguments (numbers, `false`, strings,
  calls) are dropped.
- official_js_strips_one_quote_pair: a value starting and ending with `"` (or with `'`) loses its first and
  last character; backtick strings keep their backticks.
- official_js_repeated_argument_fails: a name given twice (or two bare arguments) fails the decode.

mode="strict" decodes as the official decoder does: the JavaScript quirks worth fixing are in the value
conversion (javascript_types).

This module is the official decoder as written, run in the calling process with no bounds of ours: for tests and
trusted text (like the official one, it crashes the process on an answer nested ~15,000 deep). Scoring calls it
through native_parsing.decode_isolated, which checks our bounds first (bounded_answer_too_long,
bounded_nesting_too_deep) and runs it in the parser's child process, where a native crash costs one sample.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evaluators.benchmarks.bfcl.decode_common import DecodeFailure, bracketed
from evaluators.benchmarks.bfcl.tree_sitter_grammars import parser_for
from evaluators.core.registry import MODES

if TYPE_CHECKING:  # tree_sitter is imported on first use only (tree_sitter_grammars)
    from tree_sitter import Node

JavaScriptCalls = list[dict[str, dict[str | None, str]]]

OFFICIAL_JS_TREE_SITTER_ERROR = "official_js_tree_sitter_error"
OFFICIAL_JS_NO_CALL_IS_WRONG_FORMAT = "official_js_no_call_is_wrong_format"
OFFICIAL_JS_REPEATED_ARGUMENT_FAILS = "official_js_repeated_argument_fails"
OFFICIAL_JS_UNENCODABLE_TEXT = "official_js_unencodable_text"
# Decode failures the checker scores as "wrong output format" rather than "decoder failed".
WRONG_FORMAT_RULES = frozenset({OFFICIAL_JS_NO_CALL_IS_WRONG_FORMAT})

# official_js_named_and_bare_arguments: positional argument kinds kept under the key None.
BARE_ARGUMENT_TYPES = ("identifier", "true")
QUOTES = ('"', "'")

def javascript_parser() -> Any:
    """This thread's tree-sitter parser for JavaScript, as the official decoder builds it."""
    return parser_for("javascript")


def _text(node: Node) -> str:
    return node.text.decode("utf8")


def strip_one_quote_pair(value: str) -> str:
    """official_js_strips_one_quote_pair: `"a"` -> `a`, `'a'` -> `a`; backticks and mixed quotes stay."""
    if any(value.startswith(quote) and value.endswith(quote) for quote in QUOTES):
        return value[1:-1]
    return value


def _arguments(arguments_node: Any) -> dict[str | None, str]:
    collected: dict[str | None, list[str]] = {}
    for child in arguments_node.children:
        if child.type == "assignment_expression":
            # The official walk takes the first and third children as name and value.
            name: str | None = _text(child.children[0])
            value = strip_one_quote_pair(_text(child.children[2]))
        elif child.type in BARE_ARGUMENT_TYPES:
            name, value = None, _text(child)
        else:
            continue
        collected.setdefault(name, []).append(value)
    repeated = [name for name, given in collected.items() if len(given) > 1]
    if repeated:
        raise DecodeFailure(OFFICIAL_JS_REPEATED_ARGUMENT_FAILS, f"argument {repeated[0]!r} given more than once")
    return {name: given[0] for name, given in collected.items()}


def decode_javascript(text: str, mode: str = "official") -> JavaScriptCalls:
    """The call in a simple_javascript output, each argument value as text (converted later by the declared
    type, see javascript_types.javascript_value). Raises DecodeFailure naming the deciding rule."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    # The official decoder drops the first and last character of the bracketed text.
    inner = bracketed(text)[1:-1]
    try:
        data = inner.encode("utf8")
    except UnicodeEncodeError as error:
        # The official decoder fails the same way on text with lone surrogates.
        raise DecodeFailure(OFFICIAL_JS_UNENCODABLE_TEXT, "the output is not encodable as UTF-8") from error
    root = javascript_parser().parse(data).root_node
    if "ERROR" in root.sexp():
        raise DecodeFailure(OFFICIAL_JS_TREE_SITTER_ERROR, "tree-sitter's JavaScript parse holds an ERROR node")
    statements = root.children if root.type == "program" else []
    for statement in statements:
        if statement.type != "expression_statement":
            continue
        for expression in statement.children:
            if expression.type == "call_expression":
                # official_js_first_call_only: callee text and the second child as the argument list.
                callee, arguments_node = expression.children[0], expression.children[1]
                return [{_text(callee): _arguments(arguments_node)}]
    raise DecodeFailure(OFFICIAL_JS_NO_CALL_IS_WRONG_FORMAT, "no top-level call in the output")
