"""A finished run as an Inspect AI eval log (`python -m evaluators export RUN_ID --inspect-log FILE`), which
`inspect view` opens. Built from the run document only, as the results dataset publishes it
(dataset_rows.published_document: no base URL, key variable or data folder; key-shaped tokens redacted), with inspect-ai's
public types and writer (`inspect_ai.log`, `inspect_ai.model`, `inspect_ai.scorer`, `inspect_ai.event`,
`inspect_ai.tool`), imported on use: inspect-ai is an optional extra (requirements-inspect.txt) and the app and CLI
start without it.

What a log holds:
- the eval's spec: the model, task = the benchmark and its subsets, dataset = the benchmark's data version, the
  run's settings (as the document keeps them: no API key, only its variable's name) in its metadata;
- per sample: input = the messages of the tested model's first request, target = the gold answer as text,
  messages = the tested model's last request and its reply (system/user/assistant/tool, tool calls included),
  one model event per model call (the tested model's and each role's, with the request body as sent), the score
  in each scoring mode the run has (the official one first) with its explanation, and the tested model's tokens;
- results: per scoring mode, the report's figures (its summary, then each subset's metrics) as metrics.
Model text goes in as data: tool call arguments are parsed as JSON, never evaluated.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaluators import __version__
from evaluators.core.errors import ToolboardError
from evaluators.core.registry import MODES, get_benchmark
from evaluators.engine.client import request_of_event
from evaluators.engine.run_document import RunDocument, SampleRecord
from evaluators.engine.store import Store
from evaluators.publish.dataset_rows import published_document

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample
    from inspect_ai.model import ChatMessage, ChatMessageAssistant, ModelOutput, ModelUsage

INSTALL_HINT = "pip install -r requirements-inspect.txt"
# The role of the tested model's calls in a sample's events (client.ChatClient.role).
TESTED_ROLE = "model"
LOG_FORMATS = {".json": "json", ".eval": "eval"}


class InspectUnavailable(ToolboardError):
    """inspect-ai (the optional extra) is not installed."""


def check_inspect_installed() -> None:
    """Refuse, with the pip command that fixes it, when inspect-ai is not installed. Only looks for the package:
    importing it costs about 2 s, which a refused target or run need not wait for (write_inspect_log imports it)."""
    try:
        found = importlib.util.find_spec("inspect_ai") is not None
    except (ImportError, ValueError):  # ValueError: a module already in sys.modules without a spec
        found = False
    if not found:
        raise _unavailable("inspect_ai is not installed")


def import_inspect() -> None:
    """Import inspect-ai, refusing with the pip command when it is installed but cannot be imported."""
    try:
        import inspect_ai.log  # noqa: F401
    except ImportError as missing:
        raise _unavailable(str(missing)) from None


def _unavailable(reason: str) -> InspectUnavailable:
    return InspectUnavailable(f"writing an Inspect log needs the inspect-ai extra ({reason}): {INSTALL_HINT}")


def write_inspect_log(store: Store, run_id: str, target: Path) -> Path:
    """Write the finished run `run_id` of `store` as an Inspect eval log at `target` (.eval, or .json for the JSON
    format); the file appears only once complete. Returns the path written. The target and the run are checked
    before inspect-ai is imported, so a refusal is quick."""
    check_inspect_installed()
    target = Path(target)
    suffix = target.suffix.lower()
    if suffix not in LOG_FORMATS:
        raise ToolboardError(f"an Inspect log file ends in .eval or .json, not {target.name!r}")
    if not target.parent.is_dir():
        raise ToolboardError(f"cannot write {target}: folder {target.parent} does not exist")
    document = published_document(store, run_id)
    import_inspect()
    log = inspect_log(document)
    return _write_atomically(log, target, LOG_FORMATS[suffix])


def _write_atomically(log: EvalLog, target: Path, log_format: str) -> Path:
    from inspect_ai.log import write_eval_log

    partial = target.with_name(f".{target.name}.{os.getpid()}.partial{target.suffix}")
    try:
        write_eval_log(log, str(partial.absolute()), format="json" if log_format == "json" else "eval")
        os.replace(partial, target)
    except OSError as problem:
        raise ToolboardError(f"cannot write the Inspect log {target}: {problem.strerror or problem}") from None
    finally:
        partial.unlink(missing_ok=True)
    return target


# ---- the log -----------------------------------------------------------------------------------------


def inspect_log(document: RunDocument) -> EvalLog:
    """The Inspect eval log of a run document."""
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalPlan, EvalSpec, EvalStats
    from inspect_ai.model import GenerateConfig

    run = document.run
    settings = run.config
    model_settings = settings.get("model") if isinstance(settings.get("model"), dict) else {}
    assert isinstance(model_settings, dict)
    subsets = settings.get("subsets")
    task = run.benchmark + (f"/{'+'.join(map(str, subsets))}" if isinstance(subsets, list) and subsets else "")
    samples = [_sample(run.model, sample) for sample in document.samples]
    spec = EvalSpec(
        eval_id=run.id, run_id=run.id, created=_iso(run.created_at), task=task, task_id=run.id,
        task_version=__version__, task_args={"benchmark": run.benchmark, "language": run.language, "subsets": subsets},
        dataset=EvalDataset(name=_data_version(run.benchmark), samples=len(samples),
                            sample_ids=[sample.id for sample in document.samples]),
        model=run.model,
        model_generate_config=GenerateConfig(temperature=_number(model_settings.get("temperature")),
                                             top_p=_number(model_settings.get("top_p")),
                                             max_tokens=_whole(model_settings.get("max_tokens"))),
        config=EvalConfig(), packages={"toolboard": __version__},
        metadata={"toolboard_run": run.id, "fingerprint": run.fingerprint, "source": run.source, "message": run.message,
                  "notes": run.notes, "settings": settings})
    usage = _summed([usage for sample in samples for usage in sample.model_usage.values()])
    role_usage: dict[str, list[ModelUsage]] = {}
    for sample in samples:
        for role, used in sample.role_usage.items():
            role_usage.setdefault(role, []).append(used)
    stats = EvalStats(started_at=_iso(run.started_at or run.created_at), completed_at=_iso(run.finished_at or run.created_at),
                      model_usage={run.model: usage} if usage is not None else {},
                      role_usage={role: summed for role, used in role_usage.items()
                                  if (summed := _summed(used)) is not None})
    return EvalLog(status="success", eval=spec, plan=EvalPlan(name="toolboard"), results=_results(document),
                   stats=stats, samples=samples)


def _data_version(benchmark: str) -> str:
    """The benchmark's data version (the run's fingerprint covers the one it ran on), or its name when this
    toolboard does not have it."""
    try:
        return get_benchmark(benchmark).data_version
    except ToolboardError:
        return benchmark


def _modes(document: RunDocument) -> list[str]:
    """The run's scoring modes, the official one first."""
    present = {mode for sample in document.samples for mode in sample.scores} | {r.mode for r in document.reports}
    return [mode for mode in MODES if mode in present] + sorted(present - set(MODES))


