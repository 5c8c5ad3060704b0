"""An environment worker process: the official τ²-bench domain environments (official_code.py) run here and
nowhere else. Started by env_host.py as `python -m evaluators.benchmarks.tau2.env_worker SOURCE_ROOT MEMORY_MB
CALL_SECONDS`; it loads the official modules from the blob-id-checked files under SOURCE_ROOT (a folder laid out
like the repository: `src/tau2/…` and `data/tau2/domains/…`), limits its own address space (RLIMIT_AS) and answers
one JSON request per line on stdin with one JSON reply per line on stdout (anything the official code prints or
logs goes to stderr; its loguru logs from WARNING up).

Requests (`op`):
- open {session, domain, task}: a fresh environment (each domain's DB loaded once per worker from the checked
  files by the domain's own `get_environment`, then copied per session), the task's initial_state applied as
  the official orchestrator's initialize() does; replies {agent_tools, user_tools, syncs} (the official
  `openai_schema` dicts in official order; user tools None unless the domain has them, filtered by
  task["user_tools"] as the official build_user does; syncs: whether the domain's class overrides the base
  class's no-op `sync_tools`).
- call {session, id, name, requestor, arguments}: the official `Environment.get_response` -> {content, error}.
- step_end {session}: `environment.sync_tools()`, as the orchestrator does after each step.
- state {session}: {"state": {"db": JSON, "user_db": JSON | None}} (the DBs as they are hashed).
- close {session}; ping.
- evaluate_env {domain, task, messages, strict[, gold_end]}: what the official evaluator_env.py computes, in parts
  (see `evaluate_env`), with the task's `gold_end` (its gold DB hashes and notes) for the host to pass to the
  other workers, so that each task's gold environment is built once per run.
Replies: {"ok": true, ...} or {"ok": false, "error": text} (an unknown session, a malformed request).

Limits: each request runs under SIGALRM with its default action (the process ends with -14, even inside C code)
after CALL_SECONDS times the request's units (`open_units`, `evaluate_units`; 1 for the others); memory running out
ends the process with EXIT_MEMORY. The host sees the worker gone and ends every session it held
("environment_limit").
"""

from __future__ import annotations

import gc
import json
import os
import pickle
import signal
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from copy import deepcopy
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from evaluators.core.worker_process import limit_memory, serve_json_lines

EXIT_MEMORY = 3
DOMAINS = ("airline", "retail", "telecom")
# The official registry's constructor per domain (registry.py: telecom is the manual-policy variant).
ENVIRONMENT_FACTORIES = {
    "airline": ("tau2.domains.airline.environment", "get_environment"),
    "retail": ("tau2.domains.retail.environment", "get_environment"),
    "telecom": ("tau2.domains.telecom.environment", "get_environment_manual_policy"),
}
DIFF_ENTRIES = 20  # at most this many differing paths per DB in the evidence
DIFF_VALUE_CHARS = 200
# A DB copy is about a million objects: with CPython's default first threshold (700) building one runs the
# collector hundreds of times, each walking the young objects, and tripled the cost of a copy.
GC_FIRST_THRESHOLD = 100_000


# ---- units of the time limit (shared with the host, which waits a little longer) ----------------------------

def _initial_state(task: dict[str, Any]) -> dict[str, Any]:
    state = task.get("initial_state")
    return state if isinstance(state, dict) else {}


def open_units(task: dict[str, Any]) -> int:
    """An open builds an environment (the domain's DB parsed on the worker's first open of it) and replays the
    initial state."""
    state = _initial_state(task)
    return 4 + len(state.get("initialization_actions") or []) + len(state.get("message_history") or [])


def evaluate_units(task: dict[str, Any], messages: list[dict[str, Any]]) -> int:
    """Two environments built, the trajectory's tool calls replayed, the gold actions and assertions run."""
    criteria = task.get("evaluation_criteria")
    if not isinstance(criteria, dict):
        criteria = {}
    calls = sum(len(message.get("tool_calls") or []) for message in messages if isinstance(message, dict))
    return (open_units(task) * 2 + calls + len(criteria.get("actions") or [])
            + len(criteria.get("env_assertions") or []))


