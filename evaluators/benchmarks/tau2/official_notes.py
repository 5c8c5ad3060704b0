"""The short notes the official evaluator writes into a result's `info` when a component has nothing to evaluate
(or the trajectory ended early), read at run time from the pinned evaluator files (source.py's NOTE_BLOB_IDS and
the NL evaluator's file), pulled out with `ast`, never imported: each is the `"note"` of the first `info={...}`
under the `if` that names its case, so our results compare equal to the official ones field by field."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from evaluators.benchmarks.tau2.prompts import JUDGE_FILE, parse_official
from evaluators.benchmarks.tau2.source import NOTE_BLOB_IDS, Source
from evaluators.core.errors import DataError

EVALUATOR_FILE = "src/tau2/evaluator/evaluator.py"
ACTION_FILE = "src/tau2/evaluator/evaluator_action.py"
COMMUNICATE_FILE = "src/tau2/evaluator/evaluator_communicate.py"
ENV_FILE = "src/tau2/evaluator/evaluator_env.py"
assert {EVALUATOR_FILE, ACTION_FILE, COMMUNICATE_FILE, ENV_FILE} == set(NOTE_BLOB_IDS)


@dataclass(frozen=True)
class OfficialNotes:
    premature: str  # field {reason}: the termination reason
    no_criteria: str
    no_env_criteria: str
    no_actions: str
    no_communicate: str
    no_nl: str
    communicated: str  # fields {info}, {content}: a communicate check's justification when met
    not_communicated: str  # field {info}

    def premature_for(self, reason: object) -> str:
        return fill(self.premature, reason=reason)

    def communicated_for(self, info: str, content: str) -> str:
        return fill(self.communicated, info=info, content=content)

    def not_communicated_for(self, info: str) -> str:
        return fill(self.not_communicated, info=info)


def fill(template: str, **values: object) -> str:
    """`template` with each {field} replaced in one pass (a value holding a placeholder stays as it is)."""
    return _PLACEHOLDER.sub(lambda found: str(values[found.group(1)]), template)


NOTE, JUSTIFICATION = "note", "justification"
# Each text: its file, how the `if` test above it starts (as `ast.unparse` writes it), the branch (body or else),
# and where it is written there (a dict's "note" value, or the value assigned to `justification`).
CASES = {
    "premature": (EVALUATOR_FILE, "simulation.termination_reason not in", "body", NOTE),
    "no_criteria": (EVALUATOR_FILE, "task.evaluation_criteria is None", "body", NOTE),
    "no_env_criteria": (ENV_FILE, "expected_actions is None and env_assertions is None", "body", NOTE),
    "no_actions": (ACTION_FILE, "not golden_actions", "body", NOTE),
    "no_communicate": (COMMUNICATE_FILE, "not communicate_info", "body", NOTE),
    "no_nl": (JUDGE_FILE, "not nl_assertions", "body", NOTE),
    "communicated": (COMMUNICATE_FILE, "found", "body", JUSTIFICATION),
    "not_communicated": (COMMUNICATE_FILE, "found", "orelse", JUSTIFICATION),
}
# What the f-strings interpolate, and the field each becomes in our templates.
FIELDS = {"simulation.termination_reason.value": "reason", "info_str": "info", "message.content": "content"}
_PLACEHOLDER = re.compile(r"\{(" + "|".join(FIELDS.values()) + r")\}")

_READ: dict[tuple[str, tuple[tuple[str, str], ...]], OfficialNotes] = {}


def read_notes(source: Source) -> OfficialNotes:
    """The official notes from `source` (each file checked by its blob id); read once per folder and table."""
    files = sorted({case[0] for case in CASES.values()})
    key = (str(source.root), tuple((name, source.blob_ids.get(name, "")) for name in files))
    if key not in _READ:
        modules = {relative: parse_official(source, relative) for relative in files}
        _READ[key] = OfficialNotes(**{name: _found(modules[relative], relative, test, branch, kind)
                                      for name, (relative, test, branch, kind) in CASES.items()})
    return _READ[key]


def _found(module: ast.Module, relative: str, test: str, branch: str, kind: str) -> str:
    for node in ast.walk(module):
        if isinstance(node, ast.If) and ast.unparse(node.test).startswith(test):
            for statement in getattr(node, branch):
                for part in ast.walk(statement):
                    if kind == NOTE and isinstance(part, ast.Dict):
                        for field, value in zip(part.keys, part.values, strict=True):
                            if isinstance(field, ast.Constant) and field.value == NOTE:
                                return _template(value, relative)
                    if (kind == JUSTIFICATION and isinstance(part, ast.Assign) and len(part.targets) == 1
                            and isinstance(part.targets[0], ast.Name) and part.targets[0].id == JUSTIFICATION):
                        return _template(part.value, relative)
    raise DataError(f"no {kind} under `if {test}` in the official source", relative)


def _template(node: ast.expr, relative: str) -> str:
    """A string literal, or an f-string of literals and the known values (FIELDS) as {field} placeholders."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        pieces = []
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                pieces.append(value.value)
            elif (isinstance(value, ast.FormattedValue) and value.conversion == -1 and value.format_spec is None
                  and ast.unparse(value.value) in FIELDS):
                pieces.append("{" + FIELDS[ast.unparse(value.value)] + "}")
            else:
                raise DataError("an f-string note that interpolates an unknown value", relative)
        return "".join(pieces)
    raise DataError("a note that is neither a string nor an f-string", relative)
