"""simple_java outputs -> `[{name: {argument: value_text}}]`, as the official prompt-mode decoder reads them.

The official decoder parses the text between the outer brackets with tree-sitter (`tree_sitter==0.21.3`,
grammar `tree-sitter-java==0.21.0`, both pinned in requirements.txt) and walks the tree. We use the same
parser, because its error recovery decides what decodes (official_java_tree_sitter_error_recovery): a call
has no terminating `;`, and depending on its content tree-sitter either inserts a MISSING `;` (fine) or
wraps the call in an ERROR node (decode failure): `A.b(x=1)` fails, `A.b(x=1, y=2)` and `A.b(x=1);` decode.

Official rules (each a name a reader can grep):
- official_java_tree_sitter_error_recovery: "ERROR" anywhere in the tree's S-expression fails the decode.
- official_java_first_call_only: the first method invocation in depth-first order is the result; a second
  call after `;` is ignored (two calls joined by a comma are an ERROR).
- official_java_no_call_is_wrong_format: no method invocation at all (prose, `[]`, a bare literal): the
  official decoder returns `{}`, which the runner scores as "wrong output format" (not "decoder failed").
- official_java_named_and_bare_arguments: `name=value` assignments give `name: text`; bare identifiers,
  class literals and sets go under the key None; other positional arguments (literals, calls) are dropped.
- official_java_repeated_argument_fails: a name given twice (or two bare arguments) fails the decode.
- official_java_string_literal_keeps_escapes: a string or char literal value loses its outer quotes only;
  escapes stay as written (`"a\\"b"` -> `a\\"b`).
- official_java_drops_anonymous_class_body: `new T(args)` -> `new T(` + arguments joined by ", " + `)`;
  a `{{ ... }}` body is dropped, so a double-brace HashMap decodes to `new HashMap<...>()`.
- official_java_array_initializer_concatenated: `new T[]{...}` -> `new T[]` + the initializer's tokens
  without spaces; every other composite node -> its children's texts without spaces (`y -> y + 1` ->
  `y->y+1`); nested string literals keep their quotes.
- official_java_array_without_initializer_fails: `new int[3]` has no initializer; the official walk
  fails on it.
- official_java_slices_text_by_byte_offsets: node texts are cut from the Python string with tree-sitter's
  *byte* offsets, so text after a non-ASCII character comes out shifted.

Strict fixes (mode="strict"; every official rule above holds otherwise):
- strict_java_adds_missing_semicolon: when the text parses with an ERROR and does not end with `;`, it is
  parsed again with `;` appended; a clean parse is used (`A.b(x=1)` decodes).
- strict_java_reads_hashmap_puts: an anonymous class body is kept after `new T(args)` (as ` {{ ... }}`
  source text), so double-brace HashMap `put(...)` and ArrayList `add(...)` entries reach the converter.
- strict_java_text_by_bytes: node texts are cut from the UTF-8 bytes and decoded, so non-ASCII text is
  read correctly.

This module is the official decoder as written, run in the calling process with no bounds of ours: for tests and
trusted text (like the official one, it crashes the process on an answer nested ~15,000 deep). Scoring calls it
through native_parsing.decode_isolated, which checks our bounds first (bounded_answer_too_long,
bounded_nesting_too_deep) and runs it in the parser's child process, where a native crash costs one sample.
"""

from __future__ import annotations

from typing import Any

from evaluators.benchmarks.bfcl.decode_common import DecodeFailure, bracketed
from evaluators.benchmarks.bfcl.tree_sitter_grammars import parser_for
from evaluators.core.registry import MODES

JavaCalls = list[dict[str, dict[str | None, str]]]

OFFICIAL_JAVA_TREE_SITTER_ERROR_RECOVERY = "official_java_tree_sitter_error_recovery"
OFFICIAL_JAVA_NO_CALL_IS_WRONG_FORMAT = "official_java_no_call_is_wrong_format"
OFFICIAL_JAVA_REPEATED_ARGUMENT_FAILS = "official_java_repeated_argument_fails"
OFFICIAL_JAVA_ARRAY_WITHOUT_INITIALIZER_FAILS = "official_java_array_without_initializer_fails"
OFFICIAL_JAVA_TREE_TOO_DEEP = "official_java_tree_too_deep"
OFFICIAL_JAVA_UNENCODABLE_TEXT = "official_java_unencodable_text"
STRICT_JAVA_ADDS_MISSING_SEMICOLON = "strict_java_adds_missing_semicolon"
STRICT_JAVA_READS_HASHMAP_PUTS = "strict_java_reads_hashmap_puts"
STRICT_JAVA_TEXT_BY_BYTES = "strict_java_text_by_bytes"
# Decode failures the checker scores as "wrong output format" rather than "decoder failed".
WRONG_FORMAT_RULES = frozenset({OFFICIAL_JAVA_NO_CALL_IS_WRONG_FORMAT})

# official_java_named_and_bare_arguments: positional argument kinds kept under the key None.
BARE_ARGUMENT_TYPES = ("identifier", "class_literal", "set")
# Node kinds whose value is their source text as written.
VERBATIM_TYPES = ("identifier", "class_literal", "type_identifier", "method_invocation")
QUOTED_LITERAL_TYPES = ("string_literal", "character_literal")
ARGUMENT_PUNCTUATION = (",", "(", ")")

def java_parser() -> Any:
    """This thread's tree-sitter parser for Java, as the official decoder builds it."""
    return parser_for("java")


