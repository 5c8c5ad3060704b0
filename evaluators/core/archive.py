"""Downloading a zip archive into the cache and unpacking it safely."""

from __future__ import annotations

import shutil
import tempfile
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from tqdm import tqdm

from evaluators.core.errors import DataError

_CHUNK = 1 << 16


def download(url: str, target: Path, description: str, timeout: float = 60.0) -> Path:
    """Stream `url` to `target` with a progress bar; the file appears only when complete."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, partial.open("wb") as out:
            total = int(response.headers.get("Content-Length") or 0) or None
            with tqdm(total=total, unit="B", unit_scale=True, desc=description, leave=False) as bar:
                while chunk := response.read(_CHUNK):
                    out.write(chunk)
                    bar.update(len(chunk))
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise DataError(f"download of {url} failed: {exc}") from None
    partial.replace(target)
    return target


@contextmanager
def staged_folder(destination: Path) -> Iterator[Path]:
    """A scratch folder beside `destination` that replaces it only if the block completes, so a
    half-unpacked folder is never left in place."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".unpack-", dir=destination.parent))
    try:
        yield staging
        if destination.exists():
            shutil.rmtree(destination)
        staging.replace(destination)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def safe_extract(archive: Path, destination: Path, keep_prefix: str | None = None) -> Path:
    """Unpack a zip, refusing members that would land outside `destination`.

    The single top folder that repository archives carry is dropped; with `keep_prefix`,
    only members under that folder (after dropping the top folder) are unpacked.
    The result appears atomically: a half-unpacked folder is never left in place.
    """
    try:
        bundle = zipfile.ZipFile(archive)
    except zipfile.BadZipFile:
        raise DataError("not a valid zip archive", archive) from None
    with staged_folder(destination) as staging, bundle:
        names = [n for n in bundle.namelist() if n.strip("/")]
        tops = {PurePosixPath(n).parts[0] for n in names}
        drop_top = len(tops) == 1 and all("/" in n for n in names)
        for info in bundle.infolist():
            parts = PurePosixPath(info.filename).parts
            if drop_top:
                parts = parts[1:]
            if not parts:
                continue
            if info.filename.startswith("/") or ".." in parts or "\\" in info.filename:
                raise DataError(f"unsafe path in archive: {info.filename!r}", archive)
            relative = PurePosixPath(*parts)
            if keep_prefix and not str(relative).startswith(keep_prefix.rstrip("/") + "/"):
                continue
            out_path = staging.joinpath(*relative.parts)
            if info.is_dir():
                out_path.mkdir(parents=True, exist_ok=True)
                continue
            out_path.parent.mkdir(parents=True, exist_ok=True)
            with bundle.open(info) as src, out_path.open("wb") as dst:
                shutil.copyfileobj(src, dst)
    return destination
