"""The model files already on this machine, found read-only where the tools people run keep
them, and what each one is: engine, architecture, parameters, quantisation, size. Nothing here
loads weights or runs code from a model: a GGUF file's header is read with gguf-py (the reader
that ships with llama.cpp, on a memory map), a safetensors file's header with the safetensors
library, a config.json as bounded text.

Where the tools keep their files (each layout as its own documentation or code gives it):
- Hugging Face hub cache (huggingface.co/docs/hub/local-cache): $HF_HUB_CACHE, else
  $HF_HOME/hub, else ~/.cache/huggingface/hub; models--<org>--<name>/snapshots/<commit>/ with
  files linked into ../../blobs/, refs/main naming the current commit. mlx-lm and
  transformers read it; llama.cpp too since ggml-org/llama.cpp#20775.
- LM Studio (lmstudio-ai/lms src/lmstudioPaths.ts, defaultModelsFolder = {home}/models):
  ~/.lmstudio/models/<publisher>/<model>/, and ~/.cache/lm-studio/models of older releases;
  GGUF files or MLX folders.
- Ollama (ollama/ollama server/internal/manifest/manifest.go and its model store):
  $OLLAMA_MODELS, else ~/.ollama/models; manifests/<registry>/<namespace>/<model>/<tag> is a
  JSON manifest whose layer of media type application/vnd.ollama.image.model names a GGUF blob
  by digest, stored as blobs/sha256-<hex>.
- llama.cpp's own cache (common/common.cpp fs_get_cache_directory): $LLAMA_CACHE, else
  ~/Library/Caches/llama.cpp on macOS, else $XDG_CACHE_HOME/llama.cpp or ~/.cache/llama.cpp."""

from __future__ import annotations

import functools
import json
import os
import re
import stat
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from siliconbench.core.files import NotReadable, open_regular, read_small

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


# --- where ------------------------------------------------------------------------------

def places(env: dict | None = None, home: Path | None = None) -> list[tuple[str, Path]]:
    """(source, folder) of every place a tool keeps models, whether or not it exists."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    hub = (Path(env["HF_HUB_CACHE"]) if env.get("HF_HUB_CACHE")
           else Path(env["HF_HOME"]) / "hub" if env.get("HF_HOME")
           else home / ".cache" / "huggingface" / "hub")
    if env.get("LLAMA_CACHE"):
        llama = Path(env["LLAMA_CACHE"])
    elif sys.platform == "darwin":
        llama = home / "Library" / "Caches" / "llama.cpp"
    else:
        llama = Path(env.get("XDG_CACHE_HOME") or home / ".cache") / "llama.cpp"
    ollama = Path(env["OLLAMA_MODELS"]) if env.get("OLLAMA_MODELS") else \
        home / ".ollama" / "models"
    return [("Hugging Face cache", hub), ("LM Studio", home / ".lmstudio" / "models"),
            ("LM Studio", home / ".cache" / "lm-studio" / "models"), ("Ollama", ollama),
            ("llama.cpp cache", llama)]


def find(env: dict | None = None, home: Path | None = None) -> list[ModelFile]:
    """Every model file in every place, each described; unreadable ones with their problem."""
    found: list[ModelFile] = []
    for source, folder in places(env, home):
        if not _is_dir(folder):
            continue
        if source == "Hugging Face cache":
            found += _hub(folder)
        elif source == "Ollama":
            found += _ollama(folder)
        else:
            found += _tree(folder, source)
    return found


def _hub(cache: Path) -> list[ModelFile]:
    out = []
    for repo in sorted(_listdir(cache)):
        if not repo.name.startswith("models--") or not _is_dir(repo):
            continue
        name = _repo_name(repo.name)
        snapshot = _current_snapshot(repo)
        if snapshot is not None:
            out += _folder_models(snapshot, name, "Hugging Face cache")
    return out


def _repo_name(folder: str) -> str:
    """'org/model' of the hub cache's models--org--model folder."""
    return folder[len("models--"):].replace("--", "/")


