"""Downloading a zip archive into the cache and unpacking it safely: every byte unpacked is
counted as it is read, since a zip's headers (sizes, checksums) can lie."""

from __future__ import annotations

import errno
import io
import shutil
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING, Any

from evaluators.core.downloads import download_failed
from evaluators.core.errors import DataError
from evaluators.core.public_hosts import HostNotAllowedError, check_redirect_hop

if TYPE_CHECKING:
    import urllib.request

    from _typeshed import WriteableBuffer

_CHUNK = 1 << 16
MB = 1 << 20  # sizes in messages are in MiB, as the limits are written
MAX_EXTRACTED_BYTES = 512 * MB  # a benchmark's data archive (today's are ~10 MB)
MAX_COMPRESSION_RATIO = 200  # per member: JSON deflates ~10:1, a zip bomb 1000:1
RATIO_FLOOR_BYTES = MB  # a tiny member (padding, blank lines) may compress better; it is harmless
# Deflate output is read in bounded steps; bzip2 and LZMA are unpacked a whole block at a time,
# which a bomb can make gigabytes, and no benchmark or results archive uses them.
READABLE_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate"}
ZIP_READ_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError)
# A download that fails writing its file here: said as this machine's problem, not the host's.
_DISK_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS}


class ByteBudget:
    """Bytes still allowed to be read from one input (every member of a zip, every file of a folder)."""

    def __init__(self, limit: int, error_cls: type[DataError] = DataError):
        self.limit = limit
        self.left = limit
        self.error_cls = error_cls

    def spend(self, count: int, where: str | Path) -> None:
        self.left -= count
        if self.left < 0:
            raise self.error_cls(f"unpacks to more than {self.limit / MB:.3g} MB; at most that much is read", where)


def member_limit(info: zipfile.ZipInfo) -> int:
    """The most a member may unpack to: a ratio cap over its compressed size, whatever it declares."""
    return max(info.compress_size * MAX_COMPRESSION_RATIO, RATIO_FLOOR_BYTES)


def check_member(info: zipfile.ZipInfo, where: str | Path, error_cls: type[DataError] = DataError) -> None:
    """Refuse, before reading it, a member we cannot read safely or whose header admits a bomb."""
    if info.flag_bits & 0x1:
        raise error_cls("the file is encrypted; zip it without a password", where)
    if info.compress_type not in READABLE_METHODS:
        raise error_cls(f"compression method {info.compress_type} is not read; zip it with deflate", where)
    if info.file_size > member_limit(info):
        raise error_cls(f"unpacks {info.file_size / max(info.compress_size, 1):.0f}x its compressed size "
                        f"(at most {MAX_COMPRESSION_RATIO}x is read)", where)


class CountedReader(io.RawIOBase):
    """A binary stream that raises as soon as more than `limit` bytes (and more than the shared
    budget) have come out of it, so nothing is unpacked further than we mean to read."""

    def __init__(self, source: IO[bytes], where: str | Path, budget: ByteBudget, limit: int | None = None):
        self._source = source
        self._where = where
        self._budget = budget
        self._limit = limit
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        data = self._source.read(len(view))
        count = len(data)
        view[:count] = data
        self.count += count
        if self._limit is not None and self.count > self._limit:
            raise self._budget.error_cls(f"unpacks more than {MAX_COMPRESSION_RATIO}x its compressed size "
                                         "(a zip bomb?); refused", self._where)
        self._budget.spend(count, self._where)
        return count


def open_member(bundle: zipfile.ZipFile, info: zipfile.ZipInfo, where: str | Path, budget: ByteBudget) -> io.BufferedReader:
    """A counted, buffered stream of one member, checked first."""
    check_member(info, where, budget.error_cls)
    return io.BufferedReader(CountedReader(bundle.open(info), where, budget, member_limit(info)), buffer_size=_CHUNK)


def checked_opener() -> urllib.request.OpenerDirector:
    """A urllib opener whose redirects go, on a public deployment, only to public hosts."""
    import urllib.request  # here: only a download needs it, and it costs every command ~20 ms to import

    class CheckedRedirects(urllib.request.HTTPRedirectHandler):
        """Follows a redirect only to a host a public deployment may reach (the data's own addresses are set by
        the operator; where they redirect to is not)."""

        def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
            check_redirect_hop(newurl)
            return super().redirect_request(req, fp, code, msg, headers, newurl)

    return urllib.request.build_opener(CheckedRedirects)


def download(url: str, target: Path, description: str, timeout: float = 60.0, what: str | None = None,
             advice: str = "", avoidable: bool = True) -> Path:
    """Stream `url` to `target` with a progress bar; the file appears only when complete. A failure is a
    DownloadFailed naming `what` (default: `description`), the URL's host and the reason in a few words, with
    the caller's `advice` and `avoidable` (see core/downloads.py); a file that cannot be written here is a
    DataError naming it."""
    import http.client

    from tqdm import tqdm

    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    try:
        with checked_opener().open(url, timeout=timeout) as response, partial.open("wb") as out:
            total = int(response.headers.get("Content-Length") or 0) or None
            with tqdm(total=total, unit="B", unit_scale=True, desc=description, leave=False) as bar:
                while chunk := response.read(_CHUNK):
                    out.write(chunk)
                    bar.update(len(chunk))
    except (OSError, HostNotAllowedError, http.client.HTTPException) as exc:
        partial.unlink(missing_ok=True)
        if isinstance(exc, OSError) and (exc.filename == str(partial) or exc.errno in _DISK_ERRORS):
            # this machine's file, not the download
            raise DataError(f"cannot be written ({exc.strerror or type(exc).__name__})", partial) from None
        raise download_failed(exc, what or description, url, advice, timeout, avoidable) from None
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
    except (zipfile.BadZipFile, OSError):
        raise DataError("not a valid zip archive", archive) from None
    budget = ByteBudget(MAX_EXTRACTED_BYTES)
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
            where = f"{archive}:{info.filename}"
            try:
                with open_member(bundle, info, where, budget) as src, out_path.open("wb") as dst:
                    shutil.copyfileobj(src, dst, _CHUNK)
            except ZIP_READ_ERRORS as exc:
                raise DataError(f"the archive is damaged ({exc})", where) from None
    return destination
