"""NCCL refuses two ranks of one group on one GPU ("invalid usage", Duplicate GPU detected,
seen on an H100 with `run allreduce --device cuda --backend nccl`, whose --processes is 2
by default): each rank takes the GPU of its index on its machine (torchrun's LOCAL_RANK;
mlx.launch's CUDA_VISIBLE_DEVICES), and a PyTorch run with more ranks here than GPUs is one
sentence. Checked without a GPU: the GPU
count is PyTorch's answer (torch.cuda.device_count in a rank), faked."""

import pytest
import torch

from siliconbench.core.context import RunContext
from siliconbench.core.frameworks.torch import adapter
from siliconbench.core.frameworks.torch.allreduce import _rank_device, local_rank
from siliconbench.core.frameworks.torch.launcher import STORE_ENV, rank_device, refuse_ranks
from siliconbench.core.launch import local_ranks
from siliconbench.core.params import ParamError


@pytest.mark.parametrize(("device", "backend", "index", "gpu"), [
    ("cuda", "nccl", 0, "cuda:0"), ("cuda", "nccl", 1, "cuda:1"), ("cuda", "auto", 3, "cuda:3"),
    ("cuda", "gloo", 1, "cuda"),            # gloo may share a GPU: the device as given
    ("cuda:1", "nccl", 0, "cuda:1"), ("cpu", "gloo", 1, "cpu")])
def test_nccl_gives_each_rank_here_the_gpu_of_its_index(device, backend, index, gpu):
    assert rank_device(device, backend, index) == gpu


def test_a_ranks_index_here_is_torchruns_local_rank(monkeypatch):
    monkeypatch.delenv(STORE_ENV, raising=False)
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    assert local_rank() == (1, 2)


def test_with_every_host_this_machine_a_ranks_index_here_is_its_rank(monkeypatch, tmp_path):
    """`--hosts 127.0.0.1,127.0.0.1`: one torchrun per host, each counting LOCAL_RANK
    from 0, and every rank on this machine's GPUs."""
    monkeypatch.setenv(STORE_ENV, str(tmp_path))
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    assert local_rank() == (3, 4)


def _rank_context(monkeypatch, index: int, ranks: int, gpus: int):
    monkeypatch.delenv(STORE_ENV, raising=False)
    monkeypatch.setenv("LOCAL_RANK", str(index))
    monkeypatch.setenv("LOCAL_WORLD_SIZE", str(ranks))
    monkeypatch.setattr(torch.cuda, "device_count", lambda: gpus)
    events = []
    ctx = RunContext(framework="torch", device_id="cuda", adapter=adapter,
                     device=torch.device("cuda:0"), device_name="", emit=events.append)
    return ctx, events


def test_a_rank_runs_on_its_gpu_and_the_record_says_each_ranks(monkeypatch):
    ctx, events = _rank_context(monkeypatch, index=1, ranks=2, gpus=2)
    assert _rank_device(ctx, "nccl") == torch.device("cuda:1")
    assert ctx.device == torch.device("cuda:1")      # what the workload sizes and times on
    assert {"event": "settings", "settings": {"rank_devices": ["cuda:0", "cuda:1"]}} in events


def test_gloo_ranks_keep_the_gpu_the_spec_names(monkeypatch):
    ctx, events = _rank_context(monkeypatch, index=1, ranks=2, gpus=1)
    assert _rank_device(ctx, "gloo") == torch.device("cuda:0") == ctx.device
    assert events == []


def test_a_rank_with_more_ranks_here_than_gpus_says_so(monkeypatch):
    """A rank on another host (the parent knows only this machine's GPUs) says it itself."""
    ctx, _ = _rank_context(monkeypatch, index=1, ranks=2, gpus=1)
    with pytest.raises(ParamError) as e:
        _rank_device(ctx, "nccl")
    assert str(e.value) == ("NCCL runs one rank per GPU: 2 ranks need 2 GPUs and this machine "
                            "has 1; run --processes 1, or run on the CPU (--device cpu), where "
                            "gloo needs no GPU.")


def test_the_gpus_are_counted_only_for_nccl_ranks_that_share_a_machine():
    def never() -> int:
        raise AssertionError("the GPUs were counted")
    assert refuse_ranks("gloo", "cuda", 4, never) is None
    assert refuse_ranks("auto", "cpu", 4, never) is None
    assert refuse_ranks("nccl", "cuda", 1, never) is None
    assert refuse_ranks("nccl", "cuda", 2, lambda: 2) is None


@pytest.mark.parametrize(("hosts", "world_sizes", "here"), [
    ("", None, 2), ("127.0.0.1,127.0.0.1", None, 4), ("127.0.0.1,127.0.0.1", [1, 2], 2),
    ("10.0.0.5,10.0.0.6", None, 0)])      # which host this machine is, only its ranks know
def test_the_parent_counts_the_ranks_it_starts_here(hosts, world_sizes, here):
    assert local_ranks({"hosts": hosts, "processes": 2, "world_sizes": world_sizes}) == here


def test_mlx_launch_gives_each_rank_on_a_host_its_own_gpu(monkeypatch, tmp_path):
    """mlx.launch's NCCL launch (read as installed) shows rank r the GPU r mod -n alone;
    from a hostfile without -n every rank saw GPU 0."""
    from mlx._distributed_utils import launch as mlx_launch

    from siliconbench.core.frameworks.mlx import launcher as mlx_launcher
    from siliconbench.core.hosts import parse
    hosts = parse("127.0.0.1,127.0.0.1").hosts
    cmd, _ = mlx_launcher.command("mlx.launch", ["python", "-m", "siliconbench.core.worker"],
                                  2, hosts, str(tmp_path), 40000, "nccl", {})
    started = []
    monkeypatch.setattr(mlx_launch, "_launch_with_io",
                        lambda cls, arguments, verbose: started.extend(arguments))
    assert cmd[:3] == ["python", "-m", "siliconbench.core.frameworks.mlx.launch_quiet"]
    monkeypatch.setattr("sys.argv", ["mlx.launch", *cmd[3:]])
    mlx_launch.main()
    seen = [next(e for e in env if e.startswith("CUDA_VISIBLE_DEVICES="))
            for (_rank, _host, _python, _cwd, _files, env, _cmd), _ in started]
    assert seen == [f"CUDA_VISIBLE_DEVICES={i}" for i in (0, 1, 0, 1)]
