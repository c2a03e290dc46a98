"""GGUF model files from the LLM presets' shapes: random weights written with gguf-py (the
reference writer that ships with llama.cpp), then quantised by llama.cpp's own quantiser
(llama_model_quantize, what llama-quantize runs), so the files are what llama-bench would load.
Nothing is downloaded. Files are kept in the data folder and reused; each is written once,
after its size is said and the disk is checked for room."""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from siliconbench.core import files
from siliconbench.core.numbers import size as human

# dtype -> (llama_ftype, the GGUF type name llama.cpp prints). float32 and float16 are written
# directly; the others are quantised from the float16 file, as a converted model is.
FTYPES = {"float32": (0, "F32"), "float16": (1, "F16"), "bfloat16": (32, "BF16"),
          "q8_0": (7, "Q8_0"), "q4_0": (2, "Q4_0"), "q4_k_m": (15, "Q4_K_M")}
# Bits per weight of the large matrices, for the size said before a file is written (the
# file itself is what counts afterwards): Q8_0 and Q4_0 store a float16 scale per 32 weights;
# Q4_K_M mixes Q4_K (4.5) with Q6_K (6.56) for some matrices.
BITS = {"float32": 32, "float16": 16, "bfloat16": 16, "q8_0": 8.5, "q4_0": 4.5, "q4_k_m": 4.9}
FORMAT = 1              # bump when the written file changes: old files are then not reused
STD = 0.02              # the weights' standard deviation (transformers' initializer_range)


def folder() -> Path:
    """Where the model files are kept: the data folder's models/gguf (not made here)."""
    from siliconbench.core.store import home
    return home() / "models" / "gguf"


def own_folder() -> Path:
    """folder(), made a real folder before anything is written there: a link in its place (or
    at models) would have the model files written wherever it points, a FIFO or a file would
    fail every run; either is removed (a link itself, never its target) and the folder made
    (files.own_folder)."""
    gguf = folder()
    files.own_folder(gguf.parent)
    return files.own_folder(gguf)