def _results(document: RunDocument) -> Any:
    from inspect_ai.log import EvalMetric, EvalResults, EvalScore

    reports = {report.mode: report.report for report in document.reports}
    scores = []
    for mode in _modes(document):
        figures = headline_figures(reports.get(mode, {}))
        scored = sum(1 for sample in document.samples if mode in sample.scores)
        scores.append(EvalScore(name=mode, scorer=mode, scored_samples=scored,
                                unscored_samples=len(document.samples) - scored,
                                metrics={name: EvalMetric(name=name, value=value) for name, value in figures.items()}))
    completed = sum(1 for sample in document.samples if sample.prediction is not None)
    return EvalResults(total_samples=document.run.total, completed_samples=completed, scores=scores)


def headline_figures(report: dict[str, Any]) -> dict[str, float]:
    """A report's figures as metrics: its summary's numbers, then each subset's (`<subset>/<metric>`); a figure
    that is not a finite number (not computed) is left out."""
    figures: dict[str, float] = {}
    summary = report.get("summary")
    for name, value in (summary.items() if isinstance(summary, dict) else ()):
        if _finite(value):
            figures[str(name)] = float(value)
    subsets = report.get("subsets")
    for subset, part in (subsets.items() if isinstance(subsets, dict) else ()):
        metrics = part.get("metrics") if isinstance(part, dict) else None
        for name, value in (metrics.items() if isinstance(metrics, dict) else ()):
            if _finite(value):
                figures[f"{subset}/{name}"] = float(value)
    return figures


def _number(value: Any) -> float | None:
    return float(value) if _finite(value) else None


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


# ---- a sample --------------------------------------------------------------------------------------


