"""The model files already on this machine, found read-only where the tools people run keep
them, and what each one is: engine, architecture, parameters, quantisation, size. Nothing here
loads weights or runs code from a model: a GGUF file's header is read within bounds
(kit/gguf_read.py: every count checked against the bytes left, a size and time cap), a
safetensors file's header with the safetensors library, a config.json as bounded text.
Where the tools keep them is kit/model_places.py."""

from __future__ import annotations

import functools
import json
import os
import re
import stat
from dataclasses import asdict, dataclass, field
from pathlib import Path

from siliconbench.core.files import NotReadable, open_regular, read_small
from siliconbench.core.kit.gguf_read import GGUFError, read_header, read_parts
from siliconbench.core.kit.model_checks import asks_for_code, gguf_mismatch, quant_mismatch

MAX_ENTRIES = 20_000          # files looked at per place: a huge tree is cut, not walked for good
CONFIG_LIMIT = 1 << 20        # a config.json or an Ollama manifest is a few KB
PICKLED = (".bin", ".pt", ".pth", ".ckpt", ".pkl")
SPLIT = re.compile(r"-(\d{5})-of-(\d{5})\.gguf$")
DIGEST = re.compile(r"^sha256[:-]([0-9a-f]{64})$")   # the only text a blob path is built from


@dataclass(frozen=True)
class ModelFile:
    path: str                  # the GGUF file (the first of a split set) or the model folder
    name: str                  # as its tool names it: "org/model", "llama3.2:1b", a file name
    source: str                # where it was found
    format: str                # gguf | safetensors
    engines: tuple[str, ...]   # the frameworks that can read it: llamacpp | mlx | torch
    architecture: str = ""
    parameters: int | None = None
    quantisation: str = ""
    size: int = 0              # bytes on disk, every part of a split set
    experts: tuple[int, int] | None = None   # (experts, experts a token uses) of a MoE
    context: int | None = None               # the context length the file declares
    problem: str = ""          # why no engine can run it, one sentence; "" when one can
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["engines"] = list(self.engines)
        d["experts"] = list(self.experts) if self.experts else None
        d["notes"] = list(self.notes)
        return d


# --- what -------------------------------------------------------------------------------

def describe_gguf(path: Path, source: str = "given", name: str | None = None,
                  root: Path | None = None) -> ModelFile:
    """A GGUF file's header: its architecture, parameters (the tensors' elements), file type
    and context length; a split set's size counts all its parts. `root`: the place it was
    found in, which no part may link out of."""
    name = name or path.name
    base = ModelFile(str(path), name, source, "gguf", ())
    problem = _regular(path, "GGUF file", root)
    if problem:
        return _with(base, problem=problem)
    parts, notes = [path], ()
    match = SPLIT.search(path.name)
    if match and int(match.group(2)) > 1:
        total = int(match.group(2))
        parts = [path.with_name(SPLIT.sub(f"-{i:05d}-of-{total:05d}.gguf", path.name))
                 for i in range(1, total + 1)]
        notes = (f"split in {total} files",)
        problem = next(filter(None, (_regular(p, "GGUF file", root) for p in parts[1:])),
                       "")
        if problem:
            return _with(base, problem=problem)
    try:
        fields, names, params = gguf_header(parts)
    except GGUFError as e:
        return _with(base, size=_size(path), problem=f"{path.name} is not a readable GGUF "
                     f"file ({reason_of(e)}).")
    arch = str(fields.get("general.architecture", ""))
    ftype = fields.get("general.file_type")
    quant = _ftype_name(ftype) if ftype is not None else ""
    experts = fields.get(f"{arch}.expert_count")
    used = fields.get(f"{arch}.expert_used_count")
    ctx = fields.get(f"{arch}.context_length")
    return _with(base, engines=("llamacpp",), architecture=arch, parameters=params or None,
                 quantisation=quant, size=sum(_size(p) for p in parts),
                 experts=(int(experts), int(used or 0)) if experts else None,
                 context=int(ctx) if ctx else None, notes=notes)


def gguf_header(parts: list[Path]) -> tuple[dict, set[str], int]:
    """(the first file's metadata, its tensors' names, the elements of every part's
    tensors) of a GGUF file or split set, read within bounds (gguf_read; GGUFError with the
    reason). The tokenizer's arrays are left out but for the vocabulary's length."""
    header, params = read_parts(parts)
    fields = {k: v for k, v in header.fields.items() if not k.startswith("tokenizer.")}
    if "tokenizer.ggml.tokens" in header.counts:
        fields["tokenizer.ggml.tokens.count"] = header.counts["tokenizer.ggml.tokens"]
    return fields, {t.name for t in header.tensors}, params


