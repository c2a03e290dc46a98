"""`run llm --model-path`: a user's own model files run on the engines that read them, with
the rows a preset gets, sized from the file; broken or hostile files are refused in one
sentence before anything runs, nothing stored, nothing of theirs executed. The files are made
by the engines' own writers: transformers' save_pretrained(safe_serialization=True) for a
small Llama and a small Qwen3-MoE, mlx-lm's quantize_model + save_model for a 4-bit folder,
gguf-py for a GGUF of an architecture llama.cpp does not know."""

import json
import pickle

import pytest

from siliconbench.core.kit.llm_shapes import kv_bytes
from tests.helpers.cli_processes import sb
from tests.helpers.framework_runs import cpu_read, store_a_triad  # noqa: F401  (a fixture)
from tests.helpers.model_files import SHORT, Marker, refused

# The runs' rows, settings and sizes are checked, not their numbers: the short timing protocol
# (conftest.SHORT_PROTOCOL), not QUICK's up to 1 s + 2 s a point; and where a test's store
# holds a CPU read bound (cpu_read), a run divides by it rather than measuring its own at
# 256 MB arrays (3.5 CPU-s a torch run; tests/frameworks/test_llm.py runs that path).
pytestmark = [pytest.mark.timeout(600), pytest.mark.usefixtures("short_protocol")]


def hf_folder(path, moe=False):
    """A tiny Llama or Qwen3-MoE as transformers saves it."""
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen3MoeConfig, Qwen3MoeForCausalLM
    common = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, vocab_size=256,
                  max_position_embeddings=512)
    model = Qwen3MoeForCausalLM(Qwen3MoeConfig(**common, head_dim=16, moe_intermediate_size=64,
                                               num_experts=8, num_experts_per_tok=2)) \
        if moe else LlamaForCausalLM(LlamaConfig(**common))
    model.save_pretrained(path, safe_serialization=True)
    return {n: p.numel() * p.element_size() for n, p in model.named_parameters()}


def bound_mb(rec) -> str:
    (row,) = [r for r in rec["rows"] if r["metric"] == "decode_roofline"]
    return row["note"]


