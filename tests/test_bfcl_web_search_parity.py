"""BFCL web search requests against the official handler's, byte for byte: the same scripted model plays a few
items of both variants through the official `OpenAICompletionsHandler.inference_multi_turn_prompting` with the
official WebSearchAPI (in the official venv; its GoogleSearch and requests read the recording) and through ours
with the recorded backend. Searches with and without snippets, regions and max_results, the three fetch modes,
and the error texts (no organic results, nothing recorded, a missing snippet, an invalid URL, an HTTP error, an
unsupported mode) all reach the model as the official loop shows them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.scripted_server import ScriptedServer
from tests.test_bfcl_multi_turn_requests import canonical
from tests.web_search_fixtures import write_recording

MODEL = "org/scripted-model-1.5"
NUMBERS = (0, 1, 2, 3)
PLANS = {
    "found": [
        "[search_engine_query(keywords='company founder', max_results=3), "
        "search_engine_query(keywords='company founder', region='de-de')]",
        "[fetch_url_content(url='https://site1.example/page', mode='truncate')]",
        "[fetch_url_content(url='https://site1.example/page', mode='markdown'), "
        "fetch_url_content(url='https://site1.example/page')]",
    ],
    "errors": [
        "[search_engine_query(keywords='empty answer'), search_engine_query(keywords='never recorded'), "
        "search_engine_query(keywords='no snippet')]",
        "[fetch_url_content(url='ftp://x.example/'), fetch_url_content(url='https://gone.example/page'), "
        "fetch_url_content(url='https://nowhere.example/'), fetch_url_content(url='https://site1.example/page', "
        "mode='pdf')]",
    ],
}


def _official_venv() -> Any:
    from tests.bfcl_official_venv import VenvUnavailable, official_venv

    try:
        return official_venv()
    except VenvUnavailable as exc:
        pytest.skip(f"the official BFCL venv cannot be built here: {exc}")


def _script(samples: list[Any]) -> Any:
    plans = {sample.input["question"][0][-1]["content"]: ("found" if int(sample.id.rsplit("_", 1)[1]) % 2 == 0
                                                         else "errors", sample.gold[0]) for sample in samples}

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        plan, answer = plans[messages[1]["content"]]
        step = (len(messages) - 2) // 2
        steps = PLANS[plan]
        return {"content": steps[step] if step < len(steps) else f"The answer is {answer}."}

    return reply


async def _ours(samples: list[Any], base_url: str, recording: Path) -> dict[str, Any]:
    from evaluators.benchmarks.bfcl.agentic.web_search import RecordedBackend, read_recording, run_web_search_item
    from evaluators.engine.client import ChatClient
    from evaluators.engine.settings import ModelSettings

    backend = RecordedBackend(read_recording(recording))
    client = ChatClient(ModelSettings(base_url=base_url, model=MODEL), use_cache=False)
    try:
        return {sample.id: await run_web_search_item(sample, client, backend) for sample in samples}
    finally:
        await client.close()


def test_every_request_of_scripted_web_search_items_equals_the_official_handlers(bfcl_official: Any, tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch):
    from evaluators.benchmarks.bfcl.categories import WEB_SEARCH
    from evaluators.benchmarks.bfcl.data import load
    from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV
    from tests.bfcl_official_venv import run_official_web_search

    venv = _official_venv()
    monkeypatch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
    samples = [sample for sample in load(subsets=list(WEB_SEARCH), limit=len(NUMBERS))]
    ids = {category: [sample.id for sample in samples if sample.subset == category] for category in WEB_SEARCH}
    recording = write_recording(tmp_path)
    with ScriptedServer(reply=_script(samples)) as server:
        official = run_official_web_search(venv, tmp_path / "official", server.base_url, MODEL, ids, recording)
        official_bodies, server.raw_bodies = server.raw_bodies, []
        predictions = asyncio.run(_ours(samples, server.base_url, recording))
        our_bodies = server.raw_bodies
    assert len(our_bodies) == len(official_bodies) == 4 * 4 + 4 * 3  # per plan: its call steps and the answer
    for index, (ours, theirs) in enumerate(zip(our_bodies, official_bodies)):
        mine, their = canonical(ours), canonical(theirs)
        assert mine[1] == their[1], f"request {index}: fields {mine[1]} vs the official {their[1]}"
        assert mine[0] == their[0], f"request {index}:\n ours     {mine[0][-1500:]!r}\n official {their[0][-1500:]!r}"
    for sample in samples:
        assert predictions[sample.id].extra["turns"] == official[sample.id], sample.id
        assert predictions[sample.id].error is None
    # what the script played reached the model: both variants, the errors, the modes
    bodies = [json.loads(body)["messages"] for body in our_bodies]
    shown = "\n".join(message["content"] for messages in bodies for message in messages if message["role"] == "user")
    shown = shown.replace("\\'", "'")  # the results' repr escapes the quotes of texts holding both kinds
    for text in ("Failed to retrieve the search results from server.", "Error during execution: 'snippet'",
                 "Error during execution: Invalid URL: ftp://x.example/", "404 Client Error: Not Found",
                 "no recorded page for https://nowhere.example/", "Unsupported mode: pdf", "'body': ",
                 "no recorded search for keywords 'never recorded'", "**Ada Example**"):
        assert text in shown, text
    first = bodies[0][0]["content"]
    assert first.endswith("\n") and "\n\n\n" in first  # DEFAULT + "\n\n" + the agentic format (itself ending "\n")
