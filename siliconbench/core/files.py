"""Reading files SiliconBench did not make whole, and writing files, safely. Not every file
goes through here: the store's SQLite database, the password file (pgpass.py writes it the
same way, mode 0600), the files shipped in the package (siliconbench.resources) and
telemetry's /sys counters are read or written where they are used.

Reading a file SiliconBench did not make whole (imports, caches, names, settings, an archive,
a model): only a regular file is read, checked with fstat on the descriptor it was opened
with (no race with a swap between check and read), opened without blocking (a FIFO opened
for reading would wait for a writer for good) and, for small files, of a sane size, so a
FIFO never blocks and a link to /dev/zero never fills memory (`open_regular`, `read_small`).

Writing (exports, reports, caches, the help page): one rule for every path written, through
`atomic_file` (`write_atomic`) or, for a log, `open_append`: never through a link, never over
a device node or a FIFO. The new bytes go to a temporary file beside the old one, are flushed
to disk, and only then renamed over it, so a failure half-way (a full disk, a kill) never
destroys the file that was there, and a link in the file's place is replaced, never followed
(its target is not touched); a writer killed outright leaves a hidden part that the next write
of that name removes. A FIFO or a terminal (`-o /dev/stdout`, `-o /dev/null`) is written as it
is, never replaced; a folder, another device or a socket is refused in a sentence. Folders of
SiliconBench's own (a cache) are real folders, never links (`own_folder`).
tests/core/test_write_sites.py finds every write in the package and holds it to this.

Caches SiliconBench builds (GGUF models, Core ML packages) keep a fingerprint (`fingerprint`:
each regular file's size, modification time and sha256) written when they are built;
`damage` says why one no longer matches it, so the cache is built again."""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

CHUNK = 1 << 20


class NotReadable(OSError):
    """A file that is not a regular file or is larger than its kind ever is; the message is
    one sentence for the user."""


class NotWritable(OSError):
    """A path SiliconBench will not write over (a folder there); str() is one sentence for
    the user, and strerror the same without its full stop (callers that say "Cannot write
    X: {e.strerror}." read it)."""

    def __init__(self, message: str) -> None:
        super().__init__(errno.EISDIR, message.rstrip("."))

    def __str__(self) -> str:
        return self.strerror + "."


def kind(mode: int) -> str:
    """What a non-regular file is, as a sentence names it."""
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a link")):
        if test(mode):
            return name
    return "not a regular file"


