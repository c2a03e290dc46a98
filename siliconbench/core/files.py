"""Writing the files SiliconBench makes (exports, reports, caches) so that a failure half-way
(a full disk, a kill) never destroys the file that was there: the new text goes to a temporary
file beside it, and only a complete, flushed file replaces the old one. Reading the files
SiliconBench did not make whole (imports, caches, names, settings): only a regular file of a
sane size is read, so a FIFO never blocks and a link to /dev/zero never fills memory."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


class NotReadable(OSError):
    """A file that is not a regular file or is larger than its kind ever is; the message is
    one sentence for the user."""


def read_small(path: str | os.PathLike, limit: int, what: str = "file",
               encoding: str | None = "utf-8") -> str | bytes:
    """The whole of `path` when it is a regular file of at most `limit` bytes: the file is
    opened without blocking (a FIFO opened for reading would wait for a writer for good) and
    checked with fstat on the open descriptor (no race with a swap between check and read);
    NotReadable otherwise, FileNotFoundError/OSError as open raises them. `encoding=None`
    gives bytes; text is decoded with errors="replace"."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotReadable(f"{path} is not a regular file, so SiliconBench does not read "
                              f"it as a {what}.")
        if info.st_size > limit:
            raise NotReadable(f"{path} holds {info.st_size:,} bytes, more than any {what} "
                              f"({limit:,}); SiliconBench does not read it.")
        os.set_blocking(fd, True)
        chunks, left = [], limit + 1
        while left > 0:          # a file that grows while it is read stops at the limit
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise NotReadable(f"{path} grew past {limit:,} bytes while it was read; "
                              "SiliconBench does not read it.")
    finally:
        os.close(fd)
    return data if encoding is None else data.decode(encoding, errors="replace")


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
