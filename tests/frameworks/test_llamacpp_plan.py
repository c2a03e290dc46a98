"""llama.cpp's part of the run plan (siliconbench.core.plan; the rest: tests/core/test_plan.py):
a user's GGUF file's tensors come from the header the plan read, never read again."""

from __future__ import annotations

import json

import pytest

from siliconbench.core.child import RunSpec, UsageError, plan_run
from tests.helpers.llamacpp import needs_llamacpp


@needs_llamacpp
def test_a_gguf_file_s_tensors_come_from_the_plan(tmp_path):
    """llama.cpp's engine counts a user's GGUF file's tensors for the decode bound: from the
    header the plan read, not by reading it again in the run's process (llama.cpp's own load
    is the run). In a process of llama.cpp's own, as a run is."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    code = """
import json
from types import SimpleNamespace
from siliconbench.core.frameworks import isolate
isolate('llamacpp')
from siliconbench.core.child import RunSpec, plan_run
from siliconbench.core.frameworks.llamacpp import llm as engine_module, models
from siliconbench.core.kit.llm_presets import PRESETS
from siliconbench.core.plan import RunPlan
path = models.model_file(PRESETS["tiny"], "tiny", "float32", 2)
wanted = models.tensor_bytes(path)
plan = plan_run(RunSpec("llm", "llamacpp", "cpu", {"model_path": str(path)}))
plan = RunPlan.from_dict(json.loads(json.dumps(plan.to_dict())))
def again(p):
    raise AssertionError("the GGUF header was read again in the run")
models.tensor_bytes = again
engine_module.GgufModel = lambda *args: SimpleNamespace(parameters=0)
ctx = SimpleNamespace(device=SimpleNamespace(type="cpu"), plan=plan, warn=print,
                      inside=lambda *a: None)
engine = engine_module.Engine(ctx, engine_module.ModelShape(**plan.model.shape),
                              plan.thawed_params())
engine.load(lambda step, text: None)
print(json.dumps({"same": engine.stored == wanted, "n": len(wanted),
                  "sha": plan.model.sha256}))
"""
    root = Path(__file__).resolve().parents[2]
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root,
                       env=dict(os.environ, SILICONBENCH_HOME=str(tmp_path)), timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    said = json.loads(r.stdout.strip().splitlines()[-1])
    assert said["same"] and said["n"] > 10 and len(said["sha"]) == 64


@needs_llamacpp
def test_a_bad_model_file_is_one_sentence_before_anything_starts(tmp_path):
    """A GGUF file runs on llama.cpp alone: where it is not installed, that is the sentence."""
    (tmp_path / "model.gguf").write_bytes(b"not a gguf file")
    with pytest.raises(UsageError) as e:
        plan_run(RunSpec("llm", "llamacpp", "cpu", {"model_path": str(tmp_path / "model.gguf")}))
    assert "model.gguf" in str(e.value) and "\n" not in str(e.value)
