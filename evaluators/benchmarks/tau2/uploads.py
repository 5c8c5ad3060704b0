"""τ²-bench uploads: the official results file of `tau2 run` (`results.json`) read into one Prediction per task.

The file is one JSON object, `{"timestamp", "info", "tasks", "simulations", ...}` (docs/tau2-notes.md §7), of one
domain (the official runner writes one file per domain). An upload is one such file, or a zip (or folder) of
several, e.g. one per domain; every file is read whole (bounded by the core's limits on predictions files). While
it is parsed, what is never kept is dropped at once: each message's provider response (`raw_data`), the model
arguments (`llm_args`, which may hold API keys: §7.2) and the policy and guideline texts repeated in the file.

Each simulation (one task, one trial) becomes a trial of its task's prediction (the Trajectory contract of the
plan: trials sorted by trial number, messages in the official shape with only the fields the scoring reads), with
the reward the official evaluator recorded (`recorded_reward`) kept for comparison, never for scoring. Of `info`
only the model names, `num_trials`, `max_steps`, `max_errors` and `seed` are kept. Samples are matched by the
file's domain and task id (`<domain>_<task_id>`).

Every problem is collected in one pass, each naming the file, the simulation (index, task, trial) and, for a
message, its index and field: an unknown task, a trial given twice, a message of the wrong shape, a file that is
not a results file. Two findings do not refuse the file and are said as notes (MatchSummary.notes): a task whose
embedded definition differs from the pinned one (it is scored against the pinned one, as `tau2 evaluate-trajs
--fresh-tasks` does), and a simulation that ended in `infrastructure_error` (left out, as the official metrics
intend with pandas 2: its task then has fewer trials and pass^k stops at the smallest count; a task with no
other trial gets a prediction with `error` set, re-runnable like a failed request)."""

from __future__ import annotations

import json
import sys
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from evaluators.benchmarks.tau2.data import DOMAINS, Task, parse_task
from evaluators.benchmarks.tau2.samples import sample_id as sample_id_of
from evaluators.core.archive import MB, ZIP_READ_ERRORS, ByteBudget, open_member
from evaluators.core.errors import DataError, PredictionsError
from evaluators.core.jsonl import decode_utf8
from evaluators.core.predictions import (
    MAX_PARSED_BYTES,
    MAX_UNPACKED_BYTES,
    SNIFF_BYTES,
    MatchSummary,
    ParsedPredictions,
    Row,
    Unreadable,
    check_unpacked_size,
    not_text_reason,
    parsed_size,
    raise_on_errors,
)
from evaluators.core.types import Prediction, Sample

# The top-level fields of the official `Results` (data_model/simulation.py); `simulation_index` is optional.
RESULTS_FIELDS = ("timestamp", "info", "tasks", "simulations")
# The official TerminationReason values. Those other than the two stops end a trajectory prematurely (reward 0).
TERMINATION_REASONS = ("user_stop", "agent_stop", "max_steps", "timeout", "too_many_errors", "agent_error",
                       "user_error", "infrastructure_error", "context_window_exceeded", "unexpected_error")
INFRASTRUCTURE_ERROR = "infrastructure_error"
STOPS = ("user_stop", "agent_stop")  # the trajectories the official evaluator replays (the others score 0)
ROLES = ("assistant", "user", "tool")
REQUESTORS = ("assistant", "user")
SPLIT = "base"
# The most problems of one simulation named in its one message (every simulation with problems is listed).
MAX_PROBLEMS_PER_SIMULATION = 5
# How much of a recorded error text is kept.
MAX_ERROR_CHARS = 500

# Prediction.extra keys (the plan's Trajectory contract, and what an upload adds).
TRIALS = "trials"
USER_MODEL = "user_model"
JUDGE_MODEL = "judge_model"
SPLIT_KEY = "split"
RECORDED_RUN = "recorded_run"  # {"domain", "agent_model", "num_trials", "max_steps", "max_errors", "seed"}
EXCLUDED_TRIALS = "excluded_trials"  # [{"trial", "seed", "termination_reason", "error"}]: infrastructure errors
TASK_DIFFERS = "task_differs"  # [field name, ...]: the embedded definition's fields that differ from the pinned one
RECORDED_REWARD = "recorded_reward"