def not_regular(path: str | os.PathLike) -> str | None:
    """None when `path` is absent or (through any links) a regular file; else what it is:
    "a FIFO", "a folder", "a device", "a link to nothing" (never opened, never blocks)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "a link to nothing" if os.path.islink(path) else None
    except OSError as e:
        return f"unreadable ({e.strerror})"
    return None if stat.S_ISREG(mode) else kind(mode)


def _open_fd(path, flags: int, refuse: Callable[[str], OSError]) -> int:
    """os.open(path, flags) of a regular file only, without blocking (a FIFO opened for
    reading would wait for a writer for good; for writing, with no reader, it is ENXIO), then
    checked with fstat on the descriptor itself (nothing swapped in between the check and the
    use is touched); refuse(what it is) is raised for anything else."""
    try:
        fd = os.open(path, flags | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as e:
        if flags & getattr(os, "O_NOFOLLOW", 0) and os.path.islink(path):  # ELOOP / EMLINK
            raise refuse("a link") from None
        if isinstance(e, IsADirectoryError):
            raise refuse("a folder") from None
        if e.errno == errno.ENXIO:
            raise refuse("a FIFO") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise refuse(kind(mode))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_checked(path, what: str, follow: bool) -> int:
    def refuse(it: str) -> NotReadable:
        it = it if it == "a link" else "not a regular file"
        return NotReadable(f"{path} is {it}, so SiliconBench does not read it as a {what}.")
    nofollow = 0 if follow else getattr(os, "O_NOFOLLOW", 0)
    return _open_fd(path, os.O_RDONLY | nofollow, refuse)


def open_regular(path: str | os.PathLike, what: str = "file", follow: bool = True) -> BinaryIO:
    """`path` opened for reading in binary when it is a regular file (of any size: an archive,
    a model); NotReadable otherwise. `follow=False`: a link is refused too (SiliconBench's
    own caches hold no links)."""
    return os.fdopen(_open_checked(path, what, follow), "rb")


def read_small(path: str | os.PathLike, limit: int, what: str = "file",
               encoding: str | None = "utf-8", follow: bool = True) -> str | bytes:
    """The whole of `path` when it is a regular file of at most `limit` bytes (open_regular);
    NotReadable otherwise, FileNotFoundError/OSError as open raises them. `encoding=None`
    gives bytes; text is decoded with errors="replace"."""
    with open_regular(path, what, follow) as f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise NotReadable(f"{path} holds {size:,} bytes, more than any {what} "
                              f"({limit:,}); SiliconBench does not read it.")
        data = f.read(limit + 1)     # a file that grows while it is read stops at the limit
        if len(data) > limit:
            raise NotReadable(f"{path} grew past {limit:,} bytes while it was read; "
                              "SiliconBench does not read it.")
    return data if encoding is None else data.decode(encoding, errors="replace")


def open_append(path: str | os.PathLike, what: str, encoding: str = "utf-8",
                errors: str | None = None):
    """`path` opened to append text (a log), created where absent: only a regular file, never
    through a link (a link to the user's file would have the log appended to it), opened
    without blocking (a FIFO with no reader: ENXIO) and checked on the descriptor itself, so
    nothing swapped in between the check and the open is written to. NotWritable otherwise."""
    fd = _open_fd(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0),
                  lambda it: NotWritable(f"{path} is {it}, so SiliconBench does not write its "
                                         f"{what} there."))
    return os.fdopen(fd, "a", encoding=encoding, errors=errors)


def _refuse_folder(path: Path) -> None:
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        raise NotWritable(f"{path} is a folder, so SiliconBench does not write a file there; "
                          "move it aside or choose another name.")


# The process's own descriptors, named as a shell names them: `-o /dev/stdout` writes to
# what the shell opened there (a pipe, a terminal, a file), as it is.
_OWN_FD = re.compile(r"^/(?:dev/(?:fd/(\d+)|(stdout)|(stderr))|proc/(?:self|(\d+))/fd/(\d+))$")


def _own_descriptor(path: Path) -> int | None:
    m = _OWN_FD.match(str(path))
    if m is None or (m.group(4) and int(m.group(4)) != os.getpid()):
        return None
    return int(m.group(1) or m.group(5) or (1 if m.group(2) else 2))


def _stream(path: Path) -> int | None:
    """A descriptor to write `path` to as it is, where it is not a file to replace: one of
    this process's own descriptors (/dev/stdout, /dev/fd/N), a FIFO or pipe that a reader
    holds open, a terminal or the null device; None for a regular file or nothing (replaced
    whole by atomic_file, a link there replaced, never followed). NotWritable, one sentence,
    for anything else: another device (a disk, /dev/mem), a socket, a FIFO no one reads."""
    fd = _own_descriptor(path)
    if fd is not None:
        try:
            return os.dup(fd)
        except OSError:
            raise NotWritable(f"{path} is not open in this process, so SiliconBench "
                              "cannot write there.") from None
    try:
        info = os.stat(path)              # through links: what a write would reach
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        if e.errno == errno.ELOOP:        # a link to itself: replaced like any link
            return None
        raise
    if stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode):
        return None                       # replaced whole; a folder is refused by the caller
    what = kind(info.st_mode)
    if stat.S_ISFIFO(info.st_mode) or stat.S_ISCHR(info.st_mode):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
                         | getattr(os, "O_CLOEXEC", 0))
        except OSError as e:
            if e.errno == errno.ENXIO:    # a FIFO with no reader: a write would wait for good
                raise NotWritable(f"{path} is a FIFO that nothing reads, so SiliconBench "
                                  "does not write there.") from None
            raise
        try:
            now = os.fstat(fd)
            fine = (now.st_ino, now.st_dev) == (info.st_ino, info.st_dev) and (
                stat.S_ISFIFO(now.st_mode) or os.isatty(fd) or _is_null(now))
            if fine:
                os.set_blocking(fd, True)
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    raise NotWritable(f"{path} is {what}, so SiliconBench does not write there; choose a "
                      "file's name.")


def _is_null(info: os.stat_result) -> bool:
    try:
        null = os.stat(os.devnull)
    except OSError:
        return False
    return stat.S_ISCHR(info.st_mode) and info.st_rdev == null.st_rdev


_PART = ".part"


def _sweep_parts(path: Path) -> None:
    """Remove what a writer killed outright (kill -9, a power cut) left of `path`: its hidden
    `.NAME.*.part` files that no live writer holds. A writer holds an flock on its part file
    for as long as it writes (atomic_file); the lock goes with the process, so a part that can
    be locked is a dead writer's."""
    try:
        import fcntl
    except ImportError:           # no flock: nothing can tell a dead writer's part
        return
    prefix = f".{path.name}."
    try:
        entries = [e.name for e in os.scandir(path.parent)
                   if e.name.startswith(prefix) and e.name.endswith(_PART)]
    except OSError:
        return
    for name in entries:
        part = path.parent / name
        try:
            fd = os.open(part, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
                         | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            continue
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                continue
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.path.samestat(os.fstat(fd), os.lstat(part)):
                os.unlink(part)           # still ours to take, under the lock
        except OSError:
            pass                          # a live writer holds it
        finally:
            os.close(fd)


def _new_part(path: Path) -> tuple[int, str]:
    """A fresh part file beside `path`, created and flock-ed (see _sweep_parts); made again
    should a sweeper have removed it between the two."""
    import tempfile
    while True:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=_PART, dir=path.parent)
        try:
            import fcntl
            fcntl.flock(fd, fcntl.LOCK_EX)
        except ImportError:
            return fd, tmp
        if os.fstat(fd).st_nlink:
            return fd, tmp
        os.close(fd)


@contextmanager
def atomic_file(path: str | os.PathLike, own: bool = False) -> Iterator[BinaryIO]:
    """A binary file to write `path`'s new contents to. The one way SiliconBench writes a
    file: never through a link, never over a device node or a FIFO.

    A regular file or nothing at `path`: a temporary file beside it, flushed to disk and
    renamed over `path` when the block ends without an error (a link at `path` is replaced,
    its target untouched), removed otherwise; the parts a killed writer left are removed.
    A path the user named (an export): a FIFO or pipe that is read, a terminal, the null
    device or the process's own descriptor (/dev/stdout) is written as it is, never replaced;
    another device, a socket, a FIFO nothing reads is NotWritable, one sentence. `own`: a
    file of SiliconBench's own in its own folder (a cache, the help page), where anything but
    a regular file is damage: a FIFO, a device node or a link there is replaced like a file
    (the link itself, never its target). A folder: NotWritable either way."""
    path = Path(path)
    fd = None if own else _stream(path)
    if fd is not None:
        with os.fdopen(fd, "wb") as f:
            yield f
        return
    _refuse_folder(path)
    _sweep_parts(path)
    fd, tmp = _new_part(path)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())  # the rename must not publish blocks still in the page cache
            try:
                os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; exports are ordinary
            except OSError:
                pass
            try:
                os.replace(tmp, path)             # under the part's lock: no sweeper takes it
            except IsADirectoryError:   # a folder put there since the check
                _refuse_folder(path)
                raise
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_atomic(path: str | os.PathLike, data: str | bytes, encoding: str = "utf-8",
                 own: bool = False) -> None:
    """Replace `path` with `data` all at once (atomic_file: never through a link; a FIFO or a
    device written as it is or refused, or, `own`, replaced); OSError leaves `path` as it was. Text is written as given (the
    CSVs' CRLF stays CRLF on any OS); a character the encoding cannot hold (a lone surrogate)
    costs that character, never the file."""
    if isinstance(data, str):
        data = data.encode(encoding, errors="replace")
    with atomic_file(path, own) as f:
        f.write(data)


