"""Time to score BFCL's Java and JavaScript answers, whose decoding runs tree-sitter in a child process
(evaluators/benchmarks/bfcl/native_parsing.py), and what one hostile answer costs.

- score: read + score + report of simple_java and simple_javascript (150 items in the real data), the answers being
  the gold answers written as Java / JavaScript (tests/bfcl_oracle.py), best of --repeat, in both modes; with the
  decode alone in this process beside it (decode_java / decode_javascript), so the difference per sample is what
  the isolation costs (one pipe round trip per answer, one more per strict JavaScript dict or array value).
- hostile: the score of one 1.4 MB JavaScript answer (bounded: refused before parsing) and of one 64 KiB answer
  (the largest that is parsed).
Without the real data (../shared/data/bfcl or TOOLBOARD_DATA_DIR) the test fixtures' two items are used.

Usage: python benchmarks/bfcl_native_speed.py [--data-dir DIR] [--repeat N]
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

from evaluators.core.registry import get_benchmark, score_all  # noqa: E402
from evaluators.core.types import Prediction  # noqa: E402
from tests.bfcl_oracle import oracle_text  # noqa: E402

CATEGORIES = ["simple_java", "simple_javascript"]


def default_data_dir() -> Path | None:
    configured = os.environ.get("TOOLBOARD_DATA_DIR")
    folder = (Path(configured) if configured else Path(__file__).resolve().parents[2] / "shared" / "data") / "bfcl"
    return folder if folder.is_dir() else None


def in_process_decode_seconds(samples: list, texts: dict[str, str], mode: str) -> float | None:
    try:
        from evaluators.benchmarks.bfcl.decode_common import DecodeFailure
        from evaluators.benchmarks.bfcl.decode_java import decode_java
        from evaluators.benchmarks.bfcl.decode_javascript import decode_javascript
    except ImportError:
        return None
    started = time.perf_counter()
    for sample in samples:
        decode = decode_java if sample.subset == "simple_java" else decode_javascript
        try:
            decode(texts[sample.id], mode)
        except DecodeFailure:
            pass
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=default_data_dir(), help="a folder like bfcl_eval/data/")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    benchmark = get_benchmark("bfcl")
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.data_dir
        if folder is None:
            from tests.bfcl_fixtures import write_bfcl_folder

            folder = write_bfcl_folder(Path(tmp) / "bfcl")
        samples = benchmark.load(folder, subsets=CATEGORIES)
        texts = {s.id: oracle_text(s.subset, s.input["function"], s.gold) for s in samples}
        path = Path(tmp) / "predictions.jsonl"
        path.write_text("".join(json.dumps({"id": i, "output": t}) + "\n" for i, t in texts.items()), encoding="utf-8")
        started = time.perf_counter()
        benchmark.score(samples[0], Prediction(samples[0].id, output=texts[samples[0].id]), "official")
        print(f"first score (starts the parser's child, if any): {time.perf_counter() - started:.3f} s")
        for mode in ("official", "strict"):
            best = decode_best = float("inf")
            for _ in range(args.repeat):
                started = time.perf_counter()
                predictions = benchmark.read_predictions(path, samples)
                scores = score_all(benchmark, samples, predictions, mode)
                benchmark.report(samples, scores, mode=mode)
                best = min(best, time.perf_counter() - started)
                decoded = in_process_decode_seconds(samples, texts, mode)
                decode_best = min(decode_best, decoded if decoded is not None else float("inf"))
            correct = sum(score.correct for score in scores)
            print(f"{mode:>8}: read + score + report {len(samples)} Java/JavaScript answers in {best:.3f} s "
                  f"({best / len(samples) * 1e6:.0f} µs per sample, {correct} correct; best of {args.repeat}); "
                  f"the decode alone in this process: {decode_best / len(samples) * 1e6:.0f} µs per sample")
    fixture_dir = Path(tempfile.mkdtemp())
    from tests.bfcl_fixtures import write_bfcl_folder

    sample = benchmark.load(write_bfcl_folder(fixture_dir), subsets=["simple_javascript"])[0]
    for label, answer in (("1.4 MB", "paintCanvas(colour='teal', points=[" + "1," * 700_000 + "1])"),
                          ("64 KiB", "paintCanvas(colour='teal', points=[" + "1," * 32_700 + "1])")):
        for mode in ("official", "strict"):
            started = time.perf_counter()
            verdict = benchmark.score(sample, Prediction(sample.id, output=answer), mode)
            print(f"one {label} JavaScript answer, {mode}: {time.perf_counter() - started:.3f} s ({verdict.rule})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