# ---- reading the file(s) ------------------------------------------------------------------------------------------

def _dropped_while_parsing(record: dict[str, Any]) -> dict[str, Any]:
    """json.loads object hook: the parts of a results file never kept, dropped as soon as their object is built so
    they never add up in memory. Each is recognised by its object's own fields, so a task's definition (compared
    with the pinned one) is left whole."""
    if "role" in record:  # a message: the provider's whole response
        record.pop("raw_data", None)
    if "llm" in record and "implementation" in record:  # user_info / agent_info: model arguments, maybe keys
        record.pop("llm_args", None)
        record.pop("global_simulation_guidelines", None)
    if "domain_name" in record:  # environment_info: the policy text
        record.pop("policy", None)
    if "termination_reason" in record:  # a simulation: the policy text again, and voice/review data
        for name in ("policy", "ticks", "review", "user_only_review", "effect_timeline", "speech_environment"):
            record.pop(name, None)
    return record


def _parse_document(raw: bytes, where: str) -> Any:
    """The file's JSON value, with the never-kept parts dropped; every failure a PredictionsError naming the file."""
    estimate = len(raw) + 64 * raw.count(b"{") + 56 * raw.count(b"[") + 40 * raw.count(b",")
    if estimate > MAX_PARSED_BYTES:
        raise PredictionsError(f"the file would take more than {MAX_PARSED_BYTES / MB:.3g} MB once parsed; at most "
                               "that is held (about 75 MB of a results file's text)", where)
    text = decode_utf8(raw, where, PredictionsError)
    try:
        return json.loads(text, object_hook=_dropped_while_parsing)
    except json.JSONDecodeError as exc:
        raise PredictionsError(f"not a results file: invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
                               where) from None
    except RecursionError:
        raise PredictionsError("not a results file: invalid JSON: nested too deeply to read", where) from None
    except ValueError:  # an integer literal longer than the interpreter's digit limit
        raise PredictionsError(f"not a results file: invalid JSON: a number has more than "
                               f"{sys.get_int_max_str_digits()} digits", where) from None


def _file_bytes(path: Path, shown: str, budget: ByteBudget) -> bytes:
    size = path.stat().st_size
    if size > budget.left:
        raise PredictionsError(f"the file is {size / MB:.3g} MB; at most {MAX_UNPACKED_BYTES / MB:.3g} MB is read",
                               shown)
    with path.open("rb") as handle:
        raw = handle.read(budget.left + 1)
    budget.spend(len(raw), shown)
    reason = not_text_reason(raw[:SNIFF_BYTES])
    if reason is not None:
        raise PredictionsError(reason.replace("predictions are JSON Lines or JSON", "a results file is JSON"), shown)
    return raw


def _zip_members(path: Path, budget: ByteBudget) -> Iterator[tuple[str, bytes]]:
    """Each .json member's bytes in name order, one at a time (each is parsed before the next is read)."""
    try:
        bundle = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError):
        raise PredictionsError("not a valid zip file", path.name) from None
    with bundle:
        members = sorted((info for info in bundle.infolist() if info.filename.endswith(".json")
                          and "__MACOSX" not in info.filename and not info.is_dir()), key=lambda info: info.filename)
        if not members:
            raise PredictionsError("the zip holds no .json file (a results.json per domain)", path.name)
        check_unpacked_size(members, Path(path.name))
        for info in members:
            where = f"{path.name}:{info.filename}"
            try:
                with open_member(bundle, info, where, budget) as stream:
                    raw = stream.read()
            except ZIP_READ_ERRORS as exc:
                raise PredictionsError(f"the zip is damaged ({exc})", where) from None
            yield where, raw


def _files(path: Path, budget: ByteBudget) -> Iterator[tuple[str, bytes]]:
    """(where, bytes) of each file of the input, one at a time."""
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix == ".json" and p.is_file())
        if not files:
            raise PredictionsError("no .json files in this folder", path.name)
        for file in files:
            where = f"{path.name}/{file.name}"
            yield where, _file_bytes(file, where, budget)
    elif not path.is_file():
        raise PredictionsError("file not found", path.name)
    elif zipfile.is_zipfile(path):
        yield from _zip_members(path, budget)
    else:
        yield path.name, _file_bytes(path, path.name, budget)


