"""Time to score all 1,023 en ACEBench predictions (target: under 1 s), in both modes.

Usage: python benchmarks/score_speed.py [--data-dir DIR] [--repeat N]
The predictions are the gold answers written as model output (see evaluators/acebench/oracle.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluators.acebench.oracle import gold_prediction  # noqa: E402
from evaluators.core.registry import get_benchmark, score_all  # noqa: E402

TARGET_SECONDS = 1.0


def default_data_dir() -> Path:
    import os

    configured = os.environ.get("TOOLBOARD_DATA_DIR")
    return Path(configured) if configured else Path(__file__).resolve().parents[2] / "shared" / "data"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data-dir", type=Path, default=default_data_dir())
    parser.add_argument("--language", default="en")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    benchmark = get_benchmark("acebench")
    started = time.perf_counter()
    samples = benchmark.load(args.data_dir, language=args.language)
    load_seconds = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "predictions.jsonl"
        path.write_text("".join(json.dumps(gold_prediction(s), ensure_ascii=False) + "\n" for s in samples), encoding="utf-8")
        for mode in ("official", "strict"):
            best = float("inf")
            for _ in range(args.repeat):
                started = time.perf_counter()
                predictions = benchmark.read_predictions(path, samples)
                scores = score_all(benchmark, samples, predictions, mode)
                benchmark.report(samples, scores, mode=mode, language=args.language)
                best = min(best, time.perf_counter() - started)
            print(
                f"{mode:>8}: read + score + report {len(samples)} {args.language} predictions in {best:.3f} s "
                f"(best of {args.repeat}; {best / len(samples) * 1e6:.0f} µs per sample; "
                f"{best / TARGET_SECONDS:.2f}× the {TARGET_SECONDS:.0f} s target)"
            )
    print(f"   data load: {load_seconds:.3f} s for {len(samples)} samples (not included above)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
