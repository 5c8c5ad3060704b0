"""Runs one of the official ACEBench scripts (`generate.py` or `eval_main.py` of the pinned checkout) unchanged, in
the ACEBench venv, for benchmarks/official_side_by_side.py. Never imported by the project: it is started as
`VENV_PYTHON -s -P benchmarks/acebench_official_run.py CHECKOUT STAND_INS SCRIPT -- ARGS...` with the working
directory a fresh run folder (the scripts read `./data_all/` and write `./result_all/` and `./score_all/`).

The checkout goes first on sys.path (as when the script is started from its own folder) and STAND_INS last: the
scripts import `vllm` and `google.generativeai` at module level (model_inference/model_infer.py) for local and
Gemini models that an API model never touches; those two are stand-in modules, not installed (vllm would bring a
CUDA build of torch).
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path


def main(argv: list[str]) -> None:
    checkout, stand_ins, script, separator, *script_args = argv
    if separator != "--":
        raise SystemExit("usage: acebench_official_run.py CHECKOUT STAND_INS SCRIPT -- ARGS...")
    sys.path.insert(0, checkout)
    sys.path.append(stand_ins)
    path = Path(checkout) / script
    sys.argv = [str(path), *script_args]
    runpy.run_path(str(path), run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