def read_results(path: str | Path) -> ParsedPredictions:
    """A results.json, or a zip or folder of them (one per domain), read once: one Row per file whose data is the
    file's parsed object (the never-kept parts dropped), named by the file's base name (or zip:member). A file
    that cannot be read as JSON at all is a PredictionsError; its shape is checked when it is matched."""
    path = Path(path)
    rows, held = [], 0
    for where, raw in _files(path, ByteBudget(MAX_UNPACKED_BYTES, PredictionsError)):
        document = _parse_document(raw, where)
        del raw  # the text is not held beside its parse
        held += parsed_size(document)
        if held > MAX_PARSED_BYTES:
            raise PredictionsError(f"the files read so far take more than {MAX_PARSED_BYTES / MB:.3g} MB once "
                                   "parsed; at most that is held", where)
        rows.append(Row(where, 1, document))
    return ParsedPredictions(path.name, tuple(rows), held)


# ---- one simulation -----------------------------------------------------------------------------------------------

def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    kinds: dict[type, str] = {dict: "an object", list: "a list", str: "a string"}
    return kinds.get(type(value), type(value).__name__)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _tool_call(call: Any, where: str, problems: list[str]) -> dict[str, Any] | None:
    if not isinstance(call, dict):
        problems.append(f"{where} must be an object with 'id', 'name', 'arguments' and 'requestor', got {_kind(call)}")
        return None
    bad = len(problems)
    for name in ("id", "name"):
        if not isinstance(call.get(name), str) or not call[name]:
            problems.append(f"{where}.{name} must be a non-empty string, got {_kind(call.get(name))}")
    if not isinstance(call.get("arguments"), dict):
        problems.append(f"{where}.arguments must be an object (the official file keeps the parsed arguments), "
                        f"got {_kind(call.get('arguments'))}")
    requestor = call.get("requestor", "assistant")  # the official ToolCall's default
    if requestor not in REQUESTORS:
        problems.append(f"{where}.requestor must be 'assistant' or 'user', got {str(requestor)[:40]!r}")
    if len(problems) > bad:
        return None
    return {"id": call["id"], "name": call["name"], "arguments": call["arguments"], "requestor": requestor}


def _message(message: Any, where: str, problems: list[str]) -> dict[str, Any] | None:
    """One message in the contract's shape (only the fields the scoring reads), or None with its problems added."""
    if not isinstance(message, dict):
        problems.append(f"{where} must be an object, got {_kind(message)}")
        return None
    bad = len(problems)
    role = message.get("role")
    if role not in ROLES:
        problems.append(f"{where}.role must be 'assistant', 'user' or 'tool', got {str(role)[:40]!r}")
        return None
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        problems.append(f"{where}.content must be a string or null, got {_kind(content)}")
    turn_idx = message.get("turn_idx")
    if turn_idx is not None and not _is_int(turn_idx):
        problems.append(f"{where}.turn_idx must be an integer or null, got {_kind(turn_idx)}")
    if role == "tool":
        if not isinstance(message.get("id"), str) or not message["id"]:
            problems.append(f"{where}.id must be the answered call's id (a non-empty string), got "
                            f"{_kind(message.get('id'))}")
        if message.get("requestor") not in REQUESTORS:
            problems.append(f"{where}.requestor must be 'assistant' or 'user', got {str(message.get('requestor'))[:40]!r}")
        error = message.get("error", False)  # the official ToolMessage's default
        if not isinstance(error, bool):
            problems.append(f"{where}.error must be a boolean, got {_kind(error)}")
        if len(problems) > bad:
            return None
        return {"role": role, "id": message["id"], "content": content, "requestor": message["requestor"],
                "error": error, "turn_idx": turn_idx}
    raw_calls = message.get("tool_calls")
    calls: list[dict[str, Any]] | None = None
    if raw_calls is not None:
        if not isinstance(raw_calls, list):
            problems.append(f"{where}.tool_calls must be a list or null, got {_kind(raw_calls)}")
        else:
            found = [_tool_call(call, f"{where}.tool_calls[{index}]", problems) for index, call in enumerate(raw_calls)]
            calls = [call for call in found if call is not None]
    if len(problems) > bad:
        return None
    return {"role": role, "content": content, "tool_calls": calls or None, "turn_idx": turn_idx}


