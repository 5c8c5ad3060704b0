"""BFCL's memory categories played against an endpoint (memory_kv, memory_rec_sum; memory_vector with its optional
extra, in the vector workers: vector_extra.py, env_host.shared_vector_host), as the official generator plays
them (docs/bfcl-agentic-notes.md §1.3, §1.4, §2):

- per (category, scenario) a CHAIN: the scenario's prerequisite conversations (input["prereqs"]), played strictly
  one after another through the official prompting loop (the multi-turn rollout, one user message a turn), the
  first from an empty memory, each later one from the snapshot the one before flushed; at the end of each (every
  turn played, or the step limit's force-quit) the memory is flushed: `prereq_checkpoints/<id>.json` and
  `<scenario>_final.json`, written by the official class in the environment worker;
- then the scenario's items, each loading `<scenario>_final.json` (items never flush).
The memory system prompt (MEMORY_AGENT_SETTINGS[scenario] and the memory as the class dumps it, in the CORE_ARCHIVAL
or, for rec_sum, the UNIFIED template, read from the wheel) is put first in the first turn once the environment is
open, before turn 0: a prerequisite conversation's system message is DEFAULT + MEMORY, an item's DEFAULT + MEMORY +
the agentic format.

Where and when:
- `MemoryRun`, one per run execution (keyed by the run's client of the tested model, which the engine makes once
  per execution): its scratch folder (a temporary folder of this process, removed with the client) holds one
  `model_result_dir` per (category, scenario), so no two runs, backends or scenarios share a snapshot; its chains,
  one task each, started by the first item of their scenario that a slot takes (`expected_requests` makes each
  scenario's first item start first, so the chains of different scenarios and backends run
  side by side; input["chain_head"]) and awaited by every item of the scenario. A chain runs in a context of its own: its requests go
  through the run's client (cache, retries, the concurrency limit) but are no item's request or events.
- Prerequisite conversations are not scored. Their evidence: every item keeps the snapshot it started from and
  the chain's outline (`memory_snapshot`, `memory_prereqs`); the scenario's first item (input["chain_head"]) keeps the whole
  chain: each conversation's turns, transcript (tool results bounded) and the snapshot it flushed.
- A prerequisite conversation whose request fails (after the client's retries), whose environment goes past its
  limits, or whose snapshot cannot be written flushes nothing and the chain goes on, as the official generator does
  (there: "Error during inference", no flush, its children unlocked): the next conversation and the scenario's items
  start from the last snapshot flushed (the first conversation failing: from an empty memory). Every item of the
  scenario names the failure in its evidence (`memory_prereqs.failures`).
- A resumed run (or one re-sending errors) plays each chain it needs again from the start, answered from the
  response cache when the run uses it, so it gets the same snapshots; the snapshots of an earlier execution are
  never reused. Only a request that failed before is sent again (it is in no cache): should it succeed now, the
  items played in this execution start from a memory that conversation added to (officially a failed prerequisite
  is never retried).
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import json
import shutil
import tempfile
import threading
import weakref
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from evaluators.benchmarks.bfcl.agentic.memory_evidence import MEMORY_PREREQS, MEMORY_SNAPSHOT
from evaluators.benchmarks.bfcl.agentic.memory_ids import get_directory_structure_by_id
from evaluators.benchmarks.bfcl.categories import MEMORY, VECTOR
from evaluators.benchmarks.bfcl.multi_turn.evidence import ENVIRONMENT_LIMIT, STOP, TRANSCRIPT, TURNS
from evaluators.benchmarks.bfcl.wheel import pinned_wheel, read_member
from evaluators.core.errors import DataError
from evaluators.core.types import Prediction, Sample

SETTINGS = "MEMORY_AGENT_SETTINGS"
CORE_ARCHIVAL = "MEMORY_BACKEND_INSTRUCTION_CORE_ARCHIVAL"
UNIFIED = "MEMORY_BACKEND_INSTRUCTION_UNIFIED"
REC_SUM = "rec_sum"
PREREQ_SUFFIX = "_prereq"
SNAPSHOT_FOLDER = "memory_snapshot"
CHECKPOINTS = "prereq_checkpoints"
MEMORY_EVIDENCE_NOTE = "the prerequisite conversations are not scored"
FAILED_PREREQ_NOTE = ("as the official generator does, a failed prerequisite conversation flushed no snapshot and the "
                      "chain went on: the next conversations and the items started from the last snapshot flushed")


# ---- the texts -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryTexts:
    settings: dict[str, str]  # scenario -> its agent setting
    core_archival: str
    unified: str


def texts_from_constants(constants: dict[str, Any], where: str) -> MemoryTexts:
    from evaluators.benchmarks.bfcl.official_source import official_format

    settings = constants.get(SETTINGS)
    if not isinstance(settings, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in settings.items()):
        raise DataError(f"{SETTINGS} is not a dict literal of texts", where)
    templates = []
    for name in (CORE_ARCHIVAL, UNIFIED):
        template = constants.get(name)
        if not isinstance(template, str):
            raise DataError(f"{name} is not a text literal", where)
        official_format(template, scenario_setting="", memory_content="")  # its fields: a clear error now
        templates.append(template)
    return MemoryTexts(dict(settings), *templates)


@lru_cache(maxsize=4)
def _texts_of(wheel_text: str) -> MemoryTexts:
    from evaluators.benchmarks.bfcl.official_source import PROMPTS_FILE, decode, module_constants

    where = f"{wheel_text}:{PROMPTS_FILE}"
    return texts_from_constants(module_constants(decode(read_member(Path(wheel_text), PROMPTS_FILE), where), where),
                                where)


def memory_texts(wheel: Path | None = None) -> MemoryTexts:
    """The memory prompts of constants/default_prompts.py in the pinned wheel (downloaded once when not cached)."""
    return _texts_of(str(wheel or pinned_wheel()))


def memory_system_prompt(item_id: str, scenario: str, memory_content: str, texts: MemoryTexts) -> str:
    """add_memory_instruction_system_prompt's text: the UNIFIED template when the id's category names rec_sum,
    else CORE_ARCHIVAL, filled with the scenario's setting and the memory as the class dumps it."""
    from evaluators.benchmarks.bfcl.official_source import official_format

    category = item_id.rsplit("_", 1)[0]
    if scenario not in texts.settings:
        raise DataError(f"no agent setting for scenario {scenario!r} in {SETTINGS}", item_id)
    template = texts.unified if REC_SUM in category else texts.core_archival
    return official_format(template, scenario_setting=texts.settings[scenario], memory_content=memory_content)