def key(shape) -> str:
    """A file name stem that changes with every field of the shape."""
    text = json.dumps({"format": FORMAT, **asdict(shape)}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def path_for(shape, name: str, dtype: str) -> Path:
    return folder() / f"{name}-{key(shape)}-{FTYPES[dtype][1]}.gguf"


def tensors(shape) -> list[tuple[str, tuple[int, ...]]]:
    """(GGUF name, numpy shape) of every tensor, in the order llama.cpp's converter writes
    them; a matrix's numpy shape is (out, in), which GGUF stores as ne = {in, out}."""
    import gguf
    T, N = gguf.MODEL_TENSOR, gguf.TENSOR_NAMES
    q, kv = shape.heads * shape.head_dim, shape.kv_heads * shape.head_dim
    out = [(N[T.TOKEN_EMBD] + ".weight", (shape.vocab, shape.hidden)),
           (N[T.OUTPUT_NORM] + ".weight", (shape.hidden,))]
    if not shape.tied:
        out.append((N[T.OUTPUT] + ".weight", (shape.vocab, shape.hidden)))
    for i in range(shape.layers):
        layer = [(T.ATTN_NORM, (shape.hidden,)), (T.ATTN_Q, (q, shape.hidden)),
                 (T.ATTN_K, (kv, shape.hidden)), (T.ATTN_V, (kv, shape.hidden)),
                 (T.ATTN_OUT, (shape.hidden, q))]
        if shape.qk_norm:
            layer += [(T.ATTN_Q_NORM, (shape.head_dim,)), (T.ATTN_K_NORM, (shape.head_dim,))]
        layer += [(T.FFN_NORM, (shape.hidden,))]
        if shape.moe:    # the experts stacked, as convert_hf_to_gguf.py writes Qwen3-MoE
            e, f = shape.experts, shape.expert_ffn
            layer += [(T.FFN_GATE_INP, (e, shape.hidden)), (T.FFN_GATE_EXP, (e, f, shape.hidden)),
                      (T.FFN_DOWN_EXP, (e, shape.hidden, f)), (T.FFN_UP_EXP, (e, f, shape.hidden))]
        else:
            layer += [(T.FFN_GATE, (shape.ffn, shape.hidden)),
                      (T.FFN_DOWN, (shape.hidden, shape.ffn)),
                      (T.FFN_UP, (shape.ffn, shape.hidden))]
        out += [(N[t].format(bid=i) + ".weight", s) for t, s in layer]
    return out


def expected_bytes(shape, dtype: str) -> int:
    """About how large the file will be: the matrices at BITS, the norms in float32."""
    total = 0
    for _, s in tensors(shape):
        n = 1
        for d in s:
            n *= d
        total += 4 * n if len(s) == 1 else int(n * BITS[dtype] / 8)
    return total


def byte_vocabulary(vocab: int) -> tuple[list[str], list[int], list[str], int]:
    """(tokens, token types, merges, end-of-sequence id) of a byte-level BPE, GPT-2's
    byte-to-character table: each byte one token (ids 0-255, byte order), the rest of the
    model's vocabulary tokens of their own (<t256>...). End-of-sequence is byte 0's token,
    a control token text never gives. For a server, which tokenises text (run serve)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    tokens = [chars[b] for b in range(256)] + [f"<t{i}>" for i in range(256, vocab)]
    # llama.cpp refuses a BPE vocabulary without merges (and gguf-py writes no empty list):
    # one merge, two spaces, takes byte 1's place, which no text holds.
    space = chars[ord(" ")]
    tokens[1] = space * 2
    types = [3] + [1] * (len(tokens) - 1)        # 3: control (byte 0, the end), 1: normal
    return tokens, types, [f"{space} {space}"], 0


def _write(shape, name: str, dtype: str, dest: Path, vocabulary: bool = False) -> None:
    """Random weights (matrices N(0, 0.02), norms 1) in float32 or float16; 1-D tensors in
    float32 as llama.cpp's converter keeps them. One tensor in memory at a time. With
    `vocabulary`, byte_vocabulary's tokens (else none: nothing tokenises text)."""
    import gguf
    import numpy as np
    arch = {"qwen3": "qwen3", "qwen3_moe": "qwen3moe"}.get(shape.family, "llama")
    w = gguf.GGUFWriter(None, arch)
    w.add_name(f"{name} (random weights, SiliconBench)")
    w.add_context_length(shape.max_positions)
    w.add_embedding_length(shape.hidden)
    w.add_block_count(shape.layers)
    w.add_feed_forward_length(shape.ffn)
    if shape.moe:
        w.add_expert_count(shape.experts)
        w.add_expert_used_count(shape.active_experts)
        w.add_expert_feed_forward_length(shape.expert_ffn)
    w.add_head_count(shape.heads)
    w.add_head_count_kv(shape.kv_heads)
    w.add_key_length(shape.head_dim)
    w.add_value_length(shape.head_dim)
    w.add_rope_dimension_count(shape.head_dim)
    w.add_rope_freq_base(shape.rope_theta)
    w.add_layer_norm_rms_eps(shape.rms_eps)
    w.add_vocab_size(shape.vocab)
    w.add_file_type(FTYPES[dtype][0])
    if vocabulary:
        tokens, types, merges, eos = byte_vocabulary(shape.vocab)
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre("default")
        w.add_token_list(tokens)
        w.add_token_types(types)
        w.add_token_merges(merges)
        w.add_eos_token_id(eos)
        w.add_add_bos_token(False)
    else:
        # No vocabulary: llama.cpp then makes `vocab_size` dummy tokens. Nothing here
        # tokenises; the llm workload feeds token ids.
        w.add_tokenizer_model("none")
    item = np.float32 if dtype == "float32" else np.float16
    listed = tensors(shape)
    for tname, s in listed:
        # norms and a mixture's router stay float32, as llama.cpp's converter keeps them
        dt = np.dtype(np.float32 if len(s) == 1 or "ffn_gate_inp" in tname else item)
        n = int(np.prod(s))
        w.add_tensor_info(tname, s, dt, n * dt.itemsize)
    w.write_header_to_file(dest)
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    rng = np.random.default_rng(0)
    for tname, s in listed:
        if len(s) == 1:
            w.write_tensor_data(np.ones(s, np.float32))
            continue
        data = np.empty(s, np.float32 if "ffn_gate_inp" in tname else item)
        flat = data.reshape(-1, s[-1])        # a stack of experts' matrices: row by row
        rows = max(1, (1 << 24) // s[-1])     # 16 M values a chunk
        for r in range(0, flat.shape[0], rows):
            chunk = rng.standard_normal((min(rows, flat.shape[0] - r), s[-1]),
                                        dtype=np.float32)
            chunk *= STD
            flat[r:r + rows] = chunk
        w.write_tensor_data(data)
        del data
    w.close()


def _quantize(src: Path, dest: Path, dtype: str, threads: int) -> None:
    from siliconbench.core.frameworks.llamacpp.adapter import lib, quiet
    llama_cpp = lib()
    quiet()
    params = llama_cpp.llama_model_quantize_default_params()
    params.nthread = threads
    params.ftype = FTYPES[dtype][0]
    rc = llama_cpp.llama_model_quantize(str(src).encode(), str(dest).encode(),
                                        ctypes.byref(params))
    if rc != 0:
        raise RuntimeError(f"llama.cpp's quantiser failed ({rc}) making {dest.name} from "
                           f"{src.name}")


def _room(dest: Path, need: int) -> None:
    from siliconbench.core.params import ParamError
    own_folder()
    free = shutil.disk_usage(dest.parent).free
    if need > 0.95 * free:
        raise ParamError(f"The {dest.name} model file needs about {human(need)} and "
                         f"{dest.parent} has {human(free)} free.")


MAGIC = b"GGUF"
CHECKSUM_BYTES = 1 << 16        # the checksum file beside a model: a few hundred bytes


def checksum_path(path: Path) -> Path:
    """The fingerprint (size, time, sha256) written beside a model file when it was built."""
    return path.with_name(path.name + ".sha256")


def damage(path: Path) -> str | None:
    """Why the cached model file at `path` is not the whole file SiliconBench built (not a
    regular file, another size, no GGUF header, another checksum, no checksum kept), in a few
    words; None when it is whole."""
    try:
        recorded = json.loads(files.read_small(checksum_path(path), CHECKSUM_BYTES,
                                               "checksum file", follow=False))
    except (OSError, ValueError):
        recorded = None
    why = files.damage(path, recorded)
    if why:
        return why
    try:
        with files.open_regular(path, "GGUF model", follow=False) as f:
            if f.read(len(MAGIC)) != MAGIC:
                return "it has no GGUF header"
    except OSError as e:
        return f"it cannot be read ({e.strerror or e})"
    return None


def _cached(path: Path, damaged: list[str]) -> bool:
    """True when `path` holds the whole model file built before. A damaged one (its reason
    added to `damaged`) is removed with its checksum, so it is built again."""
    if not os.path.lexists(path):
        return False
    why = damage(path)
    if why is None:
        return True
    damaged.append(f"the cached model {path.name} was damaged ({why}); rebuilt")
    files.remove(path)
    files.remove(checksum_path(path))     # whatever it is: a file, a folder, a link
    return False


def _build(dest: Path, make: Callable[[Path], None]) -> None:
    """`make` writes the file at a fresh temporary name beside `dest` (nothing else's name:
    a link planted there is never written through); it is renamed into place after its
    fingerprint is kept beside it."""
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".partial", dir=dest.parent)
    os.close(fd)
    try:
        make(Path(tmp))
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)       # the rename must not publish blocks still in the page cache
        finally:
            os.close(fd)
        fingerprint = files.fingerprint(tmp)
        files.remove(dest)                  # whatever was there (a damaged file, a link)
        os.replace(tmp, dest)
        files.remove(checksum_path(dest))   # a folder there would refuse the record for good
        files.write_atomic(checksum_path(dest), json.dumps(fingerprint), own=True)
    finally:
        Path(tmp).unlink(missing_ok=True)


