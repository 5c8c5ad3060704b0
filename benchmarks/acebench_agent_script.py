"""A scripted model for the real ACEBench agent items (agent_multi_turn and agent_multi_step), playing both the agent
and the simulated user so that rollouts run their normal course, for the official harness and ours alike. Used by
`python -m tests.scripted_server --script acebench_agent --script-data DIR` (benchmarks/official_side_by_side.py).

The items are read at run time from DIR (a folder holding `data_en/` or `data_all/data_en/` or `acebench/data_en/`
with `possible_answer/`); nothing of the data is kept in the project. How a request is told apart, from what
both harnesses send (never from prompt wording):
- the simulated user's request carries the item's instruction (its `question`) in its first, system message;
- the agent's request carries it further on (the multi_step question, or the user's first reply, which is the
  question itself), with the conversation so far as `agent:...` lines.
The agent answers the item's gold milestone calls in order (the k-th call once k calls or execution results are in
its history), then
ends: a multi_step agent says "finish conversation", a multi_turn agent reports that it is done, and the user
answers that report with "finish conversation". The user's first reply is the instruction itself. With
`to_limit` nobody ends: after the milestones the agent repeats its last call and the user only says to go on, so
every rollout runs to the official 40-message limit (50 English rollouts: 1,030 requests). A request of no
agent item (a single-turn item, a BFCL item) gets the `fallback` reply, so one server serves every workload.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CATEGORIES = ("agent_multi_turn", "agent_multi_step")
DONE_REPORT = "All the tasks you asked for are done."
FINISH = "finish conversation"
CONTINUE = "Please go on."
AGENT_CALL_MARK = "agent:["
EXECUTION_MARK = "execution"
Reply = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class AgentItem:
    item_id: str
    question: str
    milestones: tuple[str, ...]

    @property
    def multi_step(self) -> bool:
        return self.item_id.startswith("agent_multi_step")


def english_data_folder(root: Path) -> Path:
    """The `data_en` folder under root, as our loader and the official checkout lay it out."""
    for candidate in (root, root / "data_en", root / "data_all" / "data_en", root / "acebench" / "data_en"):
        if (candidate / "possible_answer").is_dir() and (candidate / f"data_{CATEGORIES[0]}.json").is_file():
            return candidate
    raise FileNotFoundError(f"no ACEBench data_en folder with the agent items under {root}")


def _json_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _milestone_texts(milestones: list[Any]) -> tuple[str, ...]:
    """A milestone is a call text, or a list of alternative texts (the first is taken)."""
    return tuple(str(step[0] if isinstance(step, list) and step else step) for step in milestones)


def load_agent_items(root: Path) -> list[AgentItem]:
    folder = english_data_folder(root)
    items = []
    for category in CATEGORIES:
        prompts = _json_lines(folder / f"data_{category}.json")
        answers = _json_lines(folder / "possible_answer" / f"data_{category}.json")
        for prompt, answer in zip(prompts, answers, strict=True):
            items.append(AgentItem(prompt["id"], prompt["question"], _milestone_texts(answer.get("mile_stone", []))))
    return items


class AgentScript:
    """The reply function: body -> the assistant message's fields."""

    def __init__(self, items: list[AgentItem], fallback: Reply, to_limit: bool = False):
        self.fallback = fallback
        self.to_limit = to_limit
        # Longest questions first, so that a question contained in another never shadows it.
        self.items = sorted(items, key=lambda item: len(item.question), reverse=True)

    def item_in(self, text: str) -> AgentItem | None:
        return next((item for item in self.items if item.question in text), None)

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages") or []
        texts = [m["content"] for m in messages if isinstance(m.get("content"), str)]
        first_is_system = bool(messages) and messages[0].get("role") == "system"
        user_item = self.item_in(texts[0]) if first_is_system and texts else None
        if user_item is not None:
            return {"content": self._user_turn(user_item, texts[1:])}
        agent_item = self.item_in("\n".join(texts))
        if agent_item is None:
            return self.fallback(body)
        return {"content": self._agent_turn(agent_item, texts[-1])}

    def _user_turn(self, item: AgentItem, later_texts: list[str]) -> str:
        if len(later_texts) <= 1:  # only the opening line so far: state the instruction
            return item.question
        return FINISH if DONE_REPORT in later_texts[-1] and not self.to_limit else CONTINUE

    def _agent_turn(self, item: AgentItem, history: str) -> str:
        calls_made = max(history.count(AGENT_CALL_MARK), executions_in(history))
        if calls_made < len(item.milestones):
            return item.milestones[calls_made]
        if self.to_limit and item.milestones:
            return item.milestones[-1]
        return FINISH if item.multi_step else DONE_REPORT


def executions_in(history: str) -> int:
    """Execution results in the history. A multi_step history holds only those after the question (the agent's own
    calls are not written back into it); a multi_turn one holds `agent:[...]` lines too, which count calls that went
    to the user instead (a call text the harness could not parse)."""
    return sum(1 for line in history.splitlines() if line.startswith(EXECUTION_MARK))


def agent_script(data_dir: str, fallback: Reply, to_limit: bool = False) -> Reply:
    return AgentScript(load_agent_items(Path(data_dir)), fallback, to_limit)
