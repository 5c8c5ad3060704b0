"""The parameter judge: an OpenAI-compatible model, set apart from the model under test, asked whether
a call's arguments are reasonable (spec §7). It runs before scoring; its verdict is kept in
`Prediction.extra["judge"]`, so scoring stays pure. Without a judge, arguments are matched exactly."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from evaluators.benchmarks.stepeval_audio.extract import ExtractedCall, extract_call
from evaluators.benchmarks.stepeval_audio.tools import NO_PARAMETER_TOOLS, schema_text
from evaluators.core.declarations import Role
from evaluators.core.errors import ToolboardError
from evaluators.core.text import without_think_blocks
from evaluators.core.types import ChatRequest, Prediction, Sample
from evaluators.engine.client import ChatClient, RequestFailed, RetryPolicy
from evaluators.engine.endpoint_guard import check_endpoint_allowed, key_from_environment
from evaluators.engine.settings import Endpoint, ModelSettings, role_settings

EXACT_METHOD = "exact"
JUDGE_ROLE = Role(
    "judge", "Parameter judge", "judges whether a call's arguments are reasonable (parameter accuracy)",
    fallback="arguments are matched exactly", temperature=0.0, timeout=300.0, used_when_scoring_files=True,
)
SPEAKER = {"user": "Human", "assistant": "Assistant", "call": "Assistant", "tool_result": "Input"}
MAX_KEPT_ANSWER = 2000

JUDGE_SYSTEM = (
    "You review tool calls made by a voice assistant. You are given a dialogue (the user speaks "
    "Chinese), the schema of the tool that was called, a reference call written by the dataset's "
    "authors, and the assistant's call. Decide whether the assistant's arguments are reasonable: "
    "they must fit the schema and carry what the user actually asked for in the last turns. They do "
    "not have to match the reference word for word; the reference only shows one acceptable answer."
)
TOOL_GUIDANCE = {
    "get_weather": "For get_weather, `location` must name the place the user means, written in English or pinyin.",
    "timbre_rag": "For timbre_rag, `query` must describe, in Chinese, the voice or timbre the user asked for.",
    "web_search": "For web_search, `query` must cover the information the user wants to find.",
}
JUDGE_QUESTION = (
    "Are the assistant's arguments reasonable and consistent with the user's intent?\n"
    "Answer with one JSON object and nothing after it: "
    '{"reason": "<one or two sentences>", "label": "yes"} or {"reason": "…", "label": "no"}.'
)


def method_name(model: str) -> str:
    return f"judge:{model}"


def needs_judge(sample: Sample, call: ExtractedCall | None) -> bool:
    """Judged: positives whose call names the right tool, for tools that take arguments."""
    return (
        sample.input["polarity"] == "positive" and call is not None and call.name == sample.subset
        and call.arguments is not None and sample.subset not in NO_PARAMETER_TOOLS
    )


def dialogue_text(sample: Sample) -> str:
    return "\n".join(f"{SPEAKER[turn['kind']]}: {turn['text']}" for turn in sample.input["history"])


def judge_request(sample: Sample, call: ExtractedCall) -> ChatRequest:
    gold = sample.gold["call"]
    user = "\n\n".join([
        f"Dialogue:\n{dialogue_text(sample)}",
        f"Tool schema:\n{schema_text(sample.subset)}",
        f"Reference call:\n{json.dumps({'name': gold['name'], 'arguments': gold['arguments']}, ensure_ascii=False)}",
        f"Assistant's call:\n{json.dumps({'name': call.name, 'arguments': call.arguments}, ensure_ascii=False)}",
        TOOL_GUIDANCE.get(sample.subset, ""),
        JUDGE_QUESTION,
    ])
    return ChatRequest(messages=[{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}])


_LABELLED = re.compile(r"label\W{0,4}(yes|no|是|否)", re.I)
_BARE = re.compile(r"\b(yes|no)\b|(是|否)", re.I)
_YES = {"yes", "y", "true", "reasonable", "是", "合理"}
_NO = {"no", "n", "false", "unreasonable", "否", "不合理"}


def _label(value: Any) -> str | None:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        word = value.strip().strip(".。!！").lower()
        return "yes" if word in _YES else "no" if word in _NO else None
    return None


def parse_verdict(text: str | None) -> tuple[str | None, str]:
    """(label "yes" | "no" | None, reason) from a judge's answer: the last JSON object with a `label`,
    else a `label: yes/no` phrase, else the last bare yes/no/是/否. Reasoning blocks are dropped first."""
    text = without_think_blocks(text or "")
    decoder = json.JSONDecoder()
    for start in reversed([m.start() for m in re.finditer(r"\{", text)]):
        try:
            value, _ = decoder.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError, ValueError):  # ValueError: a number over 4,300 digits
            continue
        if isinstance(value, dict) and "label" in value:
            label = _label(value["label"])
            if label is not None:
                return label, str(value.get("reason", ""))
    labelled = _LABELLED.findall(text)
    if labelled:
        return _label(labelled[-1]), "label read from free text"
    bare = [yes_no or zh for yes_no, zh in _BARE.findall(text.replace("是否", ""))]
    if bare:
        return _label(bare[-1]), "label read from a bare yes/no"
    return None, "unreadable judge answer"


def verdict_record(model: str, call: ExtractedCall, answer: str | None) -> dict[str, Any]:
    """What is kept in Prediction.extra["judge"]: the verdict, why, and the call it is about."""
    label, reason = parse_verdict(answer)
    return {
        "method": method_name(model), "label": label, "reasonable": label == "yes", "reason": reason,
        "call": {"name": call.name, "arguments": call.arguments}, "answer": (answer or "")[:MAX_KEPT_ANSWER],
    }


def judge_client(settings: ModelSettings, store: Any = None, concurrency: int = 8) -> ChatClient:
    """A chat client for a judge that is not part of a run (uploaded predictions). Its URL passes the
    same guard as the tested model's."""
    check_endpoint_allowed(settings.base_url)
    return ChatClient(settings, api_key=key_from_environment(settings.api_key_env), store=store, retry=RetryPolicy(),
                      concurrency=concurrency)