@pytest.mark.parametrize("framework", ["torch", "mlx"])
@pytest.mark.parametrize("moe", [False, True], ids=["llama", "qwen3-moe"])
def test_a_hugging_face_folder_runs_with_the_rows_of_a_preset(tmp_path, cpu_read, framework,
                                                            moe):
    store_a_triad(tmp_path, cpu_read)
    folder = tmp_path / "my-model"
    tensors = hf_folder(folder, moe)
    r = sb("run", "llm", "--framework", framework, "--model-path", str(folder), "--dtype",
           "float32", *SHORT, home=tmp_path)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["status"] == "ok", rec.get("reason")
    assert {row["metric"] for row in rec["rows"]} >= {
        "prefill_tokens_per_s", "ttft_ms", "decode_tokens_per_s", "decode_roofline"}
    own = rec["settings"]["model_file"]
    assert (own["name"], own["format"], own["parameters"]) == \
        ("my-model", "safetensors", sum(tensors.values()) // 4)
    assert str(tmp_path) not in json.dumps(rec["settings"])
    assert all(row["point"]["preset"] == "my-model" for row in rec["rows"]
               if row.get("point"))
    # The bound's bytes, counted independently from transformers' own tensors: all but the
    # untied embedding, the experts at 2 of 8, and the float32 cache of 2.5 positions.
    read = sum(0 if "embed_tokens" in n else b * (2 / 8 if ".experts." in n else 1)
               for n, b in tensors.items())
    from siliconbench.core.kit.model_files import read_model
    shape = read_model(str(folder)).shape
    mb = (read + kv_bytes(shape, "float32", 2.5)) / 1e6
    assert f"over {mb:.1f} MB read per step" in bound_mb(rec)
    assert ("of the 8 experts a layer holds" in bound_mb(rec)) == moe


def test_an_mlx_community_4_bit_folder_runs_on_mlx_in_its_own_precision(tmp_path, cpu_read):
    store_a_triad(tmp_path, cpu_read)
    import mlx.core as mx
    from mlx.utils import tree_flatten
    from mlx_lm.models import llama
    from mlx_lm.utils import quantize_model, save_config, save_model
    args = dict(model_type="llama", hidden_size=128, num_hidden_layers=2,
                intermediate_size=256, num_attention_heads=4, num_key_value_heads=2,
                rms_norm_eps=1e-5, vocab_size=256, tie_word_embeddings=True)
    model = llama.Model(llama.ModelArgs(**args))
    mx.eval(model.parameters())
    model, config = quantize_model(model, dict(args), 64, 4)
    folder = tmp_path / "tiny-4bit"
    folder.mkdir()
    save_model(folder, model)
    save_config(config, folder / "config.json")
    stored = sum(v.nbytes for _, v in tree_flatten(model.parameters()))
    r = sb("run", "llm", "--framework", "mlx", "--model-path", str(folder), *SHORT,
           home=tmp_path)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["status"] == "ok", rec.get("reason")
    assert rec["params"]["dtype"] == "q4"           # the file's, not --dtype's default
    assert rec["settings"]["weight_bytes"] == stored
    r = sb("run", "llm", "--framework", "torch", "--model-path", str(folder), *SHORT,
           home=tmp_path)
    assert r.returncode == 2 and "runs on mlx, not on torch" in r.stderr


def test_hostile_and_broken_model_files_are_refused_before_anything_runs(tmp_path):
    marker = tmp_path / "pickle-ran"
    Marker.path = str(marker)
    pickled = tmp_path / "pickled"
    pickled.mkdir()
    (pickled / "config.json").write_text(json.dumps({"model_type": "llama"}))
    (pickled / "pytorch_model.bin").write_bytes(pickle.dumps(Marker()))
    assert "pickled weights only" in refused(tmp_path, pickled)
    assert not marker.exists()

    remote = tmp_path / "remote"
    hf_folder(remote)
    config = json.loads((remote / "config.json").read_text())
    config["auto_map"] = {"AutoModelForCausalLM": "modeling_evil.Evil"}
    (remote / "config.json").write_text(json.dumps(config))
    (remote / "modeling_evil.py").write_text(f"open({str(marker)!r}, 'w')\n")
    assert "never runs" in refused(tmp_path, remote)
    assert "never runs" in refused(tmp_path, remote, "mlx")
    assert not marker.exists()

    assert "no such file or folder" in refused(tmp_path, tmp_path / "missing")
    # GGUF files (llama.cpp's): tests/frameworks/test_llamacpp.py, which make test-llamacpp
    # runs where llama.cpp is installed (without it, that is the one sentence said first).


def test_a_file_s_shape_may_not_be_overridden(tmp_path):
    folder = tmp_path / "m"
    hf_folder(folder)
    r = sb("run", "llm", "--framework", "torch", "--model-path", str(folder), "--layers", "4",
           *SHORT, home=tmp_path)
    assert r.returncode == 2 and "a model file has its own" in r.stderr


def test_an_export_names_the_model_file_but_not_where_it_is(tmp_path):
    folder = tmp_path / "private" / "my-model"
    hf_folder(folder)
    r = sb("run", "llm", "--framework", "torch", "--model-path", str(folder), "--dtype",
           "float32", *SHORT, home=tmp_path)
    assert r.returncode == 0, r.stderr
    for extra, located in (([], False), (["--keep-paths"], True)):
        out = tmp_path / f"out{len(extra)}.json"
        e = sb("export", "-o", str(out), *extra, home=tmp_path)
        assert e.returncode == 0, e.stderr
        text = out.read_text()
        assert ("private" in text) == located
        assert json.loads(text)["runs"][0]["params"]["model_path"] == \
            (str(folder) if located else "my-model")