def own_folder(folder: str | os.PathLike) -> Path:
    """A folder SiliconBench keeps its own files in (a cache under the data folder), made where
    absent: a real folder, never a link (files would be written wherever it points) nor a FIFO
    or a file; anything else in its place is removed (a link itself, never its target) and the
    folder made afresh. Its parents are the user's business and are not looked at."""
    folder = Path(folder)
    try:
        mode = os.lstat(folder).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISDIR(mode):
        remove(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if not stat.S_ISDIR(os.lstat(folder).st_mode):   # swapped again since: give up
        raise NotWritable(f"{folder} is not a folder, so SiliconBench does not write there.")
    return folder


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# ---------------------------------------------------------------- caches SiliconBench builds

def sha256_of(f: BinaryIO) -> str:
    import hashlib
    digest = hashlib.sha256()
    while chunk := f.read(CHUNK):
        digest.update(chunk)
    return digest.hexdigest()


def _entries(root: Path) -> Iterator[tuple[str, Path]]:
    """(name relative to root, path) of every file of a cache: root itself when it is a file,
    else every entry under the folder (links and all; nothing is followed)."""
    if not os.path.isdir(root) or os.path.islink(root):
        yield "", root
        return
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names) + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            full = Path(folder) / name
            yield str(full.relative_to(root)), full