def with_memory_prompt(question: list[list[dict[str, Any]]], prompt: str) -> list[list[dict[str, Any]]]:
    """The first turn with the memory prompt first: before an existing system message's text (a blank line
    between), else as a new system message (a copy; the question is not changed)."""
    turns = copy.deepcopy(question)
    first = turns[0]
    if first and first[0].get("role") == "system":
        first[0]["content"] = prompt + "\n\n" + first[0]["content"]
    else:
        first.insert(0, {"role": "system", "content": prompt})
    return turns


# ---- one conversation ------------------------------------------------------------------------------------------


def memory_class(sample: Sample) -> str:
    classes = sample.input.get("involved_classes") or []
    if len(classes) != 1:
        raise DataError("a memory item involves exactly one memory class", sample.id)
    return str(classes[0])


def initial_config(class_name: str, folder: Path, scenario: str, item_id: str) -> dict[str, Any]:
    """populate_initial_settings_for_memory_test_cases: the folder as text (the worker makes it a Path)."""
    return {class_name: {"model_result_dir": str(folder), "scenario": scenario, "test_id": item_id,
                         "test_category": item_id.rsplit("_", 1)[0]}}


def snapshot_folder(folder: Path, item_id: str) -> Path:
    return folder / get_directory_structure_by_id(item_id) / SNAPSHOT_FOLDER


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


def _hooks(host: Any, scenario: str, texts: MemoryTexts, flush: bool) -> Any:
    from evaluators.benchmarks.bfcl.multi_turn.rollout import RolloutHooks

    async def opened(sample: Sample, session: Any) -> Sample:
        content = await host.memory_context_async(session)
        prompt = memory_system_prompt(sample.id, scenario, content, texts)
        return replace(sample, input={**sample.input, "question": with_memory_prompt(sample.input["question"], prompt)})

    async def played(session: Any) -> None:
        await host.flush_memory_async(session)

    return RolloutHooks(opened=opened, played=played if flush else None)


async def play_conversation(sample: Sample, chat: Any, host: Any, texts: MemoryTexts, flush: bool) -> Prediction:
    from evaluators.benchmarks.bfcl.multi_turn.requests import multi_turn_texts
    from evaluators.benchmarks.bfcl.multi_turn.rollout import run_rollout

    return await run_rollout(sample, chat, host, multi_turn_texts(), _hooks(host, sample.input["scenario"], texts, flush))


