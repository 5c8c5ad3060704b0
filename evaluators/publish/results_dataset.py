"""Results as a Hugging Face dataset folder: `contents/`, `details/` and `runs/` (one Parquet file each, or one per
run in a dataset grown run by run) beside the dataset card, so that `datasets.load_dataset(folder, "contents")`
reads them; and the checked reading of such a folder or file. What the rows hold: dataset_rows; their columns:
dataset_schema; the card: dataset_card.

pyarrow is imported inside functions: the app imports this module's callers at start-up.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from evaluators.core.registry import benchmark_names
from evaluators.engine.store import Store
from evaluators.publish.dataset_card import card_text
from evaluators.publish.dataset_rows import chosen_runs, contents_table, detail_batches, example_data_runs, runs_table
from evaluators.publish.dataset_schema import (
    CARD_FILE,
    CONFIGS,
    DATA_FILE,
    ResultsDatasetError,
    arrow_frame,
    arrow_schema,
    arrow_type,
    config_schema,
    fixed_columns,
)

if TYPE_CHECKING:
    import pyarrow as pa  # type: ignore[import-untyped]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class WrittenDataset:
    folder: Path
    contents_rows: int
    details_rows: int
    runs_rows: int
    example_runs_left_out: int = 0  # finished runs scored on a built-in example, never written


def write_dataset(folder: str | Path, store: Store, run_ids: Iterable[str] | None = None,
                  benchmarks: Iterable[str] | None = None) -> WrittenDataset:
    """Write `contents/`, `details/`, `runs/` (one Parquet file each) and the dataset card into `folder`. Files of an
    earlier export there are replaced; other Parquet files in those folders are refused (they would load too).
    A config without rows is left out (file and card): `datasets` cannot load an empty split."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    folder = Path(folder)
    names = list(benchmarks) if benchmarks is not None else benchmark_names()
    runs = [run.id for run in chosen_runs(store, run_ids)]
    left_out = len(example_data_runs(store)) if run_ids is None else 0
    if left_out:
        logger.info("results dataset: left out %d run%s scored on the built-in example data", left_out,
                    "" if left_out == 1 else "s")
    for config in CONFIGS:
        (folder / config).mkdir(parents=True, exist_ok=True)
        strays = sorted(p.name for p in (folder / config).glob("*.parquet") if p.name != DATA_FILE)
        if strays:
            raise ResultsDatasetError(f"{folder / config} holds other Parquet files ({', '.join(strays)}): they would"
                                      f" load as part of the {config!r} config; export into an empty folder")
    contents = contents_table(store, names, runs if run_ids is not None else None)
    if not contents.num_rows:
        raise ResultsDatasetError(f"nothing to export for {', '.join(names)}: no published rows and no finished runs")
    _replace(folder / "contents" / DATA_FILE, lambda path: pq.write_table(contents, path))
    details_count = _write_details(folder / "details" / DATA_FILE, store, runs)
    records = runs_table(store, runs)
    _replace(folder / "runs" / DATA_FILE, lambda path: pq.write_table(records, path) if records.num_rows else None)
    configs = [config for config, count in zip(CONFIGS, (contents.num_rows, details_count, records.num_rows)) if count]
    _replace(folder / CARD_FILE, lambda path: path.write_text(card_text(names, configs), encoding="utf-8"))
    return WrittenDataset(folder, contents.num_rows, details_count, records.num_rows, left_out)


def run_shard_name(run_id: str) -> str:
    """The file of one run in each config of a dataset grown run by run (the hub sync appends this way)."""
    return f"{run_id}.parquet"


def write_run_shards(folder: str | Path, store: Store, run_id: str) -> list[str]:
    """Write one finished run's `runs` row and `details` rows as `runs/<id>.parquet` and `details/<id>.parquet`
    under `folder` (details left out when it has no scored item); returns the paths written, relative to it. A run
    scored on a built-in example is refused (chosen_runs)."""
    import pyarrow.parquet as pq

    folder = Path(folder)
    written = []
    for config in ("runs", "details"):
        (folder / config).mkdir(parents=True, exist_ok=True)
    pq.write_table(runs_table(store, [run_id]), folder / "runs" / run_shard_name(run_id))
    written.append(f"runs/{run_shard_name(run_id)}")
    if _write_details(folder / "details" / run_shard_name(run_id), store, [run_id]):
        written.append(f"details/{run_shard_name(run_id)}")
    return written


def write_contents_and_card(folder: str | Path, store: Store, configs: Iterable[str]) -> list[str]:
    """Write the whole `contents` (every board row the store makes, published rows included) and the dataset
    card naming `configs`; returns the paths written, relative to `folder`."""
    import pyarrow.parquet as pq

    folder = Path(folder)
    names = benchmark_names()
    (folder / "contents").mkdir(parents=True, exist_ok=True)
    pq.write_table(contents_table(store, names), folder / "contents" / DATA_FILE)
    (folder / CARD_FILE).write_text(card_text(names, configs), encoding="utf-8")
    return [f"contents/{DATA_FILE}", CARD_FILE]