def _pairing_problems(messages: list[dict[str, Any]]) -> list[str]:
    """Where the tool messages do not answer the calls as the official replay requires (environment.set_state: each
    call followed at once by the tool message with its id, in order; no tool message elsewhere), which it refuses
    by raising. Messages here are all well-formed."""
    problems, index = [], 0
    while index < len(messages):
        message = messages[index]
        index += 1
        if message["role"] == "tool":
            problems.append(f"messages[{index - 1}] is a tool message (answering {message['id']!r}) that follows no "
                            "tool call: the official replay refuses it")
            continue
        for number, call in enumerate(message["tool_calls"] or ()):
            answer = messages[index] if index < len(messages) else None
            if answer is None or answer["role"] != "tool" or answer["id"] != call["id"]:
                got = "the trajectory ends" if answer is None else f"messages[{index}] is " + (
                    f"a tool message answering {answer['id']!r}" if answer["role"] == "tool"
                    else f"a{'n' if answer['role'] == 'assistant' else ''} {answer['role']} message")
                problems.append(f"messages[{index - 1 - number}].tool_calls[{number}] ({call['id']!r}) must be answered "
                                f"by the next message, a tool message with its id, as the official replay requires; "
                                f"{got}")
                return problems
            index += 1
    return problems


def _side_usage(messages: list[Any], role: str, cost: Any) -> dict[str, Any]:
    """A side's tokens summed over its messages' recorded `usage` (numbers only), and its recorded cost."""
    totals = {"prompt_tokens": 0, "completion_tokens": 0}
    for message in messages:
        usage = message.get("usage") if isinstance(message, dict) and message.get("role") == role else None
        if isinstance(usage, dict):
            for key in totals:
                if _is_int(usage.get(key)):
                    totals[key] += usage[key]
    return {**totals, "cost": float(cost) if _is_number(cost) else None}


def _recorded_error(info: Any) -> str | None:
    error = info.get("error") if isinstance(info, dict) else None
    return error[:MAX_ERROR_CHARS] if isinstance(error, str) else None


@dataclass
class _Simulation:
    """One simulation read: where it is, its task id and trial number (when readable), the trial in the contract's
    shape (None when it has problems or is excluded) and its problems."""

    label: str
    task_id: str | None = None
    trial_number: int | None = None
    trial: dict[str, Any] | None = None
    excluded: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)


def _simulation(raw: Any, label: str) -> _Simulation:
    if not isinstance(raw, dict):
        return _Simulation(label, problems=[f"must be an object (a simulation), got {_kind(raw)}"])
    found = _Simulation(label)
    problems = found.problems
    task_id, trial, seed, reason = raw.get("task_id"), raw.get("trial"), raw.get("seed"), raw.get("termination_reason")
    if isinstance(task_id, str) and task_id:
        found.task_id = task_id
    else:
        problems.append(f"task_id must be a non-empty string, got {_kind(task_id)}")
    if isinstance(trial, int) and not isinstance(trial, bool) and trial >= 0:
        found.trial_number = trial
    else:
        problems.append(f"trial must be a trial number (an integer from 0), got {_kind(trial)}")
    if seed is not None and not _is_int(seed):
        problems.append(f"seed must be an integer or null, got {_kind(seed)}")
    if reason not in TERMINATION_REASONS:
        problems.append(f"termination_reason must be one of the official reasons ({', '.join(TERMINATION_REASONS)}), "
                        f"got {str(reason)[:40]!r}")
    found.label = f"{label} (task {found.task_id!r}, trial {found.trial_number})" if not problems else label
    if reason == INFRASTRUCTURE_ERROR:
        if not problems:
            found.excluded = {"trial": trial, "seed": seed, "termination_reason": reason,
                              "error": _recorded_error(raw.get("info"))}
        return found
    reward_info = raw.get("reward_info")
    reward = reward_info.get("reward") if isinstance(reward_info, dict) else None
    if reward_info is not None and not isinstance(reward_info, dict):
        problems.append(f"reward_info must be an object or null, got {_kind(reward_info)}")
    elif reward is not None and not _is_number(reward):
        problems.append(f"reward_info.reward must be a number or null, got {_kind(reward)}")
    raw_messages = raw.get("messages")
    if not isinstance(raw_messages, list):
        problems.append(f"messages must be a list (the text trajectory), got {_kind(raw_messages)}")
        return found
    messages = [_message(message, f"messages[{index}]", problems) for index, message in enumerate(raw_messages)]
    if not problems and reason in STOPS:
        problems.extend(_pairing_problems([message for message in messages if message is not None]))
    if problems:
        return found
    found.trial = {
        "trial": trial, "seed": seed, "termination_reason": reason,
        "error": _recorded_error(raw.get("info")) if reason not in STOPS else None,
        "messages": messages, "nl_judgement": None,
        "usage": {"agent": _side_usage(raw_messages, "assistant", raw.get("agent_cost")),
                  "user": _side_usage(raw_messages, "user", raw.get("user_cost"))},
        RECORDED_REWARD: float(reward) if reward is not None else None,
    }
    return found


