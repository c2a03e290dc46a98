"""`run llm --context-sweep N`: prompts and depths doubling from 512 up to N (an empty context
first for decode), measured by a real run; refused in one sentence beside --prompts or
--depths or past the model's positions; and the estimate asks before a long sweep and
refuses one whose points do not fit."""

import json

import pytest

from siliconbench.core.estimate import estimate
from siliconbench.core.frameworks import DeviceInfo
from siliconbench.core.frameworks.torch.llm import Engine
from siliconbench.core.kit.headroom import MEMORY_SHARE
from siliconbench.core.kit.llm_shapes import memory_needed
from siliconbench.core.measure import SETTINGS_ENV
from siliconbench.core.params import resolve
from siliconbench.core.store import Store
from siliconbench.core.workloads import llm
from tests.conftest import SHORT_PROTOCOL
from tests.helpers.cli_processes import sb
from tests.helpers.framework_runs import cpu_read, store_a_triad  # noqa: F401  (a fixture)

pytestmark = pytest.mark.timeout(600)


def points(rec, metric, key):
    return sorted(r["params"][key] for r in rec["rows"] if r["metric"] == metric)


def test_a_context_sweep_measures_prompts_and_depths_doubling_up_to_n(tmp_path, cpu_read):
    store_a_triad(tmp_path, cpu_read)           # the bound's own measurement is not tested here
    r = sb("run", "llm", "--framework", "torch", "--preset", "tiny", "--context-sweep",
           "1024", "--gen-tokens", "4", "--dtype", "float32", "--quick", "--json",
           "--device", "cpu", home=tmp_path, env_extra={SETTINGS_ENV: SHORT_PROTOCOL})
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["status"] == "ok", rec.get("reason")
    assert rec["params"]["context_sweep"] == 1024
    assert points(rec, "prefill_tokens_per_s", "prompt") == [512, 1024]
    assert points(rec, "decode_tokens_per_s", "depth") == [0, 512, 1024]
    assert points(rec, "decode_roofline", "depth") == [0, 512, 1024]


def test_the_sweep_s_points_follow_n_and_the_model_s_positions():
    def swept(**given):
        params = resolve(llm.WORKLOAD.params, given)
        return llm.context_points(params, llm.shape_for(params))
    assert swept(context_sweep=32768) == ([512 << i for i in range(7)],
                                          [0, *(512 << i for i in range(7))])
    # N between two doublings is the last point; the deepest depth leaves room for the tokens
    # generated after it within the model's positions (tiny's 4096).
    positions = llm.PRESETS["tiny"].max_positions
    assert swept(preset="tiny", context_sweep=3000) == ([512, 1024, 2048, 3000],
                                                        [0, 512, 1024, 2048, 3000])
    assert swept(preset="tiny", context_sweep=positions, gen_tokens=100)[1][-1] == \
        positions - 100
    assert swept(preset="tiny", prompts=[8], depths=[0]) == ([8], [0])


@pytest.mark.parametrize("args, sentence", [
    (["--context-sweep", "1024", "--prompts", "8"],
     "--context-sweep sets the prompt lengths and context depths itself; leave out "
     "--prompts."),
    (["--context-sweep", "1024", "--prompts", "8", "--depths", "0"],
     "--context-sweep sets the prompt lengths and context depths itself; leave out "
     "--prompts and --depths."),
    (["--context-sweep", "8192"], "--context-sweep goes up to 8192 but tiny takes 4096 "
     "positions."),
    (["--context-sweep", "100"], "--context-sweep"),
])
def test_a_sweep_that_cannot_run_is_refused_in_one_sentence(tmp_path, args, sentence):
    r = sb("run", "llm", "--framework", "torch", "--preset", "tiny", *args, "--device", "cpu",
           home=tmp_path)
    assert r.returncode == 2
    assert sentence in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert Store(tmp_path / "results.sqlite3").runs() == []


def cpu(memory: float) -> DeviceInfo:
    return DeviceInfo("torch", "cpu", "Test CPU", "cpu", int(memory))


def test_the_estimate_asks_before_a_32k_sweep_and_refuses_what_does_not_fit():
    shape = llm.PRESETS["llama-3.2-1b"]

    def need(tokens):          # torch's engine on a CPU: its attention's mask, no scores
        held = Engine.attention_bytes(shape, "bfloat16", "cpu", 1, tokens)
        return memory_needed(shape, "bfloat16", 1, tokens, held)
    # Room for every point: asked about first, for its time on a CPU.
    roomy = cpu(2 * need(32768 + 128) / MEMORY_SHARE)
    est = estimate("llm", {"context_sweep": 32768}, roomy)
    assert est.points == 7 + 8 and not est.too_big
    assert any("may take about" in w for w in est.warnings("Test CPU", roomy.memory_bytes))
    # Room up to 2K: the longer points are skipped, said first.
    middle = cpu(need(2048 + 128) / MEMORY_SHARE * 1.01)
    est = estimate("llm", {"context_sweep": 32768}, middle)
    assert est.points == 3 + 4
    first = est.warnings("Test CPU", middle.memory_bytes)[0]
    assert "with a 4096-token prompt" in first and "with decode from depth 32768" in first
    assert first.endswith("those points will be skipped.")
    # No room for the weights: refused.
    small = cpu(need(1) / MEMORY_SHARE * 0.9)
    est = estimate("llm", {"context_sweep": 32768}, small)
    assert est.refusal("Test CPU", small.memory_bytes).startswith("Nothing of this run fits")


def test_the_command_asks_before_a_32k_sweep_it_cannot_ask_about(tmp_path):
    """Without a terminal to answer, a 32K sweep of llama-3.2-1b on this CPU is refused with
    the estimate's sentences (its time, or the memory it lacks), nothing run or stored."""
    r = sb("run", "llm", "--framework", "torch", "--context-sweep", "32768", "--device", "cpu",
           home=tmp_path)
    assert r.returncode == 2, r.stderr
    assert "Add --yes to run it anyway." in r.stderr or "Nothing of this run fits" in r.stderr
    assert Store(tmp_path / "results.sqlite3").runs() == []


def test_a_sweep_prefills_at_depth_with_its_first_prompt_only():
    """llama.cpp prefills at every depth too (llama-bench's -p x -d); a sweep to 8192 would
    then be 5 x 5 long prefills: it takes pp512 @ each depth, as a context chart reads, and
    no pair passes the model's positions."""
    from siliconbench.core.workloads import llm
    shape = llm.PRESETS["tiny"]         # 4096 positions
    sweep = {"context_sweep": 4096}
    prompts, depths = [512, 1024, 2048, 4096], [0, 512, 1024, 2048, 4092]
    assert llm.prefill_points(sweep, True, prompts, depths, shape) == \
        [(512, 0), (1024, 0), (2048, 0), (4096, 0), (512, 512), (512, 1024), (512, 2048)]
    assert llm.prefill_points(sweep, False, prompts, depths, shape) == \
        [(p, 0) for p in prompts]
    plain = llm.prefill_points({}, True, [128, 512], [0, 2048, 3968], shape)
    assert plain == [(128, 0), (512, 0), (128, 2048), (128, 3968), (512, 2048)]
