"""The texts of a τ²-bench conversation as the official code sends them, read at run time from the pinned source
(source.py's PROMPT_BLOB_IDS): the agent's system prompt (its instruction and template, formatted with the domain
policy), the agent's fixed greeting, the user simulator's system prompt (its guidelines file, with or without
tools, and its template around the task's scenario), the user's stop tokens, and the NL-assertion judge's two
prompts. Templates inside .py files are pulled out with `ast` and never imported; the scenario text is the official
`__str__` logic of the task's user scenario, reproduced here over data.py's types."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from string import Formatter
from typing import Any

from evaluators.benchmarks.tau2.data import StructuredInstructions, UserScenario
from evaluators.benchmarks.tau2.source import PROMPT_BLOB_IDS, Source
from evaluators.core.errors import DataError

AGENT_FILE = "src/tau2/agent/llm_agent.py"
ORCHESTRATOR_FILE = "src/tau2/orchestrator/orchestrator.py"
USER_FILE = "src/tau2/user/user_simulator.py"
USER_BASE_FILE = "src/tau2/user/user_simulator_base.py"
JUDGE_FILE = "src/tau2/evaluator/evaluator_nl_assertions.py"
GUIDELINES_FILE = "data/tau2/user_simulator/simulation_guidelines.md"
GUIDELINES_TOOLS_FILE = "data/tau2/user_simulator/simulation_guidelines_tools.md"
assert {AGENT_FILE, ORCHESTRATOR_FILE, USER_FILE, USER_BASE_FILE, JUDGE_FILE, GUIDELINES_FILE,
        GUIDELINES_TOOLS_FILE} == set(PROMPT_BLOB_IDS)

# The placeholder the official user prompt replaces with the runtime persona's guidelines; a text run's persona
# config is the default one, which adds nothing (and the text-mode guideline files do not hold it anyway).
PERSONA_PLACEHOLDER = "<PERSONA_GUIDELINES>"

# One piece of an f-string: literal text, or the name of the variable it interpolates (no conversion, no spec).
FStringPart = tuple[str, bool]


@dataclass(frozen=True)
class OfficialPrompts:
    """The official texts of a conversation, read from one pinned source."""

    agent_instruction: str
    agent_template: str  # fields {agent_instruction}, {domain_policy}
    greeting: str
    user_template: str  # fields {global_user_sim_guidelines_with_persona}, {instructions}
    guidelines: str
    guidelines_with_tools: str
    stop_tokens: tuple[str, ...]
    judge_system: str
    judge_user: tuple[FStringPart, ...]  # interpolates trajectory_str and nl_assertions

    def agent_system_prompt(self, policy: str) -> str:
        return format_template(self.agent_template, domain_policy=policy, agent_instruction=self.agent_instruction)

    def user_system_prompt(self, scenario: str, with_tools: bool) -> str:
        guidelines = self.guidelines_with_tools if with_tools else self.guidelines
        return format_template(self.user_template, global_user_sim_guidelines_with_persona=guidelines.replace(
            PERSONA_PLACEHOLDER, ""), instructions=scenario)

    def is_stop(self, content: str | None) -> bool:
        """A user text containing any stop token ends the conversation (substring, as official)."""
        return content is not None and any(token in content for token in self.stop_tokens)

    def judge_prompt(self, conversation: str, assertions: Sequence[str]) -> str:
        """The judge's user prompt: the conversation lines and the assertions as a Python list's repr (the
        official f-string formats the list itself)."""
        values: dict[str, Any] = {"trajectory_str": conversation, "nl_assertions": list(assertions)}
        return "".join(format(values[text], "") if is_field else text for text, is_field in self.judge_user)


def format_template(template: str, **values: Any) -> str:
    """`template.format(**values)` limited to the plain named fields the official templates use."""
    out: list[str] = []
    try:
        parts = list(Formatter().parse(template))
    except ValueError as exc:
        raise DataError(f"official prompt template cannot be formatted: {exc}") from None
    for literal, name, spec, conversion in parts:
        out.append(literal)
        if name is None:
            continue
        if name not in values or spec or conversion:
            raise DataError(f"official prompt template has a field {{{name}}} the official code does not fill")
        out.append(str(values[name]))
    return "".join(out)


def scenario_text(scenario: UserScenario) -> str:
    """What the user simulator is told of its task (`str(task.user_scenario)` officially): an optional persona
    block, then the instructions, each indented by a tab."""
    lines = []
    if scenario.persona is not None:
        lines.append("Persona:")
        lines.append(textwrap.indent(scenario.persona, "\t"))
    lines.append("Instructions:")
    lines.append(textwrap.indent(_instructions_text(scenario.instructions), "\t"))
    return "\n".join(lines)


def _instructions_text(instructions: StructuredInstructions | str) -> str:
    """Structured instructions as labelled fields in the official fixed order, values indented by a tab."""
    if isinstance(instructions, str):
        return instructions
    tab = "\t"
    lines = [f"Domain: {instructions.domain}",
             f"Reason for call:\n{textwrap.indent(instructions.reason_for_call, tab)}"]
    if instructions.known_info is not None:
        lines.append(f"Known info:\n{textwrap.indent(instructions.known_info, tab)}")
    if instructions.unknown_info is not None:
        lines.append(f"Unknown info:\n{textwrap.indent(instructions.unknown_info, tab)}")
    lines.append(f"Task instructions:\n{textwrap.indent(instructions.task_instructions, tab)}")
    return "\n".join(lines)


# ---- reading the pinned files ---------------------------------------------------------------------------------

_READ: dict[tuple[str, tuple[tuple[str, str], ...]], OfficialPrompts] = {}


def read_prompts(source: Source) -> OfficialPrompts:
    """The official texts from `source` (each file checked by its blob id); read once per folder and table."""
    key = (str(source.root), tuple(sorted((name, source.blob_ids.get(name, "")) for name in PROMPT_BLOB_IDS)))
    if key not in _READ:
        _READ[key] = _read_prompts(source)
    return _READ[key]


def _read_prompts(source: Source) -> OfficialPrompts:
    agent = parse_official(source, AGENT_FILE)
    user = parse_official(source, USER_FILE)
    base = parse_official(source, USER_BASE_FILE)
    judge = _judge_method(source)
    return OfficialPrompts(
        agent_instruction=_string_constant(agent, "AGENT_INSTRUCTION", AGENT_FILE),
        agent_template=_string_constant(agent, "SYSTEM_PROMPT", AGENT_FILE),
        greeting=_greeting(parse_official(source, ORCHESTRATOR_FILE)),
        user_template=_string_constant(user, "SYSTEM_PROMPT", USER_FILE),
        guidelines=_text_mode(source.text(GUIDELINES_FILE)),
        guidelines_with_tools=_text_mode(source.text(GUIDELINES_TOOLS_FILE)),
        stop_tokens=tuple(_string_constant(base, name, USER_BASE_FILE) for name in ("STOP", "TRANSFER", "OUT_OF_SCOPE")),
        judge_system=_local_string(judge, "system_prompt"),
        judge_user=_local_fstring(judge, "user_prompt"),
    )


def _text_mode(text: str) -> str:
    """As Python's text-mode `open().read()` gives it (the official code reads the guidelines so)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_official(source: Source, relative: str) -> ast.Module:
    """A pinned .py file's syntax tree (parsed, never imported)."""
    try:
        return ast.parse(source.text(relative), filename=relative)
    except SyntaxError as exc:
        raise DataError(f"not parseable Python ({exc.msg})", source.where(relative), exc.lineno) from None


