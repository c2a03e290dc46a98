"""llama.cpp as a framework: the #4167 table as published references, the registration and
its install sentence (these run everywhere), and, where llama-cpp-python is installed
(`make test-llamacpp`), the tiny preset written as GGUF files and quantised by llama.cpp (the
parameters of the torch build, each type's size), the KV cache giving the whole sequence's
next token, the devices, and real runs through the CLI on the CPU (rows, units, flags, the
llama-bench table). llama.cpp loads only in child processes and the run's own."""

import importlib.util
import json
import re
from pathlib import Path

import pytest

from siliconbench.core.frameworks import FRAMEWORKS, runs_on
from siliconbench.core.frameworks.llamacpp import models
from siliconbench.core.kit.llm_shapes import kv_bytes
from siliconbench.core.reference import references
from siliconbench.core.workloads import llm
from tests.helpers.bounds import assert_cpu_decode_bound
from tests.helpers.cli_processes import ROOT, sb
from tests.helpers.framework_runs import cpu_read, store_a_triad  # noqa: F401  (a fixture)
from tests.helpers.llamacpp import HAVE, child, needs_llamacpp

TINY = llm.PRESETS["tiny"]
TABLE_4167 = ROOT / "tests" / "data" / "published" / "llama-cpp-4167.md"


# ---------------------------------------------------------------- everywhere

def test_the_4167_rows_are_published_references_at_their_build():
    recs = [r for r in references() if r.framework == "llamacpp"]
    assert len(recs) == 79
    for rec in recs:
        assert rec.source == "published" and rec.workload == "llm"
        assert rec.settings["llama_cpp_commit"] == "8e672ef"
        assert "8e672ef (1550)" in rec.provenance["software"]
        assert "newer builds are faster" in rec.provenance["software"]
        assert "discussions/4167" in rec.provenance["source"]
        assert re.fullmatch(r"Apple M\d( Pro| Max| Ultra)? GPU \(\d+-core\)", rec.device_name)
        assert rec.params["preset"] == "llama-2-7b" and rec.params["dtype"] in \
            ("float16", "q8_0", "q4_0")
        for row in rec.rows:
            assert row.unit == "tok/s" and row.value > 0
            # the points a run of the same test here makes (pp512, tg128 from an empty context)
            assert row.params in ({**llm.base_point(rec.params), "prompt": 512},
                                  {**llm.base_point(rec.params), "depth": 0, "gen_tokens": 128})


