"""Model facts on the board: organisation, size, licence, open weights, request mode, link and the date of
each row, for published rows, evaluated runs and uploads alike; filtering on them; the facts table itself."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evaluators.core.errors import DataError, ToolboardError
from evaluators.core.leaderboard import LEADERBOARD_DIR, MODELS_FILE, load_model_facts, load_published
from evaluators.core.types import Report, SubsetResult
from evaluators.engine.store import Store
from evaluators.service.board import (
    FACT_COLUMNS,
    FLAG_COLUMN,
    INFO_COLUMNS,
    RANK_COLUMN,
    UPDATED_COLUMN,
    BoardQuery,
    board_rows,
    board_updated,
    fact_choices,
    layout_for,
    model_facts,
    model_key,
    query_board,
)


def _run(store: Store, name: str, overall: float, language: str = "en", source: str = "endpoint",
         **model: Any) -> str:
    """A finished ACEBench run (or upload) of `name` with one overall score, built in the store directly."""
    settings = {"base_url": "http://127.0.0.1:9/v1", "model": name, "request_mode": "prompt",
                "prompt_style": "official", **model}
    config = {"benchmark": "acebench", "model": settings, "language": language, "subsets": [], "limit": None}
    run_id = store.create_run("acebench", language, name, settings["base_url"], config, f"fp-{name}-{source}", 1,
                              source=source)
    report = Report("acebench", "official", {"normal_atom_bool": SubsetResult(1, {"accuracy": overall})},
                    {"overall": overall, "normal": overall}, {}, language=language)
    store.save_scores(run_id, "official", [], report)
    store.set_status(run_id, "finished")
    return run_id


def _today() -> set[str]:
    return {datetime.now(UTC).date().isoformat()}


@pytest.fixture
def frame(tmp_path: Path) -> pd.DataFrame:
    store = Store(tmp_path / "facts.sqlite")
    before = _today()
    _run(store, "openai/gpt-4o-mini", 0.5)
    _run(store, "Qwen2.5-7B-Instruct", 0.4, request_mode="tools", prompt_style="toolboard")
    _run(store, "Qwen2.5-7B-Instruct", 0.6, language="zh", request_mode="tools", prompt_style="toolboard")
    _run(store, "Qwen2.5-7B-Instruct", 0.45, request_mode="tools", prompt_style="toolboard")
    _run(store, "qwen2.5-7b-instruct", 0.3, source="upload")
    _run(store, "my-own-finetune", 0.7)
    rows = board_rows("acebench", store)
    rows.attrs["days"] = before | _today()  # the runs ended today (UTC), or just after midnight
    return rows


def _one(frame: pd.DataFrame, model: str, source: str, view: str = "en") -> pd.Series:
    chosen = frame[(frame["model"] == model) & (frame["source"] == source) & (frame["view"] == view)]
    assert len(chosen) >= 1, (model, source, view)
    return chosen.iloc[0]


def test_published_rows_carry_the_facts_the_request_mode_and_the_tables_date(frame: pd.DataFrame):
    assert {*FACT_COLUMNS, UPDATED_COLUMN} <= set(frame.columns)
    gpt = _one(frame, "GPT-4o", "published")
    assert (gpt["organisation"], gpt["params_b"], gpt["licence"], gpt["open_weights"]) == ("OpenAI", None, "proprietary", False)
    assert gpt["link"].startswith("https://") and gpt["request_mode"] == "prompt"
    assert gpt[UPDATED_COLUMN] == load_published("acebench")["source"]["date"]
    llama = _one(frame, "Llama-3.1-8B-Instruct", "published", "zh")
    assert (llama["organisation"], llama["params_b"], llama["licence"], llama["open_weights"]) == (
        "Meta", 8.0, "Llama 3.1 Community", True)


def test_evaluated_runs_and_uploads_take_the_facts_of_their_model(frame: pd.DataFrame):
    mini = _one(frame, "openai/gpt-4o-mini", "evaluated")
    assert (mini["organisation"], mini["open_weights"], mini["request_mode"]) == ("OpenAI", False, "prompt")
    assert mini[UPDATED_COLUMN] in frame.attrs["days"]
    qwen = _one(frame, "Qwen2.5-7B-Instruct", "evaluated")
    assert (qwen["organisation"], qwen["params_b"], qwen["licence"]) == ("Alibaba", 7.61, "Apache-2.0")
    assert qwen["request_mode"] == "native tools"
    uploaded = _one(frame, "qwen2.5-7b-instruct", "uploaded")
    # an upload: the model's facts, but how its predictions were requested is not known
    assert uploaded["organisation"] == "Alibaba" and uploaded["request_mode"] is None
    assert uploaded[UPDATED_COLUMN] in frame.attrs["days"]


def test_a_combined_row_keeps_the_mode_and_the_newest_date_of_its_parts(frame: pd.DataFrame):
    combined = _one(frame, "Qwen2.5-7B-Instruct", "evaluated", "combined")
    assert combined["overall"] == pytest.approx(0.525)  # the newest en run (0.45) with zh (0.6)
    assert combined["request_mode"] == "native tools" and combined["organisation"] == "Alibaba"
    assert combined[UPDATED_COLUMN] in frame.attrs["days"]


def test_an_unknown_model_has_no_facts(frame: pd.DataFrame):
    mine = _one(frame, "my-own-finetune", "evaluated")
    assert all(mine[column] is None for column in ("organisation", "params_b", "licence", "open_weights", "link"))
    assert mine["request_mode"] == "prompt"  # known from the run, not from the facts table
    assert model_facts("my-own-finetune") is None


def test_the_facts_are_shown_after_the_text_columns_and_before_the_run_info(frame: pd.DataFrame):
    layout = layout_for("acebench")
    shown = list(query_board(frame, layout, BoardQuery(view="en")).columns)
    facts = [shown.index(c) for c in (*FACT_COLUMNS, UPDATED_COLUMN)]
    assert facts == list(range(facts[0], facts[0] + len(facts)))
    assert max(shown.index(c) for c in layout.columns) < facts[0] and facts[-1] < shown.index(INFO_COLUMNS[0])


def _ranks_are_sane(shown: pd.DataFrame, everything: pd.DataFrame) -> None:
    """A filter hides rows and never re-ranks: each shown row keeps its rank in the whole view."""
    ranked = [int(r) for r in shown[RANK_COLUMN].dropna()]
    assert ranked and ranked == sorted(ranked)
    whole = {(m, s): r for m, s, r in zip(everything["model"], everything["source"], everything[RANK_COLUMN])}
    assert all(whole[(m, s)] == r for m, s, r in zip(shown["model"], shown["source"], shown[RANK_COLUMN])
               if not pd.isna(r))


def test_filters_on_organisation_open_weights_and_request_mode(frame: pd.DataFrame):
    layout = layout_for("acebench")

    def shown(**filters: Any) -> pd.DataFrame:
        return query_board(frame, layout, BoardQuery(view="en", **filters))

    everything = shown()
    assert "my-own-finetune" in set(everything["model"])  # no filter keeps the rows without facts
    openai = shown(organisations=("OpenAI",))
    assert set(openai["organisation"]) == {"OpenAI"}
    assert {"GPT-4o", "GPT-4o-Mini", "openai/gpt-4o-mini"} <= set(openai["model"])
    _ranks_are_sane(openai, everything)
    assert shown(organisations=()).empty
    open_only = shown(open_weights_only=True)
    assert set(open_only["open_weights"]) == {True} and "my-own-finetune" not in set(open_only["model"])
    assert "GPT-4o" not in set(open_only["model"]) and "Llama-3.1-70B-Instruct" in set(open_only["model"])
    _ranks_are_sane(open_only, everything)
    native = shown(request_modes=("native tools",))
    assert set(native["model"]) == {"Qwen2.5-7B-Instruct"}
    prompt = shown(request_modes=("prompt",))
    assert "qwen2.5-7b-instruct" not in set(prompt["model"])  # the upload's mode is unknown
    _ranks_are_sane(prompt, everything)
    both = shown(organisations=("Alibaba", "Meta"), open_weights_only=True, request_modes=("prompt",))
    assert set(both["organisation"]) == {"Alibaba", "Meta"} and set(both["source"]) == {"published"}
    _ranks_are_sane(both, everything)


def test_open_weights_only_is_weights_open_and_closed_keeps_the_known_closed_models(frame: pd.DataFrame):
    layout = layout_for("acebench")

    def shown(**filters: Any) -> pd.DataFrame:
        return query_board(frame, layout, BoardQuery(view="en", **filters))

    everything = shown()
    assert list(shown(weights="open")["model"]) == list(shown(open_weights_only=True)["model"])
    assert list(shown(weights="open", open_weights_only=True)["model"]) == list(shown(weights="open")["model"])
    closed = shown(weights="closed")
    assert set(closed["open_weights"]) == {False} and {"GPT-4o", "openai/gpt-4o-mini"} <= set(closed["model"])
    assert "my-own-finetune" not in set(closed["model"])  # unknown weights: neither open nor closed
    _ranks_are_sane(closed, everything)
    assert list(shown(weights="any")["model"]) == list(everything["model"])


def test_a_size_range_keeps_the_rows_of_known_size_within_its_bounds(frame: pd.DataFrame):
    layout = layout_for("acebench")

    def shown(**filters: Any) -> pd.DataFrame:
        return query_board(frame, layout, BoardQuery(view="en", **filters))

    everything = shown()
    small = shown(max_params_b=8)
    assert small["params_b"].map(lambda size: size is not None and size <= 8).all()
    assert {"Qwen2.5-7B-Instruct", "Watt-Tool-8B"} <= set(small["model"])  # 7.61 and 8: bounds included
    assert "GPT-4o" not in set(small["model"]) and "my-own-finetune" not in set(small["model"])  # size unknown
    _ranks_are_sane(small, everything)
    middle = shown(min_params_b=8, max_params_b=72.7)
    assert set(middle["params_b"]) >= {8.0, 72.7} and middle["params_b"].map(lambda size: 8 <= size <= 72.7).all()
    big = shown(min_params_b=100)
    assert big["params_b"].map(lambda size: size >= 100).all() and "DeepSeekV3" in set(big["model"])
    assert shown(min_params_b=0)["params_b"].notna().all()  # a bound drops the rows of unknown size
    assert shown(min_params_b=5000).empty


@pytest.mark.parametrize(("filters", "expected"), [
    ({"min_params_b": 9, "max_params_b": 3}, "min_params_b (9) is above max_params_b (3)"),
    ({"min_params_b": -1}, "min_params_b must be 0 or more billions of parameters, got -1"),
    ({"max_params_b": "7B"}, "max_params_b must be a number of billions of parameters (or empty for no bound), got '7B'"),
    ({"max_params_b": float("nan")}, "max_params_b must be a number"),
    ({"min_params_b": True}, "min_params_b must be a number"),
    ({"weights": "free"}, "weights must be one of any, open, closed, got 'free'"),
    ({"weights": "closed", "open_weights_only": True}, "open_weights_only asks for open models and weights for closed"),
])
def test_a_bad_filter_is_refused_with_its_reason(filters: dict[str, Any], expected: str):
    with pytest.raises(ToolboardError) as error:
        BoardQuery(**filters)
    assert expected in str(error.value)


def test_flagged_rows_are_those_whose_facts_say_why_and_hiding_them_never_re_ranks():
    facts = {model.name: model for model in load_model_facts()}
    flagged = {name for name, model in facts.items() if model.flag}
    assert flagged and all(facts[name].source.startswith("https://") for name in flagged)
    assert "mLlama-3.1-8B-Instruct" in flagged and "Llama-3.1-8B-Instruct" not in flagged
    layout = layout_for("acebench")
    frame = board_rows("acebench", None)
    everything = query_board(frame, layout, BoardQuery(view="en"))
    mllama = everything[everything["model"] == "mLlama-3.1-8B-Instruct"].iloc[0]
    assert mllama[FLAG_COLUMN].startswith("which model this row measured is not known")
    assert everything[FLAG_COLUMN].map(lambda flag: flag is None).sum() == len(everything) - 1
    clean = query_board(frame, layout, BoardQuery(view="en", hide_flagged=True))
    assert set(everything["model"]) - set(clean["model"]) == {"mLlama-3.1-8B-Instruct"}
    _ranks_are_sane(clean, everything)


def test_a_flag_in_the_facts_table_must_be_text(tmp_path: Path):
    entry = {"name": "Model B", "aliases": [], "organisation": "Org", "params_b": None, "licence": None,
             "open_weights": None, "link": None, "source": "https://example.org/b", "flag": True}
    with pytest.raises(DataError, match="field 'flag' must be a string"):
        load_model_facts(_bad_table(tmp_path, entry))
    entry["flag"] = "which checkpoint is not said"
    assert load_model_facts(_bad_table(tmp_path / "good", entry))[1].flag == "which checkpoint is not said"


def test_fact_choices_and_the_boards_last_update(frame: pd.DataFrame):
    choices = fact_choices(frame)
    assert choices["request_mode"] == ["native tools", "prompt"]
    assert {"OpenAI", "Alibaba", "Meta"} <= set(choices["organisation"])
    assert choices["organisation"] == sorted(choices["organisation"]) and None not in choices["organisation"]
    assert board_updated(frame) in frame.attrs["days"]  # the runs are newer than the published table
    published = board_rows("acebench", None)
    assert board_updated(published) == load_published("acebench")["source"]["date"]
    assert board_updated(published.iloc[0:0]) is None
    assert fact_choices(published.iloc[0:0]) == {"organisation": [], "request_mode": []}


def test_model_key_joins_aliases_case_and_provider_prefixes():
    assert model_key("GPT-4o") == model_key("gpt-4o") == model_key("openai/gpt-4o") == "GPT-4o"
    # a dated snapshot shares the facts but is its own model; another org's prefix is someone's fine-tune
    assert model_key("openai/gpt-4o-2024-08-06") != model_key("gpt-4o-2024-11-20") != "GPT-4o"
    assert model_facts("openai/gpt-4o-2024-08-06").name == "GPT-4o"
    assert model_key("myorg/Qwen2.5-7B-Instruct") != model_key("Qwen/Qwen2.5-7B-Instruct") == model_key("Qwen2.5-7B-Instruct")
    assert model_facts("myorg/Qwen2.5-7B-Instruct") is None
    assert model_key("xLAM-7B-r") == model_key("xLAM-7b-r")
    assert model_key("DeepSeekV3") == model_key("deepseek-ai/DeepSeek-V3")
    assert model_key("ChatGPT (0-shot)") == model_key("gpt-3.5-turbo")
    assert model_key("meta-llama/Llama_3.1  8B") == "llama-3.1-8b"  # unknown: normalised
    assert model_key("13B alpha-UMi w/ reuse") != model_key("7B alpha-UMi w/ reuse")  # a "/" inside a name stays
    assert model_key("GPT-4o") != model_key("GPT-4o-Mini")


def _published_tables() -> list[Path]:
    return sorted(p for p in LEADERBOARD_DIR.glob("*.json") if p.name not in (MODELS_FILE, "prices.json"))


def test_every_model_of_every_published_table_has_facts():
    assert _published_tables()
    for path in _published_tables():
        table = load_published(path.stem)
        missing = sorted({row["model"] for row in table["rows"] if model_facts(row["model"]) is None})
        assert not missing, f"{path.name}: add these models to {MODELS_FILE}: {missing}"
        assert table["source"].get("date"), f"{path.name}: 'source.date' gives each row's last update"


def test_the_facts_agree_with_the_open_or_closed_label_of_the_published_rows():
    for path in _published_tables():
        for row in load_published(path.stem)["rows"]:
            if row.get("access") in ("open", "closed"):
                assert model_facts(row["model"]).open_weights is (row["access"] == "open"), row["model"]


def test_every_facts_entry_names_its_source():
    facts = load_model_facts()
    assert facts is load_model_facts()  # cached
    for model in facts:
        assert model.source.startswith("https://"), model.name
        assert model.params_b is None or model.params_b > 0


def _bad_table(tmp_path: Path, entry: dict[str, Any] | None = None, others: list[Any] | None = None) -> Path:
    good = {"name": "Model A", "aliases": ["model-a"], "organisation": "Org", "params_b": 7, "licence": "MIT",
            "open_weights": True, "link": "https://example.org/a", "source": "https://example.org/a"}
    folder = tmp_path / "facts"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MODELS_FILE).write_text(json.dumps([good, *([entry] if entry else []), *(others or [])]), encoding="utf-8")
    return folder


@pytest.mark.parametrize(("entry", "expected"), [
    ({"name": "Model B", "aliases": []}, "entry 1 ('Model B'): field 'organisation' is missing"),
    ({"name": "Model B", "aliases": [], "organisation": "Org", "params_b": "7B", "licence": None, "open_weights": True,
      "link": None, "source": "https://example.org/b"}, "entry 1 ('Model B'): field 'params_b' must be a number or null, got \"7B\""),
    ({"name": "Model B", "aliases": [], "organisation": "Org", "params_b": None, "licence": None, "open_weights": "yes",
      "link": None, "source": "https://example.org/b"}, "entry 1 ('Model B'): field 'open_weights' must be true or false or null"),
    ({"name": "Model B", "aliases": ["MODEL-A"], "organisation": "Org", "params_b": None, "licence": None,
      "open_weights": None, "link": None, "source": "https://example.org/b"}, "spelling 'model-a' is also used by entry 'Model A'"),
    ({"name": "Model B", "aliases": [], "organisation": "Org", "params_b": None, "licence": None, "open_weights": None,
      "link": None, "source": "https://example.org/b", "size": 3}, "entry 1 ('Model B'): unknown field 'size'"),
    ({"name": "Model B", "aliases": [], "organisation": "Org", "params_b": None, "licence": None, "open_weights": None,
      "link": "example.org", "source": "https://example.org/b"}, "field 'link' must be an https:// address"),
])
def test_a_bad_facts_entry_is_named_with_its_field(tmp_path: Path, entry: dict[str, Any], expected: str):
    with pytest.raises(DataError) as error:
        load_model_facts(_bad_table(tmp_path, entry))
    assert expected in str(error.value) and MODELS_FILE in str(error.value)


def test_a_facts_file_that_is_not_a_list_of_entries_is_refused(tmp_path: Path):
    with pytest.raises(DataError, match="entry 1: expected an object"):
        load_model_facts(_bad_table(tmp_path, others=["Model B"]))
    (tmp_path / "facts" / MODELS_FILE).write_text('{"models": 3}', encoding="utf-8")
    with pytest.raises(DataError, match="expected a list of models"):
        load_model_facts(tmp_path / "facts")
    assert load_model_facts(_bad_table(tmp_path / "good"))[0].params_b == 7.0


def test_a_published_table_states_its_request_mode_with_one_of_the_known_words(tmp_path: Path):
    table = {"source": {"date": "2025-01-02"}, "request_mode": "tools", "rows": []}
    (tmp_path / "bench.json").write_text(json.dumps(table), encoding="utf-8")
    with pytest.raises(DataError, match="'request_mode' must be one of \"prompt\", \"native tools\", null"):
        load_published("bench", tmp_path)
    table.update(request_mode="prompt", rows=[{"model": "m", "summary": {}, "request_mode": "native"}])
    (tmp_path / "bench.json").write_text(json.dumps(table), encoding="utf-8")
    with pytest.raises(DataError, match=r"row 0 \(m\): 'request_mode'"):
        load_published("bench", tmp_path)
    table.update(rows=[], source={"date": "29 Oct 2025"})
    (tmp_path / "bench.json").write_text(json.dumps(table), encoding="utf-8")
    with pytest.raises(DataError, match="ISO date"):
        load_published("bench", tmp_path)