# ---- the chain of a (category, scenario) -------------------------------------------------------------------------


@dataclass
class ChainResult:
    category: str
    scenario: str
    folder: Path
    conversations: list[dict[str, Any]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # conversations that failed (and so flushed nothing)
    snapshot: Any = None  # <scenario>_final.json as the items load it (None: no conversation flushed)
    flushed_by: str | None = None
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0})

    def outline(self) -> list[dict[str, Any]]:
        return [{key: conversation.get(key) for key in ("id", "stop", "turns_played", "steps", "error")}
                for conversation in self.conversations]


def prereq_sample(conversation: dict[str, Any], item: Sample, class_name: str, folder: Path) -> Sample:
    scenario = item.input["scenario"]
    return Sample(id=conversation["id"], subset=item.subset,
                  input={"question": conversation["question"], "function": item.input["function"],
                         "involved_classes": [class_name], "scenario": scenario,
                         "initial_config": initial_config(class_name, folder, scenario, conversation["id"])},
                  gold=None, meta={"category": item.subset})


async def play_chain(item: Sample, chat: Any, host: Any, texts: MemoryTexts, folder: Path) -> ChainResult:
    """The scenario's prerequisite conversations of `item`'s category, one after another, in `folder`."""
    from evaluators.benchmarks.bfcl.agentic.web_search import bounded_transcript

    scenario = item.input["scenario"]
    chain = ChainResult(item.subset, scenario, folder)
    class_name = memory_class(item)
    for conversation in item.input["prereqs"]:
        sample = prereq_sample(conversation, item, class_name, folder)
        record: dict[str, Any] = {"id": sample.id}
        chain.conversations.append(record)
        try:
            prediction = await play_conversation(sample, chat, host, texts, flush=True)
        except Exception as failure:  # noqa: BLE001 - a worker's refusal (e.g. a snapshot not written): as a request's
            record.update(stop="failed", error=f"{type(failure).__name__}: {failure}")
            chain.failures.append(f"memory prerequisite conversation {sample.id} failed: {record['error']}")
            continue
        extra = prediction.extra or {}
        turns = extra.get(TURNS) or []
        record.update(stop=extra.get(STOP), turns_played=len(turns), steps=sum(len(turn) for turn in turns),
                      error=prediction.error, turns=turns, transcript=bounded_transcript(extra.get(TRANSCRIPT) or []))
        for key in chain.usage:
            chain.usage[key] += int((prediction.usage or {}).get(key, 0))
        if prediction.error is not None or extra.get(STOP) == ENVIRONMENT_LIMIT:
            # As the official generator: that conversation flushed nothing, the next one starts from the last snapshot.
            why = prediction.error or f"its environment went past its limits ({extra.get('environment_limit')})"
            chain.failures.append(f"memory prerequisite conversation {sample.id} failed: {why}")
            continue
        record["snapshot"] = _read_json(snapshot_folder(folder, sample.id) / CHECKPOINTS / f"{sample.id}.json")
        chain.flushed_by = sample.id
    final = snapshot_folder(folder, item.id) / f"{scenario}_final.json"
    chain.snapshot = _read_json(final)
    return chain


class MemoryRun:
    """One run execution's scratch folder and chains (see the module's docstring)."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="toolboard-bfcl-memory-"))
        self.chains: dict[tuple[str, str], asyncio.Task[ChainResult]] = {}
        self.waiting: dict[tuple[str, str], int] = {}

    def chain_folder(self, category: str, scenario: str) -> Path:
        return self.folder / category / scenario

    def chain(self, item: Sample, chat: Any, host: Any, texts: MemoryTexts) -> asyncio.Task[ChainResult]:
        """The chain's task, started now if it is not running yet (in an empty context: its requests belong to no
        item)."""
        key = (item.subset, item.input["scenario"])
        task = self.chains.get(key)
        if task is None or task.cancelled():
            folder = self.chain_folder(*key)
            folder.mkdir(parents=True, exist_ok=True)
            task = asyncio.get_running_loop().create_task(play_chain(item, chat, host, texts, folder),
                                                          context=contextvars.Context())
            self.chains[key] = task
        return task


    async def result(self, item: Sample, chat: Any, host: Any, texts: MemoryTexts) -> ChainResult:
        """The chain's result for one of its items. When the last item waiting for a running chain is cancelled
        (the run cancelled or stopped), the chain is cancelled too: no request is sent for a run that stopped."""
        key = (item.subset, item.input["scenario"])
        task = self.chain(item, chat, host, texts)
        self.waiting[key] = self.waiting.get(key, 0) + 1
        try:
            return await asyncio.shield(task)
        finally:
            self.waiting[key] -= 1
            if not self.waiting[key] and not task.done():
                task.cancel()


_RUNS: dict[int, MemoryRun] = {}
_RUNS_LOCK = threading.Lock()


def _forget(key: int, folder: Path) -> None:
    with _RUNS_LOCK:
        _RUNS.pop(key, None)
    shutil.rmtree(folder, ignore_errors=True)


def memory_run(chat: Any) -> MemoryRun:
    """The MemoryRun of the run whose tested model's client is `chat` (made on first use; its folder removed when
    the client is collected, or at exit)."""
    key = id(chat)
    with _RUNS_LOCK:
        run = _RUNS.get(key)
        if run is None:
            run = _RUNS[key] = MemoryRun()
            weakref.finalize(chat, _forget, key, run.folder)
        return run


# ---- one item ----------------------------------------------------------------------------------------------------


def carries_chain(sample: Sample) -> bool:
    """The scenario's first item in the category (input["chain_head"]) keeps the whole chain as evidence."""
    return sample.id == sample.input.get("chain_head")


