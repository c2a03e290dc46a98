"""The CIFAR-10 training set from the standard python-version archive (cifar-10-python.tar.gz):
found at a path the user gives or in the app's data dir, downloaded only when asked, its
checksum verified. Unpickling happens only for this well-known format, through an unpickler
that accepts plain containers and numpy arrays and nothing else."""

from __future__ import annotations

import hashlib
import io
import pickle
import tarfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from siliconbench.core.files import (
    NotReadable,
    NotWritable,
    atomic_file,
    not_regular,
    open_regular,
    read_small,
)
from siliconbench.core.numbers import size
from siliconbench.core.text import clip

ARCHIVE_NAME = "cifar-10-python.tar.gz"
URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
MD5 = "c58f30108f718f92721af3b95e74349a"
ARCHIVE_BYTES = 170_498_071   # the published archive's size: only a file of it is hashed
MAX_ARCHIVE_BYTES = 512 << 20  # no archive of CIFAR-10's batches is larger: not read past it
FOLDER = "cifar-10-batches-py"
TRAIN_BATCHES = tuple(f"data_batch_{i}" for i in range(1, 6))
TEST_BATCH = "test_batch"
PIXELS = 32 * 32 * 3
CLASSES = 10
TRAIN_IMAGES = 50_000
# Each batch of the real archive is 31,035,704 bytes (10,000 images, their labels and file
# names): nothing larger is read, so a crafted archive cannot make us hold gigabytes.
MAX_BATCH_BYTES = 32 * 2**20


class CifarError(ValueError):
    """The data cannot be had or read; the message is one sentence for the user."""


@dataclass
class Cifar10:
    """The CIFAR-10 images and labels a run trains on, and where they came from."""
    images: np.ndarray        # uint8, (N, 3072): 1024 red, 1024 green, 1024 blue per image
    labels: np.ndarray        # int64, (N,), 0..9
    source: str               # where it came from, for the run's settings
    official: bool            # the archive's checksum is the published one


def data_dir() -> Path:
    from siliconbench.core.store import home
    return home() / "data"


def is_published(f: BinaryIO) -> bool:
    """Whether the open archive is the published one: its size first (a 20 GB file is not
    read through to learn that), then its MD5."""
    import os
    return os.fstat(f.fileno()).st_size == ARCHIVE_BYTES and md5sum(f) == MD5


def _bounded(f: BinaryIO, path: Path) -> BinaryIO:
    """`f` when it is no larger than any CIFAR-10 archive; CifarError otherwise."""
    import os
    n = os.fstat(f.fileno()).st_size
    if n > MAX_ARCHIVE_BYTES:
        f.close()
        raise CifarError(f"{path} holds {size(n)}; the CIFAR-10 archive is "
                         f"{size(ARCHIVE_BYTES)}, so SiliconBench does not read it.")
    return f


def md5sum(f: BinaryIO) -> str:
    """The MD5 of an open file, read from its start."""
    f.seek(0)
    digest = hashlib.md5()
    while chunk := f.read(1 << 20):
        digest.update(chunk)
    f.seek(0)
    return digest.hexdigest()


def _open_archive(path: Path) -> BinaryIO:
    """The archive opened for reading when it is a regular file (files.open_regular: a FIFO
    or a link to a device is a sentence, never a hang)."""
    try:
        return open_regular(path, "CIFAR-10 archive")
    except NotReadable as e:
        raise CifarError(str(e)) from None
    except OSError as e:
        raise CifarError(f"{path} cannot be read ({e.strerror}).") from None


class _NotCallable:
    """What a pickle gets for numpy.ndarray: a name _reconstruct accepts, nothing it can call
    (ndarray(shape) would allocate a size of the file's choosing)."""


def _reconstruct(subtype, shape, dtype):
    """numpy's _reconstruct for the empty array a pickle starts each array with; its real
    shape and bytes follow in __setstate__, which checks them against each other."""
    if subtype is not _NotCallable or tuple(shape) != (0,):
        raise pickle.UnpicklingError("an array that is not in numpy's pickle form")
    return np.ndarray.__new__(np.ndarray, (0,), dtype)


