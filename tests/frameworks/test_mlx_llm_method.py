"""MLX's llm engine measured as mlx-lm measures it: the prompt as mlx_lm's generate_step
processes it (all but the last token in chunks of prefill_step_size, then the last as a step
of its own), and the wired limit as mlx_lm.generate.wired_limit sets it and puts it back. MLX
loads only in child processes (the test process holds torch)."""

import importlib.util
import json
import subprocess
import sys

import pytest

from tests.helpers.cli_processes import ROOT, sb
from tests.helpers.framework_runs import cpu_read, store_a_triad  # noqa: F401  (a fixture)

pytestmark = pytest.mark.skipif(importlib.util.find_spec("mlx_lm") is None,
                                reason="mlx-lm is not installed")


def in_mlx(code: str) -> dict:
    """The JSON the code prints last, run in a process of MLX's own."""
    r = subprocess.run([sys.executable, "-c", "from siliconbench.core.frameworks import "
                        "isolate\nisolate('mlx')\n" + code], capture_output=True, text=True,
                       cwd=ROOT, timeout=240)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_prefill_runs_all_but_the_last_token_in_chunks_then_the_last_alone():
    found = in_mlx("""
import json
import mlx.core as mx
from siliconbench.core.frameworks.mlx import llm as mlx_llm
from siliconbench.core.workloads import llm
mlx_llm.PREFILL_STEP = 4
lm = mlx_llm.MlxLM(llm.PRESETS["tiny"], "float32")
model, seen = lm.model, []
class Watched:
    def __getattr__(self, name):
        return getattr(model, name)
    def __call__(self, tokens, cache=None):
        seen.append(tokens.shape[1])
        return model(tokens, cache=cache)
call = lm.prefill(1, 10)
lm.model = Watched()
call()
first = seen
seen = []
call()
print(json.dumps({"calls": first, "again": seen}))
""")
    # 9 tokens in chunks of 4, the 10th as its own step; every call starts from an empty cache
    assert found == {"calls": [4, 4, 1, 1], "again": [4, 4, 1, 1]}


def test_the_first_token_is_the_greedy_token_of_the_whole_prompt():
    found = in_mlx("""
import json
import mlx.core as mx
from siliconbench.core.frameworks.mlx import llm as mlx_llm
from siliconbench.core.workloads import llm
mlx_llm.PREFILL_STEP = 3
lm = mlx_llm.MlxLM(llm.PRESETS["tiny"], "float32")
mx.random.seed(5)
call = lm.prefill(2, 8)
tokens = []
original = lm._sampled
def record(logits):
    y, logprobs = original(logits)
    tokens.append(y)
    return y, logprobs
lm._sampled = record
call()
mx.random.seed(5)
prompt = lm._tokens(2, 8)
whole = mx.argmax(lm.model(prompt)[:, -1, :], axis=-1)
print(json.dumps({"chunked": tokens[0].tolist(), "whole": whole.tolist()}))
""")
    assert found["chunked"] == found["whole"]


def test_prefill_makes_generate_steps_calls_up_to_its_first_token():
    """The installed mlx_lm's stream_generate and the prefill, watched alike: the model's
    calls (tokens in each), MLX's evaluations, buffer-cache clears and the streams they run
    on, from a new prompt cache to the first token. The one difference is the one the
    prefill's docstring gives: generate_step also queues its second step (a decode step)
    before it waits for the first token. This process imports all of mlx_lm (transformers
    with it), as the fidelity script's reference does."""
    r = subprocess.run([sys.executable, "-c", """
import json
import mlx.core as real
import importlib
generate = importlib.import_module("mlx_lm.generate")  # the package exports a function of the name
from benchmarks.llm_fidelity import token_ids
from siliconbench.core.frameworks.mlx import llm as mlx_llm
from siliconbench.core.workloads import llm

seen, streams = [], set()
class Watched:
    def __getattr__(self, name):
        return getattr(real, name)
    def stream(self, s):
        streams.add(type(s).__name__)
        return real.stream(s)
    def eval(self, *arrays):
        seen.append(["eval", "cache" if isinstance(arrays[0], list) else "token"])
        return real.eval(*arrays)
    def async_eval(self, *arrays):
        seen.append(["async_eval", len(arrays)])
        return real.async_eval(*arrays)
    def clear_cache(self):
        seen.append(["clear_cache"])
        return real.clear_cache()

lm = mlx_llm.MlxLM(llm.PRESETS["tiny"], "float32")
model = lm.model
class Model:
    def __getattr__(self, name):
        return getattr(model, name)
    def __call__(self, tokens, cache=None):
        seen.append(["model", tokens.shape[1]])
        return model(tokens, cache=cache)
lm.model = Model()
mlx_llm.PREFILL_STEP = 4
lm.mx = Watched()
call = lm.prefill(1, 10)
seen.clear()            # the prompt made before the call, untimed
call()
ours, ours_streams = seen, streams
seen, streams = [], set()
generate.mx = Watched()
prompt = real.random.randint(0, llm.PRESETS["tiny"].vocab, (10,))
for _ in generate.stream_generate(lm.model, token_ids(), prompt, max_tokens=1,
                                  prefill_step_size=4):
    pass
print(json.dumps({"ours": ours, "ours_streams": sorted(ours_streams), "mlx_lm": seen,
                  "mlx_lm_streams": sorted(streams)}))
"""], capture_output=True, text=True, cwd=ROOT, timeout=240)
    assert r.returncode == 0, r.stderr
    found = json.loads(r.stdout.strip().splitlines()[-1])
    theirs = found["mlx_lm"]
    first = theirs.index(["async_eval", 2])       # the last prompt token's step queued
    assert theirs[first + 1:first + 3] == [["model", 1], ["async_eval", 2]]   # the 2nd step
    assert found["ours"] == theirs[:first + 1] + theirs[first + 3:]
    assert found["ours"][-1] == ["eval", "token"]
    assert found["ours_streams"] == found["mlx_lm_streams"]


