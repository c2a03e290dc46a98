"""A run of the user's own model file records no preset: the preset's default was left in its
parameters beside the file (a run of my-model.gguf said preset=llama-3.2-1b). The model is a
Hugging Face folder as transformers saves a tiny Llama (save_pretrained, safetensors)."""

from __future__ import annotations

from siliconbench.core.child import RunSpec, plan_run
from siliconbench.core.params import resolve
from tests.helpers.model_files import tiny_llama


def test_an_own_model_file_leaves_no_preset_in_the_parameters(tmp_path):
    from siliconbench.core.catalogue import workload
    path = tmp_path / "my-model"
    tiny_llama().save_pretrained(path, safe_serialization=True)
    given = {"model_path": str(path), "prompts": [8], "depths": [0]}
    assert resolve(workload("llm").params, given)["preset"] == "llama-3.2-1b"   # the default
    params = plan_run(RunSpec("llm", "torch", "cpu", given)).params   # what the record keeps
    assert params["preset"] is None and params["model_path"] == str(path)
    preset = plan_run(RunSpec("llm", "torch", "cpu", {"preset": "tiny"})).params
    assert preset["preset"] == "tiny"             # a preset's run keeps its preset
