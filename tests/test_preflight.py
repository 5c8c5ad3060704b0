"""Before a run exists its endpoint is looked at (issue 17): a dead host, a refused key or an unknown
model is refused with its cause and no run is created; a run whose every request failed ends `failed`
and stays off the board; request errors keep a run out of the ranking; a rerun answered from the cache
says so and the board shows one row for identical runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from evaluators.engine.preflight import EndpointCheckFailed, check_endpoint
from evaluators.engine.runner import start_run
from evaluators.engine.settings import RunRequest
from evaluators.engine.store import Store
from evaluators.service.board import APART_COLUMN, board_rows
from evaluators.service.deployment import unlisted_model_rule
from tests.engine_fixtures import correct_reply, run_to_end, scripted_run_config, write_dataset
from tests.loopback_app import LoopbackApp
from tests.scripted_server import Fault, ScriptedServer

PROJECT = Path(__file__).resolve().parents[1]


class ModelsServer(LoopbackApp):
    """An endpoint with a model list (or none), a key it insists on, and models it knows."""

    def __init__(self, models: list[str] | None, key: str | None = None):
        super().__init__()
        self.models, self.key = models, key
        self.chats: list[dict[str, Any]] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def routes(self, app: web.Application) -> None:
        if self.models is not None:
            app.router.add_get("/v1/models", self._list)
        app.router.add_post("/v1/chat/completions", self._chat)

    def _refused(self, request: web.Request) -> web.Response | None:
        if self.key and request.headers.get("Authorization") != f"Bearer {self.key}":
            return web.json_response({"error": {"message": "Incorrect API key provided"}}, status=401)
        return None

    async def _list(self, request: web.Request) -> web.Response:
        return self._refused(request) or web.json_response(
            {"object": "list", "data": [{"id": name, "object": "model"} for name in self.models or []]})

    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.chats.append(body)
        refused = self._refused(request)
        if refused:
            return refused
        if self.models is not None and body["model"] not in self.models or body["model"] == "missing":
            return web.json_response({"error": {"message": f"The model `{body['model']}` does not exist"}}, status=404)
        return web.json_response({"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                                  "choices": [{"index": 0, "message": {"role": "assistant", "content": "[]"},
                                               "finish_reason": "stop"}]})


def test_a_listed_model_passes_with_one_look_and_no_chat_request():
    with ModelsServer(["m-1", "m-2"]) as server:
        check_endpoint(server.base_url, "m-2", None)
        assert server.chats == []


def test_the_cause_is_named(tmp_path: Path):
    with ModelsServer(["m-1", "m-2"], key="sk-right") as server:
        with pytest.raises(EndpointCheckFailed, match=r"refused the key \(HTTP 401: Incorrect API key provided\)"):
            check_endpoint(server.base_url, "m-1", "sk-wrong")
        with pytest.raises(EndpointCheckFailed, match=r"does not list the model 'gpt-9'; it lists: m-1, m-2\. Give"):
            check_endpoint(server.base_url, "gpt-9", "sk-right")
        assert server.chats == []  # refused from the list alone: no request that a server would answer anyway
    with ModelsServer(None) as server:  # no model list: one tiny request decides
        with pytest.raises(EndpointCheckFailed, match=r"does not know the model 'missing'.*HTTP 404"):
            check_endpoint(server.base_url, "missing", None)
        check_endpoint(server.base_url, "anything", None)
        assert [body["max_tokens"] for body in server.chats] == [1, 1]
    with pytest.raises(EndpointCheckFailed, match=r"host no-such-host\.invalid could not be resolved"):
        check_endpoint("http://no-such-host.invalid/v1", "m", None)


class OddListServer(ModelsServer):
    """An endpoint whose model list is the given JSON, whatever its shape; its chat knows the model "m"."""

    def __init__(self, listing: Any):
        super().__init__(["m"])
        self.listing = listing

    async def _list(self, request: web.Request) -> web.Response:
        return web.json_response(self.listing)


def test_a_model_list_of_an_odd_shape_is_read_as_no_list_or_as_the_ids_it_holds():
    for listing, chats in (({"data": {"id": "m"}}, 1), ([{"id": "m"}], 1), ({"object": "list"}, 0), ({"data": None}, 0)):
        with OddListServer(listing) as server:  # no usable list: a tiny request decides; no list at all: it passes
            check_endpoint(server.base_url, "m", None)
            assert len(server.chats) == chats, listing
    with OddListServer({"data": [{"id": "other"}, "junk", {"name": "m"}]}) as server:
        with pytest.raises(EndpointCheckFailed, match=r"does not list the model 'm'; it lists: other"):
            check_endpoint(server.base_url, "m", None)


def test_a_model_the_list_does_not_hold_is_refused_even_by_a_server_that_answers_any_name():
    """A llama.cpp-like server answers every name with its one model: the list decides, naming what it
    lists (the first ten) and what to do; the operator's override is honoured off a public deployment only."""
    listed = [f"model-{n:02d}" for n in range(12)]
    with ScriptedServer(models=listed) as server:
        with pytest.raises(EndpointCheckFailed) as refused:
            check_endpoint(server.base_url, "gpt-nonexistent", None, unlisted=unlisted_model_rule(False, {}))
        message = str(refused.value)
        assert message.startswith(f"the endpoint cannot serve the run, nothing was started: {server.base_url} does not "
                                  "list the model 'gpt-nonexistent'; it lists: model-00, model-01")
        assert "model-09 … (12 in all). Give the model name exactly as listed" in message and "model-10" not in message
        assert "TOOLBOARD_ALLOW_UNLISTED_MODELS=1" in message
        with pytest.raises(EndpointCheckFailed, match=r"did you mean 'model-03'\?"):
            check_endpoint(server.base_url, "MODEL-03", None)
        assert server.requests == 0
        check_endpoint(server.base_url, "model-11", None)  # listed beyond the ten shown
        allowing = {"TOOLBOARD_ALLOW_UNLISTED_MODELS": "1"}
        check_endpoint(server.base_url, "gpt-nonexistent", None, unlisted=unlisted_model_rule(False, allowing))
        with pytest.raises(EndpointCheckFailed) as public:
            check_endpoint(server.base_url, "gpt-nonexistent", None, unlisted=unlisted_model_rule(True, allowing))
        assert "TOOLBOARD_ALLOW_UNLISTED_MODELS" not in str(public.value)