class _BatchUnpickler(pickle.Unpickler):
    """A CIFAR batch is a dict of bytes, ints, lists and numpy arrays: refuse anything else,
    so a crafted file cannot run code or make numpy allocate a size of its choosing."""
    ALLOWED = frozenset({("numpy", "dtype"),
                         ("_codecs", "encode"),   # bytes in a protocol-2 pickle from Python 3
                         ("numpy.core.numeric", "_frombuffer"),
                         ("numpy._core.numeric", "_frombuffer")})
    GUARDED = {("numpy", "ndarray"): _NotCallable,
               ("numpy.core.multiarray", "_reconstruct"): _reconstruct,
               ("numpy._core.multiarray", "_reconstruct"): _reconstruct}

    def find_class(self, module: str, name: str):
        if (module, name) in self.GUARDED:
            return self.GUARDED[module, name]
        if (module, name) not in self.ALLOWED:
            raise pickle.UnpicklingError(f"{clip(module)}.{clip(name)} has no place in a "
                                         "CIFAR-10 batch")
        if module.startswith("numpy.core.") and hasattr(np, "_core"):
            module = "numpy._core." + module.removeprefix("numpy.core.")  # numpy 2's name
        return super().find_class(module, name)


def _read_batch(data: bytes, name: str, where: Path) -> tuple[np.ndarray, np.ndarray]:
    try:
        batch = _BatchUnpickler(io.BytesIO(data), encoding="bytes").load()
        if not isinstance(batch, dict):
            raise TypeError(f"it holds a {type(batch).__name__}, not a dict")
        images = np.asarray(batch[b"data"], dtype=np.uint8)
        labels = np.asarray(batch[b"labels"], dtype=np.int64)
    except KeyError as e:
        raise CifarError(f"{where} is not a CIFAR-10 python archive ({name} has no "
                         f"{clip(repr(e.args[0]))}).") from None
    except (pickle.UnpicklingError, EOFError, TypeError, ValueError, IndexError,
            AttributeError, OverflowError, MemoryError) as e:
        raise CifarError(f"{where} is not a CIFAR-10 python archive ({name}: "
                         f"{clip(str(e), 80)}).") from None
    if images.ndim != 2 or images.shape[1] != PIXELS or labels.ndim != 1 \
            or len(labels) != len(images) \
            or (len(labels) and (labels.min() < 0 or labels.max() >= CLASSES)):
        raise CifarError(f"{where} is not a CIFAR-10 python archive ({name} holds "
                         f"{images.shape} pixels and {labels.shape} labels).")
    return images, labels


def _too_large(where: Path, name: str, n_bytes: int) -> CifarError:
    return CifarError(f"{where} is not the CIFAR-10 python archive: its {name} is "
                      f"{size(n_bytes)}, larger than any CIFAR-10 batch.")


def load(path: Path) -> Cifar10:
    """The training set (data_batch_1..5) from the .tar.gz archive, the extracted
    cifar-10-batches-py folder, or the folder holding it."""
    path = Path(path).expanduser()
    if not path.exists():
        raise CifarError(f"{path}: no such file or folder.")
    if path.is_dir():
        return _from_folder(path)
    with _bounded(_open_archive(path), path) as f:
        return _from_archive(f, path, is_published(f))


def check_given(path) -> None:
    """What load(path) refuses at once, said before a run starts (and before its time is
    asked about): no such path, a folder without the batches, a FIFO or a device, a file
    larger than any archive or that is no .tar.gz. The batches themselves the run reads."""
    path = Path(path).expanduser()
    if not path.exists():
        raise CifarError(f"{path}: no such file or folder.")
    if path.is_dir():
        folder = path if (path / TRAIN_BATCHES[0]).exists() else path / FOLDER
        if not (folder / TRAIN_BATCHES[0]).exists():
            raise CifarError(f"{folder} has no {TRAIN_BATCHES[0]}: it is not an extracted "
                             "CIFAR-10 python archive.")
        return
    with _bounded(_open_archive(path), path) as f:
        try:
            with tarfile.open(fileobj=f, mode="r:gz") as tar:
                tar.next()
        except (tarfile.TarError, OSError, EOFError) as e:
            raise CifarError(f"{path} is not a readable .tar.gz archive ({e}).") from None