def _current_snapshot(repo: Path) -> Path | None:
    """The commit refs/main names, else the newest snapshot."""
    try:
        ref = str(read_small(repo / "refs" / "main", 256, "Hugging Face ref")).strip()
        if re.fullmatch(r"[0-9a-f]{40}", ref) and _is_dir(repo / "snapshots" / ref):
            return repo / "snapshots" / ref
    except OSError:
        pass
    snaps = [p for p in _listdir(repo / "snapshots") if _is_dir(p)]
    return max(snaps, key=lambda p: p.stat().st_mtime) if snaps else None


def _tree(root: Path, source: str) -> list[ModelFile]:
    """GGUF files and model folders under `root`, named by their path below it."""
    out, seen = [], 0
    for folder, dirs, files in os.walk(root):          # os.walk never follows folder links
        seen += len(files) + len(dirs)
        if seen > MAX_ENTRIES:
            break
        here = Path(folder)
        dirs.sort()
        rel = here.relative_to(root).as_posix()
        if "config.json" in files:
            out += _folder_models(here, rel, source)
            dirs.clear()
        else:
            out += [describe_gguf(here / f, source, name=f"{rel}/{f}".lstrip("./"))
                    for f in sorted(files) if _first_gguf(f)]
    return out


def _folder_models(folder: Path, name: str, source: str) -> list[ModelFile]:
    """A snapshot or model folder: its safetensors model, else its GGUF files."""
    names = {p.name for p in _listdir(folder)}
    if "config.json" in names and (any(n.endswith(".safetensors") for n in names)
                                   or any(n.endswith(PICKLED) for n in names)):
        return [describe_folder(folder, source, name)]
    return [describe_gguf(folder / n, source, name=f"{name}/{n}")
            for n in sorted(names) if _first_gguf(n)]


def _ollama(root: Path) -> list[ModelFile]:
    out, manifests = [], root / "manifests"
    for folder, dirs, files in os.walk(manifests):
        dirs.sort()
        for f in sorted(files):
            path = Path(folder, f)
            parts = path.relative_to(manifests).parts     # registry, namespace, model, tag
            if len(parts) != 4:
                continue
            name = (parts[2] if parts[1] == "library" else f"{parts[1]}/{parts[2]}") \
                + f":{parts[3]}"
            blob = _ollama_blob(path, root)
            if isinstance(blob, str):
                out.append(ModelFile(str(path), name, "Ollama", "gguf", (), problem=blob))
            elif blob is not None:
                out.append(describe_gguf(blob, "Ollama", name=name))
    return out


def _ollama_blob(manifest: Path, root: Path) -> Path | str | None:
    """The model layer's blob, None for a manifest without one (an adapter, a projector
    only), or the sentence saying why the manifest cannot be read."""
    try:
        data = json.loads(read_small(manifest, CONFIG_LIMIT, "Ollama manifest"))
        layers = data.get("layers") if isinstance(data, dict) else None
        for layer in layers if isinstance(layers, list) else []:
            if isinstance(layer, dict) and \
                    layer.get("mediaType") == "application/vnd.ollama.image.model":
                match = DIGEST.match(str(layer.get("digest", "")))
                if not match:
                    return f"{manifest} names its model blob by a digest that is not sha256."
                return root / "blobs" / f"sha256-{match.group(1)}"
        return None
    except (OSError, ValueError) as e:
        return f"{manifest} is not a readable Ollama manifest ({_reason(e)})."


# --- what -------------------------------------------------------------------------------

