"""Model files as the engines' own writers make them (gguf-py, transformers), the Hugging Face
cache's layout, a pickle that proves it was loaded, and the one-sentence refusal a run of a
bad model file gets."""

from __future__ import annotations

import hashlib
import os
import struct
from pathlib import Path

import numpy as np

from siliconbench.core.store import Store
from tests.helpers.cli_processes import sb


def write_gguf(path, arch="llama", experts=0, used=0, layers=2, hidden=64, ffn=128, vocab=256):
    """A tiny GGUF as llama.cpp's converter writes one (gguf-py), dense or mixture of
    experts (the expert matrices stacked, as ffn_*_exps)."""
    import gguf
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name("tiny")
    w.add_context_length(4096)
    w.add_embedding_length(hidden)
    w.add_block_count(layers)
    w.add_feed_forward_length(ffn)
    w.add_head_count(4)
    w.add_head_count_kv(2)
    w.add_file_type(1)
    if experts:
        w.add_expert_count(experts)
        w.add_expert_used_count(used)
    w.add_tensor("token_embd.weight", np.zeros((vocab, hidden), np.float16))
    for i in range(layers):
        w.add_tensor(f"blk.{i}.attn_q.weight", np.zeros((hidden, hidden), np.float16))
        if experts:
            w.add_tensor(f"blk.{i}.ffn_gate_inp.weight", np.zeros((experts, hidden), np.float32))
            w.add_tensor(f"blk.{i}.ffn_up_exps.weight",
                         np.zeros((experts, ffn, hidden), np.float16))
        else:
            w.add_tensor(f"blk.{i}.ffn_up.weight", np.zeros((ffn, hidden), np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    expert_part = experts * (hidden + ffn * hidden) if experts else ffn * hidden
    return vocab * hidden + layers * (hidden * hidden + expert_part)


def tiny_llama():
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, vocab_size=256,
                      max_position_embeddings=512)
    return LlamaForCausalLM(cfg)


def hub_repo(cache, repo_id, files: dict):
    """huggingface_hub's layout: blobs named by their hash, snapshots/<commit>/ linking to
    them, refs/main naming the commit."""
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    commit = hashlib.sha1(repo_id.encode()).hexdigest()
    snap = repo / "snapshots" / commit
    (repo / "blobs").mkdir(parents=True)
    snap.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    for name, data in files.items():
        blob = hashlib.sha256(data).hexdigest()
        (repo / "blobs" / blob).write_bytes(data)
        os.symlink(f"../../blobs/{blob}", snap / name)
    return snap


def folder_files(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir()}


class Marker:
    """Unpickling this writes a file: the proof that a pickle was (or was not) loaded."""
    path = ""

    def __reduce__(self):
        return (open, (self.path, "w"))


def gguf_99_bytes(path: Path) -> Path:
    """The audit's file: one key whose array claims 2^62 one-byte elements at end of file."""
    key = b"a" * 51
    data = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", len(key)) + key \
        + struct.pack("<IIQ", 9, 0, 2**62)
    assert len(data) == 99
    path.write_bytes(data)
    return path


SHORT = ["--prompts", "8", "--depths", "0", "--gen-tokens", "4", "--quick", "--json",
         "--device", "cpu"]


def refused(tmp_path, path, framework="torch"):
    r = sb("run", "llm", "--framework", framework, "--model-path", str(path), *SHORT,
           home=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert not (tmp_path / "results.sqlite3").exists() or \
        not Store(tmp_path / "results.sqlite3").runs()
    return r.stderr