def _from_folder(path: Path) -> Cifar10:
    folder = path if (path / TRAIN_BATCHES[0]).exists() else path / FOLDER
    parts: dict[str, bytes] = {}
    for name in TRAIN_BATCHES:
        try:
            parts[name] = read_small(folder / name, MAX_BATCH_BYTES, "CIFAR-10 batch",
                                     encoding=None)
        except FileNotFoundError:
            raise CifarError(f"{folder} has no {name}: it is not an extracted CIFAR-10 "
                             "python archive.") from None
        except NotReadable as e:
            raise CifarError(str(e)) from None
        except OSError as e:
            raise CifarError(f"{folder / name} cannot be read ({e.strerror}).") from None
    return _batches(parts, path, official=False)


def _from_archive(f: BinaryIO, path: Path, official: bool) -> Cifar10:
    parts: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=f, mode="r:gz") as tar:
            for name in TRAIN_BATCHES:
                member = tar.getmember(f"{FOLDER}/{name}")   # KeyError when absent
                if not member.isfile():     # a link or a folder: follow nothing
                    raise CifarError(f"{path} is not the CIFAR-10 python archive: its "
                                     f"{name} is not a regular file.")
                if member.size > MAX_BATCH_BYTES:
                    raise _too_large(path, name, member.size)
                # Read members in memory: nothing from the archive is written to disk.
                parts[name] = tar.extractfile(member).read(MAX_BATCH_BYTES)
    except (tarfile.TarError, OSError, EOFError) as e:
        raise CifarError(f"{path} is not a readable .tar.gz archive ({e}).") from None
    except KeyError:
        raise CifarError(f"{path} has no {FOLDER}/{name}: it is not the CIFAR-10 "
                         "python archive.") from None
    return _batches(parts, path, official)


def _batches(parts: dict[str, bytes], path: Path, official: bool) -> Cifar10:
    batches = [_read_batch(parts[name], name, path) for name in TRAIN_BATCHES]
    return Cifar10(np.concatenate([b[0] for b in batches]),
                   np.concatenate([b[1] for b in batches]), str(path), official)


def download(dest: Path, url: str | None = None, timeout_s: float = 60) -> Path:
    """Fetch the archive to `dest`, keeping it only if its checksum is the published one
    (files.atomic_file: a link at `dest` is replaced, never written through)."""
    url = url or URL
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response, \
                atomic_file(dest, own=True) as out:
            digest = hashlib.md5()
            while chunk := response.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
            if digest.hexdigest() != MD5:     # the temporary file is removed, dest untouched
                raise CifarError(f"The download from {url} is not the CIFAR-10 archive (its "
                                 f"MD5 checksum is not {MD5}); it was deleted.")
    except NotWritable as e:
        raise CifarError(str(e)) from None
    except (OSError, ValueError) as e:
        raise CifarError(f"CIFAR-10 could not be downloaded from {url} ({e}).") from None
    return dest


def find(path: str | None, allow_download: bool) -> tuple[Cifar10 | None, str]:
    """The user's path (errors are theirs: CifarError), else the data dir's archive, else a
    download when allowed. (None, why) when there is none: the caller uses synthetic data."""
    if path:
        return load(Path(path)), ""
    archive = data_dir() / ARCHIVE_NAME
    what = not_regular(archive)
    if what:
        why = f"{archive} is {what}, not the CIFAR-10 archive"
    elif archive.exists():
        with _open_archive(archive) as f:
            if is_published(f):
                return _from_archive(f, archive, official=True), ""
        why = f"{archive} is not the published archive (its size or checksum differs)"
    else:
        why = (f"CIFAR-10 is not in {archive.parent}; pass --download to fetch it "
               "(163 MB) or --cifar PATH")
    if not allow_download:
        return None, why
    try:
        return load(download(archive)), ""
    except CifarError as e:
        return None, str(e).rstrip(".")


def synthetic(count: int = TRAIN_IMAGES, seed: int = 0) -> Cifar10:
    """Random pixels and labels in CIFAR-10's shape, for when the real set is not at hand."""
    rng = np.random.default_rng(seed)
    return Cifar10(rng.integers(0, 256, (count, PIXELS), dtype=np.uint8),
                   rng.integers(0, CLASSES, count, dtype=np.int64), "synthetic", False)