def test_the_4167_references_hold_the_table_s_numbers():
    """Every number of the table's 8e672ef rows (tests/data/published/llama-cpp-4167.md) is in a
    reference, at its chip, GPU cores and type, with the row's bandwidth; nothing else is."""
    text = TABLE_4167.read_text(encoding="utf-8")
    section = text[text.index("## llama.cpp on Apple Silicon"):]
    expected, bandwidth = {}, {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if not line.startswith("| M") or cells[9] != "8e672ef (1550)":
            continue
        bandwidth[f"Apple {cells[0]} GPU ({cells[1]}-core)"] = cells[2].rstrip("¹")
        for i, dtype in enumerate(("float16", "q8_0", "q4_0")):
            for metric, cell in zip(("prefill_tokens_per_s", "decode_tokens_per_s"),
                                    cells[3 + 2 * i:5 + 2 * i]):
                if cell != "—":
                    expected[(f"Apple {cells[0]} GPU ({cells[1]}-core)", dtype, metric)] = \
                        float(cell)
    recs = [r for r in references() if r.framework == "llamacpp"]
    found = {(r.device_name, r.params["dtype"], row.metric): row.value
             for r in recs for row in r.rows}
    assert found == expected
    assert found[("Apple M2 Ultra GPU (76-core)", "q4_0", "decode_tokens_per_s")] == 94.27
    for r in recs:
        assert r.provenance["hardware"].split(", ")[2].startswith(
            f"{bandwidth[r.device_name]} GB/s"), r.id
    # the discussion's column says 800 for M3 Ultra (S6); 819.2 was a model file's own figure
    assert bandwidth["Apple M3 Ultra GPU (80-core)"] == "800"


def test_llama_cpp_is_registered_with_the_extra_that_installs_it():
    fw = FRAMEWORKS["llamacpp"]
    assert (fw.module, fw.adapter) == ("llama_cpp", "siliconbench.core.frameworks.llamacpp.adapter")
    reason = fw.missing_reason()
    assert "pip install 'siliconbench[llamacpp]'" in reason and "cmake" in reason
    assert ". " not in reason and reason.endswith(".")              # one sentence
    assert "llamacpp" in runs_on(llm.WORKLOAD)
    pyproject = (ROOT / "pyproject.toml").read_text()
    # its server extra: run serve --framework llamacpp starts llama_cpp.server
    assert 'llamacpp = ["llama-cpp-python[server]>=0.3.36", "gguf>=0.19"]' in pyproject


@pytest.mark.skipif(importlib.util.find_spec("gguf") is None, reason="gguf is not installed")
def test_llama_2_7b_is_the_table_s_model():
    shape = llm.PRESETS["llama-2-7b"]
    # llama-bench: "llama 7B mostly F16 | 12.55 GiB | 6.74 B"
    assert round(shape.parameters / 1e9, 2) == 6.74
    from siliconbench.core.frameworks.llamacpp.models import expected_bytes
    assert round(expected_bytes(shape, "float16") / 2**30, 2) == 12.55


def test_the_terminal_table_of_a_real_run_has_llama_bench_s_columns():
    """tests/data/records/llm-llamacpp.json, a real tiny run on this machine's CPU."""
    import statistics

    from siliconbench.core.catalogue import catalogue
    from tests.helpers.recorded import recorded
    rec = recorded("llm-llamacpp")
    [(title, columns, lines)] = catalogue()["llm"].more_tables(rec)
    # llama-bench's markdown table: threads on a CPU backend, no ngl (nor dev: this record
    # predates saying whether operations could be offloaded)
    assert columns == ["model", "size", "params", "backend", "threads", "test", "t/s"]
    assert [line[5] for line in lines] == ["pp16", "pp64", "pp256", "tg8", "tg8 @ d64",
                                           "tg8 @ d256"]
    first = lines[0]
    assert first[:5] == ["llama ?B all F32", "353.25 KiB", "90.43 K", "CPU",
                         str(rec.settings["threads"])]
    assert rec.settings["weight_bytes"] == 361728 and rec.settings["parameters"] == 90432
    prefill = next(r for r in rec.rows if r.metric == "prefill_tokens_per_s")
    assert first[6] == f"{statistics.fmean(prefill.samples):.2f} ± " \
                       f"{statistics.stdev(prefill.samples):.2f}"


def test_the_terminal_table_says_no_repack_where_weights_were_not_repacked():
    """A run on a build with the AMX kernels loads as llama-cli --no-repack, which llama-bench
    cannot (its --repack, and the rpk column a reader would take it for, are an open PR): the
    table says so in a column of llama-cli's switch, on every line; the CPU alone is
    llama-bench's -dev none."""
    from siliconbench.core.catalogue import catalogue
    from tests.helpers.recorded import recorded
    rec = recorded("llm-llamacpp")
    [(_, columns, _)] = catalogue()["llm"].more_tables(rec)
    assert "no-repack" not in columns and "rpk" not in columns    # recorded: repacked
    rec.settings["repack"] = False
    rec.settings["op_offload"] = False
    [(_, columns, lines)] = catalogue()["llm"].more_tables(rec)
    assert columns == ["model", "size", "params", "backend", "threads", "dev", "no-repack",
                       "test", "t/s"]
    assert {(line[5], line[6]) for line in lines} == {("none", "yes")}
    assert lines[0][7] == "pp16"


def test_a_gpu_run_s_table_shows_ngl_not_threads():
    """llama-bench shows ngl where the backend is not the CPU's, threads where it is."""
    from siliconbench.core.frameworks.llamacpp.llm import Engine
    assert Engine.bench_columns({"backend": "CUDA", "op_offload": True}) == ["ngl"]
    assert Engine.bench_columns({"backend": "CPU", "op_offload": False}) == ["threads", "dev"]


# ---------------------------------------------------------------- with llama.cpp

@pytest.fixture(scope="module")
def tiny_files(tmp_path_factory):
    """The tiny preset written once and quantised by llama.cpp to each type, loaded: what the
    file and llama.cpp say of it, and the cache check."""
    if not HAVE:
        pytest.skip("llama-cpp-python is not installed")
    home = tmp_path_factory.mktemp("llamacpp-home")
    code = """
import json
from siliconbench.core.frameworks.llamacpp import models
from siliconbench.core.frameworks.llamacpp.llm import GgufModel
from siliconbench.core.frameworks import Device
from siliconbench.core.workloads import llm
shape = llm.PRESETS["tiny"]
out = {}
said = []
for dtype in models.FTYPES:
    path = models.model_file(shape, "tiny", dtype, 2, say=said.append)
    lm = GgufModel(path, Device("cpu"), 0, 2, shape.vocab)
    same, gap = lm.next_token_check(12)
    out[dtype] = {"path": str(path), "file": path.stat().st_size, "params": lm.parameters,
                  "size": lm.size, "desc": lm.desc, "types": models.tensor_types(path),
                  "same": same, "gap": gap, "repack": lm.repack, "buffers": lm.weight_buffers}
    lm.release()
again = models.model_file(shape, "tiny", "q4_0", 2, say=said.append)
# The q4_0 file loaded as on a build whose CPU backend has the AMX kernels (a native build on a
# Sapphire Rapids Xeon), whatever this CPU is: the switch llama.cpp is given, and what it did.
from siliconbench.core.frameworks.llamacpp import adapter
extra = adapter.cpu_extra_buffer_types()
adapter.cpu_extra_buffer_types = lambda: ["AMX", *extra]
lm = GgufModel(again, Device("cpu"), 0, 2, shape.vocab)
same, gap = lm.next_token_check(12)
as_amx = {"repack": lm.repack, "said": lm.extra_buffers, "buffers": lm.weight_buffers,
          "same": same}
lm.release()
print(json.dumps({"files": out, "said": said, "again": str(again), "extra": extra,
                  "as_amx": as_amx}))
"""
    return child(code, home)


@needs_llamacpp
def test_the_gguf_model_has_the_torch_and_mlx_builds_parameters(tiny_files):
    """The shape's count, which tests/frameworks/test_llm.py holds the torch and MLX builds of the same
    preset to (TorchLM.parameters, MlxLM.parameters)."""
    for dtype, f in tiny_files["files"].items():
        assert f["params"] == TINY.parameters == 90432, dtype


@needs_llamacpp
def test_quantised_files_are_smaller_by_their_bits_per_weight(tiny_files):
    files = tiny_files["files"]
    f16 = files["float16"]
    # llama.cpp's quantiser: matrices to the type (tiny's 64-wide rows take Q8_0/Q4_0 blocks of
    # 32), norms stay float32. The embedding table (tied: also the output) is quantised too.
    assert f16["types"]["blk.0.attn_q.weight"] == "F16"
    assert files["q8_0"]["types"]["blk.0.attn_q.weight"] == "Q8_0"
    assert files["q4_0"]["types"]["blk.0.ffn_down.weight"] == "Q4_0"
    assert files["q4_0"]["types"]["blk.0.attn_norm.weight"] == "F32"
    assert files["float32"]["size"] == pytest.approx(2 * f16["size"], rel=0.02)
    # 8.5 and 4.5 bits a weight against 16, over tensors mostly matrices (norms are 0.5%)
    assert files["q8_0"]["size"] / f16["size"] == pytest.approx(8.5 / 16, rel=0.03)
    assert files["q4_0"]["size"] / f16["size"] < 0.5
    assert files["q4_k_m"]["size"] < f16["size"]
    for dtype, f in files.items():
        assert f["file"] >= f["size"]            # the file holds the tensors and a header
    assert "Q4_0" in files["q4_0"]["desc"] and "F16" in f16["desc"]


@needs_llamacpp
def test_files_are_said_with_their_size_before_written_and_reused(tiny_files):
    said = tiny_files["said"]
    # the float16 source is written once; every quantised type is made from it
    writes = [s for s in said if s.startswith("writing ")]
    assert len(writes) == 2 and all(" of random weights to " in s for s in writes)
    from siliconbench.core.frameworks.llamacpp.models import expected_bytes
    from siliconbench.core.numbers import size
    for dtype, said_line in zip(("float32", "float16"), writes):
        assert f": {size(expected_bytes(TINY, dtype))} of random" in said_line
        assert tiny_files["files"][dtype]["size"] == pytest.approx(
            expected_bytes(TINY, dtype), rel=0.01)
    assert sum(s.startswith("quantising to ") for s in said) == 4
    assert len(said) == 6                        # the second call for q4_0 reused the file
    assert tiny_files["again"] == tiny_files["files"]["q4_0"]["path"]


@needs_llamacpp
def test_prefill_then_one_decode_gives_the_whole_sequence_s_next_token(tiny_files):
    for dtype, f in tiny_files["files"].items():
        assert f["same"], dtype
    assert tiny_files["files"]["float32"]["gap"] < 1e-3


def buffer_names(said: str) -> set[str]:
    """'CPU_REPACK 0.10 MiB, CPU_Mapped 0.05 MiB' -> {'CPU_REPACK', 'CPU_Mapped'}"""
    return {part.split()[0] for part in said.split(", ") if part}


def test_weights_stay_out_of_the_amx_kernels_that_crash():
    """llama.cpp's AMX kernels segfault on quantised weights (ggml-org/llama.cpp#20824): a
    build that has them loads with its extra buffer types off, as llama-cli --no-repack (which
    llama-bench cannot: its CPU rows are then not comparable); every other build keeps them
    on, as llama-bench runs. Decided from the build's list alone."""
    from siliconbench.core.frameworks.llamacpp.llm import extra_buffers
    use, said = extra_buffers(["AMX", "CPU_REPACK"])
    assert not use
    assert said == ("off, as llama-cli --no-repack; llama-bench has no switch for it "
                    "(ggml-org/llama.cpp PR #28968 is open): this build's AMX kernels crash on "
                    "quantised weights (ggml-org/llama.cpp#20824), and llama.cpp turns AMX, "
                    "CPU_REPACK off together, so its CPU rows are not comparable with "
                    "llama-bench's")
    assert extra_buffers(["CPU_REPACK"]) == (True, "on, as llama-bench runs (CPU_REPACK)")
    assert extra_buffers([]) == (True, "on, as llama-bench runs (none in this build)")


@needs_llamacpp
def test_every_load_keeps_its_weights_out_of_amx_and_says_where_they_went(tiny_files):
    """On an AMX Xeon the fixture's decodes crashed (SIGSEGV) before this rule; on any CPU
    each load says which buffers hold its weights, and a build with AMX, made here by adding
    it to the list the rule reads, loads with none of the extra types and decodes right."""
    extra = set(tiny_files["extra"])
    for dtype, f in tiny_files["files"].items():
        names = buffer_names(f["buffers"])
        assert names and "AMX" not in names, (dtype, f["buffers"])
        assert f["repack"] == ("AMX" not in extra), dtype
        if not f["repack"]:
            assert not names & extra, (dtype, f["buffers"])
    as_amx = tiny_files["as_amx"]
    assert as_amx["repack"] is False and as_amx["same"]
    assert as_amx["said"].startswith("off, as llama-cli --no-repack; llama-bench has no")
    assert not buffer_names(as_amx["buffers"]) & (extra | {"AMX"}), as_amx["buffers"]
    # Where this build repacks q4_0 (CPU_REPACK on x86 with AVX2, Arm with dot products), the
    # switch is seen to take effect: the same file's weights then stay in plain host memory.
    q4 = buffer_names(tiny_files["files"]["q4_0"]["buffers"])
    if "CPU_REPACK" in q4:
        assert "CPU_REPACK" not in buffer_names(as_amx["buffers"])


@needs_llamacpp
def test_each_context_keeps_a_sliding_window_s_cache_to_its_window(tmp_path):
    """llama-bench makes its contexts with swa_full false; llama.cpp's default (true) gives a
    GGUF's sliding-window layers (Gemma 2/3, gpt-oss) a full-size cache."""
    found = child("""
import json
import llama_cpp
from siliconbench.core.frameworks import Device
from siliconbench.core.frameworks.llamacpp import models
from siliconbench.core.frameworks.llamacpp.llm import GgufModel
from siliconbench.core.workloads import llm
shape = llm.PRESETS["tiny"]
default = llama_cpp.llama_context_default_params().swa_full
lm = GgufModel(models.model_file(shape, "tiny", "float32", 2), Device("cpu"), 0, 2,
               shape.vocab)
seen, made = [], llama_cpp.llama_init_from_model
def spy(model, params):
    seen.append(params.swa_full)
    return made(model, params)
llama_cpp.llama_init_from_model = spy
lm.open(32)
lm.release()
print(json.dumps({"default": default, "seen": seen}))
""", tmp_path)
    assert found == {"default": True, "seen": [False]}


@needs_llamacpp
def test_devices_are_llama_cpp_s_with_its_threads(tmp_path):
    found = child("""
import json
from siliconbench.core.frameworks.llamacpp import adapter
print(json.dumps({"devices": [d.to_dict() for d in adapter.devices()],
                  "software": adapter.software(), "threads": adapter.threads()}))
""", tmp_path)
    cpu = found["devices"][0]
    assert (cpu["id"], cpu["kind"], cpu["usable"]) == ("cpu", "cpu", True)
    assert f"{found['threads']} threads" in cpu["note"]
    assert found["software"]["llama_cpp_python"] == "0.3.36"
    assert found["software"]["llama_cpp_commit"] == "0c1e57098"
    assert "CPU" in found["software"]["backends"]
    gpus = [d for d in found["devices"] if d["kind"] == "gpu"]
    if not found["software"]["gpu_offload"]:     # this machine's CPU-only build
        assert [(g["usable"], "CMAKE_ARGS" in g["reason"]) for g in gpus] == [(False, True)]


def rows_of(rec: dict) -> dict:
    """{(metric, prompt or depth): row}; a prefill at a depth as (metric, (prompt, depth))."""
    def key(p: dict):
        if "prompt" in p and "depth" in p:
            return p["prompt"], p["depth"]
        return p.get("prompt", p.get("depth"))
    return {(r["metric"], key(r["params"])): r for r in rec["rows"]}


@needs_llamacpp
@pytest.mark.usefixtures("short_protocol")
@pytest.mark.parametrize("dtype, triad_stored", [("float16", True), ("q8_0", True),
                                                 ("q4_0", False)])
def test_a_tiny_run_on_the_cpu_makes_the_llm_rows(tmp_path, cpu_read, dtype, triad_stored):
    gb_s = store_a_triad(tmp_path, cpu_read) if triad_stored else None
    r = sb("run", "llm", "--framework", "llamacpp", "--device", "cpu", "--preset", "tiny",
           "--dtype", dtype, "--prompts", "8", "--depths", "0,8", "--gen-tokens", "4",
           "--quick", home=tmp_path)
    assert r.returncode == 0, r.stderr
    from siliconbench.core.store import Store
    [rec] = [x.to_dict() for x in Store(tmp_path / "results.sqlite3").runs(workload="llm")]
    bound = rec["settings"]["memory_bound"]
    # A CPU's bound: the read kernel, or the triad beside it where the read streams slower.
    assert_cpu_decode_bound(bound)
    if triad_stored:        # the stored run's, else one the run measured itself
        assert bound["gb_per_s"] == gb_s and "measured here by run " in bound["detail"]
    else:
        assert "by this run (llamacpp" in bound["detail"]
    assert rec["status"] == "ok", rec.get("reason")
    rows = rows_of(rec)
    base = {"preset": "tiny", "dtype": dtype, "batch": 1}
    # Two depths of one model, whose bytes differ by 1%: no fixed cost can be fit.
    assert ("decode_fixed_ms", None) not in rows
    assert set(rows) == {("prefill_tokens_per_s", 8), ("ttft_ms", 8),
                         ("prefill_tokens_per_s", (8, 8)), ("ttft_ms", (8, 8)),
                         ("decode_tokens_per_s", 0), ("decode_tokens_per_s", 8),
                         ("decode_roofline", 0), ("decode_roofline", 8), ("peak_memory", None)}
    assert rows[("prefill_tokens_per_s", 8)]["params"] == {**base, "prompt": 8}
    # llama-bench's -d applies to pp too: pp8 @ d8
    assert rows[("prefill_tokens_per_s", (8, 8))]["params"] == {**base, "prompt": 8, "depth": 8}
    assert rows[("decode_tokens_per_s", 8)]["params"] == {**base, "depth": 8, "gen_tokens": 4}
    for (metric, _), row in rows.items():
        unit = {"ttft_ms": "ms", "peak_memory": "bytes"}.get(metric, "tok/s")
        assert row["unit"] == unit and row["value"] > 0
        assert set(row["flags"]) <= {"noisy"}, row["flags"]      # the next token agreed
        if metric not in ("peak_memory", "decode_roofline"):
            assert len(row["samples"]) == row["stats"]["n"] >= 3
    ttft, prefill = rows[("ttft_ms", 8)], rows[("prefill_tokens_per_s", 8)]
    assert [8 / (ms / 1e3) for ms in ttft["samples"]] == pytest.approx(prefill["samples"])
    s = rec["settings"]
    assert s["parameters"] == TINY.parameters and s["n_gpu_layers"] == 0
    assert s["backend"] == "CPU" and s["llama_cpp_commit"] == "0c1e57098"
    # which kernels the weights went to: repacked or not, as the load said (never AMX)
    assert s["extra_buffers"].startswith("on," if s["repack"] else "off,")
    assert s["weight_buffers"] and "AMX " not in s["weight_buffers"]
    assert rec["software"]["llama_cpp_python"] == "0.3.36"
    # The bound: the file's tensors and the float16 cache per step, over the bandwidth.
    from siliconbench.core.frameworks.llamacpp.llm import step_bytes
    from siliconbench.core.frameworks.llamacpp.models import tensor_bytes
    stored = tensor_bytes(Path(s["gguf_file"]))
    assert s["weight_bytes"] == sum(stored.values())
    for depth in (0, 8):
        roof = rows[("decode_roofline", depth)]["value"]
        per_step = step_bytes(TINY, stored, depth, 4)
        assert roof == pytest.approx(bound["gb_per_s"] * 1e9 / per_step)
        decode = rows[("decode_tokens_per_s", depth)]
        assert decode["pct_of_peak"] == pytest.approx(100 * decode["value"] / roof)
    # The terminal: llama-bench's columns and tests.
    assert "llama-bench style" in r.stdout
    for word in ("model", "size", "params", "backend", "threads", "dev", "test", "t/s",
                 "pp8", "pp8 @ d8", "tg4 @ d8", "CPU"):
        assert word in r.stdout, word


@needs_llamacpp
@pytest.mark.parametrize("given, says", [
    (["--dtype", "q4"], "--dtype q4 does not run on llamacpp (llama.cpp's 4-bit type is "
                        "q4_0, or q4_k_m); choose one of"),
    (["--batch", "2"], "--batch: llama.cpp runs one sequence here, as llama-bench does; use "
                       "--batch 1."),
    (["--decode-loop", "compiled"], "--decode-loop compiled does not run on llamacpp; choose "
                                    "one of auto, eager."),
    (["--gpu-layers", "4"], "--gpu-layers offloads to a GPU: the cpu device runs none"),
])
def test_what_llama_cpp_cannot_run_is_one_sentence_and_exit_2(tmp_path, given, says):
    r = sb("run", "llm", "--framework", "llamacpp", "--device", "cpu", "--preset", "tiny",
           *given, home=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert says in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_the_own_triad_runs_on_every_core_and_computes_the_triad(monkeypatch):
    """A llama.cpp run on a CPU with no stored triad measures its decode bound with these ops:
    on one numpy thread it read 17.2 GB/s where llama.cpp's decode read its weights at 29.6
    and the run called the decode wrong. Each call now splits the arrays into one slice per
    core, each on a pool thread (numpy's ufuncs let go of the GIL), and the values are the
    triad's."""
    import threading
    from types import SimpleNamespace

    import numpy as np

    from siliconbench.core.frameworks.llamacpp import ops as llamacpp_ops
    monkeypatch.setattr(llamacpp_ops, "cores", lambda: 3)
    ctx = SimpleNamespace(device=SimpleNamespace(type="cpu"), device_id="cpu",
                          adapter=SimpleNamespace(empty_cache=lambda dev: None))
    ops = llamacpp_ops.Ops(ctx)
    size = 3 * llamacpp_ops.CHUNK + 12345          # slices of uneven chunks
    a, b, c = (ops.random((size,), "float32") + k for k in range(3))
    seen: list[tuple[int, int]] = []
    multiply = np.multiply

    def spy(x, y, out):
        seen.append((x.size, threading.get_ident()))
        return multiply(x, y, out=out)
    monkeypatch.setattr(llamacpp_ops.np, "multiply", spy)
    result = ops.triad(b, c, 3.0)()
    monkeypatch.setattr(llamacpp_ops.np, "multiply", multiply)
    threads = {t for _, t in seen}
    assert threading.get_ident() not in threads
    # every element once, in three slices of a whole chunk and a partial one each
    assert sorted(n for n, _ in seen) == [4115] * 3 + [llamacpp_ops.CHUNK] * 3
    assert sum(n for n, _ in seen) == size
    assert result == pytest.approx(b + 3 * c)          # STREAM's triad
    assert (ops.copy(a)() == a).all()
    ops.release()
    assert ops._pool is None


@pytest.fixture(scope="module")
def pool_and_depth(tmp_path_factory):
    """One tiny float32 model on the CPU: the thread pool each context gets, and where a
    prefill at a depth leaves the KV cache."""
    home = tmp_path_factory.mktemp("llamacpp-pool")
    code = """
import ctypes, json
from siliconbench.core.frameworks import Device
from siliconbench.core.frameworks.llamacpp import adapter, models
from siliconbench.core.frameworks.llamacpp.llm import GgufModel
from siliconbench.core.workloads import llm
real = adapter.threadpools()
made, attached, freed = [], [], []
def new(params):
    pool = real.new(params)
    made.append([params._obj.n_threads, params._obj.poll, pool])
    return pool
def attach(ctx, pool, batch_pool):
    attached.append([ctx, pool, batch_pool])
    real.attach(ctx, pool, batch_pool)
def free(pool):
    freed.append(pool)
    real.free(pool)
adapter.threadpools = lambda: real._replace(new=new, attach=attach, free=free)
shape = llm.PRESETS["tiny"]
lm = GgufModel(models.model_file(shape, "tiny", "float32", 2), Device("cpu"), 0, 2, shape.vocab)
lc = lm.lc
lm.open(64)
context = lm.ctx
span = lambda: [lc.llama_memory_seq_pos_min(lm.memory, 0), lc.llama_memory_seq_pos_max(lm.memory, 0)]
after = {}
for depth in (0, 24):
    call = lm.prompt_call(16, depth)
    filled = span()
    call(); call()
    after[depth] = [filled, span()]
lm.release()
print(json.dumps({"made": made, "attached": attached, "freed": freed, "context": context,
                  "after": after}))
"""
    return child(code, home)


@needs_llamacpp
def test_each_context_gets_llama_bench_s_thread_pool_freed_after_it(pool_and_depth):
    found = pool_and_depth
    [(threads, poll, pool)] = found["made"]
    assert pool and threads == 2 and poll == 50       # the run's threads; ggml's default poll
    # attached to the context as llama-bench does (no separate pool for batches), freed after
    assert found["attached"] == [[found["context"], pool, None]]
    assert found["freed"] == [pool]


@needs_llamacpp
def test_a_prefill_at_depth_fills_the_kv_cache_first_and_decodes_after_it(pool_and_depth):
    after = pool_and_depth["after"]
    # depth 0: an empty cache before each call (-1: no position), the prompt's 16 after it
    assert after["0"] == [[-1, -1], [0, 15]]
    # depth 24: 24 positions filled once, each call rewinds to them and adds the prompt's 16
    assert after["24"] == [[0, 23], [0, 39]]


@needs_llamacpp
@pytest.mark.usefixtures("short_protocol")
def test_a_run_gives_pp_at_each_depth_and_says_the_cpu_alone_on_every_row(tmp_path, cpu_read):
    """The rows, notes and settings of a run, not its numbers: the short protocol, and a
    stored triad, so that the run does not measure its own bound at 256 MB arrays (the tiny
    runs above do, at q4_0)."""
    store_a_triad(tmp_path, cpu_read)
    r = sb("run", "llm", "--framework", "llamacpp", "--device", "cpu", "--preset", "tiny",
           "--prompts", "8", "--depths", "0,16", "--gen-tokens", "2", "--dtype", "float32",
           "--quick", "--json", home=tmp_path)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    prefill = [r["params"] for r in rec["rows"] if r["metric"] == "prefill_tokens_per_s"]
    assert [(p["prompt"], p.get("depth")) for p in prefill] == [(8, None), (8, 16)]
    for row in rec["rows"]:
        if row["metric"] in ("prefill_tokens_per_s", "ttft_ms", "decode_tokens_per_s"):
            assert "the CPU alone (llama-bench -dev none)" in row["note"], row
    s = rec["settings"]
    assert s["op_offload"] is False and s["threadpool"].startswith("attached: ")
    # the record says all three: the devices, the repacking and the sliding-window cache
    assert s["devices"] == "none (the CPU alone), as llama-bench -dev none"
    assert s["swa_full"] is False and s["extra_buffers"].startswith(("on, as llama-bench",
                                                                     "off, as llama-cli"))
    assert ("llama_bench_comparable" in s) is (not s["repack"])
    from siliconbench.core.catalogue import catalogue
    from siliconbench.core.results import RunRecord
    [(_, columns, lines)] = catalogue()["llm"].more_tables(RunRecord.from_dict(rec))
    assert columns[-3:] == ["dev", "test", "t/s"]
    assert [line[-2] for line in lines] == ["pp8", "pp8 @ d16", "tg2", "tg2 @ d16"]


@needs_llamacpp
@pytest.mark.usefixtures("short_protocol")
def test_a_mixture_of_experts_file_loads_whole_and_its_bound_reads_k_of_e(tmp_path, cpu_read):
    """The tiny mixture as llama.cpp's converter writes Qwen3-MoE (stacked ffn_*_exps, the
    router in float32), quantised by llama.cpp: it loads with the shape's parameters, and the
    bound counts the stacked experts at 2 of 8 and every other tensor whole."""
    store_a_triad(tmp_path, cpu_read)
    r = sb("run", "llm", "--framework", "llamacpp", "--device", "cpu", "--preset", "tiny-moe",
           "--dtype", "q8_0", "--prompts", "8", "--depths", "0", "--gen-tokens", "4",
           "--quick", "--json", home=tmp_path)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["status"] == "ok", rec.get("reason")
    shape = llm.PRESETS["tiny-moe"]
    assert rec["settings"]["parameters"] == shape.parameters
    gguf_file = next((tmp_path / "models" / "gguf").glob("tiny-moe-*-Q8_0.gguf"))
    stored = models.tensor_bytes(gguf_file)
    assert models.tensor_types(gguf_file)["blk.0.ffn_gate_inp.weight"] == "F32"
    experts = sum(b for n, b in stored.items() if "_exps." in n)
    rest = sum(stored.values()) - experts - stored["token_embd.weight"]
    (bound,) = [row for row in rec["rows"] if row["metric"] == "decode_roofline"]
    mb = rest + experts * 2 / 8 + kv_bytes(shape, "float16", 2.5)
    assert f"over {mb / 1e6:.1f} MB read per step" in bound["note"]
    assert "of the 8 experts a layer holds" in bound["note"]


@needs_llamacpp
@pytest.mark.parametrize("preset", ["tiny", "tiny-moe"])
def test_a_gguf_file_s_metadata_gives_back_the_preset_s_shape(tmp_path, monkeypatch, preset):
    import gguf

    from siliconbench.core.kit.llm_shapes import shape_from_gguf
    monkeypatch.setenv("SILICONBENCH_HOME", str(tmp_path))
    shape = llm.PRESETS[preset]
    reader = gguf.GGUFReader(models.model_file(shape, preset, "float16", 2))
    fields = {k: f.contents() for k, f in reader.fields.items()}
    assert shape_from_gguf(fields, {t.name for t in reader.tensors}) == shape


@needs_llamacpp
@pytest.mark.usefixtures("short_protocol")
def test_a_users_gguf_file_runs_as_it_is_and_is_named_not_located(tmp_path, monkeypatch):
    """A GGUF file of the user's (here the tiny mixture, quantised by llama.cpp, copied out
    of the cache as a download would sit): loaded as it is, never rewritten, its own type the
    run's precision, the record naming it by its name alone."""
    monkeypatch.setenv("SILICONBENCH_HOME", str(tmp_path / "cache"))
    made = models.model_file(llm.PRESETS["tiny-moe"], "tiny-moe", "q4_0", 2)
    mine = tmp_path / "downloads" / "Tiny-MoE-Q4_0.gguf"
    mine.parent.mkdir()
    mine.write_bytes(made.read_bytes())
    before = mine.stat().st_mtime_ns
    r = sb("run", "llm", "--framework", "llamacpp", "--device", "cpu", "--model-path",
           str(mine), "--prompts", "8", "--depths", "0", "--gen-tokens", "4", "--quick",
           "--json", home=tmp_path)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["status"] == "ok", rec.get("reason")
    assert (rec["params"]["dtype"], rec["settings"]["gguf_type"]) == ("q4_0", "Q4_0")
    assert rec["settings"]["gguf_file"] == "Tiny-MoE-Q4_0.gguf"
    assert rec["settings"]["model_file"]["parameters"] == llm.PRESETS["tiny-moe"].parameters
    assert str(mine.parent) not in json.dumps(rec["settings"])
    assert mine.stat().st_mtime_ns == before
    assert not list((tmp_path / "models").glob("**/*.gguf"))    # nothing written for it


@needs_llamacpp
def test_a_broken_gguf_file_is_refused_before_anything_runs(tmp_path):
    """A truncated GGUF, one of an architecture llama.cpp does not know, a missing file: one
    sentence, exit 2, nothing stored, before a run's process starts."""
    from tests.helpers.model_files import refused, write_gguf
    whole = tmp_path / "whole.gguf"
    write_gguf(whole)
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(whole.read_bytes()[:200])
    assert "not a readable GGUF file" in refused(tmp_path, truncated, "llamacpp")
    unknown = tmp_path / "unknown.gguf"
    write_gguf(unknown, arch="nonesuch")
    assert "architecture 'nonesuch', which llama.cpp does not know" in \
        refused(tmp_path, unknown, "llamacpp")
    assert "no such file or folder" in refused(tmp_path, tmp_path / "missing.gguf",
                                               "llamacpp")
