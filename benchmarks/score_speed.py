"""Time to score a whole benchmark's predictions, in both modes.

- ACEBench: all 1,023 en predictions (target: under 1 s).
- ToolBench-Static: the 1,547 derived out_of_domain steps (target: under 2 s).
The predictions are the gold answers written as model output. Figures are the best of --repeat runs
of read + score + report (data loading is timed apart).

Usage: python benchmarks/score_speed.py [--data-dir DIR] [--benchmark acebench|toolbench_static|all] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluators.benchmarks.acebench.oracle import gold_prediction  # noqa: E402
from evaluators.core.registry import get_benchmark, score_all  # noqa: E402

TARGETS = {"acebench": 1.0, "toolbench_static": 2.0}


def default_data_dir() -> Path:
    configured = os.environ.get("TOOLBOARD_DATA_DIR")
    return Path(configured) if configured else Path(__file__).resolve().parents[2] / "shared" / "data"


def gold_rows(name: str, samples: list) -> list[dict]:
    if name == "acebench":
        return [gold_prediction(s) for s in samples]
    return [{"id": s.id, "output": s.gold} for s in samples]


def measure(name: str, data_dir: Path, repeat: int) -> None:
    benchmark = get_benchmark(name)
    folder = data_dir / "acebench" if name == "acebench" else data_dir / "toolbench_static" / "derived"
    language = "en" if name == "acebench" else None
    started = time.perf_counter()
    samples = benchmark.load(folder, language=language)
    load_seconds = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "predictions.jsonl"
        path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in gold_rows(name, samples)), encoding="utf-8")
        for mode in ("official", "strict"):
            best = float("inf")
            for _ in range(repeat):
                started = time.perf_counter()
                predictions = benchmark.read_predictions(path, samples)
                scores = score_all(benchmark, samples, predictions, mode)
                benchmark.report(samples, scores, mode=mode, language=language)
                best = min(best, time.perf_counter() - started)
            target = TARGETS[name]
            print(
                f"{name:>16} {mode:>8}: read + score + report {len(samples)} predictions in {best:.3f} s "
                f"(best of {repeat}; {best / len(samples) * 1e6:.0f} µs per sample; {best / target:.2f}× the {target:g} s target)"
            )
    print(f"{name:>16}     data load: {load_seconds:.3f} s for {len(samples)} samples (not included above)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=default_data_dir(), help="folder holding acebench/ and toolbench_static/")
    parser.add_argument("--benchmark", choices=["acebench", "toolbench_static", "all"], default="all")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for name in TARGETS if args.benchmark == "all" else [args.benchmark]:
        measure(name, args.data_dir, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
