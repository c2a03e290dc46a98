"""A GGUF file's header (its metadata and tensor table) read within bounds, without gguf-py's
reader: every count the file gives (a string's length, an array's elements, the keys, the
tensors) is checked against the bytes left before anything is read or kept, the header is read
from at most HEADER_LIMIT bytes of a memory map, and the reading stops after TIME_LIMIT
seconds. gguf-py's GGUFReader trusts the counts: a 99-byte file whose last array claims 2^62
elements had it loop on empty reads while its memory grew to gigabytes.

What llama.cpp itself refuses when it loads a file (gguf.cpp's gguf_init_from_file_impl and
llama-model-loader) is refused here too, in one sentence, so a run that could only fail never
starts: a version other than 2 or 3, an alignment that is not a power of two, more than 4
dimensions, a tensor type it does not know, a first dimension that is not a whole number of
the type's blocks, two tensors of one name, a tensor whose data lies past the end of the file.

The layout (ggml docs/gguf.md): "GGUF", version u32, tensor count u64, key-value count u64;
each key a string (u64 length, bytes), a value type u32 and its value (an array: element type
u32, count u64, elements); each tensor its name, dimensions u32, each dimension u64, type u32,
offset u64; the data from the next multiple of general.alignment (32)."""

from __future__ import annotations

import mmap
import os
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path

from siliconbench.core.files import NotReadable, open_regular

HEADER_LIMIT = 256 << 20    # bytes of a header: a 256K-token vocabulary and its merges ~ 10 MB
TIME_LIMIT = 5.0            # seconds a header may take to read
KEPT_ARRAY = 65_536         # a numeric array longer than this (no per-layer count is) is counted
KEPT_STRING = 65_536        # a longer string value is kept cut to this
MAX_NAME = 64               # llama.cpp's GGML_MAX_NAME (with its ending NUL)
MAX_DIMS = 4                # GGML_MAX_DIMS
MAX_ELEMENTS = 1 << 62      # llama.cpp refuses a tensor of more than INT64_MAX / its size
MAX_NESTING = 3             # arrays of arrays of arrays at most

# value type -> (struct code, bytes); 8 string, 9 array
SCALARS = {0: ("B", 1), 1: ("b", 1), 2: ("H", 2), 3: ("h", 2), 4: ("I", 4), 5: ("i", 4),
           6: ("f", 4), 7: ("?", 1), 10: ("Q", 8), 11: ("q", 8), 12: ("d", 8)}
STRING, ARRAY = 8, 9


class GGUFError(ValueError):
    """Why a GGUF header cannot be read, a few words (no ending stop)."""


@dataclass(frozen=True)
class Tensor:
    name: str
    dims: tuple[int, ...]         # ne: the first dimension varies fastest
    type: int                     # ggml_type
    offset: int                   # from the start of the data
    n_elements: int
    n_bytes: int

    @property
    def type_name(self) -> str:
        import gguf
        return gguf.GGMLQuantizationType(self.type).name


@dataclass
class Header:
    version: int
    fields: dict                  # key -> value; long arrays left out (counts: `counts`)
    counts: dict                  # array key -> its number of elements
    tensors: list[Tensor] = field(default_factory=list)
    data_offset: int = 0
    file_size: int = 0


def read_header(path: str | os.PathLike, limit: int = HEADER_LIMIT,
                seconds: float = TIME_LIMIT) -> Header:
    """The header of the GGUF file at `path` (a regular file; a link to one is followed),
    checked as llama.cpp checks it; GGUFError with the reason otherwise."""
    try:
        f = open_regular(path, "GGUF file")
    except NotReadable as e:
        raise GGUFError(str(e).rstrip(".")) from None
    except OSError as e:
        raise GGUFError(f"it cannot be opened ({e.strerror or e})") from None
    with f:
        size = os.fstat(f.fileno()).st_size
        if size < 24:
            raise GGUFError(f"it holds {size} bytes, fewer than a GGUF header's first 24")
        try:
            view = mmap.mmap(f.fileno(), min(size, limit), access=mmap.ACCESS_READ)
        except (OSError, ValueError) as e:
            raise GGUFError(f"it cannot be mapped ({e})") from None
        with view:
            return _Parser(view, size, time.monotonic() + seconds).header()


