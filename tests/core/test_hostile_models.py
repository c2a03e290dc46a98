"""Model files made to hurt (issue 51, item 4): headers whose counts lie, layer counts no model
has, JSON nested 200,000 deep, folders nested 1,100 deep, links out of a cache, config values
of the wrong type, quantisation config.json claims but the weights do not hold. Each is read
within bounds of time (pytest-timeout, and a subprocess's timeout) and memory (tracemalloc's
peak in this process for every test, RLIMIT_AS on a subprocess); what a run cannot use is refused in one
sentence with exit 2 before anything starts or is stored, and one bad file in a place never
hides the others."""

from __future__ import annotations

import json
import os
import resource
import struct
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from siliconbench.core.kit import model_files, model_places
from siliconbench.core.kit.llm_shapes import ModelShape, shape_from_config, weight_bytes
from tests.helpers.estimates import refused, run
from tests.helpers.model_files import gguf_99_bytes, hub_repo, write_gguf

pytestmark = pytest.mark.timeout(120)
MEMORY_CAP = 2 << 30            # a subprocess reading a hostile file gets this much at most


def capped(*argv: str, env: dict, timeout: float = 90) -> subprocess.CompletedProcess:
    """`siliconbench ARGV` in a process of at most MEMORY_CAP of address space."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    return subprocess.run([sys.executable, "-m", "siliconbench.core.cli", *argv],
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **env}, preexec_fn=limit)


TEST_MEMORY = 512 << 20         # what any test here may allocate in this process, at most


@pytest.fixture(autouse=True)
def memory_bounded():
    """Every test here traced (tracemalloc sees Python's and numpy's allocations): its peak
    stays under TEST_MEMORY."""
    tracemalloc.start()
    try:
        yield
        assert tracemalloc.get_traced_memory()[1] < TEST_MEMORY
    finally:
        tracemalloc.stop()


def bounded(fn):
    """fn()'s result, the peak it added to Python-traced memory (numpy's too) and its
    seconds."""
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    start = time.perf_counter()
    out = fn()
    return out, tracemalloc.get_traced_memory()[1] - before, time.perf_counter() - start


def tiny_config(**changes) -> dict:
    return {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
            "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2,
            "vocab_size": 256, "max_position_embeddings": 512, "rms_norm_eps": 1e-5,
            "tie_word_embeddings": True, **changes}


def model_folder(folder: Path, config: dict, tensors: dict | None = None) -> Path:
    """config.json and one safetensors file (safetensors' own writer)."""
    from safetensors.numpy import save_file
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    save_file(tensors or {"model.embed_tokens.weight": np.zeros((256, 64), np.float16)},
              str(folder / "model.safetensors"))
    return folder


def gguf_with(path: Path, **fields) -> Path:
    """A tiny llama GGUF (gguf-py's writer) with some metadata replaced."""
    import gguf
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_context_length(4096)
    w.add_embedding_length(fields.get("hidden", 64))
    w.add_uint32("llama.block_count", fields.get("layers", 2))
    w.add_feed_forward_length(128)
    w.add_head_count(fields.get("heads", 4))
    w.add_head_count_kv(2)
    w.add_file_type(1)
    w.add_uint32("llama.vocab_size", fields.get("vocab", 256))
    if "rope" in fields:
        w.add_float32("llama.rope.freq_base", fields["rope"])
    for name in fields.get("tensors", ["token_embd.weight", "output.weight"]):
        w.add_tensor(name, np.zeros((256, 64), np.float16))
    for i in range(fields.get("blocks", 2)):
        w.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(64, np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


# ---------------------------------------------------------------- GGUF headers, bounded

@pytest.mark.timeout(30)
def test_the_99_byte_gguf_is_a_sentence_not_a_hang(tmp_path):
    """gguf-py looped on empty reads with memory growing to GBs (df950bd hangs here)."""
    path = gguf_99_bytes(tmp_path / "h.gguf")
    m, peak, seconds = bounded(lambda: model_files.describe_gguf(path))
    assert "claims 4,611,686,018,427,387,904 entries" in m.problem
    assert m.problem.startswith("h.gguf is not a readable GGUF file (") and not m.engines
    assert peak < 16 << 20 and seconds < 5


@pytest.mark.timeout(150)
def test_the_99_byte_gguf_in_a_cache_is_listed_with_why_and_refused_for_a_run(tmp_path):
    hub = tmp_path / "hub"
    write_gguf(tmp_path / "good.gguf")
    hub_repo(hub, "a/good-GGUF", {"good.gguf": (tmp_path / "good.gguf").read_bytes()})
    hub_repo(hub, "a/hostile-GGUF", {"h.gguf": gguf_99_bytes(tmp_path / "h").read_bytes()})
    env = {"HF_HUB_CACHE": str(hub), "HOME": str(tmp_path / "home"),
           "SILICONBENCH_HOME": str(tmp_path / "sb")}
    listed = capped("models", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    found = {m["name"]: m for m in json.loads(listed.stdout)}
    assert found["a/good-GGUF/good.gguf"]["engines"] == ["llamacpp"]
    assert "more than the 0 bytes left" in found["a/hostile-GGUF/h.gguf"]["problem"]
    snap = next((hub / "models--a--hostile-GGUF" / "snapshots").iterdir())
    ran = capped("run", "llm", "--framework", "mlx", "--model-path", str(snap / "h.gguf"),
                 env=env)
    assert ran.returncode == 2 and ran.stderr.count("\n") == 1, ran.stderr
    assert "not a readable GGUF file" in ran.stderr and "Traceback" not in ran.stderr
    assert not (tmp_path / "sb" / "results.sqlite3").exists()


LIES = {
    "string past the end": lambda: b"GGUF" + struct.pack("<IQQ", 3, 0, 1)
    + struct.pack("<Q", 2**40) + b"k",
    "a million keys in 40 bytes": lambda: b"GGUF" + struct.pack("<IQQ", 3, 0, 10**6)
    + b"\0" * 16,
    "2^60 tensors": lambda: b"GGUF" + struct.pack("<IQQ", 3, 2**60, 0) + b"\0" * 16,
    "arrays nested past 3": lambda: b"GGUF" + struct.pack("<IQQ", 3, 0, 1)
    + struct.pack("<Q", 1) + b"k" + struct.pack("<I", 9)
    + struct.pack("<IQ", 9, 1) * 5 + struct.pack("<IQ", 0, 0),
    "version 1": lambda: b"GGUF" + struct.pack("<IQQ", 1, 0, 0) + b"\0" * 8,
    "not GGUF": lambda: b"GGML" + b"\0" * 40,
}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("case", sorted(LIES))
def test_a_lying_header_is_refused_within_bounds(tmp_path, case):
    path = tmp_path / "lie.gguf"
    path.write_bytes(LIES[case]())
    m, peak, seconds = bounded(lambda: model_files.describe_gguf(path))
    assert m.problem.startswith("lie.gguf is not a readable GGUF file (") and not m.engines
    assert peak < 16 << 20 and seconds < 5


@pytest.mark.timeout(30)
def test_what_llama_cpp_would_reject_is_refused_before_a_run(machine, capsys, tmp_path):
    """Data past the end of the file, no token embedding: the run never starts to store
    "could not load" with no reason."""
    whole = gguf_with(tmp_path / "whole.gguf").read_bytes()
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(whole[:-100])
    assert "data ends past the end of the file" in model_files.describe_gguf(cut).problem
    assert "data ends past" in refused(machine, *run(capsys, "llm", "--framework", "mlx",
                                                     "--model-path", str(cut)))
    bare = gguf_with(tmp_path / "bare.gguf", tensors=["output.weight"])
    assert "holds no token_embd.weight tensor" in refused(
        machine, *run(capsys, "llm", "--framework", "mlx", "--model-path", str(bare)))


@pytest.mark.timeout(30)
@pytest.mark.parametrize("fields, said", [
    ({"vocab": 512}, "m.gguf: its token_embd.weight is 64 x 256 but its metadata gives hidden "
                     "size 64 and vocabulary 512, so llama.cpp would refuse it."),
    ({"layers": 3}, "m.gguf: its metadata gives 3 layers but it holds no tensors of layer 2, "
                    "so llama.cpp would refuse it."),
    ({"blocks": 3}, "m.gguf: its metadata gives 2 layers but it holds tensors of layer 2, so "
                    "llama.cpp would refuse it."),
])
def test_tensors_that_disagree_with_the_metadata_are_refused_before_a_run(
        machine, capsys, tmp_path, fields, said):
    """llama.cpp's loader refuses a wrong shape or a missing layer; the run stored "could
    not load" with no reason. Now said before the run, as llama.cpp would say it."""
    path = gguf_with(tmp_path / "m.gguf", **fields)
    assert refused(machine, *run(capsys, "llm", "--framework", "mlx", "--model-path",
                                 str(path))) == said
    whole = gguf_with(tmp_path / "whole.gguf")
    assert model_files.read_model(str(whole)).shape.vocab == 256     # a consistent one runs


# ---------------------------------------------------------------- sizes no model has

@pytest.mark.timeout(30)
def test_a_layer_count_is_counted_not_repeated():
    """ModelShape.matrices built one entry per layer: 5x10^7 layers took 3 minutes and
    5.5 GB. Now its sizes are arithmetic on the counts, at any layer count."""
    shape = ModelShape("llama", layers=10**7, hidden=64, heads=4, kv_heads=2, head_dim=16,
                       ffn=128, vocab=256, tied=True, rope_theta=1e4, rms_eps=1e-5,
                       max_positions=4096)
    (params, stored), peak, seconds = bounded(
        lambda: (shape.parameters, weight_bytes(shape, "q4")))
    per_layer = 64 * 64 * 2 + 32 * 64 * 2 + 3 * 128 * 64 + 2 * 64
    assert params == 10**7 * per_layer + 256 * 64 + 64
    assert stored > 0 and peak < 1 << 20 and seconds < 1


@pytest.mark.timeout(60)
@pytest.mark.parametrize("layers", [5 * 10**7, 2**40])
def test_an_absurd_layer_count_in_config_json_is_refused_in_a_sentence(machine, capsys,
                                                                        tmp_path, layers):
    folder = model_folder(tmp_path / "m", tiny_config(num_hidden_layers=layers))
    sentence = refused(machine, *run(capsys, "llm", "--framework", "mlx", "--model-path",
                                     str(folder)))
    assert sentence == (f"config.json gives layers {layers}, which no model has "
                        "(SiliconBench takes 1 to 4,096).")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fields, said", [
    ({"layers": 2**32 - 1}, "the GGUF file gives layers 4294967295, which no model has"),
    ({"vocab": 2**32 - 1}, "the GGUF file gives vocab 4294967295, which no model has"),
    ({"heads": 128}, "the GGUF file gives 128 attention heads for a hidden size of 64"),
    ({"rope": -1.0}, "the GGUF file gives rope theta -1.0, not a positive number."),
])
def test_an_absurd_gguf_size_is_refused_in_a_sentence(machine, capsys, tmp_path, fields, said):
    """block_count 2^32-1 was "internal error: MemoryError"; a vocabulary of 2^32-1 slipped
    past the memory check with a negative byte count."""
    path = gguf_with(tmp_path / "m.gguf", **fields)
    sentence = refused(machine, *run(capsys, "llm", "--framework", "mlx", "--model-path",
                                     str(path)))
    assert sentence.startswith(said), sentence


@pytest.mark.timeout(60)
@pytest.mark.parametrize("changes, said", [
    ({"rope_theta": {"x": 1}}, "config.json's rope_theta is a JSON object, not a positive "
                               "number."),
    ({"rope_theta": -1}, "config.json's rope_theta is -1, not a positive number."),
    ({"rms_norm_eps": "small"}, "config.json's rms_norm_eps is 'small', not a positive"),
    ({"num_attention_heads": 128}, "config.json gives 128 attention heads for a hidden size"),
    ({"num_key_value_heads": 3}, "config.json gives 3 key/value heads for 4 attention heads"),
    ({"tie_word_embeddings": "yes"}, "config.json's tie_word_embeddings is 'yes', not true"),
    ({"rope_scaling": {"rope_type": "llama3", "factor": [[1]]}},
     "config.json's rope_scaling gives factor as a JSON array"),
])
def test_config_values_of_the_wrong_type_are_refused_before_a_run(machine, capsys, tmp_path,
                                                                  changes, said):
    folder = model_folder(tmp_path / "m", tiny_config(**changes))
    sentence = refused(machine, *run(capsys, "llm", "--framework", "mlx", "--model-path",
                                     str(folder)))
    assert sentence.startswith(said), sentence


def test_a_published_config_still_reads():
    shape = shape_from_config(tiny_config(rope_theta=500000.0, rope_scaling={
        "rope_type": "llama3", "factor": 32.0, "high_freq_factor": 4.0,
        "low_freq_factor": 1.0, "original_max_position_embeddings": 8192}))
    assert (shape.layers, shape.head_dim, shape.rope_theta) == (2, 16, 500000.0)


@pytest.mark.timeout(60)
def test_auto_map_inside_text_config_is_remote_code(machine, capsys, tmp_path):
    folder = model_folder(tmp_path / "m", tiny_config(text_config={
        "auto_map": {"AutoModel": "modeling_evil.Model"}}))
    assert "never runs" in model_files.describe_folder(folder).problem
    assert "never runs" in refused(machine, *run(capsys, "llm", "--framework", "mlx",
                                                 "--model-path", str(folder)))


# ---------------------------------------------------------------- MLX quantisation

def test_mlx_quantisation_is_taken_from_the_weights_not_config_json_alone(tmp_path):
    said_4bit = model_folder(tmp_path / "claims", tiny_config(
        quantization={"group_size": 64, "bits": 4}))
    m = model_files.describe_folder(said_4bit)
    assert not m.engines and "says its weights are 4-bit (MLX) but no safetensors" in m.problem
    packed = {"model.layers.0.mlp.up_proj.weight": np.zeros((128, 8), np.uint32),
              "model.layers.0.mlp.up_proj.scales": np.zeros((128, 1), np.float16),
              "model.layers.0.mlp.up_proj.biases": np.zeros((128, 1), np.float16)}
    silent = model_folder(tmp_path / "silent", tiny_config(), packed)
    m = model_files.describe_folder(silent)
    assert not m.engines and "config.json does not say how" in m.problem
    wrong = model_folder(tmp_path / "wrong", tiny_config(
        quantization={"group_size": 64, "bits": 8}), packed)    # 8 columns: 4-bit of 64
    assert "no matrix is packed so" in model_files.describe_folder(wrong).problem
    right = model_folder(tmp_path / "right", tiny_config(
        quantization={"group_size": 64, "bits": 4}), packed)
    m = model_files.describe_folder(right)
    assert m.problem == "" and m.engines == ("mlx",)


# ---------------------------------------------------------------- discovery

def hub_with_good_model(tmp_path) -> Path:
    hub = tmp_path / "hub"
    write_gguf(tmp_path / "good.gguf")
    hub_repo(hub, "a/good-GGUF", {"good.gguf": (tmp_path / "good.gguf").read_bytes()})
    return hub


@pytest.mark.timeout(60)
def test_json_nested_200000_deep_is_one_file_skipped_not_the_listing(tmp_path):
    hub = hub_with_good_model(tmp_path)
    deep = ("[" * 200_000 + "]" * 200_000).encode()
    hub_repo(hub, "a/deep", {"config.json": deep, "model.safetensors": b"x"})
    ollama = tmp_path / "ollama"
    manifest = ollama / "manifests" / "registry.ollama.ai" / "library" / "deep" / "latest"
    manifest.parent.mkdir(parents=True)
    manifest.write_bytes(deep)
    found = model_places.find(env={"HF_HUB_CACHE": str(hub), "OLLAMA_MODELS": str(ollama)},
                             home=tmp_path / "none")
    by = {m.name: m for m in found}
    assert by["a/good-GGUF/good.gguf"].engines == ("llamacpp",)
    assert "nests deeper than any config" in by["a/deep"].problem
    assert "is not a readable Ollama manifest" in by["deep:latest"].problem


@pytest.mark.timeout(60)
def test_1100_nested_folders_are_cut_and_said(tmp_path):
    home = tmp_path / "home"
    models = home / ".lmstudio" / "models"
    (models / "pub" / "good").mkdir(parents=True)
    write_gguf(models / "pub" / "good" / "good.gguf")
    deep = models / "deep"
    deep.mkdir()
    fd = os.open(deep, os.O_RDONLY)       # 1,100 levels, made relative to stay under PATH_MAX
    try:
        for _ in range(1100):
            os.mkdir("d", dir_fd=fd)
            new = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = new
    finally:
        os.close(fd)
    try:
        found = model_places.find(env={}, home=home)
        assert [m.name for m in found] == ["pub/good/good.gguf"]
        assert found.notes == [f"LM Studio: folders more than 8 deep in {models} were not "
                               "looked in."]
    finally:
        remove_deep(deep)


def remove_deep(folder) -> None:
    """Remove a chain of folders named d nested too deep for shutil.rmtree, which recurses
    once per level (Python 3.11): left behind, it made pytest's clean-up of old temporary
    folders fail at the end of a later session, and that session's summary was never
    printed. Each step moves the chain's next level up in place of its parent."""
    while (folder / "d").exists():
        up = folder.with_name(folder.name + "-up")
        os.rename(folder / "d", up)
        os.rmdir(folder)
        os.rename(up, folder)
    os.rmdir(folder)


@pytest.mark.timeout(60)
def test_a_link_out_of_the_cache_is_never_read(tmp_path):
    """A snapshot's config.json linked to a file outside the cache (/etc/shadow in the
    audit): its text is never read, the model is listed with why."""
    hub = hub_with_good_model(tmp_path)
    outside = model_folder(tmp_path / "outside", tiny_config(model_type="secret-arch"))
    snap = hub_repo(hub, "a/linked", {"model.safetensors": b"x"})
    os.symlink(outside / "config.json", snap / "config.json")
    os.symlink(outside / "model.safetensors", snap / "model2.safetensors")
    found = {m.name: m for m in model_places.find(env={"HF_HUB_CACHE": str(hub)},
                                                 home=tmp_path / "none")}
    assert "config.json links out of" in found["a/linked"].problem
    assert found["a/linked"].architecture == "" and found["a/good-GGUF/good.gguf"].engines


@pytest.mark.timeout(60)
@pytest.mark.parametrize("place", ["Ollama", "LM Studio", "llama.cpp cache"])
def test_a_gguf_linked_out_of_its_place_is_not_read(tmp_path, place):
    good, secret = tmp_path / "good.gguf", tmp_path / "elsewhere" / "secret.gguf"
    write_gguf(good)
    secret.parent.mkdir()
    write_gguf(secret, arch="secretarch")
    home, ollama, cache = tmp_path / "home", tmp_path / "ollama", tmp_path / "llama"
    if place == "Ollama":
        blobs = ollama / "blobs"
        blobs.mkdir(parents=True)
        digest = "ab" * 32
        os.symlink(secret, blobs / f"sha256-{digest}")
        manifest = ollama / "manifests" / "registry.ollama.ai" / "library" / "m" / "latest"
        manifest.parent.mkdir(parents=True)
        manifest.write_text(json.dumps({"layers": [{
            "mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}"}]}))
    else:
        folder = home / ".lmstudio" / "models" / "pub" / "m" if place == "LM Studio" else cache
        folder.mkdir(parents=True)
        os.symlink(secret, folder / "linked.gguf")
        os.link(good, folder / "good.gguf")
    found = model_places.find(env={"OLLAMA_MODELS": str(ollama), "LLAMA_CACHE": str(cache)},
                              home=home)
    linked = [m for m in found if "links out of" in m.problem]
    assert len(linked) == 1 and linked[0].architecture == "" and linked[0].source == place
    assert all(m.architecture != "secretarch" for m in found)


@pytest.mark.timeout(60)
def test_a_cut_listing_is_said(tmp_path, monkeypatch, capsys):
    """10,000 cached models listed 9,900 without a word: the cut is said (here at 50)."""
    monkeypatch.setattr(model_files, "MAX_ENTRIES", 50)
    from siliconbench.core.kit import model_places
    monkeypatch.setattr(model_places, "MAX_ENTRIES", 50)
    hub = tmp_path / "hub"
    for i in range(60):
        (hub / f"models--a--m{i:03d}").mkdir(parents=True)
    found = model_places.find(env={"HF_HUB_CACHE": str(hub)}, home=tmp_path / "none")
    assert found.notes == [f"Hugging Face cache: {hub} holds more than 50 entries; only the "
                           "first 50 were looked at, so models past them are not listed."]
    from tests.helpers.cli_processes import cli_in_process
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    monkeypatch.setenv("HOME", str(tmp_path / "none"))
    rc, out, err = cli_in_process(capsys, "models")
    assert rc == 0 and err == f"siliconbench: {found.notes[0]}\n"
