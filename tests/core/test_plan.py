"""One immutable plan per run (siliconbench.core.plan.RunPlan, made by child.plan_run where the
run starts): the parameters resolved, the precision decided once (a model file that stores its
weights quantised sets it, where check_params used to overwrite params["dtype"]), the user's
model file read once with the sha256 of its header, its shape, and the ceilings. It crosses to
the run's process as JSON, and the run there reads the model from it, never from the file's
header again."""

from __future__ import annotations

import dataclasses
import json
from types import SimpleNamespace

import pytest

from siliconbench.core.child import RunSpec, plan_run, prepare
from siliconbench.core.kit import model_files
from siliconbench.core.plan import RunPlan
from tests.helpers.model_files import tiny_llama

OWN = {"prompts": [4], "depths": [0], "gen_tokens": 2, "dtype": "float32"}


@pytest.fixture(scope="module")
def own_folder(tmp_path_factory):
    """A Hugging Face folder as transformers saves a tiny Llama (safetensors)."""
    path = tmp_path_factory.mktemp("own") / "my-model"
    tiny_llama().save_pretrained(path, safe_serialization=True)
    return path


def test_the_plan_is_frozen_and_crosses_as_json(own_folder):
    plan = plan_run(RunSpec("llm", "torch", "cpu", {"model_path": str(own_folder), **OWN},
                            ceilings={"bandwidth": [{"device_name": "x", "op": "read"}]}))
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.precision = "bfloat16"
    with pytest.raises(TypeError):
        plan.params["dtype"] = "bfloat16"
    with pytest.raises(TypeError):
        plan.model.shape["layers"] = 1
    with pytest.raises(AttributeError):
        plan.params["prompts"].append(8)        # a tuple
    again = RunPlan.from_dict(json.loads(json.dumps(plan.to_dict())))
    assert again == plan and again.to_dict() == plan.to_dict()
    # A workload is given a plain copy: what it changes is not the plan.
    params = plan.thawed_params()
    params["prompts"].append(8)
    assert plan.params["prompts"] == (4,) and params["prompts"] == [4, 8]


def test_a_model_file_is_read_once_into_the_plan_with_its_hash(own_folder):
    own = model_files.read_model(str(own_folder))
    plan = plan_run(RunSpec("llm", "torch", "cpu", {"model_path": str(own_folder), **OWN}))
    assert plan.model.sha256 == own.fingerprint and len(plan.model.sha256) == 64
    assert plan.model.name == own.file.name and plan.model.file["format"] == "safetensors"
    assert dict(plan.model.shape)["layers"] == own.shape.layers == 2
    # The record's parameters, as before: no preset beside the file (its default was left).
    assert plan.params["preset"] is None and plan.params["model_path"] == str(own_folder)
    assert plan.precision == plan.params["dtype"] == "float32"
    assert prepare(RunSpec("llm", "torch", "cpu", {"model_path": str(own_folder), **OWN})
                   ).params == plan.thawed_params()
    preset = plan_run(RunSpec("llm", "torch", "cpu", {"preset": "tiny"}))
    assert preset.params["preset"] == preset.model.name == "tiny" and preset.model.file is None
    assert preset.precision == "bfloat16"              # --dtype's default
    # Other workloads have no model and no precision of their own.
    gemm = plan_run(RunSpec("gemm", "torch", "cpu", {}))
    assert gemm.model is None and gemm.precision is None


def test_a_stored_quantisation_decides_the_precision_once():
    """A file that stores its weights quantised sets the precision in the plan; the check is
    a check (it changed params["dtype"] before)."""
    from siliconbench.core.kit.llm_plan import precision
    from siliconbench.core.workloads import llm
    assert precision({"dtype": "float16"}, SimpleNamespace(stored_dtype="q4_0")) == "q4_0"
    assert precision({"dtype": "float16"}, SimpleNamespace(stored_dtype=None)) == "float16"
    assert precision({"dtype": "float16"}, None) == "float16"
    assert not hasattr(llm, "check_params") and llm.WORKLOAD.checks == ""


def _mlx_here() -> bool:
    import importlib.util
    return importlib.util.find_spec("mlx_lm") is not None


@pytest.mark.usefixtures("short_protocol")
@pytest.mark.parametrize("framework", [
    "torch", pytest.param("mlx", marks=pytest.mark.skipif(not _mlx_here(),
                                                          reason="mlx-lm is not installed"))])
def test_the_run_reads_its_model_from_the_plan_not_the_file(own_folder, monkeypatch,
                                                            framework):
    """The run in its process, given the plan as the worker gets it (JSON): with the model
    file's header and config.json unreadable from then on, it runs (MLX builds from the
    plan's config.json), its record naming the file and its hash."""
    from siliconbench.core import files
    from siliconbench.core.context import RunContext
    from siliconbench.core.frameworks import framework as registry
    from siliconbench.core.measure import QUICK
    from siliconbench.core.workloads import bandwidth, llm
    monkeypatch.setattr(bandwidth, "OWN_BOUND_MB", (4,))    # the bound's arithmetic
    plan = plan_run(RunSpec("llm", framework, "cpu", {"model_path": str(own_folder), **OWN}))
    plan = RunPlan.from_dict(json.loads(json.dumps(plan.to_dict())))
    sha = plan.model.sha256
    assert plan.model.config["num_hidden_layers"] == 2
    adapter = registry(framework).load()
    device = adapter.resolve("cpu")

    def no_second_read(*args, **kwargs):
        raise AssertionError("the model file's header was read again in the run")
    monkeypatch.setattr(model_files, "_read_model", no_second_read)
    monkeypatch.setattr(model_files, "read_config", no_second_read)
    read_small = files.read_small

    def no_config(path, *args, **kwargs):
        assert str(path).endswith(".json") is False or "config" not in str(path), \
            "config.json was read again in the run"
        return read_small(path, *args, **kwargs)
    monkeypatch.setattr(files, "read_small", no_config)
    events = []
    ctx = RunContext(framework=framework, device_id="cpu", adapter=adapter, device=device,
                     device_name="test cpu", emit=events.append, settings=QUICK, plan=plan)
    llm.run(ctx, plan.thawed_params())
    settings = {}
    for e in events:
        if e["event"] == "settings":
            settings.update(e["settings"])
    assert settings["model_file"]["header_sha256"] == sha
    rows = [e["row"] for e in events if e["event"] == "row"]
    assert {r["params"]["preset"] for r in rows if r["metric"] != "decode_roofline"} == \
        {"my-model"}
    assert any(r["metric"] == "decode_tokens_per_s" and r["value"] for r in rows)