class _Parser:
    def __init__(self, buf, size: int, deadline: float) -> None:
        self.buf, self.size, self.end, self.pos = buf, size, len(buf), 0
        self.deadline, self.steps, self.order = deadline, 0, "<"

    # --- bounded reads ------------------------------------------------------------------

    def need(self, n: int, what: str) -> None:
        if n < 0 or n > self.end - self.pos:
            cut = " within SiliconBench's header limit" if self.end < self.size else ""
            raise GGUFError(f"{what} needs {n:,} bytes at offset {self.pos:,} but the file "
                            f"holds {max(0, self.end - self.pos):,} more{cut}")

    def tick(self) -> None:
        self.steps += 1
        if self.steps & 0xFFF == 0 and time.monotonic() > self.deadline:
            raise GGUFError("its header took longer to read than any model's should")

    def scalar(self, code: str, n: int, what: str):
        self.need(n, what)
        value = struct.unpack_from(self.order + code, self.buf, self.pos)[0]
        self.pos += n
        return value

    def u32(self, what: str) -> int:
        return self.scalar("I", 4, what)

    def u64(self, what: str) -> int:
        return self.scalar("Q", 8, what)

    def string(self, what: str, keep: int | None = None) -> str:
        n = self.u64(what)
        self.need(n, what)
        start, self.pos = self.pos, self.pos + n
        take = n if keep is None else min(n, keep)
        return bytes(self.buf[start:start + take]).decode("utf-8", errors="replace")

    def count(self, n: int, least: int, what: str) -> int:
        """`n` items of at least `least` bytes each, checked against the bytes left."""
        if n > (self.end - self.pos) // max(1, least):
            raise GGUFError(f"{what} claims {n:,} entries, more than the "
                            f"{max(0, self.end - self.pos):,} bytes left could hold")
        return n

    # --- the header ---------------------------------------------------------------------

    def header(self) -> Header:
        if bytes(self.buf[:4]) != b"GGUF":
            raise GGUFError("it does not start with GGUF's magic bytes")
        self.pos = 4
        version = self.u32("the version")
        if version & 0xFFFF == 0:          # written on a big-endian machine
            self.order, version = ">", struct.unpack(">I", struct.pack("<I", version))[0]
        if version not in (2, 3):
            raise GGUFError(f"it is GGUF version {version}; llama.cpp reads versions 2 and 3")
        n_tensors, n_kv = self.u64("the tensor count"), self.u64("the key count")
        self.count(n_kv, 13, "its metadata")
        fields, counts = {}, {}
        for _ in range(n_kv):
            self.tick()
            key = self.string("a key", MAX_NAME * 4)
            kind = self.u32(f"{key}'s type")
            if key in fields or key in counts:
                raise GGUFError(f"it gives the key {key!r} twice")
            value = self.value(kind, key, 0, counts)
            if value is not _SKIPPED:
                fields[key] = value
        self.count(n_tensors, 24, "its tensor table")
        align = fields.get("general.alignment", 32)
        if not isinstance(align, int) or isinstance(align, bool) or align <= 0 \
                or align & (align - 1):
            raise GGUFError(f"its general.alignment {align!r} is not a power of two")
        tensors, names = [], set()
        for _ in range(n_tensors):
            self.tick()
            t = self.tensor()
            if t.name in names:
                raise GGUFError(f"it holds two tensors named {t.name!r}")
            if t.offset % align:
                raise GGUFError(f"tensor {t.name}'s data is not aligned to {align} bytes")
            names.add(t.name)
            tensors.append(t)
        data = -(-self.pos // align) * align
        for t in tensors:
            if data + t.offset + t.n_bytes > self.size:
                raise GGUFError(f"tensor {t.name}'s data ends past the end of the file "
                                "(a file cut short)")
        return Header(version, fields, counts, tensors, data, self.size)

    def value(self, kind: int, key: str, depth: int, counts: dict):
        if kind in SCALARS:
            return self.scalar(*SCALARS[kind], f"{key}'s value")
        if kind == STRING:
            return self.string(f"{key}'s value", KEPT_STRING)
        if kind != ARRAY:
            raise GGUFError(f"{key} has value type {kind}, which GGUF does not define")
        if depth >= MAX_NESTING:
            raise GGUFError(f"{key} nests arrays deeper than {MAX_NESTING}")
        item = self.u32(f"{key}'s element type")
        n = self.u64(f"{key}'s length")
        least = SCALARS[item][1] if item in SCALARS else 8 if item == STRING else 12 \
            if item == ARRAY else None
        if least is None:
            raise GGUFError(f"{key} is an array of type {item}, which GGUF does not define")
        self.count(n, least, key)
        if depth == 0:
            counts[key] = n
        if item in SCALARS:
            code, width = SCALARS[item]
            if n <= KEPT_ARRAY and not key.startswith("tokenizer."):
                values = list(struct.unpack_from(f"{self.order}{n}{code}", self.buf, self.pos))
                self.pos += n * width
                return values
            self.pos += n * width          # counted (above), not kept
            return _SKIPPED
        for _ in range(n):                 # strings or arrays: each one's own length
            self.tick()
            if item == STRING:
                self.need(8, key)
                length = struct.unpack_from(self.order + "Q", self.buf, self.pos)[0]
                self.pos += 8
                self.need(length, key)
                self.pos += length
            else:
                self.value(ARRAY, key, depth + 1, {})
        return _SKIPPED

    def tensor(self) -> Tensor:
        import gguf
        name = self.string("a tensor's name", MAX_NAME * 4)
        if len(name.encode()) >= MAX_NAME:
            raise GGUFError(f"tensor name {name[:40]!r}... is longer than llama.cpp's "
                            f"{MAX_NAME - 1} characters")
        n_dims = self.u32(f"tensor {name}'s dimension count")
        if not 1 <= n_dims <= MAX_DIMS:
            raise GGUFError(f"tensor {name} has {n_dims} dimensions; llama.cpp takes 1 to "
                            f"{MAX_DIMS}")
        dims = tuple(self.u64(f"tensor {name}'s dimensions") for _ in range(n_dims))
        kind = self.u32(f"tensor {name}'s type")
        offset = self.u64(f"tensor {name}'s offset")
        try:
            block, type_size = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType(kind)]
        except (ValueError, KeyError):
            raise GGUFError(f"tensor {name} has type {kind}, which llama.cpp does not "
                            "know") from None
        n = 1
        for d in dims:
            n *= d
            if n > MAX_ELEMENTS:
                raise GGUFError(f"tensor {name} claims more than 2^62 elements")
        if dims[0] % block:
            raise GGUFError(f"tensor {name}'s rows of {dims[0]} are not a whole number of its "
                            f"type's blocks of {block}")
        return Tensor(name, dims, kind, offset, n, n // block * type_size)


_SKIPPED = object()


def read_parts(parts: list[Path]) -> tuple[Header, int]:
    """The first part's header and the elements of every part's tensors (a split set)."""
    first = read_header(parts[0])
    params = sum(t.n_elements for t in first.tensors)
    for part in parts[1:]:
        params += sum(t.n_elements for t in read_header(part).tensors)
    return first, params
