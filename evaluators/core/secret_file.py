"""A file holding an installation's secret, made once with owner-only permissions and never read half-written."""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def secret_file(path: Path, new_secret: bytes) -> bytes:
    """What `path` holds, writing `new_secret` there first when it does not exist. Written aside and linked
    into place, so two processes starting at once agree on one secret (the first one linked) and neither
    reads a half-written file."""
    if not path.exists():
        _write_aside_and_link(path, new_secret)
    return path.read_bytes()


def _write_aside_and_link(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    aside = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    descriptor = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(content)
    try:
        os.link(aside, path)
    except FileExistsError:
        pass  # another process made it first: theirs is the one
    except OSError:  # a file system without hard links
        os.replace(aside, path)
    finally:
        aside.unlink(missing_ok=True)