def describe_gguf(path: Path, source: str = "given", name: str | None = None) -> ModelFile:
    """A GGUF file's header: its architecture, parameters (the tensors' elements), file type
    and context length; a split set's size counts all its parts."""
    name = name or path.name
    base = ModelFile(str(path), name, source, "gguf", ())
    problem = _regular(path, "GGUF file")
    if problem:
        return _with(base, problem=problem)
    parts, notes = [path], ()
    match = SPLIT.search(path.name)
    if match and int(match.group(2)) > 1:
        total = int(match.group(2))
        parts = [path.with_name(SPLIT.sub(f"-{i:05d}-of-{total:05d}.gguf", path.name))
                 for i in range(1, total + 1)]
        notes = (f"split in {total} files",)
        problem = next(filter(None, (_regular(p, "GGUF file") for p in parts[1:])), "")
        if problem:
            return _with(base, problem=problem)
    try:
        fields, names, params = gguf_header(parts)
    except Exception as e:  # noqa: BLE001 - a damaged header: any reader error is that
        return _with(base, size=_size(path), problem=f"{path.name} is not a readable GGUF "
                     f"file ({_reason(e)}).")
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
    tensors) of a GGUF file or split set, read by gguf-py on a memory map. The tokenizer's
    arrays are left out but for the vocabulary's length."""
    import gguf
    reader = gguf.GGUFReader(parts[0], "r")
    fields = {k: f.contents() for k, f in reader.fields.items()
              if not k.startswith("tokenizer.")}
    tokens = reader.fields.get("tokenizer.ggml.tokens")
    if tokens is not None:
        fields["tokenizer.ggml.tokens.count"] = len(tokens.data)
    names = {t.name for t in reader.tensors}
    params = sum(int(t.n_elements) for t in reader.tensors)
    for part in parts[1:]:
        params += sum(int(t.n_elements) for t in gguf.GGUFReader(part, "r").tensors)
    return fields, names, params