# ---- evidence (pure) ----------------------------------------------------------------------------------------

def _short(value: Any) -> Any:
    text = json.dumps(value, default=str)
    return value if len(text) <= DIFF_VALUE_CHARS else text[:DIFF_VALUE_CHARS] + "…"


def db_differences(gold: Any, predicted: Any, path: str = "", found: list[dict[str, Any]] | None = None
                   ) -> list[dict[str, Any]]:
    """The paths where two JSON values differ (at most DIFF_ENTRIES), each with both values shortened."""
    found = [] if found is None else found
    if len(found) >= DIFF_ENTRIES or gold == predicted:
        return found
    if isinstance(gold, dict) and isinstance(predicted, dict):
        for key in list(gold) + [key for key in predicted if key not in gold]:
            db_differences(gold.get(key), predicted.get(key), f"{path}/{key}", found)
    elif isinstance(gold, list) and isinstance(predicted, list) and len(gold) == len(predicted):
        for index, (left, right) in enumerate(zip(gold, predicted)):
            db_differences(left, right, f"{path}/{index}", found)
    else:
        found.append({"path": path or "/", "gold": _short(gold), "predicted": _short(predicted)})
    return found


@dataclass(frozen=True)
class GoldEnd:
    """What the evaluator needs of a task's gold environment (the initial state, the task's message history and
    the gold actions applied): it depends on the task alone, so it is computed once per task (the host keeps it)."""

    db_hash: str
    user_db_hash: str | None
    problems: tuple[str, ...]  # the gold replay's warnings and failed gold actions, in order