# ---- one file -----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _RunInfo:
    """What is kept of a file's `info`."""

    domain: str
    user_model: str
    agent_model: str | None
    num_trials: int | None
    max_steps: int | None
    max_errors: int | None
    seed: int | None

    def recorded(self) -> dict[str, Any]:
        return {"domain": self.domain, "agent_model": self.agent_model, "num_trials": self.num_trials,
                "max_steps": self.max_steps, "max_errors": self.max_errors, "seed": self.seed}


def _path(record: Any, *keys: str) -> Any:
    for key in keys:
        record = record.get(key) if isinstance(record, dict) else None
    return record


def _document_problems(document: Any) -> list[str]:
    """Why a parsed file is not a results file of `tau2 run` (empty when it is one)."""
    if not isinstance(document, dict):
        return [f"not a results file of `tau2 run`: the file must be one JSON object with {', '.join(RESULTS_FIELDS)}, "
                f"got {_kind(document)}"]
    absent = [name for name in RESULTS_FIELDS if name not in document]
    if absent:
        return [f"not a results file of `tau2 run`: no {', '.join(repr(name) for name in absent)} at the top level "
                f"(it has {', '.join(repr(name) for name in list(document)[:6]) or 'nothing'})"]
    problems = []
    for name, kind in (("info", dict), ("tasks", list), ("simulations", list)):
        if not isinstance(document[name], kind):
            problems.append(f"field '{name}' must be {'an object' if kind is dict else 'a list'}, got "
                            f"{_kind(document[name])}")
    if not problems and not document["simulations"]:
        problems.append("the file holds no simulation")
    return problems


def _run_info(info: dict[str, Any], problems: list[str]) -> _RunInfo | None:
    domain = _path(info, "environment_info", "domain_name")
    user_model = _path(info, "user_info", "llm")
    agent_model = _path(info, "agent_info", "llm")
    bad = len(problems)
    if domain not in DOMAINS:
        problems.append(f"info.environment_info.domain_name must be one of {', '.join(DOMAINS)} (the text track's "
                        f"domains), got {str(domain)[:40]!r}")
    if not isinstance(user_model, str) or not user_model:
        problems.append(f"info.user_info.llm must be the user simulator's model (a string), got {_kind(user_model)}")
    if agent_model is not None and not isinstance(agent_model, str):
        problems.append(f"info.agent_info.llm must be a string or null, got {_kind(agent_model)}")
    numbers = {}
    for name in ("num_trials", "max_steps", "max_errors", "seed"):
        value = info.get(name)
        if value is not None and not _is_int(value):
            problems.append(f"info.{name} must be an integer or null, got {_kind(value)}")
        numbers[name] = value
    if len(problems) > bad:
        return None
    return _RunInfo(domain, user_model, agent_model, **numbers)