def _sample(model: str, sample: SampleRecord) -> EvalSample:
    from inspect_ai.log import EvalSample
    from inspect_ai.model import ModelUsage
    from inspect_ai.scorer import Score

    events = [event for event in sample.events if isinstance(event, dict)] if isinstance(sample.events, list) else []
    requests = {number: request_of_event(events, number) for number in range(1, len(events) + 1)}
    tested = [number for number, event in enumerate(events, 1) if event.get("role") == TESTED_ROLE
              and _messages_of(requests[number]) is not None]
    row_body = sample.request.get("body") if isinstance(sample.request, dict) else None
    first_request = requests[tested[0]] if tested else row_body
    input_messages = _chat_messages(_messages_of(first_request) or [])
    prediction = sample.prediction
    if tested:
        last = events[tested[-1] - 1]
        messages = _chat_messages(_messages_of(requests[tested[-1]]) or [])
        reply = _dict_or_none(last.get("response"))
        error = _str_or_none(last.get("error"))
    else:  # an upload: its request (if kept) and its prediction
        messages = list(input_messages)
        reply = {"text": prediction.output, "tool_calls": prediction.tool_calls} if prediction is not None else None
        error = prediction.error if prediction is not None else None
    output = _output(model, reply, error, prediction.latency if prediction is not None else None)
    if reply is not None:
        messages.append(output.message)
    usage = {}
    if prediction is not None and (prediction.prompt_tokens is not None or prediction.completion_tokens is not None):
        tokens_in, tokens_out = prediction.prompt_tokens or 0, prediction.completion_tokens or 0
        usage[model] = ModelUsage(input_tokens=tokens_in, output_tokens=tokens_out, total_tokens=tokens_in + tokens_out)
    output.usage = usage.get(model)
    scores = {mode: Score(value=score.value, answer=_text(score.answer) if score.answer is not None else None,
                          explanation=score.explanation or None,
                          metadata={name: value for name, value in (("error_type", score.error_type), ("rule", score.rule),
                                                                    ("metrics", score.metrics), ("metadata", score.metadata))
                                    if value is not None} or None)
              for mode, score in sorted(sample.scores.items(), key=lambda item: _mode_order(item[0]))}
    metadata: dict[str, Any] = {"subset": sample.subset}
    if sample.evidence:
        metadata["evidence"] = sample.evidence
    if prediction is not None:
        metadata.update({"attempts": prediction.attempts, "latency": prediction.latency, "error": prediction.error})
    if isinstance(sample.events, dict):
        metadata["events_note"] = sample.events.get("note")
    return EvalSample(id=sample.id, epoch=1, input=input_messages or "(the request was not kept)",
                      target=_text(sample.gold), messages=messages, output=output, scores=scores or None,
                      metadata=metadata, events=[_model_event(model, event, requests[number])
                                                 for number, event in enumerate(events, 1) if "request" in event],
                      model_usage=usage, role_usage=_role_usage(events),
                      total_time=prediction.latency if prediction is not None else None,
                      completed_at=_iso(prediction.created_at) if prediction is not None else None)


def _mode_order(mode: str) -> tuple[int, str]:
    return (MODES.index(mode) if mode in MODES else len(MODES), mode)


def _role_usage(events: list[dict[str, Any]]) -> dict[str, ModelUsage]:
    """The tokens each other role (a judge, a simulated user) used, as its calls' responses report them."""
    from inspect_ai.model import ModelUsage

    totals: dict[str, list[int]] = {}
    for event in events:
        role, response = event.get("role"), event.get("response")
        usage = response.get("usage") if isinstance(response, dict) else None
        if role == TESTED_ROLE or not isinstance(role, str) or not isinstance(usage, dict):
            continue
        counts = totals.setdefault(role, [0, 0])
        counts[0] += _count(usage.get("prompt_tokens"))
        counts[1] += _count(usage.get("completion_tokens"))
    return {role: ModelUsage(input_tokens=used_in, output_tokens=used_out, total_tokens=used_in + used_out)
            for role, (used_in, used_out) in totals.items()}


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _summed(usages: list[ModelUsage]) -> ModelUsage | None:
    from inspect_ai.model import ModelUsage

    if not usages:
        return None
    return ModelUsage(input_tokens=sum(u.input_tokens for u in usages), output_tokens=sum(u.output_tokens for u in usages),
                      total_tokens=sum(u.total_tokens for u in usages))