async def ask_judge(client: ChatClient, sample: Sample, call: ExtractedCall) -> dict[str, Any]:
    model = client.settings.model
    try:
        result = await client.complete(judge_request(sample, call))
    except RequestFailed as exc:
        raise RequestFailed(f"judge {model}: {exc}", exc.attempts) from None
    return verdict_record(model, call, result.text)


async def judge_prediction(sample: Sample, prediction: Prediction, judge_chat: ChatClient) -> dict[str, Any] | None:
    """The verdict on one fresh prediction (inside `solve`, with the run's judge client), or None when
    it needs none."""
    call = extract_call(prediction)
    if call is None or not needs_judge(sample, call):
        return None
    return await ask_judge(judge_chat, sample, call)


async def judge_predictions(
    samples: list[Sample], predictions: dict[str, Prediction], settings: ModelSettings, store: Any = None,
    concurrency: int = 8,
) -> int:
    """Judge uploaded predictions before scoring (verdicts go into `extra["judge"]`); returns how many
    were judged. A judge request that fails stops with an error naming the sample."""
    todo = [(s, predictions[s.id], call) for s in samples
            if s.id in predictions and (call := extract_call(predictions[s.id])) is not None and needs_judge(s, call)]
    if not todo:
        return 0
    client = judge_client(settings, store=store, concurrency=concurrency)

    async def one(sample: Sample, prediction: Prediction, call: ExtractedCall) -> None:
        try:
            verdict = await ask_judge(client, sample, call)
        except RequestFailed as exc:
            raise ToolboardError(f"{sample.id}: {exc}") from None
        prediction.extra = {**(prediction.extra or {}), "judge": verdict}

    try:
        await asyncio.gather(*(one(sample, prediction, call) for sample, prediction, call in todo))
    finally:
        await client.close()
    return len(todo)


def judge_uploaded_predictions(samples: list[Sample], predictions: dict[str, Prediction],
                               roles: dict[str, Endpoint]) -> int:
    """The pre-scoring step of `score --role judge=…`: responses are cached in the store like any request."""
    from evaluators.engine.store import Store

    if JUDGE_ROLE.name not in roles:
        return 0
    store = Store()
    try:
        settings = role_settings(JUDGE_ROLE, roles[JUDGE_ROLE.name])
        return asyncio.run(judge_predictions(samples, predictions, settings, store))
    finally:
        store.close()