def describe_folder(folder: Path, source: str = "given", name: str | None = None,
                    root: Path | None = None) -> ModelFile:
    """A Hugging Face style folder: config.json and *.safetensors. MLX's quantised folders
    (mlx-community's format: a "quantization" entry in config.json) run on MLX only; plain
    ones on MLX and PyTorch. Pickled weights, remote code and an unreadable config are
    problems, said in one sentence. `root`: the place it was found in (a hub snapshot's, its
    repository's folder), which none of its files may link out of."""
    # A hub cache snapshot (models--org--model/snapshots/<commit>) is named by its repository,
    # not by its commit, wherever it is given from.
    hub = folder.parent.name == "snapshots" and folder.parent.parent.name.startswith("models--")
    name = name or (repo_name(folder.parent.parent.name) if hub else folder.name)
    root = root or (folder.parent.parent if hub else None)
    base = ModelFile(str(folder), name, source, "safetensors", ())
    files = [p for p in list_folder(folder)]
    tensors = sorted(p for p in files if p.name.endswith(".safetensors"))
    size = sum(_size(p) for p in files if p.name.endswith((".safetensors",) + PICKLED))
    try:
        config = read_config(folder, root)
    except (OSError, ValueError) as e:
        return _with(base, size=size, problem=f"{folder.name}'s config.json cannot be read "
                     f"({reason_of(e)}).")
    arch = str(config.get("model_type", ""))
    base = _with(base, architecture=arch, size=size,
                 context=_int(config.get("max_position_embeddings")),
                 experts=_experts(config))
    if not tensors:
        return _with(base, problem=f"{folder.name} holds pickled weights only "
                     "(.bin/.pt); SiliconBench loads safetensors only, which run no code.")
    if asks_for_code(config):
        return _with(base, problem=f"{folder.name} asks for code from the model's own "
                     "folder or repository (auto_map, model_file), which SiliconBench never "
                     "runs.")
    quant = config.get("quantization") or config.get("quantization_config")
    mlx_quant = isinstance(quant, dict) and "bits" in quant and "quant_method" not in quant
    shapes: dict = {}
    params, dtype = _safetensors_count(tensors, quant.get("bits") if mlx_quant else None,
                                       root, shapes)
    if params is None:
        return _with(base, problem=f"{folder.name}'s safetensors files cannot be read "
                     f"({dtype}).")
    mismatch = quant_mismatch(quant if mlx_quant else None, shapes)
    if mismatch:
        return _with(base, parameters=params, problem=f"{folder.name}: {mismatch}")
    if mlx_quant:
        text = f"{quant['bits']}-bit, group {quant.get('group_size', 64)} (MLX)"
        return _with(base, engines=("mlx",), parameters=params, quantisation=text)
    if isinstance(quant, dict):
        method = quant.get("quant_method", "unknown")
        return _with(base, parameters=params, quantisation=str(method),
                     problem=f"{folder.name} is quantised with {method}, which SiliconBench's "
                     "engines do not load.")
    return _with(base, engines=("mlx", "torch"), parameters=params, quantisation=dtype)


def _safetensors_count(files: list[Path], bits: int | None, root: Path | None = None,
                       shapes: dict | None = None) -> tuple[int | None, str]:
    """(parameters, the most common dtype) from the files' headers, each tensor's (shape,
    dtype) into `shapes`; an MLX-quantised matrix (packed uint32 beside its .scales) counts
    32/bits weights an element."""
    from safetensors import safe_open
    shapes = {} if shapes is None else shapes
    try:
        for f in files:
            problem = _regular(f, "safetensors file", root)
            if problem:
                return None, problem
            with safe_open(str(f), framework="numpy") as st:
                for key in st.keys():
                    piece = st.get_slice(key)
                    shapes[key] = (list(piece.get_shape()), str(piece.get_dtype()))
    except Exception as e:  # noqa: BLE001 - a damaged header: any reader error is that
        return None, reason_of(e)
    total, dtypes = 0, {}
    for key, (shape, dtype) in shapes.items():
        n = 1
        for d in shape:
            n *= d
        if key.endswith((".scales", ".biases")) and bits:
            continue
        packed = isinstance(bits, int) and bits > 0 and dtype == "U32" and \
            key.rsplit(".", 1)[0] + ".scales" in shapes
        total += n * 32 // bits if packed else n
        dtypes[dtype] = dtypes.get(dtype, 0) + n
    names = {"BF16": "bfloat16", "F16": "float16", "F32": "float32"}
    common = max(dtypes, key=dtypes.get) if dtypes else ""
    return total, names.get(common, common.lower())


