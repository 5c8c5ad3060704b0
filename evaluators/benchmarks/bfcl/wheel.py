"""The pinned `bfcl-eval` wheel: found (a local copy, the cache) or downloaded once from the package
index, checked against its sha256, and read member by member as a zip (never installed, never imported)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import urllib.parse
import zipfile
from functools import lru_cache
from pathlib import Path

from evaluators.core.archive import MB, ZIP_READ_ERRORS, ByteBudget, checked_opener, download, open_member
from evaluators.core.downloads import download_failed, package_json_url
from evaluators.core.environment import PYPI_URL, declare
from evaluators.core.errors import DataError
from evaluators.core.paths import datasets_dir
from evaluators.core.public_hosts import HostNotAllowedError

PACKAGE = "bfcl-eval"
VERSION = "2026.3.23"
WHEEL_NAME = f"bfcl_eval-{VERSION}-py3-none-any.whl"
WHEEL_SHA256 = "3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a"
# The package index's JSON API base (e.g. a mirror, or a local server in tests), shared with τ²-bench's wheel.
INDEX_URL_ENV = PYPI_URL.name
# A copy of the pinned wheel already on this machine (e.g. from `pip download --no-deps bfcl-eval==2026.3.23`).
BFCL_WHEEL = declare("bfcl_wheel", "downloaded once",
                     "a local copy of the pinned bfcl-eval wheel")
WHEEL_PATH_ENV = BFCL_WHEEL.name
# Tests only: the sha256 a stand-in wheel is checked against instead of the pinned one.
BFCL_WHEEL_SHA256 = declare("bfcl_wheel_sha256", "the pinned wheel's",
                            "tests only: the sha256 a stand-in wheel is checked against")
WHEEL_SHA256_ENV = BFCL_WHEEL_SHA256.name
MAX_INDEX_ANSWER_BYTES = 4 * MB  # the JSON of one release is a few kB
MAX_MEMBER_BYTES = 64 * MB  # the largest data file in the wheel is ~3 MB
DATA_PREFIX = "bfcl_eval/data/"
INDEX_TIMEOUT = 60.0
WHAT = f"the BFCL data and prompt texts in the {PACKAGE} {VERSION} wheel"
# What else a failed download can do (the official prompt texts are read from the wheel whatever the data source).
WHEEL_ADVICE = (f"download {WHEEL_NAME} yourself and set {WHEEL_PATH_ENV} to its path (the official prompt texts are "
                "read from it whatever the data source)")


def expected_sha256() -> str:
    return (BFCL_WHEEL_SHA256.read() or WHEEL_SHA256).lower()


def cached_wheel_path() -> Path:
    return datasets_dir() / "bfcl" / expected_sha256()[:16] / WHEEL_NAME


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def index_url() -> str:
    """The project's JSON page on the package index."""
    return package_json_url(PACKAGE)


def wheel_url_from_index() -> str:
    """The wheel's download address, read from the package index's JSON API."""
    import http.client

    url = index_url()
    try:
        with checked_opener().open(url, timeout=INDEX_TIMEOUT) as response:
            raw = response.read(MAX_INDEX_ANSWER_BYTES + 1)
    except (OSError, HostNotAllowedError, http.client.HTTPException) as exc:
        raise download_failed(exc, WHAT, url, WHEEL_ADVICE, INDEX_TIMEOUT, avoidable=False) from None
    if len(raw) > MAX_INDEX_ANSWER_BYTES:
        raise DataError(f"the package index's answer is larger than {MAX_INDEX_ANSWER_BYTES // MB} MB", url)
    try:
        page = json.loads(raw)
        files = [*page.get("releases", {}).get(VERSION, []), *page.get("urls", [])]
        entry = next(item for item in files if item.get("filename") == WHEEL_NAME)
        link = entry["url"]
        if not isinstance(link, str):  # urljoin would answer the index's own address for a null link
            raise TypeError(f"the wheel's url is {type(link).__name__}")
        return urllib.parse.urljoin(url, link)
    except (ValueError, KeyError, TypeError, AttributeError, StopIteration):
        raise DataError(f"the package index lists no {WHEEL_NAME} for {PACKAGE} {VERSION}", url) from None


