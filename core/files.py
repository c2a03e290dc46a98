"""Writing the files SiliconBench makes (exports, reports, caches) so that a failure half-way
(a full disk, a kill) never destroys the file that was there: the new text goes to a temporary
file beside it, and only a complete, flushed file replaces the old one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> None:
    """Replace `path` with `text` all at once; OSError leaves `path` as it was."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        # newline="": text is written as given (the CSVs' CRLF stays CRLF on any OS);
        # errors="replace": a character UTF-8 cannot hold (a lone surrogate) costs that
        # character, never the file.
        with os.fdopen(fd, "w", encoding=encoding, errors="replace", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())  # the rename must not publish blocks still in the page cache
        try:
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; exports are ordinary files
        except OSError:
            pass
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