def _experts(config: dict) -> tuple[int, int] | None:
    n = _int(config.get("num_experts") or config.get("num_local_experts")
             or config.get("n_routed_experts"))
    k = _int(config.get("num_experts_per_tok") or config.get("experts_per_token"))
    return (n, k or 0) if n else None


# --- small helpers ----------------------------------------------------------------------

def repo_name(folder: str) -> str:
    """'org/model' of the hub cache's models--org--model folder."""
    return folder[len("models--"):].replace("--", "/")


def _ftype_name(ftype) -> str:
    import gguf
    try:
        return gguf.LlamaFileType(int(ftype)).name.removeprefix("MOSTLY_").removeprefix(
            "ALL_")
    except ValueError:
        return f"file type {ftype}"


def first_gguf(name: str) -> bool:
    match = SPLIT.search(name)
    return name.endswith(".gguf") and (match is None or match.group(1) == "00001")


def _regular(path: Path, what: str, root: Path | None = None) -> str:
    """'' for a regular file (a link to one is followed, inside `root` when given: the hub
    cache links its files into blobs/), else the sentence saying what it is."""
    outside = links_out(path, root)
    if outside:
        return outside
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        return f"{path.name} cannot be read ({reason_of(e)})."
    return "" if stat.S_ISREG(mode) else f"{path.name} is not a regular file, so " \
        f"SiliconBench does not read it as a {what}."


def links_out(path: Path, root: Path | None) -> str:
    """The sentence refusing `path` when it resolves (through links) outside `root`; '' when
    it stays inside, or no root is given."""
    if root is None:
        return ""
    try:
        real, top = os.path.realpath(path), os.path.realpath(root)
    except (OSError, ValueError, RuntimeError) as e:
        return f"{path.name} cannot be resolved ({reason_of(e)})."
    if os.path.commonpath([real, top]) != top:
        return (f"{path.name} links out of {root}, so SiliconBench does not read it "
                "(a model's files stay inside the place that keeps them).")
    return ""


def is_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except OSError:
        return False


def list_folder(folder: Path, notes: list[str] | None = None, source: str = "") -> list[Path]:
    """The first MAX_ENTRIES entries of `folder`; a cut is said in `notes`."""
    try:
        with os.scandir(folder) as it:
            found = [Path(e.path) for _, e in zip(range(MAX_ENTRIES + 1), it)]
    except OSError:
        return []
    if len(found) > MAX_ENTRIES:
        if notes is not None:
            notes.append(f"{source}: {folder} holds more than {MAX_ENTRIES:,} entries; only "
                         f"the first {MAX_ENTRIES:,} were looked at, so models past them are "
                         "not listed.")
        found = found[:MAX_ENTRIES]
    return found


def _size(path: Path) -> int:
    try:
        st = os.stat(path)
        return st.st_size if stat.S_ISREG(st.st_mode) else 0
    except OSError:
        return 0


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 \
        else None


def reason_of(e: BaseException) -> str:
    if isinstance(e, NotReadable):
        return str(e).rstrip(".")
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return text[:160].rstrip(".")


def _with(m: ModelFile, **changes) -> ModelFile:
    from dataclasses import replace
    return replace(m, **changes)


# --- a model a run is given ------------------------------------------------------------

GGUF_DTYPES = {0: "float32", 1: "float16", 32: "bfloat16", 7: "q8_0", 2: "q4_0",
               15: "q4_k_m"}   # llama_ftype -> the llm workload's name, where it has one


@dataclass(frozen=True)
class OwnModel:
    """A user's model file as a run takes it: what it is, its shape (from the file), the
    precision it stores its weights in where the file decides it (a GGUF type, an MLX
    quantisation; None: the run's --dtype casts it), a fingerprint of its header, and a
    folder's config.json as it was read (what an engine builds the model from)."""
    file: ModelFile
    shape: object                 # llm_shapes.ModelShape
    stored_dtype: str | None
    fingerprint: str
    # a folder's config.json; None for a GGUF file (a dict: left out of hash and equality)
    config: dict | None = field(default=None, hash=False, compare=False)
    # a GGUF file's tensors' bytes as its header gives them (what the decode bound counts)
    tensor_bytes: dict | None = field(default=None, hash=False, compare=False)

    def record(self) -> dict:
        """What a record keeps of it: the name, never the folder it sits in."""
        return {"name": self.file.name, "format": self.file.format,
                "architecture": self.file.architecture, "parameters": self.file.parameters,
                "quantisation": self.file.quantisation, "bytes": self.file.size,
                "header_sha256": self.fingerprint,
                "tokens": "random token ids (the file's tokenizer is not used)"}