def check_playable(sample: Sample) -> None:
    if sample.subset not in MEMORY:
        raise DataError(f"{sample.subset} is not a memory category", sample.id)
    if not (sample.input.get("prereqs") and sample.input.get("function") and sample.input.get("involved_classes")):
        raise DataError("the data source lacks what playing this memory item needs (multi_turn_func_doc/memory_"
                        "<backend>.json and memory_prereq_conversation/memory_<scenario>.json)", sample.id)


def chain_evidence(sample: Sample, chain: ChainResult) -> dict[str, Any]:
    started = (f"the snapshot {chain.scenario}_final.json flushed by {chain.flushed_by}" if chain.flushed_by
               else "an empty memory (no prerequisite conversation flushed a snapshot)")
    prereqs: dict[str, Any] = {"scenario": chain.scenario, "note": MEMORY_EVIDENCE_NOTE,
                               "conversations": chain.outline(), "usage": dict(chain.usage),
                               "kept_with": sample.input.get("chain_head")}
    if chain.failures:
        prereqs["failures"] = chain.failures
        prereqs["failure_note"] = FAILED_PREREQ_NOTE
    if carries_chain(sample):
        prereqs["chain"] = chain.conversations
    return {MEMORY_SNAPSHOT: {"scenario": chain.scenario, "started_from": started, "flushed_by": chain.flushed_by,
                              "snapshot": chain.snapshot},
            MEMORY_PREREQS: prereqs}


async def solve_memory(sample: Sample, chat: Any, host: Any = None) -> Prediction:
    """One memory item: its scenario's chain (started, or awaited), then the item from the chain's final snapshot."""
    from evaluators.benchmarks.bfcl.agentic.web_search import agentic_format_text, bounded_transcript
    from evaluators.benchmarks.bfcl.multi_turn.env_host import shared_host, shared_vector_host

    check_playable(sample)
    if host is None:
        host = shared_vector_host() if sample.subset == VECTOR else shared_host()
    texts = memory_texts()
    run = memory_run(chat)
    chain = await run.result(sample, chat, host, texts)
    evidence = chain_evidence(sample, chain)
    class_name = memory_class(sample)
    question = [list(turn) for turn in sample.input["question"]]
    question[0].insert(0, {"role": "system", "content": agentic_format_text()})
    item = Sample(id=sample.id, subset=sample.subset,
                  input={"question": question, "function": sample.input["function"], "involved_classes": [class_name],
                         "scenario": chain.scenario,
                         "initial_config": initial_config(class_name, chain.folder, chain.scenario, sample.id)},
                  gold=sample.gold, meta=dict(sample.meta))
    prediction = await play_conversation(item, chat, host, texts, flush=False)
    extra = dict(prediction.extra or {})
    if isinstance(extra.get(TRANSCRIPT), list):
        bounded_transcript(extra[TRANSCRIPT])
    extra.update(evidence)
    return replace(prediction, extra=extra)


def expected_memory_requests(sample: Sample) -> int:
    """About two requests a turn: the item's one turn, and for the scenario's first item also every turn of its
    chain (so the first items start first, each starting its chain)."""
    chain = sum(len(conversation["question"]) for conversation in sample.input.get("prereqs") or ())
    return 2 + (2 * chain if carries_chain(sample) else 0)