class _Source:
    """The parsed text and how a node's text is cut from it (official: str sliced by byte offsets)."""

    def __init__(self, text: str, by_bytes: bool):
        self.text = text
        self.data = text.encode("utf8")
        self.by_bytes = by_bytes

    def of(self, node: Any) -> str:
        if self.by_bytes:
            return self.data[node.start_byte:node.end_byte].decode("utf8", errors="replace")
        # official_java_slices_text_by_byte_offsets
        return self.text[node.start_byte:node.end_byte]


def _has_error(tree: Any) -> bool:
    return "ERROR" in tree.root_node.sexp()


def _parse(source: str, strict: bool) -> tuple[Any, str]:
    """The tree and the text it was parsed from."""
    tree = java_parser().parse(source.encode("utf8"))
    if not _has_error(tree):
        return tree, source
    if strict and not source.rstrip().endswith(";"):
        retried = source + ";"
        tree = java_parser().parse(retried.encode("utf8"))
        if not _has_error(tree):
            return tree, retried
    raise DecodeFailure(OFFICIAL_JAVA_TREE_SITTER_ERROR_RECOVERY,
                        "tree-sitter's Java parse holds an ERROR node")


class _ValueText:
    """The text an argument value decodes to (official_java_* value rules)."""

    def __init__(self, source: _Source, keep_class_body: bool):
        self.source = source
        self.keep_class_body = keep_class_body

    def of(self, node: Any, nested: bool = False) -> str:
        if node is None:
            raise DecodeFailure(OFFICIAL_JAVA_ARRAY_WITHOUT_INITIALIZER_FAILS,
                                "an array creation without an initializer")
        text = self.source.of(node)
        if node.type in QUOTED_LITERAL_TYPES:
            # official_java_string_literal_keeps_escapes: outer quotes go at the top level only.
            return text if nested else text[1:-1]
        if node.type in VERBATIM_TYPES:
            return text
        if node.type == "array_creation_expression":
            element_type = self.of(node.child_by_field_name("type"), True)
            return f"new {element_type}[]{self.of(node.child_by_field_name('value'), True)}"
        if node.type == "object_creation_expression":
            return self._object_creation(node)
        if node.type == "set":
            items = [self.of(child, True) for child in node.children if child.type not in (",", "set")]
            return "{" + ", ".join(items) + "}"
        if node.child_count > 0:
            return "".join(self.of(child, True) for child in node.children)
        return text

    def _object_creation(self, node: Any) -> str:
        created = self.of(node.child_by_field_name("type"), True)
        arguments = node.child_by_field_name("arguments")
        if arguments is None:
            text = f"new {created}()"
        else:
            parts = [self.of(child, True) for child in arguments.children if child.type not in ARGUMENT_PUNCTUATION]
            text = f"new {created}({', '.join(parts)})"
        if self.keep_class_body:
            body = next((child for child in node.children if child.type == "class_body"), None)
            if body is not None:
                # strict_java_reads_hashmap_puts: keep the double-brace initializer for the converter.
                text += " " + self.source.of(body)
        return text


def _arguments(arguments_node: Any, source: _Source, values: _ValueText) -> dict[str | None, str]:
    collected: dict[str | None, list[str]] = {}
    for child in arguments_node.children:
        if child.type == "assignment_expression":
            # The official walk takes the first and third children as name and value.
            name: str | None = source.of(child.children[0])
            value = values.of(child.children[2])
        elif child.type in BARE_ARGUMENT_TYPES:
            name, value = None, values.of(child)
        else:
            continue
        collected.setdefault(name, []).append(value)
    repeated = [name for name, given in collected.items() if len(given) > 1]
    if repeated:
        raise DecodeFailure(OFFICIAL_JAVA_REPEATED_ARGUMENT_FAILS, f"argument {repeated[0]!r} given more than once")
    return {name: given[0] for name, given in collected.items()}


def _first_call(node: Any, source: _Source, values: _ValueText) -> JavaCalls | None:
    """official_java_first_call_only: depth-first, an invocation before its own children."""
    if node.type == "method_invocation":
        method = source.of(node.child_by_field_name("name"))
        owner = node.child_by_field_name("object")
        name = f"{source.of(owner)}.{method}" if owner is not None else method
        arguments_node = node.child_by_field_name("arguments")
        if arguments_node is None:
            return None
        return [{name: _arguments(arguments_node, source, values)}]
    for child in node.children:
        found = _first_call(child, source, values)
        if found:
            return found
    return None


def decode_java(text: str, mode: str = "official") -> JavaCalls:
    """The calls in a simple_java output, each argument value as text (converted later by the declared type,
    see java_types.java_value). Raises DecodeFailure naming the deciding rule."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    strict = mode == "strict"
    # The official decoder drops the first and last character of the bracketed text.
    inner = bracketed(text)[1:-1]
    try:
        inner.encode("utf8")
    except UnicodeEncodeError as error:
        # The official decoder fails the same way on text with lone surrogates.
        raise DecodeFailure(OFFICIAL_JAVA_UNENCODABLE_TEXT, "the output is not encodable as UTF-8") from error
    tree, parsed_text = _parse(inner, strict)
    source = _Source(parsed_text, by_bytes=strict)
    values = _ValueText(source, keep_class_body=strict)
    try:
        found = _first_call(tree.root_node, source, values)
    except RecursionError as error:
        raise DecodeFailure(OFFICIAL_JAVA_TREE_TOO_DEEP, "the parse tree is too deep to walk") from error
    if not found:
        raise DecodeFailure(OFFICIAL_JAVA_NO_CALL_IS_WRONG_FORMAT, "no method invocation in the output")
    return found
