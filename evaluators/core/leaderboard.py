"""Published results shipped with the project (`leaderboard_data/`), shown as reference rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evaluators.core.errors import DataError

LEADERBOARD_DIR = Path(__file__).resolve().parents[2] / "leaderboard_data"


def load_published(benchmark: str, folder: Path = LEADERBOARD_DIR) -> dict[str, Any]:
    """The benchmark's published table: its source, caveats and rows (metric values as fractions)."""
    path = folder / f"{benchmark}.json"
    if not path.is_file():
        raise DataError("no published results for this benchmark", path)
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"invalid JSON: {exc.msg}", path, exc.lineno) from None
    for index, row in enumerate(table.get("rows", [])):
        values = row.get("summary", row.get("metrics"))
        if not isinstance(row.get("model"), str) or not isinstance(values, dict):
            raise DataError(f"row {index} needs 'model' and 'summary' (or 'metrics')", path)
    return table