def model_file(shape, name: str, dtype: str, threads: int,
               say: Callable[[str], None] = lambda _: None,
               warn: Callable[[str], None] | None = None, vocabulary: bool = False) -> Path:
    """The GGUF file of `shape` in `dtype`, written (and quantised) now unless kept from
    before and whole (damage); `say` hears what is written, with its size, before it is;
    `warn` (else `say`) hears of each damaged file that was rebuilt; `vocabulary` writes
    byte_vocabulary's tokens in (under a `name` of its own: the file is named by it)."""
    own_folder()          # before anything there is read or written
    dest = path_for(shape, name, dtype)
    damaged: list[str] = []
    if _cached(dest, damaged):
        return dest
    source = dest if dtype in ("float32", "float16") else path_for(shape, name, "float16")
    if source == dest or not _cached(source, damaged):
        size = expected_bytes(shape, "float32" if dtype == "float32" else "float16")
        say(f"writing {source.name}: {human(size)} of random weights to {source.parent} "
            "(kept for later runs)")
        _room(source, size)
        _build(source, lambda tmp: _write(
            shape, name, "float32" if dtype == "float32" else "float16", tmp, vocabulary))
    if dest != source:
        size = expected_bytes(shape, dtype)
        say(f"quantising to {dest.name}: about {human(size)} with llama.cpp's quantiser "
            "(kept for later runs)")
        _room(dest, size)
        _build(dest, lambda tmp: _quantize(source, tmp, dtype, threads))
    for line in damaged:
        (warn or say)(line)
    return dest


def tensor_bytes(path: Path) -> dict[str, int]:
    """Bytes of each tensor as the file stores it (read from its header within bounds,
    kit/gguf_read; data is never read)."""
    return {t.name: t.n_bytes for t in _header(path).tensors}


def tensor_types(path: Path) -> dict[str, str]:
    return {t.name: t.type_name for t in _header(path).tensors}


def _header(path: Path):
    """The header of a regular GGUF file (a FIFO or a device is refused before it is read),
    every count checked against the bytes left; ValueError with the reason otherwise."""
    from siliconbench.core.kit.gguf_read import GGUFError, read_header
    try:
        return read_header(path)
    except GGUFError as e:
        raise ValueError(f"{Path(path).name} is not a readable GGUF file ({e}).") from None
