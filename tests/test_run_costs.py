"""Cost and latency of the runs evaluated here: $ per 1,000 items from the tokens the endpoint reported and the
model's list price (leaderboard_data/prices.json), latency mean and p95 per item, on the board's evaluated rows;
blank, with the reason, where a figure cannot be known. Runs against the scripted server, in a real store."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from evaluators.core.board_layout import TOKEN_USAGE, BoardLayout
from evaluators.core.registry import get_benchmark
from evaluators.engine.store import Store
from evaluators.publish.board_table import _combined_rows, board_columns, board_rows
from evaluators.publish.run_costs import (
    COST_COLUMN,
    COST_COLUMNS,
    COST_LEGEND,
    COST_NOTE_COLUMN,
    LATENCY_MEAN_COLUMN,
    LATENCY_P95_COLUMN,
    UsageFigures,
    add_priced_column,
    blank_cost_reasons,
    cost_legend,
    cost_values,
    percentile,
    price_of,
    usd_per_unit,
)
from tests.app_fixtures import upload
from tests.engine_fixtures import correct_reply, run_to_end, scripted_run_config, write_dataset
from tests.scripted_server import Fault, ScriptedServer, last_user_text

SERVER_LATENCY = 0.03  # seconds the scripted server waits before each answer
# The scripted server reports 10 prompt and 5 completion tokens for every answer.
PROMPT_TOKENS, COMPLETION_TOKENS = 10, 5


def _run(tmp_path: Path, store: Store, model: str, items: int = 20) -> None:
    data = write_dataset(tmp_path / "data", items)
    with ScriptedServer(reply=correct_reply, latency=SERVER_LATENCY) as server:
        config = scripted_run_config(server, data)
        config = dataclasses.replace(config, model=dataclasses.replace(config.model, model=model))
        run_to_end(store, config)


def _evaluated(store: Store):
    frame = board_rows("acebench", store)
    return frame, frame[frame["source"] == "evaluated"]


def test_a_priced_model_gets_its_cost_per_thousand_items_and_its_latency(tmp_path: Path):
    store = Store(tmp_path / "runs.sqlite")
    _run(tmp_path, store, "openai/gpt-4o-mini")  # a provider prefix is dropped to find the price
    frame, evaluated = _evaluated(store)
    assert list(frame.columns[-len(COST_COLUMNS):]) != list(COST_COLUMNS)  # the interval columns stay last
    assert set(COST_COLUMNS) <= set(board_columns(get_benchmark("acebench"), get_benchmark("acebench").board_layout()))
    row = evaluated.iloc[0]
    price = price_of("gpt-4o-mini")
    assert price is not None and (price.input_usd_per_1m, price.output_usd_per_1m) == (0.15, 0.60)
    # 10 prompt tokens x $0.15/1M + 5 completion tokens x $0.60/1M per item = $4.5e-6; x 1,000 items
    assert row[COST_COLUMN] == pytest.approx((PROMPT_TOKENS * 0.15 + COMPLETION_TOKENS * 0.60) / 1e6 * 1000)
    assert row[COST_COLUMN] == pytest.approx(0.0045)
    assert "gpt-4o-mini at $0.15 in / $0.6 out per 1M tokens" in row[COST_NOTE_COLUMN]
    assert "200 prompt + 100 completion tokens over 20 items" in row[COST_NOTE_COLUMN]
    # latency: the mean and the nearest-rank p95 of the stored per-item latencies, each at least the server's wait
    run_id = row["run_id"]
    latencies = sorted(p.latency for p in store.load_predictions(run_id).values())
    assert len(latencies) == 20 and latencies[0] >= SERVER_LATENCY
    assert row[LATENCY_MEAN_COLUMN] == pytest.approx(sum(latencies) / 20, abs=1e-4)
    assert row[LATENCY_P95_COLUMN] == pytest.approx(latencies[18], abs=1e-4)  # the 19th of 20
    # published rows have no tokens or timings: blank
    published = frame[frame["source"] == "published"]
    assert published[list(COST_COLUMNS)].isna().all().all()


def test_a_model_without_a_price_gets_a_blank_cost_with_the_reason(tmp_path: Path):
    store = Store(tmp_path / "runs.sqlite")
    _run(tmp_path, store, "scripted-model")
    frame, evaluated = _evaluated(store)
    row = evaluated.iloc[0]
    assert row[COST_COLUMN] is None and row[LATENCY_MEAN_COLUMN] >= SERVER_LATENCY
    assert row[COST_NOTE_COLUMN] == "no cost: no listed price for this model"
    assert blank_cost_reasons(frame[COST_NOTE_COLUMN]) == ["no cost: no listed price for this model"]
    assert "models without a listed price" in COST_LEGEND
    assert cost_legend(frame[COST_NOTE_COLUMN]).endswith(" Blank here: no cost: no listed price for this model.")


@pytest.mark.slow
def test_failed_requests_and_uploads_count_for_nothing(tmp_path: Path):
    store = Store(tmp_path / "runs.sqlite")
    failing = {"Set alarm number 3 at", "Set alarm number 7 at"}
    data = write_dataset(tmp_path / "data", 10)
    with ScriptedServer(reply=correct_reply, latency=SERVER_LATENCY) as server:
        # one request at a time, so the last body seen is the one being answered
        server.fault = lambda key, attempt: (Fault(status=400, message="refused") if any(
            text in last_user_text(server.bodies[-1]) for text in failing) else None)
        config = scripted_run_config(server, data, concurrency=1)
        config = dataclasses.replace(config, model=dataclasses.replace(config.model, model="gpt-4o"))
        run_to_end(store, config)
    run_id = store.list_runs()[0].id
    assert store.run_totals(run_id)["errors"] == 2
    upload(store, "gpt-4o")
    frame = board_rows("acebench", store)
    evaluated = frame[frame["source"] == "evaluated"].iloc[0]
    # 8 answered items at 10 + 5 tokens: the failed ones neither cost nor dilute the figure
    assert evaluated[COST_COLUMN] == pytest.approx((10 * 2.50 + 5 * 10.00) / 1e6 * 1000)
    assert "over 8 items" in evaluated[COST_NOTE_COLUMN]
    uploaded = frame[frame["source"] == "uploaded"]
    assert len(uploaded) and uploaded[list(COST_COLUMNS)].isna().all().all()


def test_figures_from_usage_records():
    # nearest-rank p95
    assert percentile([float(v) for v in range(1, 21)], 0.95) == 19.0
    assert percentile([2.0], 0.95) == 2.0 and percentile([], 0.95) is None
    # answers from the cache (latency 0) are left out of the latency; an endpoint reporting no usage gets no cost
    figures = UsageFigures().add([(0.0, None, None, False), (0.0, None, None, False), (None, None, None, True)])
    values = cost_values("gpt-4o", figures)
    assert values[COST_COLUMN] is None and values[LATENCY_MEAN_COLUMN] is None and values[LATENCY_P95_COLUMN] is None
    assert values[COST_NOTE_COLUMN] == ("no latency: every answer came from the cache; "
                                        "no cost: the endpoint reported no token usage")
    # items whose answer reported no usage are left out of the cost's denominator
    figures = UsageFigures().add([(1.0, 1000, 100, False), (3.0, None, None, False)])
    values = cost_values("deepseek-chat", figures)
    assert values[COST_COLUMN] == pytest.approx((1000 * 0.27 + 100 * 1.10) / 1e6 * 1000)
    assert values[LATENCY_MEAN_COLUMN] == 2.0 and values[LATENCY_P95_COLUMN] == 3.0


def test_a_priced_column_is_the_mean_of_its_parts_cost_per_unit_and_blank_without_a_price_or_usage():
    price = price_of("gpt-4o-mini")  # $0.15 in, $0.60 out per 1M tokens
    assert usd_per_unit([(1000, 100, 2)], price) == pytest.approx((1000 * 0.15 + 100 * 0.60) / 1e6 / 2)
    assert usd_per_unit([(1000, 100, 2), (0, 1000, 1)], price) == pytest.approx((0.000105 + 0.0006) / 2)
    assert usd_per_unit([(1000, 100, 2)], None) is None
    assert usd_per_unit([], price) is None
    assert usd_per_unit([(1000, 100, 2), (0, 0, 3)], price) is None  # a part with no usage: blank, not cheaper
    assert usd_per_unit([(1000, 100, 0)], price) is None


def test_a_combined_view_is_priced_from_every_parts_tokens():
    layout = BoardLayout(view_label="Language", views=("en", "zh", "both"), columns=("score",),
                         detail_columns=("cost",), combine_views={"both": ("en", "zh")}, priced_column="cost")
    common = {"model": "gpt-4o-mini", "source": "evaluated", "mode": "official", "pair_key": "", "request_errors": 0,
              "apart_reason": "", "score": 0.5}
    rows = [{**common, "view": "en", "run_id": "a", TOKEN_USAGE: [(1000, 100, 2)]},
            {**common, "view": "zh", "run_id": "b", TOKEN_USAGE: [(0, 1000, 1)]},
            {**common, "view": "en", "run_id": "c"}]  # an older run without tokens: not the newest, not combined
    both = _combined_rows(layout, rows)
    assert [row[TOKEN_USAGE] for row in both] == [[(1000, 100, 2), (0, 1000, 1)]]
    add_priced_column(rows + both, layout.priced_column)
    assert both[0]["cost"] == pytest.approx((0.000105 + 0.0006) / 2) and rows[2]["cost"] is None