def _without_nulls(value: Any) -> Any:
    """A JSON value with null-valued object fields left out: the official file writes every optional field."""
    if isinstance(value, dict):
        return {key: _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


def _comparable(task: Task) -> Task:
    return replace(task, initial_state=_without_nulls(task.initial_state), description=_without_nulls(task.description))


def task_differences(domain: str, embedded: Any, pinned: Mapping[str, Any]) -> list[str]:
    """The fields of a task's definition embedded in a results file that differ from the pinned record, read the
    same way (the official file writes every default, so the typed records are compared): ["(unreadable: …)"] when
    the embedded one cannot be read as a task."""
    try:
        theirs = _comparable(parse_task(domain, embedded, "the results file", 0))
    except DataError as exc:
        return [f"(unreadable: {exc})"]
    ours = _comparable(parse_task(domain, dict(pinned), "the pinned tasks", 0))
    return [item.name for item in fields(Task)
            if item.compare and getattr(theirs, item.name) != getattr(ours, item.name)]


# ---- matching -----------------------------------------------------------------------------------------------------

@dataclass
class _Task:
    """What the files hold for one sample: its trials by number, those left out, and its run (the first file's)."""

    sample: Sample
    run: _RunInfo
    trials: dict[int, dict[str, Any]] = field(default_factory=dict)
    excluded: list[dict[str, Any]] = field(default_factory=list)
    differs: list[str] | None = None


def _shown(problems: list[str]) -> str:
    shown = problems[:MAX_PROBLEMS_PER_SIMULATION]
    more = len(problems) - len(shown)
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


class _Matcher:
    def __init__(self, samples: list[Sample]):
        self.by_id = {sample.id: sample for sample in samples}
        self.loaded = {sample.subset for sample in samples}
        self.summary = MatchSummary()
        self.tasks: dict[str, _Task] = {}
        self.models: tuple[str, str | None, str] | None = None  # the first file's (user model, agent model, file)
        self.first_trial: dict[tuple[str, int], str] = {}

    def add_row(self, row: Row) -> None:
        problems = _document_problems(row.data)
        run = _run_info(row.data["info"], problems) if not problems else None
        if run is None:
            self.summary.errors.extend(f"{row.where}: {problem}" for problem in problems)
            return
        if not self._same_models(run, row.where):
            return
        simulations = row.data["simulations"]
        self.summary.lines_read += len(simulations)
        if run.domain not in self.loaded:  # a domain the check did not load: counted apart, not refused
            self.summary.other_subsets += len(simulations)
            return
        embedded = {task.get("id"): task for task in row.data["tasks"] if isinstance(task, dict)}
        for index, raw in enumerate(simulations):
            self._add_simulation(_simulation(raw, f"{row.where}: simulations[{index}]"), run, embedded)

    def _same_models(self, run: _RunInfo, where: str) -> bool:
        """Files of one upload are one run: the same user simulator and model under test in every file."""
        if self.models is None:
            self.models = (run.user_model, run.agent_model, where)
            return True
        user_model, agent_model, first = self.models
        if (user_model, agent_model) == (run.user_model, run.agent_model):
            return True
        self.summary.errors.append(f"{where}: models (user {run.user_model!r}, agent {run.agent_model!r}) differ from "
                                   f"those of {first} (user {user_model!r}, agent {agent_model!r}); one upload is one run")
        return False

    def _add_simulation(self, found: _Simulation, run: _RunInfo, embedded: dict[Any, Any]) -> None:
        if found.problems:
            self.summary.errors.append(f"{found.label}: {_shown(found.problems)}")
            return
        assert found.task_id is not None and found.trial_number is not None
        sample_id = sample_id_of(run.domain, found.task_id)
        sample = self.by_id.get(sample_id)
        if sample is None:
            self.summary.unknown.append(sample_id)
            self.summary.errors.append(f"{found.label}: unknown task {found.task_id!r}: not a task of {run.domain}'s "
                                       f"{SPLIT} split being scored")
            return
        key = (sample_id, found.trial_number)
        if key in self.first_trial:
            self.summary.duplicates.append(sample_id)
            self.summary.errors.append(f"{found.label}: trial {found.trial_number} of task {found.task_id!r} appears "
                                       f"twice (first at {self.first_trial[key]})")
            return
        self.first_trial[key] = found.label
        task = self.tasks.get(sample_id)
        if task is None:
            task = self.tasks[sample_id] = _Task(sample, run)
            if found.task_id in embedded:
                task.differs = task_differences(run.domain, embedded[found.task_id], sample.gold)
        if found.excluded is not None:
            task.excluded.append(found.excluded)
            self.summary.notes.append(f"{found.label}: ended in infrastructure_error (no trajectory); left out of the "
                                      "scores, as the official metrics do")
        elif found.trial is not None:
            task.trials[found.trial_number] = found.trial

    def predictions(self) -> dict[str, Prediction]:
        predictions = {}
        for sample_id, task in self.tasks.items():
            if task.differs:
                self.summary.notes.append(
                    f"task {sample_id}: the definition embedded in the file differs from the pinned one "
                    f"({', '.join(task.differs)}); scored against the pinned one")
            trials = [trial for _, trial in sorted(task.trials.items())]
            if task.run.num_trials is not None and len(trials) < task.run.num_trials:
                self.summary.notes.append(f"task {sample_id}: {len(trials)} scored trial(s) of the run's "
                                          f"{task.run.num_trials}; pass^k stops at the smallest count")
            predictions[sample_id] = _prediction(task, trials)
            self.summary.matched += 1
        return predictions


def _prediction(task: _Task, trials: list[dict[str, Any]]) -> Prediction:
    extra: dict[str, Any] = {TRIALS: trials, USER_MODEL: task.run.user_model, JUDGE_MODEL: None, SPLIT_KEY: SPLIT,
                             RECORDED_RUN: task.run.recorded()}
    if task.excluded:
        extra[EXCLUDED_TRIALS] = sorted(task.excluded, key=lambda trial: trial["trial"])
    if task.differs:
        extra[TASK_DIFFERS] = task.differs
    error = None
    if not trials:
        error = (f"every trial of this task ended in infrastructure_error in the uploaded file "
                 f"({len(task.excluded)}); no trajectory to score")
    output = None
    if trials:
        texts = [m["content"] for m in trials[0]["messages"] if m["role"] == "assistant" and m["content"]]
        output = texts[-1] if texts else None
    usage = {key: sum(trial["usage"]["agent"][key] for trial in trials) for key in ("prompt_tokens", "completion_tokens")}
    return Prediction(task.sample.id, output=output, error=error, usage=usage if any(usage.values()) else None,
                      extra=extra)


def _split_into_lines(where: str, rows: list[Row]) -> str:
    """What to say of a file the generic predictions reader (JSON Lines) read line by line: the official file is one
    JSON object written over many lines (indented), which must be read whole (read_results)."""
    unreadable = [row.data.problem for row in rows if isinstance(row.data, Unreadable)]
    first = f"; first: {unreadable[0]}" if unreadable else ""
    return (f"{where}: read as JSON Lines ({len(rows)} values, {len(unreadable)} of them unreadable lines{first}), but "
            "a results file of `tau2 run` is one JSON object over many lines, to be read whole")


def match_predictions(source: Path | ParsedPredictions, samples: list[Sample]) -> tuple[dict[str, Prediction],
                                                                                       MatchSummary]:
    """One prediction per task found in the results file(s) (a path, read here, or files read before: read_results,
    or rows holding each a results file's object), and every problem of the file(s) in the summary; the findings
    that do not refuse the file (a task whose embedded definition differs, infrastructure errors) in its notes."""
    parsed = source if isinstance(source, ParsedPredictions) else read_results(source)
    matcher = _Matcher(samples)
    by_file: dict[str, list[Row]] = {}
    for row in parsed.rows:
        by_file.setdefault(row.where, []).append(row)
    for where, rows in by_file.items():
        if len(rows) == 1 and not isinstance(rows[0].data, Unreadable):
            matcher.add_row(rows[0])
        else:
            matcher.summary.errors.append(_split_into_lines(where, rows))
    predictions = matcher.predictions()
    matcher.summary.missing = [sample.id for sample in samples if sample.id not in predictions]
    return predictions, matcher.summary


def read_predictions(path: Path, samples: list[Sample]) -> dict[str, Prediction]:
    """Predictions keyed by sample id; raises PredictionsError listing every problem."""
    predictions, summary = match_predictions(path, samples)
    raise_on_errors(summary, Path(path).name)
    return predictions


def subset_of_upload(document: Any) -> str | None:
    """The domain (subset) a parsed results file is of, or None: what the service needs to load the right samples
    for an upload whose rows hold no ids (see the report on integrating uploads)."""
    domain = _path(document, "info", "environment_info", "domain_name")
    return domain if domain in DOMAINS else None