def _model_event(model: str, event: dict[str, Any], request: Any) -> Any:
    """One model call as Inspect's model event: its input messages, its reply, the request body as sent."""
    from inspect_ai.event import ModelEvent
    from inspect_ai.model import GenerateConfig, ModelCall

    role = _str_or_none(event.get("role"))
    response = _dict_or_none(event.get("response"))
    error = _str_or_none(event.get("error"))
    latency = _number(event.get("latency"))
    body = request if isinstance(request, dict) else {"note": _text(request)}
    call_model = _str_or_none(body.get("model")) or model
    return ModelEvent(model=call_model, role=role, input=_chat_messages(_messages_of(request) or []), tools=[],
                      tool_choice="auto", config=GenerateConfig(), output=_output(call_model, response, error, latency),
                      error=error, cache="read" if event.get("cached") is True else None, working_time=latency,
                      call=ModelCall(request=body, response=response, error=error is not None or None, time=latency))


def _output(model: str, reply: dict[str, Any] | None, error: str | None, latency: float | None) -> ModelOutput:
    from inspect_ai.model import ChatCompletionChoice, ModelOutput, ModelUsage

    usage = None
    if reply is not None and isinstance(reply.get("usage"), dict):
        used_in, used_out = _count(reply["usage"].get("prompt_tokens")), _count(reply["usage"].get("completion_tokens"))
        usage = ModelUsage(input_tokens=used_in, output_tokens=used_out, total_tokens=used_in + used_out)
    if reply is None:
        return ModelOutput(model=model, choices=[], error=error, time=latency)
    message = _assistant(reply.get("text"), reply.get("tool_calls"), model)
    return ModelOutput(model=model, usage=usage, error=error, time=latency, choices=[ChatCompletionChoice(
        message=message, stop_reason="tool_calls" if message.tool_calls else "stop")])


# ---- messages (OpenAI chat format -> Inspect's) ----------------------------------------------------------


def _messages_of(request: Any) -> list[Any] | None:
    messages = request.get("messages") if isinstance(request, dict) else None
    return messages if isinstance(messages, list) else None


def _chat_messages(messages: list[Any]) -> list[ChatMessage]:
    from inspect_ai.model import ChatMessageSystem, ChatMessageTool, ChatMessageUser

    converted: list[ChatMessage] = []
    for message in messages:
        if not isinstance(message, dict):
            converted.append(ChatMessageUser(content=_text(message)))
            continue
        role, content = message.get("role"), _content(message.get("content"))
        if role in ("system", "developer"):
            converted.append(ChatMessageSystem(content=content))
        elif role == "assistant":
            converted.append(_assistant(message.get("content"), message.get("tool_calls"), None))
        elif role == "tool":
            call_id = message.get("tool_call_id")
            converted.append(ChatMessageTool(content=content, tool_call_id=call_id if isinstance(call_id, str) else None,
                                             function=message.get("name") if isinstance(message.get("name"), str) else None))
        else:
            converted.append(ChatMessageUser(content=content))
    return converted


def _assistant(content: Any, tool_calls: Any, model: str | None) -> ChatMessageAssistant:
    from inspect_ai.model import ChatMessageAssistant
    from inspect_ai.tool import ToolCall

    calls = []
    for index, call in enumerate(tool_calls if isinstance(tool_calls, list) else [], 1):
        if not isinstance(call, dict):
            continue
        function = _dict_or_none(call.get("function")) or call
        name, arguments = function.get("name"), function.get("arguments")
        parsed, problem = _arguments(arguments)
        calls.append(ToolCall(id=call["id"] if isinstance(call.get("id"), str) else f"call_{index}",
                              function=name if isinstance(name, str) else _text(name), arguments=parsed,
                              parse_error=problem))
    return ChatMessageAssistant(content=_content(content), tool_calls=calls or None, model=model)


def _arguments(arguments: Any) -> tuple[dict[str, Any], str | None]:
    """A tool call's arguments as a JSON object (parsed as JSON, never evaluated), or why they are not one."""
    if isinstance(arguments, dict):
        return arguments, None
    if arguments is None or arguments == "":
        return {}, None
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return {}, f"the arguments are not JSON: {arguments}"
    if isinstance(parsed, dict):
        return parsed, None
    return {}, f"the arguments are not a JSON object: {_text(arguments)}"


def _content(content: Any) -> Any:
    """A message's content: its text, or its parts (text parts as text, any other part as data)."""
    from inspect_ai.model import ContentData, ContentText

    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[ContentText | ContentData] = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                parts.append(ContentText(text=part["text"]))
            elif isinstance(part, dict):
                parts.append(ContentData(data=part))
            else:
                parts.append(ContentText(text=_text(part)))
        return parts
    return _text(content)


def _dict_or_none(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _text(value: Any) -> str:
    """A value as text: a string as it is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat()
