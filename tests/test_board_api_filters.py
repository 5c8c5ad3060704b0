"""The board API's model filters (size range, open or closed weights, hide flagged) and its interval ranks, through
gradio_client against the real app: the same rows as the service gives, and a bad filter refused with its reason."""

from __future__ import annotations

from typing import Any

import pytest
from gradio_client import Client

from evaluators.service.board import RANK_COLUMN, BoardQuery, layout_for, query_board
from tests.app_fixtures import RunningApp, running_app, table_rows

SOURCES = ["published", "evaluated", "uploaded"]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory):
    with running_app(tmp_path_factory.mktemp("board-api")) as running:
        yield running


@pytest.fixture(scope="module")
def client(app: RunningApp) -> Client:
    return Client(app.url, verbose=False)


def rows(client: Client, endpoint: str = "/leaderboard", benchmark: str = "acebench", view: str = "en",
         sort_by: str = "overall", **filters: Any) -> list[dict[str, Any]]:
    return table_rows(client.predict(benchmark=benchmark, view=view, sources=SOURCES, sort_by=sort_by,
                                     api_name=endpoint, **filters))


@pytest.mark.slow
def test_a_size_range_keeps_the_models_of_known_size_within_it(client: Client):
    everything = rows(client)
    small = rows(client, min_params_b=3, max_params_b=8)
    assert small and all(3 <= r["params_b"] <= 8 for r in small)
    assert {"Hammer2.1-3B", "Watt-Tool-8B"} <= {r["model"] for r in small}  # bounds included
    # no model of unknown size, and each keeps the rank it has in the whole view
    assert "GPT-4o" not in {r["model"] for r in small}
    rank = {r["model"]: r["rank"] for r in everything}
    assert all(r["rank"] == rank[r["model"]] for r in small)
    assert len(rows(client, min_params_b=0)) < len(everything)


@pytest.mark.slow
def test_weights_open_closed_and_the_old_open_weights_only(client: Client):
    closed = rows(client, weights="closed")
    assert closed and all(r["open_weights"] is False for r in closed)
    opened = rows(client, weights="open")
    assert opened and all(r["open_weights"] is True for r in opened)
    assert [r["model"] for r in rows(client, open_weights_only=True)] == [r["model"] for r in opened]


@pytest.mark.slow
def test_hide_flagged_leaves_out_the_rows_whose_flag_says_why(client: Client):
    everything = rows(client, endpoint="/leaderboard_ranked", benchmark="toolbench_static", view="in_domain",
                      sort_by="act_em")
    flagged = [r for r in everything if r.get("flag")]
    assert flagged and all(isinstance(r["flag"], str) for r in flagged)
    clean = rows(client, endpoint="/leaderboard_ranked", benchmark="toolbench_static", view="in_domain",
                 sort_by="act_em", hide_flagged=True)
    assert clean and {r["model"] for r in clean} == {r["model"] for r in everything if not r.get("flag")}
    assert rows(client, endpoint="/leaderboard_apart", hide_flagged=True, weights="open", max_params_b=70) == []


@pytest.mark.slow
def test_the_api_gives_the_services_interval_ranks(app: RunningApp, client: Client):
    ranked = rows(client, endpoint="/leaderboard_ranked", benchmark="bfcl", view="all", sort_by="live_ast")
    layout = layout_for("bfcl")
    service = query_board(app.context.board_frame("bfcl", "official"), layout,
                          BoardQuery(view="all", part="ranked", sort_by="live_ast"))
    assert [(r["model"], r["rank"]) for r in ranked] == [(m, int(r)) for m, r in zip(service["model"], service[RANK_COLUMN])]
    assert ranked[0]["rank"] == 1 and len({r["rank"] for r in ranked}) >= 40


@pytest.mark.parametrize(("filters", "expected"), [
    ({"min_params_b": 9, "max_params_b": 3}, "min_params_b (9) is above max_params_b (3)"),
    ({"min_params_b": -2}, "min_params_b must be 0 or more billions of parameters, got -2"),
    ({"max_params_b": "seven"}, "max_params_b must be a number of billions of parameters"),
    ({"weights": "free"}, "weights must be one of any, open, closed, got 'free'"),
    ({"weights": "closed", "open_weights_only": True}, "open_weights_only asks for open models"),
])
@pytest.mark.parametrize("endpoint", ["/leaderboard", "/leaderboard_ranked", "/leaderboard_apart"])
def test_a_bad_filter_is_refused_with_its_reason(client: Client, endpoint: str, filters: dict[str, Any], expected: str):
    with pytest.raises(Exception) as error:
        rows(client, endpoint=endpoint, **filters)
    assert expected in str(error.value)