def describe_folder(folder: Path, source: str = "given", name: str | None = None) -> ModelFile:
    """A Hugging Face style folder: config.json and *.safetensors. MLX's quantised folders
    (mlx-community's format: a "quantization" entry in config.json) run on MLX only; plain
    ones on MLX and PyTorch. Pickled weights, remote code and an unreadable config are
    problems, said in one sentence."""
    # A hub cache snapshot (models--org--model/snapshots/<commit>) is named by its repository,
    # not by its commit, wherever it is given from.
    hub = folder.parent.name == "snapshots" and folder.parent.parent.name.startswith("models--")
    name = name or (_repo_name(folder.parent.parent.name) if hub else folder.name)
    base = ModelFile(str(folder), name, source, "safetensors", ())
    files = [p for p in _listdir(folder)]
    tensors = sorted(p for p in files if p.name.endswith(".safetensors"))
    size = sum(_size(p) for p in files if p.name.endswith((".safetensors",) + PICKLED))
    try:
        config = json.loads(read_small(folder / "config.json", CONFIG_LIMIT, "config.json"))
        if not isinstance(config, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as e:
        return _with(base, size=size, problem=f"{folder.name}'s config.json cannot be read "
                     f"({_reason(e)}).")
    arch = str(config.get("model_type", ""))
    base = _with(base, architecture=arch, size=size,
                 context=_int(config.get("max_position_embeddings")),
                 experts=_experts(config))
    if not tensors:
        return _with(base, problem=f"{folder.name} holds pickled weights only "
                     "(.bin/.pt); SiliconBench loads safetensors only, which run no code.")
    if "auto_map" in config or "model_file" in config or config.get("trust_remote_code"):
        return _with(base, problem=f"{folder.name} asks for code from the model's own "
                     "folder or repository (auto_map, model_file), which SiliconBench never "
                     "runs.")
    quant = config.get("quantization") or config.get("quantization_config")
    mlx_quant = isinstance(quant, dict) and "bits" in quant and "quant_method" not in quant
    params, dtype = _safetensors_count(tensors, quant.get("bits") if mlx_quant else None)
    if params is None:
        return _with(base, problem=f"{folder.name}'s safetensors files cannot be read "
                     f"({dtype}).")
    if mlx_quant:
        text = f"{quant['bits']}-bit, group {quant.get('group_size', 64)} (MLX)"
        return _with(base, engines=("mlx",), parameters=params, quantisation=text)
    if isinstance(quant, dict):
        method = quant.get("quant_method", "unknown")
        return _with(base, parameters=params, quantisation=str(method),
                     problem=f"{folder.name} is quantised with {method}, which SiliconBench's "
                     "engines do not load.")
    return _with(base, engines=("mlx", "torch"), parameters=params, quantisation=dtype)


def _safetensors_count(files: list[Path], bits: int | None) -> tuple[int | None, str]:
    """(parameters, the most common dtype) from the files' headers; an MLX-quantised matrix
    (packed uint32 beside its .scales) counts 32/bits weights an element."""
    from safetensors import safe_open
    shapes: dict[str, tuple[list[int], str]] = {}
    try:
        for f in files:
            problem = _regular(f, "safetensors file")
            if problem:
                return None, problem
            with safe_open(str(f), framework="numpy") as st:
                for key in st.keys():
                    piece = st.get_slice(key)
                    shapes[key] = (list(piece.get_shape()), str(piece.get_dtype()))
    except Exception as e:  # noqa: BLE001 - a damaged header: any reader error is that
        return None, _reason(e)
    total, dtypes = 0, {}
    for key, (shape, dtype) in shapes.items():
        n = 1
        for d in shape:
            n *= d
        if key.endswith((".scales", ".biases")) and bits:
            continue
        packed = bits and dtype == "U32" and key.rsplit(".", 1)[0] + ".scales" in shapes
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

def _ftype_name(ftype) -> str:
    import gguf
    try:
        return gguf.LlamaFileType(int(ftype)).name.removeprefix("MOSTLY_").removeprefix(
            "ALL_")
    except ValueError:
        return f"file type {ftype}"


def _first_gguf(name: str) -> bool:
    match = SPLIT.search(name)
    return name.endswith(".gguf") and (match is None or match.group(1) == "00001")


def _regular(path: Path, what: str) -> str:
    """'' for a regular file (a link to one is followed: the hub cache links its files into
    blobs/), else the sentence saying what it is."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        return f"{path.name} cannot be read ({_reason(e)})."
    return "" if stat.S_ISREG(mode) else f"{path.name} is not a regular file, so " \
        f"SiliconBench does not read it as a {what}."


def _is_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except OSError:
        return False


def _listdir(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as it:
            return [Path(e.path) for _, e in zip(range(MAX_ENTRIES), it)]
    except OSError:
        return []


def _size(path: Path) -> int:
    try:
        st = os.stat(path)
        return st.st_size if stat.S_ISREG(st.st_mode) else 0
    except OSError:
        return 0


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 \
        else None


def _reason(e: BaseException) -> str:
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
    quantisation; None: the run's --dtype casts it), and a fingerprint of its header."""
    file: ModelFile
    shape: object                 # llm_shapes.ModelShape
    stored_dtype: str | None
    fingerprint: str

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
    if _is_dir(p):
        m = describe_folder(p, "given")
        if m.problem:
            raise ValueError(m.problem)
        config = json.loads(read_small(p / "config.json", CONFIG_LIMIT, "config.json"))
        shape = shape_from_config(config)
        quant = config.get("quantization")
        stored = {4: "q4", 8: "q8"}.get(quant.get("bits")) if isinstance(quant, dict) and \
            quant.get("group_size", 64) == 64 else None
        if isinstance(quant, dict) and stored is None:
            stored = f"{quant.get('bits')}-bit, group {quant.get('group_size')}"
        return OwnModel(m, shape, stored, _fingerprint_folder(p))
    m = describe_gguf(p, "given")
    if m.problem:
        raise ValueError(m.problem)
    import gguf
    if m.architecture not in set(gguf.MODEL_ARCH_NAMES.values()):
        raise ValueError(f"{p.name} is a GGUF file of architecture {m.architecture!r}, "
                         "which llama.cpp does not know.")
    fields, names, _ = gguf_header([p])
    ftype = fields.get("general.file_type")
    stored = GGUF_DTYPES.get(int(ftype)) if isinstance(ftype, int) else None
    return OwnModel(m, shape_from_gguf(fields, names), stored or m.quantisation.lower(),
                    _fingerprint_file(p, _gguf_data_offset(p)))


def _gguf_data_offset(path: Path) -> int:
    import gguf
    return int(gguf.GGUFReader(path, "r").data_offset)


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
    for f in sorted(p for p in _listdir(folder) if p.name.endswith(".safetensors")):
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
