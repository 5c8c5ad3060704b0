"""BFCL multi-turn requests byte for byte as the official prompting loop sends them: the real
`OpenAICompletionsHandler.inference_multi_turn_prompting` runs in the official venv against the scripted
server, then our rollouts run against the same script, and every request body is compared (the messages as
bytes, in the SDK's compact encoding, and the other fields as values). Also: the texts read from the wheel,
and the assistant message echoed as the SDK echoes it."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from evaluators.benchmarks.bfcl.multi_turn.requests import (
    OFFICIAL_MULTI_TURN_SAMPLING,
    multi_turn_texts,
    official_execution_results_message,
    official_holdout_message,
    texts_from_source,
)
from evaluators.core.errors import DataError
from evaluators.core.types import ChatRequest
from evaluators.engine.client import ChatClient, cache_key, encode_body, request_body
from evaluators.engine.settings import ModelSettings
from evaluators.engine.store import Store
from tests.scripted_server import ScriptedServer

SOURCE = '''
MAXIMUM_STEP_LIMIT = 20
DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC = (
    "I have updated some more functions you can choose from. What about now?"
)
DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING = (
    "{functions}\\n" + DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC
)
'''


def test_the_holdout_prompt_and_the_step_limit_are_read_from_the_source_as_data():
    texts = texts_from_source(SOURCE, "default_prompts.py")
    assert texts.step_limit == 20
    assert texts.holdout_prompt == "{functions}\nI have updated some more functions you can choose from. What about now?"
    docs = [{"name": "f", "description": "Ünïcode", "parameters": {"required": True, "default": None}}]
    message = official_holdout_message(docs, texts)
    # `.format(functions=<list>)`: the list's Python repr, non-ASCII kept as it is
    assert message == {"role": "user", "content": str(docs) + "\nI have updated some more functions you can choose "
                                                              "from. What about now?"}
    assert "'required': True, 'default': None" in message["content"]


@pytest.mark.parametrize(("source", "problem"), [
    (SOURCE.replace("MAXIMUM_STEP_LIMIT = 20", "MAXIMUM_STEP_LIMIT = '20'"), "MAXIMUM_STEP_LIMIT"),
    (SOURCE.replace("MAXIMUM_STEP_LIMIT = 20", ""), "MAXIMUM_STEP_LIMIT"),
    (SOURCE.replace('"{functions}\\n" + ', "build() + "), "DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING"),
    (SOURCE.replace("{functions}", "{docs}"), "unexpected field {docs}"),
])
def test_a_changed_source_is_a_clear_error(source: str, problem: str):
    with pytest.raises(DataError, match=problem):
        texts_from_source(source, "default_prompts.py")


def test_the_pinned_wheel_holds_the_texts(bfcl_official: Any):
    texts = multi_turn_texts(bfcl_official.wheel)
    assert texts.step_limit == 20 and texts.holdout_prompt.startswith("{functions}\n")


def test_execution_results_are_one_user_message_with_the_repr_of_the_tool_results():
    message = official_execution_results_message(["cd(folder='a')", 'echo(content="x\'y")'], ['{"cwd": "a"}', "None"])
    assert message == {"role": "user", "content": "[{'role': 'tool', 'name': \"cd(folder='a')\", 'content': '{\"cwd\": "
                                                  "\"a\"}'}, {'role': 'tool', 'name': 'echo(content=\"x\\'y\")', "
                                                  "'content': 'None'}]"}


def test_the_answer_is_echoed_as_the_sdk_echoes_it_and_old_cache_entries_as_content_and_role(tmp_path: Path):
    fields = {"reasoning_content": "hm", "content": "[f()]", "refusal": None, "tool_calls": [], "zeta": {"b": 1, "a": 2}}
    settings = ModelSettings(base_url="", model="m")
    request = ChatRequest(messages=[{"role": "user", "content": "hi"}], sampling=dict(OFFICIAL_MULTI_TURN_SAMPLING))
    with ScriptedServer(reply=lambda body: fields) as server:
        settings = ModelSettings(base_url=server.base_url, model="m")
        store = Store(tmp_path / "db.sqlite")
        client = ChatClient(settings, store=store)

        async def ask() -> Any:
            try:
                return await client.complete(request)
            finally:
                await client.close()

        fresh = asyncio.run(ask())
        # the SDK model's field order (content, refusal, role, ..., tool_calls), then the extras as sent
        assert list(fresh.echoed_message()) == ["content", "refusal", "role", "tool_calls", "reasoning_content", "zeta"]
        assert fresh.echoed_message()["zeta"] == {"b": 1, "a": 2}
        assert asyncio.run(ask()).cached and asyncio.run(ask()).echoed_message() == fresh.echoed_message()
        key = cache_key(settings.base_url, encode_body(request_body(request, settings)))
        # an answer cached with its message already echoed (earlier versions kept the echo): echoed again, unchanged
        store.cache_put(key, {"text": "[f()]", "tool_calls": None, "usage": {}, "message": fresh.echoed_message()})
        assert asyncio.run(ask()).echoed_message() == fresh.echoed_message()
        assert list(asyncio.run(ask()).echoed_message()) == list(fresh.echoed_message())
        # an answer cached before the message was kept
        store.cache_put(key, {"text": "[g()]", "tool_calls": None, "usage": {}})
        old = asyncio.run(ask())
        assert old.cached and old.echoed_message() == {"content": "[g()]", "role": "assistant"}
        body = server.bodies[0]
    assert body["store"] is False and body["temperature"] == 0.001 and set(body) == {"model", "messages", "temperature",
                                                                                      "store"}


def canonical(raw: bytes) -> tuple[bytes, dict[str, Any]]:
    """A body as compared: its messages in the SDK's own encoding (compact, non-ASCII as is, key order kept),
    and its other fields as values (the SDK orders them its own way)."""
    body = json.loads(raw)
    messages = body.pop("messages")
    return json.dumps(messages, ensure_ascii=False, separators=(",", ":")).encode(), body


# ---- the official loop and our rollouts against the same script ---------------------------------------------

MODEL = "org/scripted-model-1.5"  # with / - . : the instances' namespace is the official replacement of them
# Disjoint item numbers per category: items with the same number often share their first user message, which
# the script finds an item by. Each plan is played on at least one item; miss_func 3-5 have holdout turns.
PLANNED = {
    "multi_turn_base": {0: "at_once", 1: "one_by_one", 2: "errors"},
    "multi_turn_miss_func": {3: "at_once", 4: "one_by_one", 5: "step_limit"},
    "multi_turn_miss_param": {6: "at_once", 7: "errors", 8: "one_by_one"},
    "multi_turn_long_context": {9: "at_once", 10: "one_by_one", 11: "step_limit"},
}


def _official_venv() -> Any:
    from tests.bfcl_official_venv import VenvUnavailable, official_venv

    try:
        return official_venv()
    except VenvUnavailable as exc:
        pytest.skip(f"the official BFCL venv cannot be built here: {exc}")


def _venv_has_mpmath(venv: Any) -> bool:
    import subprocess

    return subprocess.run([str(venv.python), "-s", "-c", "import mpmath"], capture_output=True).returncode == 0


def _planned_samples(wheel: Path, with_math: bool) -> tuple[list[Any], dict[str, str]]:
    from evaluators.benchmarks.bfcl.categories import MULTI_TURN
    from evaluators.benchmarks.bfcl.data import load

    by_id = {sample.id: sample for sample in load(subsets=MULTI_TURN)}
    samples, plans = [], {}
    for category, numbers in PLANNED.items():
        for number, plan in numbers.items():
            sample = by_id[f"{category}_{number}"]
            if with_math or "MathAPI" not in sample.input["involved_classes"]:
                samples.append(sample)
                plans[sample.id] = plan
    return samples, plans


async def _our_rollouts(samples: list[Any], base_url: str, wheel: Path) -> dict[str, Any]:
    from evaluators.benchmarks.bfcl.multi_turn.env_host import EnvironmentHost
    from evaluators.benchmarks.bfcl.multi_turn.rollout import run_rollout

    host = EnvironmentHost(workers=1, wheel=wheel)
    client = ChatClient(ModelSettings(base_url=base_url, model=MODEL), use_cache=False)
    try:
        return {sample.id: await run_rollout(sample, client, host) for sample in samples}
    finally:
        await client.close()
        host.shutdown()


def _where(bodies: list[bytes], index: int) -> str:
    from tests.bfcl_multi_turn_script import dialogue_position, first_user_text

    messages = json.loads(bodies[index])["messages"]
    turn, step = dialogue_position(messages)
    return f"request {index} (item whose first message is {first_user_text(messages)[:60]!r}, turn {turn}, step {step})"


def _first_difference(ours: bytes, official: bytes) -> str:
    mine, theirs = json.loads(ours)["messages"], json.loads(official)["messages"]
    for position, (left, right) in enumerate(zip(mine, theirs)):
        if left != right or list(left) != list(right):
            return f"message {position}:\n ours     {json.dumps(left)[:600]}\n official {json.dumps(right)[:600]}"
    return f"{len(mine)} messages here, {len(theirs)} in the official request"


def test_every_request_of_scripted_rollouts_equals_the_official_handlers(bfcl_official: Any, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch):
    from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV
    from tests.bfcl_multi_turn_script import script_for
    from tests.bfcl_official_venv import run_official_multi_turn

    venv = _official_venv()
    monkeypatch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
    samples, plans = _planned_samples(bfcl_official.wheel, _venv_has_mpmath(venv))
    assert {plan for plan in plans.values()} == {"at_once", "one_by_one", "errors", "step_limit"}
    ids: dict[str, list[str]] = {}
    for sample in samples:
        ids.setdefault(sample.subset, []).append(sample.id)
    with ScriptedServer(reply=script_for(samples, plans)) as server:
        official = run_official_multi_turn(venv, tmp_path / "official", server.base_url, MODEL, ids)
        official_bodies, server.raw_bodies = server.raw_bodies, []
        predictions = asyncio.run(_our_rollouts(samples, server.base_url, bfcl_official.wheel))
        our_bodies = server.raw_bodies
    for index, (ours, theirs) in enumerate(zip(our_bodies, official_bodies)):
        mine, their = canonical(ours), canonical(theirs)
        assert mine[1] == their[1], f"{_where(official_bodies, index)}: fields {mine[1]} vs the official {their[1]}"
        assert mine[0] == their[0], f"{_where(official_bodies, index)} differs at {_first_difference(ours, theirs)}"
    assert len(our_bodies) == len(official_bodies) > 2 * 21, (len(our_bodies), len(official_bodies))
    print(f"{len(samples)} items, {len(our_bodies)} requests equal byte for byte")
    for sample in samples:
        prediction = predictions[sample.id]
        expected = [[text if text is not None else "" for text in turn] for turn in official[sample.id]]
        assert prediction.extra["turns"] == expected, sample.id
        assert prediction.error is None
        stop = "force_terminated" if plans[sample.id] == "step_limit" else "completed"
        assert prediction.extra["stop"] == stop, sample.id
    # what the script played, seen in the requests and the evidence
    step_limited = [p for sid, p in predictions.items() if plans[sid] == "step_limit"][0]
    assert len(step_limited.extra["turns"]) == 1 and len(step_limited.extra["turns"][0]) == 21
    errors = predictions[[sid for sid, plan in plans.items() if plan == "errors"][0]].extra["transcript"][0]["steps"]
    assert errors[0]["results"][0] == "Error during execution: name 'no_such_function' is not defined"
    assert "unexpected keyword argument 'bogus_argument'" in errors[0]["results"][1]
    holdout = [sample for sample in samples if sample.input["missed_function"]][0]
    turn = int(next(iter(holdout.input["missed_function"])))
    query = predictions[holdout.id].extra["transcript"][turn]["query"]
    assert len(query) == 1 and query[0]["content"].endswith("I have updated some more functions you can choose from. "
                                                            "What about now?")
    assert any(b'"reasoning_content":"step 0"' in body for body in official_bodies)
    assert any(b'{"content":null,"role":"assistant"}' in body for body in official_bodies)


def test_every_request_of_every_item_played_with_its_ground_truth_equals_the_official_handlers(
        bfcl_official: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """All 800 items (those of the math environment when the venv can run it), each turn answered with its
    ground-truth calls and then without a call (a turn without calls: a text that does not decode): the system
    prompt, every turn's and holdout message, every echoed answer and every execution result, as the official
    loop sends them. Items opening with the same request as an earlier one (a long-context item and its base
    twin) get that one's answers.

    The official loop's answer (each item's texts, and a digest of each request in `canonical` form) is kept
    beside the venv (`ground_truth_play_memo`): the loop takes a CPU-minute. Ours is compared with the kept
    digests; on a difference the official loop plays again, so that the failure shows the two requests."""
    from evaluators.benchmarks.bfcl.categories import MULTI_TURN
    from evaluators.benchmarks.bfcl.data import load
    from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV

    venv = _official_venv()
    monkeypatch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
    with_math = _venv_has_mpmath(venv)
    samples = [s for s in load(subsets=MULTI_TURN) if with_math or "MathAPI" not in s.input["involved_classes"]]
    compared = play_every_item(samples, venv, tmp_path, bfcl_official.wheel, ground_truth_play_memo(venv, samples))
    print(f"{len(samples)} items, {compared} requests equal byte for byte")


def test_a_kept_official_play_that_differs_from_ours_is_played_again(bfcl_official: Any, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch):
    """The kept answer of the official loop (above) is only a shortcut: kept requests that are not ours (a kept
    answer gone stale) send the play back to the official loop, whose own requests then decide, and the answer
    kept is the new one."""
    from evaluators.benchmarks.bfcl.data import load
    from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV

    venv = _official_venv()
    monkeypatch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
    samples = load(subsets=("multi_turn_base",), limit=2)
    memo = tmp_path / "memo.json"
    compared = play_every_item(samples, venv, tmp_path / "first", bfcl_official.wheel, memo)
    kept = json.loads(memo.read_text(encoding="utf-8"))
    assert len(kept["requests"]) == compared and set(kept["results"]) == {sample.id for sample in samples}
    memo.write_text(json.dumps({**kept, "requests": kept["requests"][:-1] + ["0" * 64]}), encoding="utf-8")
    assert play_every_item(samples, venv, tmp_path / "again", bfcl_official.wheel, memo) == compared
    assert json.loads(memo.read_text(encoding="utf-8")) == kept


def play_every_item(samples: list[Any], venv: Any, work: Path, wheel: Path, memo: Path | None) -> int:
    """Our rollouts of `samples` compared request by request with the official loop's: with its answer kept in
    `memo` when there is one, else (or when a kept request is not ours) played by the official loop first, its
    answer then kept. The number of requests compared."""
    kept = json.loads(memo.read_text(encoding="utf-8")) if memo is not None and memo.is_file() else None
    if kept is not None:
        try:
            return _play_every_item(samples, venv, work / "kept", wheel, kept)
        except KeptRequestDiffers:
            pass
    return _play_every_item(samples, venv, work / "fresh", wheel, None, memo)


class KeptRequestDiffers(Exception):
    """One of our requests is not the kept official one: the official loop is asked again to show the two."""


def ground_truth_play_memo(venv: Any, samples: list[Any]) -> Path | None:
    """Where the official loop's answer to the ground-truth play of `samples` is kept: named by the items, the
    model name, the script and the server that answer it, and the item prompts the script finds items by."""
    from evaluators.benchmarks.bfcl.multi_turn import requests as multi_turn_requests
    from tests import bfcl_multi_turn_script, scripted_server
    from tests.bfcl_official_venv import memo_path

    sources = [bfcl_multi_turn_script, scripted_server, multi_turn_requests]
    parts = [MODEL.encode(), ",".join(sample.id for sample in samples).encode(),
             *(Path(module.__file__).read_bytes() for module in sources)]
    memo = memo_path(venv, "multi-turn-ground-truth", parts)
    return memo.with_suffix(".json") if memo is not None else None


def request_digest(raw: bytes) -> str:
    """A request as compared (`canonical`), hashed."""
    messages, fields = canonical(raw)
    return hashlib.sha256(messages + b"\0" + json.dumps(fields, sort_keys=True).encode()).hexdigest()


def _play_every_item(samples: list[Any], venv: Any, work: Path, wheel: Path, kept: dict[str, Any] | None,
                     memo: Path | None = None) -> int:
    """Our rollouts of every item against the ground-truth script, each request compared as it comes with the
    official loop's: the kept digests (`kept`), or the requests of the official loop played here first (its
    answer then kept in `memo`). The number of requests compared."""
    from evaluators.benchmarks.bfcl.multi_turn.env_host import EnvironmentHost
    from evaluators.benchmarks.bfcl.multi_turn.rollout import run_rollout
    from tests.bfcl_multi_turn_script import script_for
    from tests.bfcl_official_venv import run_official_multi_turn
    from tests.kept_answers import keep_text

    ids: dict[str, list[str]] = {}
    for sample in samples:
        ids.setdefault(sample.subset, []).append(sample.id)
    with ScriptedServer(reply=script_for(samples, {}, distinct=False)) as server:
        if kept is None:
            results = run_official_multi_turn(venv, work, server.base_url, MODEL, ids, timeout=1800)
            official, server.raw_bodies = server.raw_bodies, []
            digests = [request_digest(body) for body in official]
            if memo is not None:
                keep_text(memo, json.dumps({"results": results, "requests": digests}))
        else:
            results, digests, official = kept["results"], kept["requests"], []
        compared = 0

        async def ours() -> None:
            nonlocal compared
            host = EnvironmentHost(workers=1, wheel=wheel)
            client = ChatClient(ModelSettings(base_url=server.base_url, model=MODEL), use_cache=False)
            try:
                for sample in samples:
                    prediction = await run_rollout(sample, client, host)
                    expected = [[text if text is not None else "" for text in turn] for turn in results[sample.id]]
                    if kept is not None and prediction.extra["turns"] != expected:
                        raise KeptRequestDiffers(sample.id)
                    assert prediction.extra["turns"] == expected, sample.id
                    sent, server.raw_bodies = server.raw_bodies, []
                    for body in sent:  # compared as they come, and let go: the bodies weigh ~300 MB in all
                        if kept is not None:
                            if compared >= len(digests) or request_digest(body) != digests[compared]:
                                raise KeptRequestDiffers(sample.id)
                        else:
                            assert canonical(body) == canonical(official[compared]), \
                                f"{sample.id}: {_where(official, compared)} differs at {_first_difference(body, official[compared])}"
                            official[compared] = b""
                        compared += 1
            finally:
                await client.close()
                host.shutdown()

        asyncio.run(ours())
    if kept is not None and compared != len(digests):
        raise KeptRequestDiffers(f"{compared} requests, {len(digests)} kept")
    assert compared == len(digests) > 2 * len(samples)
    return compared


@pytest.mark.slow
def test_multi_turn_runs_are_prompt_mode_with_the_official_sampling(bfcl_official: Any, monkeypatch: pytest.MonkeyPatch):
    from evaluators.benchmarks.bfcl.data import load
    from evaluators.benchmarks.bfcl.item_requests import build_request
    from evaluators.benchmarks.bfcl.solve import request_profile, solve
    from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV
    from evaluators.core.errors import ToolboardError
    from evaluators.engine.settings import RunConfig

    monkeypatch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
    model = ModelSettings(base_url="http://127.0.0.1:9/v1", model="m")
    profile = request_profile(RunConfig("bfcl", model, subsets=("multi_turn_base", "simple_python")))
    assert profile.sampling == {"single_turn": {"temperature": 0.001, "store": False},
                                "multi_turn": {"temperature": 0.001, "store": False}}
    chosen = ModelSettings(base_url="http://127.0.0.1:9/v1", model="m", temperature=0.3)
    assert request_profile(RunConfig("bfcl", chosen, subsets=("multi_turn_base",))).sampling["multi_turn"] == {
        "temperature": 0.3, "store": False}
    assert "multi_turn" not in request_profile(RunConfig("bfcl", model, subsets=("simple_python",))).sampling
    tools = ModelSettings(base_url="http://127.0.0.1:9/v1", model="m", request_mode="tools")
    with pytest.raises(ToolboardError, match="multi-turn categories run in prompt mode only"):
        request_profile(RunConfig("bfcl", tools, subsets=("multi_turn_miss_func",)))
    request_profile(RunConfig("bfcl", tools, subsets=("simple_python",)))  # single-turn: as before
    with pytest.raises(ToolboardError, match="the group single_turn"):  # every category, from the wheel
        request_profile(RunConfig("bfcl", tools))
    assert "multi_turn" in request_profile(RunConfig("bfcl", model)).sampling
    sample = load(subsets=("multi_turn_miss_func",), limit=1)[0]
    with pytest.raises(ToolboardError, match="prompt mode only"):
        asyncio.run(solve(sample, {"model": None}, {"request_mode": "tools"}))
    # the benchmark's build_request gives an item's first request (the rollout builds the later ones)
    first = build_request(sample)
    assert first.sampling == OFFICIAL_MULTI_TURN_SAMPLING and [m["role"] for m in first.messages] == ["system", "user"]
    with pytest.raises(ValueError, match="prompt mode only"):
        build_request(sample, mode="tools")


def test_the_form_says_before_start_that_native_tools_with_multi_turn_items_would_be_refused(tmp_path: Path):
    """The forecast (no download, no endpoint) reads the same refusal as the run: every category, or the
    multi-turn group, in native tools mode; the single-turn group in tools mode is only not ranked."""
    from evaluators.service.rank_forecast import rank_forecast
    from evaluators.service.run_request import RunPolicy

    def line(**given: Any) -> str:
        raw = {"benchmark": "bfcl", "base_url": "http://127.0.0.1:9/v1", "model": "m", "request_mode": "tools", **given}
        return rank_forecast(raw, RunPolicy()).line()

    refusal = "⚠️ This run would be refused: bfcl: the multi-turn categories run in prompt mode only"
    assert line().startswith(refusal)
    assert line(subsets=["multi_turn"]).startswith(refusal)
    assert line(subsets=["single_turn"]).startswith("Not ranked (shown apart from the ranking): native tools")
    assert line(request_mode="prompt").startswith("Ranked beside the published rows")
    single_turn_copy = tmp_path / "bfcl"
    single_turn_copy.mkdir()
    (single_turn_copy / "BFCL_v4_simple_python.json").write_text("")
    # every category from a copy of the single-turn data means the single-turn ones: not refused
    assert not line(data_source="local folder", data_folder=str(single_turn_copy)).startswith("⚠️")
