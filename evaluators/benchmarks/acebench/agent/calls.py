"""An agent reply -> the calls the reference environment would run, without eval.

The reference normalises the reply, parses it with `ast`, resolves each argument, writes every call
back out as source text (`name(key=repr(value))`) and evals that text on the API objects. We keep
the same steps but stop short of eval: argument texts are read back with `ast.literal_eval`, and the
few texts eval would reject (or run) become the errors eval would raise.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from evaluators.benchmarks.acebench.decode import OFFICIAL_BINOP_EVALUATED_SAFELY, official_drops_positional_args
from evaluators.core.call_literals import (
    MAX_CALL_TEXT_CHARS,
    CallLiteralError,
    CallReader,
    CallRules,
    dotted_name,
    source_text,
)


class ReplySyntaxError(ValueError):
    """The reply is not a call list the reference can decode."""


@dataclass(frozen=True)
class AgentCall:
    """One call as the reference writes it out: its name and `keyword=source` argument texts.
    `keyword` is None for a `**mapping` argument (which makes the written-out call invalid)."""

    name: str
    arguments: tuple[tuple[str | None, str], ...]

    def source(self) -> str:
        return f"{self.name}(" + ", ".join(f"{key}={text}" for key, text in self.arguments) + ")"


def official_reply_normalisation(reply: str) -> str:
    """Drop one leading space, add a missing `[` / `]`, then strip every leading and trailing `[`,
    `]` and `'` (so a trailing space or newline after `]` leaves a stray `]` and fails)."""
    if reply[0] == " ":  # an empty reply raises IndexError here, as in the reference
        reply = reply[1:]
    if not reply.startswith("["):
        reply = "[" + reply
    if not reply.endswith("]"):
        reply = reply + "]"
    return reply.strip("[]'")


def parse_reply(reply: str | None) -> list[AgentCall]:
    """The calls of a reply; a single expression that is not a call gives no calls (`[hello]`).
    Raises ReplySyntaxError where the reference's decoding raises."""
    try:
        source = official_reply_normalisation(reply or "")
        if len(source) > MAX_CALL_TEXT_CHARS:
            raise ValueError(f"the reply is longer than {MAX_CALL_TEXT_CHARS:,} characters")
        tree = ast.parse(source, mode="eval")
    except (IndexError, SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ReplySyntaxError(f"{type(exc).__name__}: {exc}") from None
    body = tree.body
    elements: list[ast.expr]
    if isinstance(body, ast.Call):
        elements = [body]
    elif isinstance(body, (ast.Tuple, ast.List)):
        elements = body.elts
    else:
        return []
    calls = []
    reader = CallReader(AGENT_REPLY_RULES)  # one per reply: what its arithmetic may build in all
    for element in elements:
        if not isinstance(element, ast.Call):
            raise ReplySyntaxError(f"list element is not a call: {type(element).__name__}")
        try:
            calls.append(_written_out(element, reader))
        except CallLiteralError as exc:
            raise ReplySyntaxError(str(exc)) from None
    return calls


_ROUTE_TO_EXECUTION = re.compile(r"\[.*\]")


def official_multi_turn_routing(reply: str | None) -> bool:
    """multi_turn: a reply goes to execution if some line holds `[…]` and the whole reply decodes;
    anything else goes to the user simulator as a message."""
    if not reply or not _ROUTE_TO_EXECUTION.search(reply):
        return False
    try:
        parse_reply(reply)
    except ReplySyntaxError:
        return False
    return True


# ---- the reference's rules for the core reader -------------------------------------------------


def official_name_is_its_text(node: ast.Name) -> str:
    """`x=true` passes the string 'true'."""
    return node.id


def official_nested_call_text_or_dict(node: ast.Call, reader: CallReader) -> object:
    """A call without keywords stays as its source text; one with keywords becomes {name: {args}}."""
    return source_text(node) if not node.keywords else reader.call(node)


def official_subscript_is_text(node: ast.Subscript) -> str:
    return source_text(node.value) + "[" + source_text(node.slice) + "]"


def official_unary_minus_of_constant(node: ast.UnaryOp, reader: CallReader) -> object:
    """Any unary operator on a constant number gives its negation (`+5` and `~5` are -5; `-True`
    is -1); on anything else decoding fails."""
    if not isinstance(node.operand, ast.Constant):
        raise ReplySyntaxError("unary operator on a non-constant")
    value = node.operand.value
    if not isinstance(value, (int, float, complex)):
        # the reference's TypeError, word for word
        raise ReplySyntaxError(f"bad operand type for unary -: {type(value).__name__!r}")
    return -value


AGENT_REPLY_RULES = CallRules(
    unary=official_unary_minus_of_constant, name=official_name_is_its_text, nested_call=official_nested_call_text_or_dict,
    subscript=official_subscript_is_text, call_arguments=official_drops_positional_args,
    arithmetic=OFFICIAL_BINOP_EVALUATED_SAFELY,
)


def _written_out(node: ast.Call, reader: CallReader) -> AgentCall:
    arguments = tuple((keyword.arg, _argument_text(reader.value(keyword.value))) for keyword in node.keywords)
    return AgentCall(dotted_name(node.func), arguments)


def _argument_text(value: object) -> str:
    """`repr` of the value, except a dict, which the reference writes out as a call of its first key."""
    if isinstance(value, dict):
        return official_dict_argument_written_as_call(value)
    try:
        return repr(value)
    except ValueError as exc:  # e.g. an int too long to print
        raise ReplySyntaxError(str(exc)) from None


def official_dict_argument_written_as_call(value: dict[object, object]) -> str:
    """A dict argument `{k: {…}}` is written out as the call `k(…)` (so running it fails); an empty
    dict, or a first value that is not a dict, makes decoding fail."""
    if not value:
        raise ReplySyntaxError("list index out of range")
    name = next(iter(value))
    inner = value[name]
    if not isinstance(inner, dict):
        raise ReplySyntaxError(f"'{type(inner).__name__}' object has no attribute 'items'")
    return f"{name}(" + ", ".join(f"{key}={_argument_text(item)}" for key, item in inner.items()) + ")"
