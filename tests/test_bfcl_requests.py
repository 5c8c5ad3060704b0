"""BFCL requests: prompt mode byte for byte as the official prompting handler builds it (the reference is
rebuilt from the wheel's files in tests/bfcl_reference.py), native tools as the official FC handler converts
the docs, texts read from the wheel and never executed, and a CLI run against a loopback server."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from evaluators.benchmarks.bfcl.categories import SINGLE_TURN
from evaluators.benchmarks.bfcl.data import load
from evaluators.benchmarks.bfcl.official_source import (
    float_sentence_from_source,
    hints_from_source,
    module_constants,
    official_format,
    prompt_from_constants,
)
from evaluators.benchmarks.bfcl.prompts import OFFICIAL_TEMPERATURE, build_request, official_hinted_functions
from evaluators.benchmarks.bfcl.solve import request_profile, solve
from evaluators.benchmarks.bfcl.wheel import WHEEL_PATH_ENV, WHEEL_SHA256_ENV
from evaluators.core.errors import DataError, ToolboardError
from evaluators.core.types import ToolCall
from evaluators.engine.client import ChatResult
from evaluators.engine.settings import ModelSettings, RunConfig
from tests.bfcl_fixtures import HANDLER_UTILS_SOURCE, PROMPTS_SOURCE, SOURCES, UTILS_SOURCE, build_fake_wheel, write_bfcl_folder
from tests.bfcl_reference import OfficialReference
from tests.conftest import PROJECT, BfclOfficial, run_cli
from tests.scripted_server import ScriptedServer


@pytest.fixture
def fake_wheel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    wheel = tmp_path / "wheel" / "bfcl_eval-2026.3.23-py3-none-any.whl"
    monkeypatch.setenv(WHEEL_SHA256_ENV, build_fake_wheel(wheel))
    monkeypatch.setenv(WHEEL_PATH_ENV, str(wheel))
    monkeypatch.delenv("TOOLBOARD_DATA_DIR", raising=False)
    return wheel


def _entry(sample) -> dict:
    return {"id": sample.id, "question": sample.input["question"], "function": sample.input["function"]}


def _bytes(messages: list[dict]) -> bytes:
    return json.dumps(messages, ensure_ascii=False).encode()


def test_prompt_requests_equal_the_official_reference_on_every_fixture_item(fake_wheel: Path):
    reference = OfficialReference(fake_wheel)
    samples = load()
    assert len({s.subset for s in samples}) == 13
    for sample in samples:
        request = build_request(sample)
        assert _bytes(request.messages) == _bytes(reference.messages(_entry(sample))), sample.id
        assert request.tools is None and request.sampling == {"temperature": OFFICIAL_TEMPERATURE, "store": False}


def test_the_texts_come_from_the_wheel(fake_wheel: Path):
    samples = {s.id: s for s in load()}
    system = build_request(samples["simple_python_1"]).messages[0]["content"]
    assert system.startswith("[persona][task]\n\n[calls as [f(a=1), g(b=2)].]  [nothing else]\n\n[keep going]\n\n"
                             "[tools in json:]\n[\n    {")
    assert system.endswith("\n]\n") and "[not used]" not in system
    # json.dumps with ensure_ascii: non-ASCII doc text goes as \u escapes (the user's text stays as it is)
    assert "\\u2014 at a brightness" in system and "\u2014" not in system
    assert build_request(samples["simple_python_1"]).messages[1]["content"] == "Lamp on, 40 % please — merci."
    # an item's own system message follows the BFCL prompt after a blank line
    live = build_request(samples["live_simple_0-0-0"]).messages
    assert [m["role"] for m in live] == ["system", "user"]
    assert live[0]["content"].endswith("\n]\n\n\nYou are the house assistant.")
    history = build_request(samples["live_irrelevance_1-0-1"]).messages
    assert [m["role"] for m in history] == ["system", "user", "assistant", "user"]
    assert build_request(samples["live_irrelevance_0-0-0"]).messages[0]["content"].endswith(":]\n[]\n")


def test_official_language_hints(fake_wheel: Path):
    samples = {s.id: s for s in load()}
    java = official_hinted_functions(samples["simple_java_0"].input["function"], "simple_java")[0]
    assert java["description"] == "Reserves a book on a library shelf. [java doc]"
    props = java["parameters"]["properties"]
    assert props["readers"] == {"type": "string", "description": "Reader names. [java ArrayList] [java of String]"}
    assert props["note"]["description"] == "Anything to attach. [java any]"
    assert {p["type"] for p in props.values()} == {"string"}
    js = official_hinted_functions(samples["simple_javascript_0"].input["function"], "simple_javascript")[0]
    brush = js["parameters"]["properties"]["brush"]
    assert brush == {"type": "string", "description": 'Brush settings. [js dict] [js schema] {"size": {"type": '
                     '"integer", "description": "Gr\\u00f6\\u00dfe in px."}}'}
    assert js["parameters"]["properties"]["points"]["description"] == "Corner coordinates. [js array] [js of integer]"
    python = official_hinted_functions(samples["simple_python_0"].input["function"], "simple_python")[0]
    assert python["description"].endswith(" [python doc]")
    assert python["parameters"]["properties"]["litres"] == {"type": "float", "description": "How much water."}
    assert samples["simple_java_0"].input["function"][0]["description"] == "Reserves a book on a library shelf."


def test_native_tools_as_the_official_fc_handler_converts_them(fake_wheel: Path):
    samples = {s.id: s for s in load()}
    request = build_request(samples["parallel_multiple_0"], mode="tools")
    assert request.messages == samples["parallel_multiple_0"].input["question"][0]  # no BFCL system prompt
    assert request.tool_names == {"kitchen_kettle_boil": "kitchen.kettle.boil", "set_lamp": "set_lamp"}
    kettle = request.tools[0]["function"]
    assert kettle["name"] == "kitchen_kettle_boil" and kettle["parameters"]["type"] == "object"
    assert kettle["parameters"]["properties"]["litres"] == {"type": "number", "description": "How much water. [a float]",
                                                            "format": "float"}
    assert request.sampling == {"temperature": OFFICIAL_TEMPERATURE, "store": False} and request.tool_choice is None
    garden = build_request(samples["live_simple_0-0-0"], mode="tools")
    beds = garden.tools[0]["function"]["parameters"]["properties"]["beds"]
    assert beds["items"]["type"] == "object" and beds["items"]["properties"]["minutes"]["type"] == "number"
    assert garden.messages[0] == {"role": "system", "content": "You are the house assistant."}
    assert build_request(samples["live_irrelevance_0-0-0"], mode="tools").tools is None  # no function: no tools
    for sample in samples.values():
        for tool in build_request(sample, mode="tools").tools or []:
            jsonschema.Draft7Validator.check_schema(tool["function"]["parameters"])
    with pytest.raises(ValueError, match="unknown request mode"):
        build_request(samples["multiple_0"], mode="audio")


def test_texts_are_read_with_ast_never_executed(tmp_path: Path):
    marker = tmp_path / "executed"
    source = PROMPTS_SOURCE + f"\nopen({str(marker)!r}, 'w').write('x')\nCOMPUTED = str(1 + 1)\n"
    constants = module_constants(source, "default_prompts.py")
    assert "COMPUTED" not in constants and not marker.exists()
    assert constants["PROMPT_TEMPLATE_MAPPING"]["plaintext"] == constants["_PLAINTEXT_SYSTEM_PROMPT_TEMPLATE"]
    prompt = prompt_from_constants(constants, "default_prompts.py")
    assert prompt.system_prompt("[]") == "[persona][task]\n\n[calls as [f(a=1), g(b=2)].]  [nothing else]\n\n" \
                                         "[keep going]\n\n[tools in json:]\n[]\n"
    hints = hints_from_source(UTILS_SOURCE, "utils.py")
    assert hints.function == {"java": " [java doc]", "javascript": " [js doc]", "python": " [python doc]"}
    assert float_sentence_from_source(HANDLER_UTILS_SOURCE, "handler.py") == " [a float]"


def test_a_changed_official_file_is_a_clear_error():
    with pytest.raises(DataError, match="constant DEFAULT_SYSTEM_PROMPT_FORMAT not found"):
        prompt_from_constants(module_constants("X = 1", "p.py"), "p.py")
    with pytest.raises(DataError, match="only json is implemented"):
        prompt_from_constants(module_constants(PROMPTS_SOURCE.replace("func_doc_fmt=json", "func_doc_fmt=xml"), "p"), "p")
    with pytest.raises(DataError, match="does not append the Java and JavaScript sentences"):
        hints_from_source(UTILS_SOURCE.replace(' += " [js any]"', ' = "x"'), "utils.py")
    with pytest.raises(DataError, match="function _func_doc_language_specific_pre_processing not found"):
        hints_from_source("def other(): pass", "utils.py")
    for template in ("{x.__class__}", "{x[0]}", "{x!r}", "{other}"):
        with pytest.raises(DataError):
            official_format(template, x="v")


def test_a_missing_wheel_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    wheel = tmp_path / "w.whl"
    sources = {k: v for k, v in SOURCES.items() if not k.endswith("default_prompts.py")}
    monkeypatch.setenv(WHEEL_SHA256_ENV, build_fake_wheel(wheel, sources))
    monkeypatch.setenv(WHEEL_PATH_ENV, str(wheel))
    sample = load(write_bfcl_folder(tmp_path / "data"), subsets=["simple_python"])[0]
    with pytest.raises(DataError, match="bfcl_eval/constants/default_prompts.py: file not found in the wheel"):
        build_request(sample)


def test_the_request_profile_is_official(fake_wheel: Path):
    config = RunConfig("bfcl", ModelSettings(base_url="http://127.0.0.1:9/v1", model="m"))
    profile = request_profile(config)
    assert profile.prompt_style == "official" and "default_prompts.py" in profile.source
    assert profile.sampling == {"single_turn": {"temperature": OFFICIAL_TEMPERATURE, "store": False}}
    chosen = RunConfig("bfcl", ModelSettings(base_url="http://127.0.0.1:9/v1", model="m", temperature=0.5))
    assert request_profile(chosen).sampling == {"single_turn": {"temperature": 0.5, "store": False}}
    tools = RunConfig("bfcl", ModelSettings(base_url="http://127.0.0.1:9/v1", model="m", request_mode="tools"))
    assert "official FC handler" in request_profile(tools).differences[0]
    own = RunConfig("bfcl", ModelSettings(base_url="http://127.0.0.1:9/v1", model="m", prompt_style="toolboard"))
    with pytest.raises(ToolboardError, match="bfcl sends the official requests only"):
        request_profile(own)


@pytest.mark.slow
def test_a_cli_run_sends_the_official_requests(tmp_path: Path):
    data = write_bfcl_folder(tmp_path / "data")
    wheel = tmp_path / "wheel.whl"
    env = {**os.environ, "TOOLBOARD_HOME": str(tmp_path / "home"), WHEEL_PATH_ENV: str(wheel),
           WHEEL_SHA256_ENV: build_fake_wheel(wheel)}
    env.pop("TOOLBOARD_DATA_DIR", None)
    with ScriptedServer(reply=lambda body: {"content": "[]"}) as server:
        ran = subprocess.run(
            [sys.executable, "-m", "evaluators", "run", "bfcl", "--base-url", server.base_url, "--model", "m",
             "--api-key-env", "", "--data-dir", str(data), "--limit", "2", "--json"],
            cwd=PROJECT, env=env, capture_output=True, text=True, timeout=240)
    assert ran.returncode == 0, ran.stderr[-3000:]
    reference = OfficialReference(wheel)
    expected = sorted(_bytes(reference.messages(_entry(s))) for s in load(data, limit=2))
    assert len(expected) == 15  # two of simple_python and live_irrelevance, one of the rest
    assert sorted(_bytes(body["messages"]) for body in server.bodies) == expected
    for body in server.bodies:
        assert body["temperature"] == OFFICIAL_TEMPERATURE and body["store"] is False and "tools" not in body
    report = json.loads(ran.stdout)
    assert report["subsets"]["irrelevance"]["metrics"]["accuracy"] == 1.0


# --- the real data and the real wheel ---------------------------------------------------------------

@pytest.fixture
def real_wheel(bfcl_official: BfclOfficial, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The pinned wheel for this test's run: prompt texts and data both read from it, as a run without
    --data-dir does."""
    monkeypatch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
    monkeypatch.delenv(WHEEL_SHA256_ENV, raising=False)
    monkeypatch.delenv("TOOLBOARD_DATA_DIR", raising=False)
    return bfcl_official.wheel