def test_the_wired_limit_is_set_to_the_recommended_working_set_and_put_back():
    """A device that reports a recommended working set (Metal's) gets it as the wired limit
    while the engine is loaded, and the previous limit back at release."""
    found = in_mlx("""
import json
import mlx.core as mx
from siliconbench.core.frameworks.mlx import llm as mlx_llm
from siliconbench.core.workloads import llm
limits = [7]
def set_wired_limit(n):
    before = limits[-1]
    limits.append(n)
    return before
mx.set_wired_limit = set_wired_limit
mx.device_info = lambda: {"max_recommended_working_set_size": 123456}
settings, warnings = {}, []
class Ctx:
    def record_settings(self, **kw):
        settings.update(kw)
    def warn(self, text):
        warnings.append(text)
engine = mlx_llm.Engine(Ctx(), llm.PRESETS["tiny"], {"dtype": "float32"})
engine.load(lambda step, text: None)
during = list(limits)
engine.release()
print(json.dumps({"during": during, "after": limits, "settings": settings,
                  "warnings": warnings}))
""")
    assert found["during"] == [7, 123456]
    assert found["after"] == [7, 123456, 7]
    assert found["settings"]["wired_limit"]["bytes"] == 123456
    # the tiny model's ~100 KB is above 0.9 of a 123,456-byte working set: mlx-lm's warning
    assert len(found["warnings"]) == 1 and "recommended working set" in found["warnings"][0]


@pytest.mark.usefixtures("short_protocol")
def test_a_cpu_run_says_it_left_the_wired_limit_alone(tmp_path, cpu_read):
    """Its settings, not its numbers: the short protocol, over a stored CPU bound (on this CPU
    MLX's own bound at 256 MB arrays was 7 of the run's 8.6 CPU-s)."""
    store_a_triad(tmp_path, cpu_read)
    r = sb("run", "llm", "--framework", "mlx", "--device", "cpu", "--preset", "tiny",
           "--prompts", "8", "--depths", "0", "--gen-tokens", "2", "--dtype", "float32",
           "--quick", "--json", home=tmp_path)
    assert r.returncode == 0, r.stderr
    wired = json.loads(r.stdout)["settings"]["wired_limit"]
    assert wired["bytes"] is None and "no Metal" in wired["detail"]


def test_the_generation_stream_is_thread_local_from_mlx_lm_0_31_3():
    """mlx-lm made generation_stream thread-local in 0.31.3 (ml-explore/mlx-lm#1090), not
    0.29: an older mlx-lm on a newer MLX decodes on a plain stream, and so does the run."""
    found = in_mlx("""
import json
from importlib import metadata
import mlx.core as mx
from siliconbench.core.frameworks.mlx import llm
kinds = {}
for v in ("0.29.1", "0.31.2", "0.31.3", "0.32.2"):
    metadata.version = lambda name, v=v: v
    kinds[v] = type(llm.generation_stream(mx)).__name__
print(json.dumps(kinds))
""")
    assert found["0.29.1"] == found["0.31.2"] == "Stream"
    assert found["0.31.3"] == found["0.32.2"] == "ThreadLocalStream"
