"""MLX on the CPU (mlx[cpu] on Linux): GEMM and bandwidth end to end through the CLI, its
devices (the GPU absent here, and why), an op the device refuses as an unsupported row, and the
unified memory read from Metal's device info. MLX only loads in child processes."""

import importlib.util
import json
import subprocess
import sys
from types import SimpleNamespace

import pytest

from siliconbench.core.frameworks.mlx import adapter as mlx_adapter
from tests.helpers.cli_processes import ROOT, sb

if importlib.util.find_spec("mlx") is None:
    pytest.skip("MLX is not installed", allow_module_level=True)


def child(code: str) -> dict:
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.usefixtures("short_protocol")   # the rows' shape, not their numbers
def test_gemm_through_the_cli(tmp_path):
    r = sb("run", "gemm", "--framework", "mlx", "--device", "cpu", "--sizes", "16,32",
           "--dtypes", "float32,bfloat16", "--quick", "--json", home=tmp_path)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["status"] == "ok" and rec["software"]["mlx"]
    assert [(row["params"]["size"], row["params"]["dtype"]) for row in rec["rows"]] == \
        [(16, "float32"), (32, "float32"), (16, "bfloat16"), (32, "bfloat16")]
    for row in rec["rows"]:
        assert row["unit"] == "TFLOPS" and row["value"] > 0
        assert set(row["flags"]) <= {"noisy"}  # bfloat16 products are checked, and right
        assert len(row["samples"]) == row["stats"]["n"]


@pytest.mark.usefixtures("short_protocol")
def test_bandwidth_through_the_cli(tmp_path):
    r = sb("run", "bandwidth", "--framework", "mlx", "--sizes-mb", "1,2", "--ops", "triad",
           "--quick", "--json", home=tmp_path)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert [row["params"]["size_mb"] for row in rec["rows"]] == [1, 2]
    assert all(row["metric"] == "gb_per_s" and row["value"] > 0 for row in rec["rows"])
    assert "mx.compile" in rec["settings"]["triad_kernel"]


def test_devices_say_why_the_gpu_is_absent():
    r = subprocess.run([sys.executable, "-m", "siliconbench.core.worker", "devices", "mlx"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    devices = {d["id"]: d for d in json.loads(r.stdout)["devices"]}
    assert devices["cpu"]["usable"] and devices["cpu"]["memory_bytes"] > 0
    if not devices["gpu"]["usable"]:  # Linux: mlx[cpu]
        assert "no GPU backend" in devices["gpu"]["reason"]


def test_an_op_the_device_refuses_is_an_unsupported_row():
    # The GPU is forced on a build without one, as float64 is on Apple GPUs: MLX refuses it
    # when the result is evaluated, and the row carries MLX's reason.
    out = child("""
import json
from siliconbench.core.frameworks import Device, isolate
from siliconbench.core.frameworks.mlx import adapter
isolate("mlx")
import mlx.core as mx
from siliconbench.core.context import RunContext
from siliconbench.core.measure import QUICK
from siliconbench.core.workloads import gemm
adapter.resolve("cpu")
device = Device("gpu", 0, mx.Device(mx.gpu))
events = []
ctx = RunContext(framework="mlx", device_id="gpu", adapter=adapter, device=device,
                 device_name="gpu", emit=events.append, settings=QUICK)
gemm.run(ctx, {"sizes": [8, 16], "dtypes": ["float64"], "tf32": False})
print(json.dumps([e["row"] for e in events if e["event"] == "row"]))
""")
    assert [row["params"]["size"] for row in out] == [8, 16]
    for row in out:
        assert row["value"] is None and row["flags"] == ["unsupported"]
        assert row["note"].startswith("float64 matmul is not supported on gpu: ")


def test_unified_memory_comes_from_metal_device_info():
    gpu = object()
    mx = SimpleNamespace(gpu=gpu, metal=SimpleNamespace(
        device_info=lambda: {"memory_size": 64 * 2**30, "architecture": "applegpu_g13s"}))
    assert mlx_adapter._device_info(mx, gpu)["memory_size"] == 64 * 2**30  # before mx.device_info
    mx.device_info = lambda device: {"memory_size": 32 * 2**30}
    assert mlx_adapter._device_info(mx, gpu)["memory_size"] == 32 * 2**30


# /proc/self/maps lines (address, perms, offset, dev, inode, path) as an mlx-cpu process has them.
MAPS = """\
7f1d01200000-7f1d01a00000 r-xp 00000000 08:01 1234 /v/site-packages/mlx/lib/libmlx.so
7f1d023db000-7f1d023f0000 r-xp 00000000 08:01 1240 /v/site-packages/mlx_cpu.libs/libblas-bd8a282c.so.3.10.0
7f1d00600000-7f1d00900000 r-xp 00000000 08:01 1241 /v/site-packages/mlx_cpu.libs/liblapack-86b2c207.so.3.10.0
7ffd5e1e0000-7ffd5e201000 rw-p 00000000 00:00 0 [stack]
"""


def test_which_blas_the_cpu_multiplies_with_is_read_from_the_process_maps():
    assert mlx_adapter.blas_from_maps(MAPS) == "reference BLAS 3.10.0"
    openblas = MAPS.replace("libblas-bd8a282c.so.3.10.0", "libopenblas64_p-r0-0cf96a72.3.23.so")
    assert mlx_adapter.blas_from_maps(openblas) == "OpenBLAS"
    assert mlx_adapter.blas_from_maps("7ffd5e1e0000-7ffd5e201000 rw-p 0 00:00 0 [stack]\n") == \
        "unknown"


def test_a_reference_blas_cpu_run_says_its_numbers_measure_the_library(tmp_path, monkeypatch):
    from siliconbench.core.frameworks import Device
    monkeypatch.setattr(mlx_adapter, "blas", lambda: "reference BLAS 3.10.0")
    words = mlx_adapter.caveat(Device("cpu", 0, None))
    assert "reference BLAS 3.10.0" in words and "far below this processor" in words
    assert mlx_adapter.caveat(Device("gpu", 0, None)) is None
    monkeypatch.setattr(mlx_adapter, "blas", lambda: "Accelerate")
    assert mlx_adapter.caveat(Device("cpu", 0, None)) is None
    # And a real run here carries the warning when this MLX build has the reference BLAS.
    r = sb("run", "gemm", "--framework", "mlx", "--sizes", "16", "--dtypes", "float32",
           "--quick", "--json", home=tmp_path)
    rec = json.loads(r.stdout)
    warned = any("measure that library" in w for w in rec["warnings"])
    assert warned == rec["software"]["cpu_blas"].startswith("reference BLAS")


def test_the_blas_caveat_stays_off_runs_that_multiply_nothing(tmp_path):
    """Copy and a*b+c never reach the BLAS: a bandwidth run on the same CPU has no such word."""
    r = sb("run", "bandwidth", "--framework", "mlx", "--sizes-mb", "1", "--ops", "copy",
           "--quick", "--json", home=tmp_path)
    rec = json.loads(r.stdout)
    assert rec["software"]["cpu_blas"]             # the library is still named in the record
    assert not any("measure that library" in w for w in rec["warnings"])