@pytest.mark.slow
def test_every_real_item_gets_the_official_prompt_request(real_wheel: Path):
    reference = OfficialReference(real_wheel)
    samples = load(subsets=list(SINGLE_TURN))
    assert len(samples) == 3641
    for sample in samples:
        assert _bytes(build_request(sample).messages) == _bytes(reference.messages(_entry(sample))), sample.id


@pytest.mark.slow
def test_every_real_item_gets_valid_json_schema_tools(real_wheel: Path):
    names = 0
    for sample in load(subsets=list(SINGLE_TURN)):
        request = build_request(sample, mode="tools")
        for tool in request.tools or []:
            jsonschema.Draft7Validator.check_schema(tool["function"]["parameters"])
            assert "." not in tool["function"]["name"]
        names += sum(sent != own for sent, own in request.tool_names.items())
    assert names > 0  # some real names carry dots and are mapped back


class _Client:
    """A chat client that answers every request with the given text and tool calls, keeping the requests."""

    def __init__(self, text: str | None, calls: list | None = None):
        self.text, self.calls, self.requests = text, calls, []

    async def complete(self, request):
        self.requests.append(request)
        return ChatResult(text=self.text, tool_calls=self.calls, usage={"total_tokens": 3}, latency=0.1, attempts=1,
                          cached=False, cache_key="k", response={})