def _string_value(node: ast.expr | None) -> str | None:
    """A string literal, or a string literal's `.strip()` (how the agent's templates are written)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "strip"
            and not node.args and not node.keywords):
        inner = _string_value(node.func.value)
        return inner.strip() if inner is not None else None
    return None


def _assigned(body: list[ast.stmt], name: str) -> ast.expr | None:
    """The value last assigned to `name` among `body`'s statements."""
    found = None
    for statement in body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            target, value = statement.target, statement.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id == name:
            found = value
    return found


def _string_constant(module: ast.Module, name: str, relative: str) -> str:
    value = _string_value(_assigned(module.body, name))
    if value is None:
        raise DataError(f"no string constant {name} in the official source", relative)
    return value


def _greeting(module: ast.Module) -> str:
    """The `content=` of the DEFAULT_FIRST_AGENT_MESSAGE the orchestrator opens every conversation with."""
    call = _assigned(module.body, "DEFAULT_FIRST_AGENT_MESSAGE")
    if isinstance(call, ast.Call):
        for keyword in call.keywords:
            if keyword.arg == "content" and (text := _string_value(keyword.value)) is not None:
                return text
    raise DataError("no DEFAULT_FIRST_AGENT_MESSAGE with a literal content in the official source", ORCHESTRATOR_FILE)


def _judge_method(source: Source) -> ast.FunctionDef:
    """NLAssertionsEvaluator.evaluate_nl_assertions, where the judge's prompts are written."""
    module = parse_official(source, JUDGE_FILE)
    for node in module.body:
        if isinstance(node, ast.ClassDef) and node.name == "NLAssertionsEvaluator":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "evaluate_nl_assertions":
                    return item
    raise DataError("no NLAssertionsEvaluator.evaluate_nl_assertions in the official source", JUDGE_FILE)


def _local_string(function: ast.FunctionDef, name: str) -> str:
    value = _string_value(_assigned(function.body, name))
    if value is None:
        raise DataError(f"no string {name} in evaluate_nl_assertions", JUDGE_FILE)
    return value


def _local_fstring(function: ast.FunctionDef, name: str) -> tuple[FStringPart, ...]:
    """An f-string's literal pieces and the plain variables it interpolates (anything else is refused)."""
    node = _assigned(function.body, name)
    if not isinstance(node, ast.JoinedStr):
        raise DataError(f"no f-string {name} in evaluate_nl_assertions", JUDGE_FILE)
    parts: list[FStringPart] = []
    for value in node.values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            parts.append((value.value, False))
        elif (isinstance(value, ast.FormattedValue) and isinstance(value.value, ast.Name) and value.conversion == -1
              and value.format_spec is None and value.value.id in ("trajectory_str", "nl_assertions")):
            parts.append((value.value.id, True))
        else:
            raise DataError(f"the f-string {name} interpolates something other than the conversation and the "
                            "assertions", JUDGE_FILE)
    return tuple(parts)