class Worker:
    def __init__(self, source_root: Path, call_seconds: float):
        from evaluators.benchmarks.tau2.official_code import install_official_finder, official_module
        from evaluators.benchmarks.tau2.source import Source

        self.source = Source(source_root)
        self.call_seconds = call_seconds
        install_official_finder(self.source)
        # Every official module the worker uses, imported before the memory limit is set.
        self.factories = {domain: getattr(official_module(module), name)
                          for domain, (module, name) in ENVIRONMENT_FACTORIES.items()}
        self.messages = official_module("tau2.data_model.message")
        self.tasks = official_module("tau2.data_model.tasks")
        self.toolkit = official_module("tau2.environment.toolkit")
        self.environment_base = official_module("tau2.environment.environment").Environment
        self.templates: dict[str, Any] = {}  # domain -> an environment built from the files (never used itself)
        # domain -> the template's DB and user DB pickled: loading a pickle makes the same objects as a deep copy
        # (the same classes, every field) several times faster, which is most of a session's cost
        self.pickled_dbs: dict[str, tuple[bytes, bytes | None]] = {}
        self.tool_type_tables: dict[str, dict[str, str]] = {}
        self.schema_tables: dict[tuple[str, tuple[str, ...] | None], dict[str, Any]] = {}
        self.sessions: dict[str, Any] = {}

    @contextmanager
    def time_limit(self, units: int = 1) -> Iterator[None]:
        """A request's time limit: past it the process ends (its state may be anything by then)."""
        signal.setitimer(signal.ITIMER_REAL, self.call_seconds * units)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    # ---- environments ----

    def template(self, domain: str) -> Any:
        """The domain's environment as built from the checked files (once per worker); never used itself."""
        from evaluators.benchmarks.tau2.official_code import check_domain_files

        if domain not in self.factories:
            raise ValueError(f"unknown domain {domain!r}; known: {', '.join(DOMAINS)}")
        template = self.templates.get(domain)
        if template is None:
            check_domain_files(self.source, domain)
            template = self.templates[domain] = self.factories[domain]()
            user_db = template.user_tools.db if template.user_tools is not None else None
            self.pickled_dbs[domain] = (pickle.dumps(template.tools.db, protocol=pickle.HIGHEST_PROTOCOL),
                                        None if user_db is None else pickle.dumps(user_db, pickle.HIGHEST_PROTOCOL))
            # The template lives as long as the worker: the collector need not walk it again.
            gc.freeze()
        return template

    def fresh_environment(self, domain: str) -> Any:
        """A new environment on a copy of the domain's DBs (the pickled template's, loaded: our own bytes, made in
        this process)."""
        self.template(domain)
        db, user_db = self.pickled_dbs[domain]
        # Loading makes only new, live objects (nothing for the collector to find), about a million of them.
        gc.disable()
        try:
            copies = {"db": pickle.loads(db)} | ({} if user_db is None else {"user_db": pickle.loads(user_db)})
        finally:
            gc.enable()
        return self.factories[domain](**copies)

    def initial_state(self, task: Any) -> tuple[Any, Any, list[Any]]:
        """The task's initialization data, actions and message history (a deep copy, turn indices cleared as
        the orchestrator does)."""
        state = task.initial_state
        if state is None:
            return None, None, []
        history = deepcopy(state.message_history) if state.message_history is not None else []
        for message in history:
            message.turn_idx = None
        return state.initialization_data, state.initialization_actions, history

    def open(self, domain: str, record: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        task = self.tasks.Task.model_validate(record)
        environment = self.fresh_environment(domain)
        data, actions, history = self.initial_state(task)
        environment.set_state(initialization_data=data, initialization_actions=actions, message_history=history)
        # Whether the domain's class overrides the base class's `sync_tools` (a `pass`): the host then skips the
        # request after each step for the others (airline, retail), which would change nothing.
        syncs = type(environment).sync_tools is not self.environment_base.sync_tools
        return environment, {**self.tool_schemas(domain, environment, task.user_tools), "syncs": syncs}

    def tool_schemas(self, domain: str, environment: Any, include: list[str] | None) -> dict[str, Any]:
        """The agent's tool schemas, and the user's as the official build_user has them: the domain's user tools
        filtered by the task's list, None when there are none (or the filter names an unknown tool). They come from
        the tools' signatures and docstrings alone (not the data), so they are made once per domain and filter."""
        key = (domain, None if include is None else tuple(include))
        found = self.schema_tables.get(key)
        if found is None:
            try:
                user_tools = environment.get_user_tools(include=include) or None
            except Exception:  # noqa: BLE001 - the official code's own catch-all
                user_tools = None
            found = self.schema_tables[key] = {
                "agent_tools": [tool.openai_schema for tool in environment.get_tools()],
                "user_tools": None if user_tools is None else [tool.openai_schema for tool in user_tools]}
        return found

    @staticmethod
    def db_state(environment: Any) -> dict[str, Any]:
        """The DBs as the official hash sees them (`json.dumps(model_dump(), default=str)`), as JSON values."""
        def dumped(toolkit: Any) -> Any:
            if toolkit is None or toolkit.db is None:
                return None
            return json.loads(json.dumps(toolkit.db.model_dump(), default=str))
        return {"db": dumped(environment.tools), "user_db": dumped(environment.user_tools)}

    def tool_types(self, domain: str) -> dict[str, str]:
        """Every agent and user tool's official ToolType value (evaluator.py builds them from a fresh environment;
        they depend on the domain's code alone, so they are read once)."""
        types = self.tool_type_tables.get(domain)
        if types is None:
            template = self.template(domain)
            types = {}
            for toolkit in (template.tools, template.user_tools):
                if toolkit is not None:
                    types.update({name: kind.value for name, kind in self.toolkit.get_tool_types(toolkit).items()})
            self.tool_type_tables[domain] = types
        return dict(types)

    # ---- trajectories ----

    def official_message(self, message: dict[str, Any]) -> Any:
        """A project Message dict (tau2-plan.md) as the official message object."""
        classes = self.messages
        role = message.get("role")
        if role == "tool":
            return classes.ToolMessage(id=message["id"], role="tool", content=message.get("content"),
                                       requestor=message.get("requestor", "assistant"),
                                       error=bool(message.get("error")), turn_idx=message.get("turn_idx"))
        if role not in ("assistant", "user"):
            raise ValueError(f"a message's role must be assistant, user or tool, not {role!r}")
        calls = [classes.ToolCall(id=call["id"], name=call["name"], arguments=call["arguments"],
                                  requestor=call.get("requestor", role))
                 for call in message.get("tool_calls") or []]
        kind = classes.AssistantMessage if role == "assistant" else classes.UserMessage
        return kind(role=role, content=message.get("content"), tool_calls=calls or None,
                    turn_idx=message.get("turn_idx"))

    @staticmethod
    @contextmanager
    def replay_warnings(problems: list[str]) -> Iterator[None]:
        """The official replay (`set_state`) logs a differing result (non-strict) as a warning: those are the replay
        problems, appended to `problems` (the tools' own warnings, e.g. airline's cancellation, are not)."""
        from loguru import logger

        sink = logger.add(lambda record: problems.append(record.record["message"]), level="WARNING",
                          format="{message}", filter=lambda record: record["function"] == "set_state")
        try:
            yield
        finally:
            logger.remove(sink)

    def gold_environment(self, domain: str, task: Any, strict: bool, problems: list[str]) -> Any:
        """The initial state plus the task's message history and each gold action (a failing one is skipped and
        noted, as official)."""
        data, actions, history = self.initial_state(task)
        gold = self.fresh_environment(domain)
        with self.replay_warnings(problems):
            gold.set_state(initialization_data=data, initialization_actions=actions, message_history=history,
                           strict=strict)
        for action in task.evaluation_criteria.actions or []:
            try:
                gold.make_tool_call(tool_name=action.name, requestor=action.requestor, **action.arguments)
            except Exception as failure:  # noqa: BLE001 - as official: logged, skipped
                problems.append(f"gold action {action.name}({action.arguments}) failed: {failure}")
        return gold

    def gold_end(self, domain: str, task: Any, strict: bool, given: dict[str, Any] | None = None) -> GoldEnd:
        """The task's gold end: `given` (the host keeps each task's, as the first worker to need it computed it, and
        passes it on: it depends on the task alone), else computed here."""
        if given is not None:
            return GoldEnd(str(given["db_hash"]), None if given["user_db_hash"] is None else str(given["user_db_hash"]),
                           tuple(str(problem) for problem in given["problems"]))
        problems: list[str] = []
        gold = self.gold_environment(domain, task, strict, problems)
        return GoldEnd(gold.get_db_hash(), gold.get_user_db_hash(), tuple(problems))

    def evaluate_env(self, domain: str, record: dict[str, Any], messages: list[dict[str, Any]],
                     strict: bool, gold_end: dict[str, Any] | None = None) -> dict[str, Any]:
        """evaluator_env.py's EnvironmentEvaluator in parts: the predicted environment is the initial state plus
        the whole trajectory replayed (`set_state`, non-strict unless asked), the gold one the initial state plus
        the task's message history and each gold action (`gold_environment`); db_match compares both agent-DB and
        user-DB hashes; the env assertions run on the predicted environment."""
        task = self.tasks.Task.model_validate(record)
        result: dict[str, Any] = {"db_match": None, "env_assertions": [], "tool_types": self.tool_types(domain),
                                  "replay_problems": [], "replay_error": None, "db_diff": {}}
        criteria = task.evaluation_criteria
        if criteria is None or (criteria.actions is None and criteria.env_assertions is None):
            return result
        trajectory = [self.official_message(message) for message in messages]
        data, actions, _ = self.initial_state(task)
        problems: list[str] = result["replay_problems"]
        predicted = self.fresh_environment(domain)
        try:
            with self.replay_warnings(problems):
                predicted.set_state(initialization_data=data, initialization_actions=actions,
                                    message_history=trajectory, strict=strict)
        except (ValueError, AssertionError) as failure:
            # The official evaluator raises here (the simulation is then re-run): reported, no DB match.
            result["replay_error"] = f"{type(failure).__name__}: {failure}"
            result["db_match"] = False
            return result
        gold = self.gold_end(domain, task, strict, gold_end)
        result["gold_end"] = {"db_hash": gold.db_hash, "user_db_hash": gold.user_db_hash,
                              "problems": list(gold.problems)}
        problems.extend(gold.problems)
        result["db_match"] = (gold.db_hash == predicted.get_db_hash()
                              and gold.user_db_hash == predicted.get_user_db_hash())
        if not result["db_match"]:
            gold_state = self.db_state(self.gold_environment(domain, task, strict, []))
            predicted_state = self.db_state(predicted)
            result["db_diff"] = {name: db_differences(gold_state[name], predicted_state[name])
                                 for name in ("db", "user_db") if gold_state[name] != predicted_state[name]}
        for assertion in criteria.env_assertions or []:
            met = predicted.run_env_assertion(assertion, raise_assertion_error=False)
            result["env_assertions"].append({"env_assertion": assertion.model_dump(mode="json"), "met": met,
                                             "reward": 1.0 if met else 0.0})
        return result

    # ---- requests ----

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.get("op")
        if op == "ping":
            return {"ok": True}
        if op == "open":
            with self.time_limit(open_units(request["task"])):
                environment, tools = self.open(request["domain"], request["task"])
            self.sessions[request["session"]] = environment
            return {"ok": True, **tools}
        if op == "evaluate_env":
            with self.time_limit(evaluate_units(request["task"], request["messages"])):
                return {"ok": True, "check": self.evaluate_env(request["domain"], request["task"],
                                                               request["messages"], bool(request.get("strict")),
                                                               request.get("gold_end"))}
        environment = self.sessions.get(request.get("session", ""))
        if environment is None:
            return {"ok": False, "error": f"no open session {request.get('session')!r} in this worker"}
        if op == "call":
            call = self.messages.ToolCall(id=request["id"], name=request["name"], arguments=request["arguments"],
                                          requestor=request["requestor"])
            with self.time_limit():
                reply = environment.get_response(call)
            return {"ok": True, "content": reply.content, "error": reply.error}
        if op == "step_end":
            with self.time_limit():
                environment.sync_tools()
            return {"ok": True}
        if op == "state":
            with self.time_limit():
                return {"ok": True, "state": self.db_state(environment)}
        if op == "close":
            del self.sessions[request["session"]]
            return {"ok": True}
        return {"ok": False, "error": f"unknown op {op!r}"}


def serve(requests: IO[str], replies: IO[str], worker: Worker) -> None:
    # Anything a request raises (pydantic's ValidationError for a malformed task, message or call; an assertion of
    # the official code; a DataError) is that request's failure, not the worker's: its other sessions go on.
    serve_json_lines(requests, replies, worker.handle, (Exception,), EXIT_MEMORY)


def _isolate_from_dotenv(source_root: Path) -> None:
    """The official `tau2/utils/utils.py` calls `load_dotenv()` at import and reads TAU2_DATA_DIR. python-dotenv
    searches upwards from the calling file's folder, or from the working directory when `__main__` has no file:
    so `__main__.__file__` is removed and the worker works in a fresh folder holding an empty `.env`, which is
    found first (nothing loaded, no operator's `.env` above it ever read). TAU2_DATA_DIR is the source's data."""
    folder = Path(tempfile.mkdtemp(prefix="toolboard-tau2-env-"))
    (folder / ".env").write_text("")
    os.chdir(folder)
    main_module = sys.modules.get("__main__")
    if main_module is not None and hasattr(main_module, "__file__"):
        del main_module.__file__
    os.environ["TAU2_DATA_DIR"] = str(source_root / "data")


def _quiet_official_logs() -> None:
    """The official code logs every tool response at DEBUG: only warnings and errors reach stderr."""
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="WARNING")


def main(argv: list[str]) -> None:
    source_root, megabytes, call_seconds = Path(argv[0]).resolve(), int(argv[1]), float(argv[2])
    # The replies get their own copy of stdout; fd 1 and sys.stdout then point at stderr, so nothing the
    # official code prints reaches the reply channel.
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    # SIGALRM's default action ends the process at once, even inside C code (a huge integer power in a
    # `calculate` tool), where a Python handler would wait for the C call to return.
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    _isolate_from_dotenv(source_root)
    _quiet_official_logs()
    gc.set_threshold(GC_FIRST_THRESHOLD, *gc.get_threshold()[1:])
    worker = Worker(source_root, call_seconds)
    if megabytes > 0:
        limit_memory(megabytes)
    replies.write(json.dumps({"ok": True, "ready": True}) + "\n")
    replies.flush()
    serve(sys.stdin, replies, worker)


if __name__ == "__main__":
    main(sys.argv[1:])
