"""`siliconbench models`: model files found read-only where the tools keep them. Each folder
here is laid out as its tool lays it out (the layouts and their sources are in
siliconbench/core/kit/model_places.py's docstring), with tiny real model files written by the
engines' own writers: transformers' save_pretrained(safe_serialization=True), mlx-lm's
quantize_model + save_model, gguf-py's GGUFWriter."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import subprocess
import sys

import pytest

from siliconbench.core.kit import model_places
from tests.helpers.model_files import Marker, folder_files, hub_repo, tiny_llama, write_gguf

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def machine(tmp_path):
    """A home with a model in every place, and the environment that points at them."""
    home = tmp_path / "home"
    env = {"HF_HOME": str(tmp_path / "hf")}
    built = tmp_path / "built"
    # Hugging Face: a transformers folder, and a GGUF repository.
    tiny_llama().save_pretrained(built / "llama", safe_serialization=True)
    hub = tmp_path / "hf" / "hub"
    hub_repo(hub, "someone/tiny-llama", folder_files(built / "llama"))
    write_gguf(built / "moe.gguf", arch="qwen3moe", experts=8, used=2)
    hub_repo(hub, "someone/tiny-moe-GGUF", {"tiny-moe-Q8_0.gguf": (built / "moe.gguf")
                                            .read_bytes()})
    # LM Studio: an MLX 4-bit folder, as mlx-lm's converter saves one.
    import mlx.core as mx
    from mlx_lm.models import llama
    from mlx_lm.utils import quantize_model, save_config, save_model
    args = dict(model_type="llama", hidden_size=128, num_hidden_layers=2,
                intermediate_size=256, num_attention_heads=4, num_key_value_heads=2,
                rms_norm_eps=1e-5, vocab_size=256, tie_word_embeddings=True)
    model = llama.Model(llama.ModelArgs(**args))
    mx.eval(model.parameters())
    from mlx.utils import tree_flatten
    mlx_params = sum(v.size for _, v in tree_flatten(model.parameters()))
    model, config = quantize_model(model, dict(args), 64, 4)
    mlx_dir = home / ".lmstudio" / "models" / "mlx-community" / "tiny-4bit"
    mlx_dir.mkdir(parents=True)
    save_model(mlx_dir, model)
    save_config(config, mlx_dir / "config.json")
    # Ollama: a manifest naming a GGUF blob.
    dense = built / "dense.gguf"
    dense_params = write_gguf(dense)
    data = dense.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    blobs = home / ".ollama" / "models" / "blobs"
    blobs.mkdir(parents=True)
    (blobs / f"sha256-{digest}").write_bytes(data)
    manifest = home / ".ollama" / "models" / "manifests" / "registry.ollama.ai" / "library" \
        / "tiny" / "latest"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(json.dumps({"schemaVersion": 2, "layers": [
        {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}",
         "size": len(data)},
        {"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:" + "0" * 64,
         "size": 10}]}))
    # llama.cpp's cache: a file as -hf names it.
    llama_cache = home / ".cache" / "llama.cpp"
    llama_cache.mkdir(parents=True)
    write_gguf(llama_cache / "someone_tiny_tiny-F16.gguf")
    return home, env, {"dense_params": dense_params, "llama": tiny_llama,
                       "mlx_params": mlx_params}


def by_name(found):
    return {m.name: m for m in found}


def test_every_place_is_found_with_what_each_file_is(machine):
    home, env, facts = machine
    found = by_name(model_places.find(env=env, home=home))
    assert set(found) == {"someone/tiny-llama", "someone/tiny-moe-GGUF/tiny-moe-Q8_0.gguf",
                          "mlx-community/tiny-4bit", "tiny:latest",
                          "someone_tiny_tiny-F16.gguf"}
    hf = found["someone/tiny-llama"]
    reference = sum(p.numel() for p in facts["llama"]().parameters())
    assert (hf.engines, hf.architecture, hf.parameters, hf.quantisation, hf.source) == \
        (("mlx", "torch"), "llama", reference, "float32", "Hugging Face cache")
    assert hf.size == sum(os.path.getsize(p) for p in (home.parent / "built" / "llama")
                          .glob("*.safetensors"))
    mlx = found["mlx-community/tiny-4bit"]
    # 4-bit packs 8 weights in a uint32: the count is the float model's.
    assert (mlx.engines, mlx.quantisation, mlx.source) == (("mlx",), "4-bit, group 64 (MLX)",
                                                           "LM Studio")
    assert mlx.parameters == facts["mlx_params"]
    moe = found["someone/tiny-moe-GGUF/tiny-moe-Q8_0.gguf"]
    assert (moe.architecture, moe.experts, moe.engines) == ("qwen3moe", (8, 2), ("llamacpp",))
    ollama = found["tiny:latest"]
    assert (ollama.parameters, ollama.quantisation, ollama.context) == \
        (facts["dense_params"], "F16", 4096)
    assert not any(m.problem for m in found.values())


def test_the_command_lists_them_and_its_json_is_the_same(machine, tmp_path):
    home, env, _ = machine
    run_env = {**os.environ, **env, "HOME": str(home)}
    for key in ("HF_HUB_CACHE", "OLLAMA_MODELS", "LLAMA_CACHE", "XDG_CACHE_HOME"):
        run_env.pop(key, None)
    out = subprocess.run([sys.executable, "-m", "siliconbench", "models", "--json"],
                         env=run_env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    listed = {m["name"]: m for m in json.loads(out.stdout)}
    assert listed == {m.name: m.to_dict() for m in model_places.find(env=env, home=home)}
    table = subprocess.run([sys.executable, "-m", "siliconbench", "models"], env=run_env,
                           capture_output=True, text=True, timeout=120)
    assert table.returncode == 0 and "tiny:latest" in table.stdout, table.stderr
    assert "5 usable" in table.stdout


def test_hostile_and_broken_files_are_listed_with_why_and_nothing_runs(tmp_path):
    hub = tmp_path / "hub"
    marker = tmp_path / "pickle-ran"
    Marker.path = str(marker)
    cfg = json.dumps({"model_type": "llama"}).encode()
    hub_repo(hub, "a/pickled", {"config.json": cfg,
                                "pytorch_model.bin": pickle.dumps(Marker())})
    tiny_llama().save_pretrained(tmp_path / "remote", safe_serialization=True)
    remote = folder_files(tmp_path / "remote")
    remote["config.json"] = json.dumps({"model_type": "x", "auto_map": {
        "AutoModelForCausalLM": "modeling_x.XForCausalLM"}}).encode()
    hub_repo(hub, "a/remote-code", remote)
    write_gguf(tmp_path / "whole.gguf")
    whole = (tmp_path / "whole.gguf").read_bytes()
    hub_repo(hub, "a/broken-GGUF", {"truncated.gguf": whole[:100]})
    fifo_repo = hub_repo(hub, "a/fifo-GGUF", {})
    os.mkfifo(fifo_repo / "fifo.gguf")
    os.symlink("/dev/zero", fifo_repo / "zero.gguf")
    found = by_name(model_places.find(env={"HF_HUB_CACHE": str(hub)}, home=tmp_path / "none"))
    problems = {name: m.problem for name, m in found.items()}
    assert "pickled weights only" in problems["a/pickled"]
    assert "never runs" in problems["a/remote-code"]
    assert "not a readable GGUF file" in problems["a/broken-GGUF/truncated.gguf"]
    assert "not a regular file" in problems["a/fifo-GGUF/fifo.gguf"]
    # a link out of the cache's own tree is not followed (issue 51), /dev/zero included
    assert "links out of" in problems["a/fifo-GGUF/zero.gguf"]
    assert all(not m.engines for m in found.values())
    assert not marker.exists()


def test_ollama_digests_are_the_only_text_a_blob_path_is_made_of(tmp_path):
    root = tmp_path / "ollama"
    secret = tmp_path / "secret.gguf"
    write_gguf(secret)
    manifest = root / "manifests" / "registry.ollama.ai" / "library" / "evil" / "latest"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(json.dumps({"layers": [{"mediaType": "application/vnd.ollama.image"
                                                ".model", "digest": "../../secret.gguf"}]}))
    (found,) = model_places.find(env={"OLLAMA_MODELS": str(root)}, home=tmp_path / "none")
    assert "not sha256" in found.problem and not found.engines


def test_a_split_gguf_set_is_one_model_of_all_its_parts(tmp_path):
    cache = tmp_path / "llama"
    cache.mkdir()
    sizes = [write_gguf(cache / f"big-0000{i}-of-00002.gguf") for i in (1, 2)]
    (found,) = model_places.find(env={"LLAMA_CACHE": str(cache)}, home=tmp_path / "none")
    assert found.name == "big-00001-of-00002.gguf"
    assert found.parameters == sum(sizes)
    assert found.size == sum(p.stat().st_size for p in cache.iterdir())