def test_solve_keeps_the_text_and_maps_tool_names_back(fake_wheel: Path):
    sample = next(s for s in load() if s.id == "parallel_0")
    text = _Client("[kitchen.kettle.boil(litres=1.0), kitchen.kettle.boil(litres=2.0)]")
    prediction = asyncio.run(solve(sample, {"model": text}, {"request_mode": "prompt", "prompt_style": "official"}))
    assert prediction.output == text.text and prediction.tool_calls is None and text.requests[0].tools is None
    calls = _Client(None, [ToolCall("kitchen_kettle_boil", "{\"litres\": 1.0}")])
    prediction = asyncio.run(solve(sample, {"model": calls}, {"request_mode": "tools"}))
    assert prediction.tool_calls == [ToolCall("kitchen.kettle.boil", "{\"litres\": 1.0}")]
    assert calls.requests[0].tools[0]["function"]["name"] == "kitchen_kettle_boil"


@pytest.mark.slow
def test_the_declared_prompt_styles_are_the_ones_the_profile_accepts(fake_wheel: Path):
    from evaluators.benchmarks.bfcl.benchmark import BENCHMARK
    from evaluators.core.types import PROMPT_STYLES

    assert BENCHMARK.prompt_styles == ("official",)
    for style in PROMPT_STYLES:
        config = RunConfig("bfcl", ModelSettings(base_url="http://127.0.0.1:9/v1", model="m", prompt_style=style))
        if style in BENCHMARK.prompt_styles:
            assert request_profile(config).prompt_style == style
        else:
            with pytest.raises(ToolboardError, match="official requests only"):
                request_profile(config)
    listed = run_cli("list")
    assert listed.returncode == 0, listed.stderr
    bfcl = listed.stdout.split("\nbfcl: ", 1)[1].split("\nstepeval_audio: ", 1)[0]
    assert "  prompt styles: official (--prompt-style)" in bfcl and "toolboard" not in bfcl
    assert "  prompt styles: official | toolboard (--prompt-style)" in listed.stdout.split("\nbfcl: ", 1)[0]