@pytest.mark.slow
def test_a_dead_endpoint_creates_no_run_from_the_library_or_the_cli(tmp_path: Path):
    data = write_dataset(tmp_path / "data", 2)
    store = Store(tmp_path / "db.sqlite")
    with ScriptedServer() as server:
        config = scripted_run_config(server, data)
    with pytest.raises(EndpointCheckFailed, match="connection refused"):
        start_run(RunRequest(config), store)
    assert store.list_runs() == []
    home = tmp_path / "home"
    done = subprocess.run([sys.executable, "-m", "evaluators", "run", "acebench", "--base-url", config.model.base_url,
                           "--model", "m", "--api-key-env", "", "--data-dir", str(data), "--subset", "normal_atom_bool"],
                          cwd=PROJECT, env={**os.environ, "TOOLBOARD_HOME": str(home)}, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "the endpoint cannot serve the run, nothing was started: connection refused" in done.stderr
    assert Store(home / "toolboard.db").list_runs() == []


def test_a_run_whose_every_request_failed_ends_failed_and_stays_off_the_board(tmp_path: Path):
    data = write_dataset(tmp_path / "data", 3)
    store = Store(tmp_path / "db.sqlite")
    broken = {"on": True}
    with ScriptedServer(reply=correct_reply, fault=lambda key, attempt: Fault(status=500) if broken["on"] else None) as server:
        outcome = run_to_end(store, scripted_run_config(server, data))
        assert outcome.status == "failed"
        assert "every request failed (3 of 3)" in store.get_run(outcome.run_id).message
        assert outcome.run_id not in set(board_rows("acebench", store)["run_id"])
        broken["on"] = False
        import asyncio

        from evaluators.engine.runner import execute
        from tests.engine_fixtures import FAST_RETRY

        again = asyncio.run(execute(store, outcome.run_id, rerun_errors=True, retry=FAST_RETRY))
    assert again.status == "finished" and outcome.run_id in set(board_rows("acebench", store)["run_id"])


def test_request_errors_keep_a_run_out_of_the_ranking_with_the_rate(tmp_path: Path):
    data = write_dataset(tmp_path / "data", 4)
    store = Store(tmp_path / "db.sqlite")
    failing: set[str] = set()

    def fault(key: str, attempt: int) -> Fault | None:
        if not failing:
            failing.add(key)  # the first sample asked always fails
        return Fault(status=500) if key in failing else None

    with ScriptedServer(reply=correct_reply, fault=fault) as server:
        outcome = run_to_end(store, scripted_run_config(server, data))
    totals = store.run_totals(outcome.run_id)
    assert outcome.status == "finished" and 0 < totals["errors"] < totals["done"]
    row = board_rows("acebench", store).query("run_id == @outcome.run_id").iloc[0]
    assert f"request errors: {totals['errors']} of {totals['done']}" in row[APART_COLUMN]


def test_an_identical_rerun_says_it_came_from_the_cache_and_the_board_shows_one_row(tmp_path: Path):
    data = write_dataset(tmp_path / "data", 3)
    store = Store(tmp_path / "db.sqlite")
    with ScriptedServer(reply=correct_reply) as server:
        first = run_to_end(store, scripted_run_config(server, data))
        sent = server.requests
        second = run_to_end(store, scripted_run_config(server, data))
        assert server.requests == sent
    assert "every answer came from the cache" in store.get_run(second.run_id).message
    assert "cache" not in store.get_run(first.run_id).message
    rows = board_rows("acebench", store)
    ours = rows[rows["source"] == "evaluated"]
    assert set(ours["run_id"]) == {second.run_id}
    assert ours["details"].str.contains("and 1 identical earlier run").all()


def test_the_form_refuses_a_dead_endpoint_and_creates_no_run(tmp_path: Path):
    from ui.context import AppContext
    from ui.evaluate_tab import start_job

    data = write_dataset(tmp_path / "data", 2)
    context = AppContext(store=Store(tmp_path / "app.db"))
    try:
        with ScriptedServer() as server:
            url = server.base_url
        outcome = start_job(context, {"base_url": url, "model": "m", "benchmark": "acebench", "language": "en",
                                      "subsets": ["normal_atom_bool"], "data_source": "local folder",
                                      "data_folder": str(data), "limit": 2}, None)
        assert outcome["run_id"] == "" and "connection refused" in outcome["message"]
        assert context.store.list_runs() == []
    finally:
        context.close()