def _write_details(path: Path, store: Store, run_ids: list[str]) -> int:
    """The details rows written to `path` batch by batch; none written (and an earlier file removed) when
    there are no rows. Returns how many were written."""
    import pyarrow.parquet as pq

    count = 0

    def write(partial: Path) -> None:
        nonlocal count
        writer = None
        try:
            for batch in detail_batches(store, run_ids):
                if batch.num_rows:
                    writer = writer or pq.ParquetWriter(partial, config_schema("details"))
                    writer.write_table(batch)
                    count += batch.num_rows
        finally:
            if writer is not None:
                writer.close()

    _replace(path, write)
    return count


def _replace(path: Path, write: Callable[[Path], object]) -> None:
    """Write beside `path`, then move into place: a reader never sees half a file (and *.parquet globs skip
    it). When `write` wrote nothing, `path` is removed: what an earlier export left there is not this one."""
    partial = path.with_name(path.name + ".partial")
    try:
        write(partial)
        if partial.exists():
            os.replace(partial, path)
        else:
            path.unlink(missing_ok=True)
    finally:
        partial.unlink(missing_ok=True)


def read_dataset(folder: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The `contents` and `details` of a results dataset folder, checked: every Parquet file readable and
    with the columns and types this module writes (other benchmarks' metric columns are welcome)."""
    return read_config(folder, "contents"), read_config(folder, "details")


def read_config(folder: str | Path, config: str) -> pd.DataFrame:
    """One config (contents, details or runs) of a results dataset folder, checked as read_dataset checks it."""
    if config not in CONFIGS:
        raise ResultsDatasetError(f"unknown config {config!r}: one of {', '.join(CONFIGS)}")
    folder = Path(folder)
    if not folder.is_dir():
        raise ResultsDatasetError(f"{folder} is not a folder (a results dataset is a folder with contents/, details/"
                                  " and runs/)")
    return _read_config(folder, config)


def read_config_file(path: str | Path, config: str) -> pd.DataFrame:
    """One Parquet file of a config, checked as read_config checks every file (a dataset grown run by run is
    read file by file, so one damaged file costs only its own rows)."""
    if config not in CONFIGS:
        raise ResultsDatasetError(f"unknown config {config!r}: one of {', '.join(CONFIGS)}")
    return arrow_frame(_read_parquet(Path(path), config))


def _read_config(folder: Path, config: str) -> pd.DataFrame:
    import pyarrow as pa

    files = sorted((folder / config).glob("*.parquet"))
    if not files and config != "contents":  # an export without runs or scored items writes none
        return arrow_frame(config_schema(config).empty_table())
    if not files:
        raise ResultsDatasetError(f"{folder / config}: no Parquet file; expected {config}/{DATA_FILE}"
                                  " (written by `python -m evaluators export --dataset`)")
    tables = [_read_parquet(path, config) for path in files]
    return arrow_frame(pa.concat_tables(tables, promote_options="default"))


def _read_parquet(path: Path, config: str) -> pa.Table:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as problem:
        raise ResultsDatasetError(f"{path}: not a readable Parquet file ({problem}); truncated or not a results"
                                  " dataset file? Export it again") from None
    expected = fixed_columns(config)
    missing = [name for name, _ in expected if name not in table.schema.names]
    if missing:
        raise ResultsDatasetError(f"{path}: not a {config!r} table of a results dataset: missing column(s)"
                                  f" {', '.join(missing)}")
    for name, kind in expected:
        found = table.schema.field(name).type
        if found != arrow_type(kind) and found != pa.null():
            raise ResultsDatasetError(f"{path}: column {name!r} is {found}, expected {kind}")
    if config != "contents":
        extra = [name for name in table.schema.names if name not in dict(expected)]
        if extra:
            raise ResultsDatasetError(f"{path}: unknown column(s) {', '.join(extra)} in a {config!r} table"
                                      " (written by a newer toolboard?)")
    else:
        for field in table.schema:
            if field.name not in dict(expected) and field.type not in (pa.float64(), pa.int64(), pa.string(), pa.null()):
                raise ResultsDatasetError(f"{path}: metric column {field.name!r} is {field.type}, expected"
                                          " float64, int64 or string")
    return table.cast(arrow_schema((f.name, _type_name(f.type, dict(expected).get(f.name))) for f in table.schema))


def _type_name(found: pa.DataType, expected: str | None) -> str:
    """The Arrow type name a column is read as: its expected one (an all-null column takes it too)."""
    import pyarrow as pa

    if expected is not None:
        return expected
    return {pa.float64(): "float64", pa.int64(): "int64"}.get(found, "string")
