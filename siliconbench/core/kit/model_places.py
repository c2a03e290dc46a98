"""Where the tools people run keep their model files, and every model file found there
(`siliconbench models`, the app's "Your models"), each described by kit/model_files.py.
Discovery never follows a link out of the place's own tree (a snapshot's config.json linked
to /etc/shadow is not opened), looks no deeper than MAX_DEPTH folders, skips one unreadable
file with its reason while it lists the rest, and says where it stopped looking
(`Found.notes`).

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

import json
import os
import re
import sys
from pathlib import Path

from siliconbench.core.files import read_small
from siliconbench.core.kit.model_files import (
    CONFIG_LIMIT,
    DIGEST,
    MAX_ENTRIES,
    PICKLED,
    ModelFile,
    describe_folder,
    describe_gguf,
    first_gguf,
    is_dir,
    links_out,
    list_folder,
    reason_of,
    repo_name,
)

MAX_DEPTH = 8                 # folders below a place's top that are looked in (publisher/model/..)


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


class Found(list):
    """The model files found (a list of ModelFile), and `notes`: one sentence for each place
    whose listing was cut or could not be looked through, so a cut listing is said."""

    def __init__(self, items=(), notes=()) -> None:
        super().__init__(items)
        self.notes: list[str] = list(notes)


def find(env: dict | None = None, home: Path | None = None) -> Found:
    """Every model file in every place, each described; unreadable ones with their problem.
    One file that cannot be read is listed with why; a place that cannot be looked through is
    a note, and the other places are still listed."""
    found = Found()
    for source, folder in places(env, home):
        if not is_dir(folder):
            continue
        notes: list[str] = []
        try:
            if source == "Hugging Face cache":
                found += _hub(folder, notes)
            elif source == "Ollama":
                found += _ollama(folder, notes)
            else:
                found += _tree(folder, source, notes)
        except (OSError, ValueError, RecursionError, MemoryError) as e:
            notes.append(f"{source}: {folder} could not be looked through ({reason_of(e)}).")
        found.notes += notes
    return found


def _safely(make, path: Path, name: str, source: str, fmt: str) -> ModelFile:
    """make() (a ModelFile), or the file listed with why it could not be read: one damaged
    file (JSON nested 200,000 deep, a header the readers choke on) is not the listing's end."""
    try:
        return make()
    except (OSError, ValueError, RecursionError, MemoryError, UnicodeError) as e:
        return ModelFile(str(path), name, source, fmt, (),
                         problem=f"{path.name} cannot be read ({reason_of(e)}).")


def _hub(cache: Path, notes: list[str]) -> list[ModelFile]:
    out = []
    for repo in sorted(list_folder(cache, notes, "Hugging Face cache")):
        if not repo.name.startswith("models--") or not is_dir(repo):
            continue
        name = repo_name(repo.name)
        snapshot = _current_snapshot(repo)
        if snapshot is not None:
            out += _folder_models(snapshot, name, "Hugging Face cache", repo, notes)
    return out


def _current_snapshot(repo: Path) -> Path | None:
    """The commit refs/main names, else the newest snapshot."""
    try:
        if not links_out(repo / "refs" / "main", repo):      # never read through a link out
            ref = str(read_small(repo / "refs" / "main", 256, "Hugging Face ref")).strip()
            snap = repo / "snapshots" / ref
            if re.fullmatch(r"[0-9a-f]{40}", ref) and is_dir(snap) and not snap.is_symlink():
                return snap
    except OSError:
        pass
    snaps = [p for p in list_folder(repo / "snapshots") if is_dir(p) and not p.is_symlink()]
    return max(snaps, key=lambda p: p.stat().st_mtime) if snaps else None


def _walk(root: Path, depth: int, notes: list[str], source: str):
    """os.walk of `root` (folder links never followed) no deeper than `depth` folders below
    it and over at most MAX_ENTRIES files and folders; where it stopped is said in `notes`."""
    seen, deep = 0, False
    for folder, dirs, files in os.walk(root):
        seen += len(files) + len(dirs)
        if seen > MAX_ENTRIES:
            notes.append(f"{source}: looked at the first {MAX_ENTRIES:,} files and folders "
                         f"of {root} only; models past them are not listed.")
            return
        here = Path(folder)
        dirs.sort()
        if len(here.relative_to(root).parts) >= depth and dirs:
            dirs.clear()                 # os.walk recurses: 1,100 nested folders overflow it
            deep = True
        yield here, dirs, sorted(files)
    if deep:
        notes.append(f"{source}: folders more than {depth} deep in {root} were not looked "
                     "in.")


def _tree(root: Path, source: str, notes: list[str]) -> list[ModelFile]:
    """GGUF files and model folders under `root`, named by their path below it."""
    out = []
    for here, dirs, files in _walk(root, MAX_DEPTH, notes, source):
        rel = here.relative_to(root).as_posix()
        if "config.json" in files:
            out += _folder_models(here, rel, source, root, notes)
            dirs.clear()
        else:
            out += [_safely(lambda f=f: describe_gguf(here / f, source, f"{rel}/{f}".lstrip(
                "./"), root), here / f, f"{rel}/{f}".lstrip("./"), source, "gguf")
                for f in files if first_gguf(f)]
    return out


def _folder_models(folder: Path, name: str, source: str, root: Path,
                   notes: list[str]) -> list[ModelFile]:
    """A snapshot or model folder: its safetensors model, else its GGUF files."""
    names = {p.name for p in list_folder(folder, notes, source)}
    if "config.json" in names and (any(n.endswith(".safetensors") for n in names)
                                   or any(n.endswith(PICKLED) for n in names)):
        return [_safely(lambda: describe_folder(folder, source, name, root), folder, name,
                        source, "safetensors")]
    return [_safely(lambda n=n: describe_gguf(folder / n, source, f"{name}/{n}", root),
                    folder / n, f"{name}/{n}", source, "gguf")
            for n in sorted(names) if first_gguf(n)]


def _ollama(root: Path, notes: list[str]) -> list[ModelFile]:
    out, manifests = [], root / "manifests"
    for here, dirs, files in _walk(manifests, 3, notes, "Ollama"):
        for f in files:
            path = here / f
            parts = path.relative_to(manifests).parts     # registry, namespace, model, tag
            if len(parts) != 4:
                continue
            name = (parts[2] if parts[1] == "library" else f"{parts[1]}/{parts[2]}") \
                + f":{parts[3]}"
            blob = _ollama_blob(path, root)
            if isinstance(blob, str):
                out.append(ModelFile(str(path), name, "Ollama", "gguf", (), problem=blob))
            elif blob is not None:
                out.append(_safely(lambda b=blob, n=name: describe_gguf(b, "Ollama", n, root),
                                   blob, name, "Ollama", "gguf"))
    return out


def _ollama_blob(manifest: Path, root: Path) -> Path | str | None:
    """The model layer's blob, None for a manifest without one (an adapter, a projector
    only), or the sentence saying why the manifest cannot be read."""
    try:
        outside = links_out(manifest, root)
        if outside:
            return outside
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
    except (OSError, ValueError, RecursionError) as e:
        return f"{manifest} is not a readable Ollama manifest ({reason_of(e)})."