def check_sha256(path: Path, what: str) -> None:
    found = file_sha256(path)
    if found != expected_sha256():
        raise DataError(f"{what} has sha256 {found}, not the pinned {expected_sha256()} of {WHEEL_NAME}", path)


def download_wheel() -> Path:
    """Download the wheel into the cache; a file with the wrong sha256 is refused and not kept."""
    target = cached_wheel_path()
    download(wheel_url_from_index(), target, WHEEL_NAME, what=WHAT, advice=WHEEL_ADVICE, avoidable=False)
    try:
        check_sha256(target, "the downloaded wheel")
    except DataError:
        target.unlink(missing_ok=True)
        raise
    return target


@lru_cache(maxsize=8)
def _checked(path_text: str, size: int, modified_ns: int, sha256: str) -> None:
    """Hash a wheel file once per process (and again if the file changes)."""
    check_sha256(Path(path_text), f"the wheel {WHEEL_PATH_ENV} names" if BFCL_WHEEL.read() else "the cached wheel")


def _verified(path: Path) -> Path:
    stat = path.stat()
    _checked(str(path.resolve()), stat.st_size, stat.st_mtime_ns, expected_sha256())
    return path


# Where pinned_wheel found a verified wheel, by what decides where it looks: path, size and time of that file.
_FOUND: dict[tuple[str | None, str | None, str], tuple[Path, int, int]] = {}


def pinned_wheel() -> Path:
    """The verified wheel: the copy named by TOOLBOARD_BFCL_WHEEL, else the cached one, else downloaded once. Asked
    for each request a run builds: a wheel verified before is taken again after one `stat` that shows it unchanged
    (resolving its path and checking it again cost ~0.1 ms a call)."""
    where = (BFCL_WHEEL.read(), BFCL_WHEEL_SHA256.read(), str(cached_wheel_path()))
    known = _FOUND.get(where)
    if known is not None:
        path, size, modified_ns = known
        with contextlib.suppress(OSError):
            stat = path.stat()
            if (stat.st_size, stat.st_mtime_ns) == (size, modified_ns):
                return path
    path = _pinned_wheel()
    stat = path.stat()
    _FOUND[where] = (path, stat.st_size, stat.st_mtime_ns)
    return path


def _pinned_wheel() -> Path:
    given = BFCL_WHEEL.read()
    if given:
        path = Path(given).expanduser()
        if not path.is_file():
            raise DataError(f"{WHEEL_PATH_ENV} names no file", path)
        return _verified(path)
    cached = cached_wheel_path()
    if cached.is_file():
        try:
            return _verified(cached)
        except DataError:
            cached.unlink(missing_ok=True)  # damaged or replaced: download again
    return _verified(download_wheel())


def read_member(wheel: Path, name: str) -> bytes:
    """One file of the wheel, read with the project's zip limits; a missing member is a DataError."""
    where = f"{wheel}:{name}"
    try:
        with zipfile.ZipFile(wheel) as bundle:
            try:
                info = bundle.getinfo(name)
            except KeyError:
                raise DataError("file not found in the wheel", where) from None
            with open_member(bundle, info, where, ByteBudget(MAX_MEMBER_BYTES)) as stream:
                return stream.read()
    except ZIP_READ_ERRORS as exc:
        raise DataError(f"the wheel is damaged ({exc})", where) from None
    except OSError as exc:
        raise DataError(f"the wheel cannot be read ({exc})", wheel) from None



def has_member(wheel: Path, name: str) -> bool:
    """Whether the wheel holds a file of that name (a damaged wheel is a DataError)."""
    try:
        with zipfile.ZipFile(wheel) as bundle:
            return name in bundle.NameToInfo
    except ZIP_READ_ERRORS as exc:
        raise DataError(f"the wheel is damaged ({exc})", wheel) from None
    except OSError as exc:
        raise DataError(f"the wheel cannot be read ({exc})", wheel) from None