def fingerprint(root: str | os.PathLike) -> dict[str, dict]:
    """Each file of a cache SiliconBench just built (a file, or a folder of files): its size,
    modification time and sha256, keyed by its path under `root` ("" for a file)."""
    out = {}
    for name, full in _entries(Path(root)):
        with open_regular(full, "cache file", follow=False) as f:
            info = os.fstat(f.fileno())
            out[name] = {"size": info.st_size, "mtime_ns": info.st_mtime_ns,
                         "sha256": sha256_of(f)}
    return out


def damage(root: str | os.PathLike, recorded: object) -> str | None:
    """Why the cache at `root` is not what `fingerprint` recorded when it was built, in a few
    words; None when it is. A file whose size and modification time are the recorded ones is
    taken as it was (reading gigabytes on every run would cost more than the run); one whose
    time changed is read again and held to its sha256."""
    if not isinstance(recorded, dict) or not recorded or not all(
            isinstance(v, dict) and isinstance(v.get("size"), int)
            and isinstance(v.get("sha256"), str) for v in recorded.values()):
        return "its checksum record is missing or unreadable"
    root = Path(root)
    try:
        mode = os.lstat(root).st_mode
    except FileNotFoundError:
        return "it is missing"
    if "" not in recorded and not stat.S_ISDIR(mode):
        return f"it is {'a file' if stat.S_ISREG(mode) else kind(mode)}, not a folder"
    found = {name for name, _ in _entries(root)}
    if "" not in recorded and found - set(recorded):
        return f"it holds {sorted(found - set(recorded))[0]}, which it was not built with"
    for name, entry in recorded.items():
        full, label = (root / name, name) if name else (root, "it")
        try:
            mode = os.lstat(full).st_mode
            if not stat.S_ISREG(mode):
                return f"{label} is {kind(mode)}, not a regular file"
            with open_regular(full, "cache file", follow=False) as f:
                info = os.fstat(f.fileno())
                if info.st_size != entry["size"]:
                    return (f"{label} holds {info.st_size:,} bytes, not the "
                            f"{entry['size']:,} it was built with")
                if info.st_mtime_ns != entry.get("mtime_ns") and sha256_of(f) != entry["sha256"]:
                    return f"the checksum of {label} is not the one it was built with"
        except FileNotFoundError:
            return f"{label} is missing"
        except OSError as e:        # NotReadable: swapped for something else since lstat
            return f"{label} cannot be read ({e.strerror or e})"
    return None


def remove(path: str | os.PathLike) -> None:
    """Remove a damaged cache entry of SiliconBench's own folder, whatever it is: a link (never
    its target), a FIFO, a file or a folder (its links are removed, never followed)."""
    path = Path(path)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        import shutil
        shutil.rmtree(path)
    else:
        path.unlink()
