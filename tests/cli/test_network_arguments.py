"""A distributed run's arguments that cannot work here are one sentence and exit 2 before
anything starts, and nothing is stored: backends the framework cannot use on this machine,
`--flag=--`, a hostfile nested too deep to read, a hostfile entry whose ssh and ips
disagree on which host it is, more NCCL ranks than GPUs."""

import json
import shutil
import sys

import pytest

from siliconbench.core.frameworks import DeviceInfo
from siliconbench.core.store import Store
from tests.helpers.cli_processes import cli_in_process
from tests.helpers.h200_records import h100

WORKLOADS = ["allreduce", "scaling"]


def refused(capsys, *args) -> str:
    rc, out, err = cli_in_process(capsys, "run", *args, "--quick")
    assert rc == 2, (out, err)
    [line] = err.splitlines()
    assert line.startswith("siliconbench: ") and "internal error" not in line, line
    assert Store().runs() == []
    return line.removeprefix("siliconbench: ")


def _not_here() -> list[tuple[str, str, str]]:
    cases = [("torch", "mpi", "SiliconBench starts them with torchrun"),
             ("torch", "nccl", "NCCL sums CUDA tensors only, and this run is on the CPU"),
             ("torch", "ring", "PyTorch has no ring backend"),
             ("mlx", "gloo", "MLX has no gloo backend"),
             ("mlx", "nccl", "NCCL sums GPU arrays only, and this run is on the CPU")]
    if sys.platform != "darwin":
        cases.append(("mlx", "jaccl", "this machine is not a Mac"))
    if shutil.which("mpirun") is None:
        cases.append(("mlx", "mpi", "mpirun, which is not on this machine's PATH"))
    return cases


@pytest.mark.parametrize("workload", WORKLOADS)
@pytest.mark.parametrize(("framework", "backend", "says"), _not_here())
def test_a_backend_the_framework_cannot_use_here_is_refused_first(capsys, workload, framework,
                                                                  backend, says):
    said = refused(capsys, workload, "--framework", framework, "--device", "cpu",
                   "--backend", backend)
    assert says in said


@pytest.mark.parametrize("workload", WORKLOADS)
@pytest.mark.parametrize("flag", ["--hosts", "--port", "--time-limit", "--backend",
                                  "--processes"])
def test_a_flag_given_as_double_dash_is_one_sentence(capsys, workload, flag):
    assert refused(capsys, workload, "--framework", "torch", f"{flag}=--") == \
        f"{flag} needs a value."


@pytest.mark.parametrize("workload", WORKLOADS)
@pytest.mark.parametrize("framework", ["mlx", "torch"])
def test_a_hostfile_nested_too_deep_is_one_sentence(capsys, tmp_path, workload, framework):
    deep = tmp_path / "hosts.json"
    deep.write_text('{"hosts": ' + "[" * 100_000 + "]" * 100_000 + "}")
    said = refused(capsys, workload, "--framework", framework, "--hosts", str(deep))
    assert said == (f"{deep} is not an mlx.launch hostfile (its JSON nests lists or objects "
                    "too deep to read).")


@pytest.mark.parametrize("entry", [{"ssh": "10.0.0.5", "ips": ["127.0.0.1"]},
                                   {"ssh": "user@10.0.0.5", "ips": ["127.0.0.1"]},
                                   {"ssh": "127.0.0.1", "ips": ["10.0.0.5"]}])
@pytest.mark.parametrize("framework", ["mlx", "torch"])
def test_a_hostfile_entry_whose_ssh_and_ips_disagree_is_refused(capsys, tmp_path, entry,
                                                                 framework):
    """mlx.launch took {"ssh": "10.0.0.5", "ips": ["127.0.0.1"]} for this machine's ranks
    and yet started them over SSH at 10.0.0.5 (exit 1, nothing on stderr)."""
    path = tmp_path / "hosts.json"
    path.write_text(json.dumps([{"ssh": "127.0.0.1", "ips": ["127.0.0.1"]}, entry]))
    said = refused(capsys, "allreduce", "--framework", framework, "--hosts", str(path))
    assert said.startswith(f"Host 2 of the hostfile is reached over SSH as {entry['ssh']} "
                           f"and its ranks connect over {entry['ips'][0]}: only one of them "
                           "is this machine's loopback")