def read_model(path: str) -> OwnModel:
    """The model at `path`, checked: a GGUF file (the first of a split set) or a folder with
    config.json and *.safetensors. ValueError with one sentence for anything else: a missing
    file, pickled weights, remote code, a damaged header, an architecture no engine here
    builds, a shape that cannot be read. Read once while the file is unchanged."""
    p = Path(path).expanduser()
    if not os.path.lexists(p):
        raise ValueError(f"--model-path {path}: no such file or folder.")
    st = os.stat(p) if os.path.exists(p) else None
    return _read_model(str(p), st and (st.st_mtime_ns, st.st_size, st.st_ino))


@functools.lru_cache(maxsize=16)
def _read_model(path: str, _stamp) -> OwnModel:
    from siliconbench.core.kit.llm_shapes import shape_from_config, shape_from_gguf
    p = Path(path)
    if is_dir(p):
        m = describe_folder(p, "given")
        if m.problem:
            raise ValueError(m.problem)
        config = read_config(p, None)
        shape = shape_from_config(config)
        quant = config.get("quantization")
        stored = {4: "q4", 8: "q8"}.get(quant.get("bits")) if isinstance(quant, dict) and \
            quant.get("group_size", 64) == 64 else None
        if isinstance(quant, dict) and stored is None:
            stored = f"{quant.get('bits')}-bit, group {quant.get('group_size')}"
        return OwnModel(m, shape, stored, _fingerprint_folder(p), config)
    m = describe_gguf(p, "given")
    if m.problem:
        raise ValueError(m.problem)
    import gguf
    if m.architecture not in set(gguf.MODEL_ARCH_NAMES.values()):
        raise ValueError(f"{p.name} is a GGUF file of architecture {m.architecture!r}, "
                         "which llama.cpp does not know.")
    try:
        header = read_header(p)
    except GGUFError as e:                  # changed since describe_gguf read it
        raise ValueError(f"{p.name} is not a readable GGUF file ({e}).") from None
    fields, names, _ = gguf_header([p])
    if "token_embd.weight" not in names:
        raise ValueError(f"{p.name} holds no token_embd.weight tensor, which llama.cpp needs "
                         "to load a model.")
    ftype = fields.get("general.file_type")
    stored = GGUF_DTYPES.get(ftype) if isinstance(ftype, int) else None
    shape = shape_from_gguf(fields, names)
    mismatch = gguf_mismatch(header.tensors, shape)
    if mismatch:
        raise ValueError(f"{p.name}: {mismatch}")
    return OwnModel(m, shape, stored or m.quantisation.lower(),
                    _fingerprint_file(p, header.data_offset),
                    tensor_bytes={t.name: t.n_bytes for t in header.tensors})


def read_config(folder: Path, root: Path | None) -> dict:
    """A folder's config.json as a JSON object (bounded, not through a link out of `root`);
    ValueError with the reason otherwise (JSON nested past Python's recursion included)."""
    outside = links_out(folder / "config.json", root)
    if outside:
        raise ValueError(outside.rstrip("."))
    try:
        config = json.loads(read_small(folder / "config.json", CONFIG_LIMIT, "config.json"))
    except RecursionError:
        raise ValueError("its JSON nests deeper than any config") from None
    if not isinstance(config, dict):
        raise ValueError("not a JSON object")
    return config


HEADER_LIMIT = 64 << 20       # a fingerprint reads at most this much of a header


def _fingerprint_file(path: Path, length: int) -> str:
    """sha256 of the first `length` bytes (a GGUF file's metadata and tensor table)."""
    import hashlib
    return hashlib.sha256(read_head(path, length)).hexdigest()


def _fingerprint_folder(folder: Path) -> str:
    """sha256 of config.json and of each safetensors file's header (its length and JSON)."""
    import hashlib
    digest = hashlib.sha256(read_small(folder / "config.json", CONFIG_LIMIT, "config.json",
                                       encoding=None))
    for f in sorted(p for p in list_folder(folder) if p.name.endswith(".safetensors")):
        head = read_head(f, 8)
        digest.update(read_head(f, 8 + int.from_bytes(head, "little")))
    return digest.hexdigest()


def read_head(path: Path, length: int) -> bytes:
    """The first `length` bytes of a regular file (at most HEADER_LIMIT; files.open_regular)."""
    try:
        with open_regular(path, "model file") as f:
            return f.read(min(length, HEADER_LIMIT))
    except NotReadable:
        raise ValueError(f"{path.name} is not a regular file.") from None