def h100_nccl(status: str):
    """A local NCCL all-reduce the H100 ran (tests/data/h100/h100-nccl.json): with one rank
    ("ok"), and with two on its one GPU ("failed")."""
    return next(r for r in h100("h100-nccl") if r.status == status)


@pytest.fixture
def one_gpu(monkeypatch):
    """PyTorch's device list (which the parent reads, never importing torch) as the H100
    that recorded tests/data/h100/h100-nccl.json would give it: the CPU and one CUDA GPU."""
    import siliconbench.core.devices as devices
    rec = h100_nccl("ok")
    listed = [DeviceInfo("torch", "cpu", "CPU", "cpu"),
              DeviceInfo("torch", "cuda:0", rec.device_name, "gpu")]
    asked = []

    def discover_devices(names=None, on_found=None, fresh=True):
        asked.append(names)
        return [d for d in listed if d.framework in (names or ["torch"])]
    monkeypatch.setattr(devices, "discover_devices", discover_devices)
    return asked


@pytest.mark.parametrize("workload", WORKLOADS)
@pytest.mark.parametrize("backend", [[], ["--backend", "nccl"], ["--backend", "auto"]])
def test_more_nccl_ranks_than_gpus_is_refused_first(capsys, one_gpu, workload, backend):
    """On an H100: "DistBackendError: NCCL error ... invalid usage" once both ranks (the
    default --processes 2) had started on its one GPU."""
    said = refused(capsys, workload, "--framework", "torch", "--device", "cuda", *backend)
    assert said == ("NCCL runs one rank per GPU: 2 ranks need 2 GPUs and this machine has 1; "
                    "run --processes 1, or run on the CPU (--device cpu), where gloo needs no "
                    "GPU.")
    assert one_gpu == [["torch"]]


def test_ranks_of_every_loopback_host_are_counted_against_this_machines_gpus(capsys, one_gpu):
    said = refused(capsys, "allreduce", "--framework", "torch", "--device", "cuda",
                   "--processes", "1", "--hosts", "127.0.0.1,127.0.0.1")
    assert said.startswith("NCCL runs one rank per GPU: 2 ranks need 2 GPUs and this machine "
                           "has 1;")


@pytest.mark.parametrize("workload", WORKLOADS)
def test_several_nccl_ranks_on_one_named_gpu_are_refused_first(capsys, workload):
    said = refused(capsys, workload, "--framework", "torch", "--device", "cuda:1",
                   "--backend", "nccl")
    assert said == ("NCCL runs one rank per GPU, and --device cuda:1 puts all 2 ranks of "
                    "this machine on that one GPU; run --device cuda (a GPU each), or "
                    "--processes 1.")


def test_the_run_that_failed_on_the_h100_is_refused_first_and_its_one_rank_run_is_not(
        capsys, one_gpu):
    def args(rec) -> list[str]:
        p = rec.params
        return ["allreduce", "--framework", rec.framework, "--device", rec.device,
                "--backend", p["backend"], "--processes", str(p["processes"]),
                "--sizes", ",".join(map(str, p["sizes"])), "--dtypes", ",".join(p["dtypes"])]
    failed = h100_nccl("failed")
    assert "NCCL error" in failed.reason
    assert refused(capsys, *args(failed)).startswith(
        "NCCL runs one rank per GPU: 2 ranks need 2 GPUs and this machine has 1;")
    from siliconbench.core.launch import backend_refused
    ok = h100_nccl("ok")
    assert backend_refused(ok.framework, ok.params, ok.device) is None
