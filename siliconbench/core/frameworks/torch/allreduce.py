"""PyTorch's part of the allreduce workload (interface: siliconbench/core/workloads/allreduce.py): the
process group torchrun started (gloo on CPUs, NCCL on CUDA) and one checked all_reduce. MPS
tensors have no collective backend in PyTorch: such a run says so and offers gloo on the CPU."""

from __future__ import annotations

from siliconbench.core.frameworks.torch.launcher import (
    rank_device,
    refuse_backend,
    refuse_ranks,
)
from siliconbench.core.params import ParamError


class Group:
    def __init__(self, ctx, backend: str, world: int) -> None:
        import torch
        import torch.distributed as dist
        self.torch, self.dist, self.device = torch, dist, ctx.device
        # The parent refused these before starting (child.prepare); a rank says it again.
        if problem := refuse_backend(backend, str(ctx.device)):
            raise ParamError(problem)
        if backend == "auto":
            backend = "nccl" if ctx.device.type == "cuda" else "gloo"
        if ctx.device.type == "cuda":
            self.device = _rank_device(ctx, backend)
            torch.cuda.set_device(self.device)
        dist.init_process_group(backend, **_store(dist))
        self.rank, self.size, self.backend = dist.get_rank(), dist.get_world_size(), backend
        if self.size != world:
            raise RuntimeError(f"{self.size} of {world} ranks joined the group.")

    def agree(self, x: float) -> float:
        if self.size == 1:
            return x
        t = self.torch.tensor([x], dtype=self.torch.float64, device=self.device)
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX)
        return float(t.item())

    def checked_all_sum(self, count, dtype, base, expected, probes) -> AllReduce:
        return AllReduce(self, count, getattr(self.torch, dtype), base, expected, probes)


class AllReduce:
    """all_reduce sums in place: each call first copies the rank's input into the buffer it
    sums (an out-of-place all-reduce, as nccl-tests times it by default), so that every call
    sums known values and its result can be checked."""

    def __init__(self, g: Group, count, dtype, base, expected, probes) -> None:
        torch = self.torch = g.torch
        self.dist = g.dist
        self.x = torch.tensor(base, device=g.device).repeat(count // 4).to(dtype)
        self.y = torch.empty_like(self.x)
        self.expected = torch.tensor(expected, device=g.device).to(dtype)
        self.probes = torch.tensor(probes, device=g.device)
        self.probe_expected = torch.tensor([expected[i % 4] for i in probes],
                                           device=g.device).to(dtype)
        self.wrong = torch.zeros((), dtype=torch.int64, device=g.device)
        # On the CPU the probes are read in place through numpy (bfloat16 as its bits): a
        # few microseconds a call instead of four torch ops.
        self.host = None
        if g.device.type == "cpu":
            bits = torch.int16 if dtype == torch.bfloat16 else dtype
            self.host = (self.y.view(bits).numpy(), self.probes.numpy(),
                         self.probe_expected.view(bits).numpy())
            self.wrong = 0

    def call(self) -> None:
        self.y.copy_(self.x)
        self.dist.all_reduce(self.y)
        if self.host is not None:
            y, probes, want = self.host
            self.wrong += int((y[probes] != want).any())
        else:  # on the device, without a sync: CUDA keeps its calls queued back to back
            self.wrong += (self.y[self.probes] != self.probe_expected).sum()

    def wrong_calls(self) -> int:
        return int(self.wrong)

    def last_right(self) -> bool:
        return bool((self.y.view(-1, 4) == self.expected).all().item())

    def release(self) -> None:
        del self.x, self.y


def local_rank() -> tuple[int, int]:
    """This rank's index among the ranks on its machine, and how many they are: torchrun's
    LOCAL_RANK and LOCAL_WORLD_SIZE; RANK and WORLD_SIZE when every rank is on this machine
    (launcher.STORE_ENV), where several hosts' torchruns each count from 0. (0, 1) for a
    worker that no launcher started."""
    import os

    from siliconbench.core.frameworks.torch.launcher import STORE_ENV
    env = os.environ
    if env.get(STORE_ENV):
        return int(env.get("RANK", 0)), int(env.get("WORLD_SIZE", 1))
    return int(env.get("LOCAL_RANK", 0)), int(env.get("LOCAL_WORLD_SIZE", 1))


def _rank_device(ctx, backend: str):
    """This rank's GPU: for NCCL, launcher.rank_device's, which the run's context then times
    and sizes on, and the record keeps every local rank's; the parent refused the runs whose
    ranks cannot each have one (child.prepare), and a rank on another host says so here.
    gloo may share the GPU the spec names."""
    import torch
    index, here = local_rank()
    if problem := refuse_ranks(backend, ctx.device_id, here, torch.cuda.device_count):
        raise ParamError(problem)
    if backend != "nccl":
        return ctx.device
    gpus = [rank_device(ctx.device_id, backend, i) for i in range(here)]
    ctx.record_settings(rank_devices=gpus)
    device = torch.device(gpus[index])
    if device != ctx.device:
        ctx.device, ctx.sync = device, ctx.adapter.synchronizer(device)
    return device


def _store(dist) -> dict:
    """torchrun's RANK and WORLD_SIZE with the run's file store when every rank is on this
    machine (a TCPStore client would look up the name of 127.0.0.1: launcher.STORE_ENV);
    else nothing: its MASTER_ADDR and MASTER_PORT, the agents' TCPStore."""
    import os

    from siliconbench.core.frameworks.torch.launcher import STORE_ENV
    folder = os.environ.get(STORE_ENV)
    if not folder:
        return {}
    size = int(os.environ["WORLD_SIZE"])
    return {"store": dist.FileStore(os.path.join(folder, "ranks.store"), size),
            "rank": int(os.environ["RANK"]), "world_size": size}


def join(ctx, backend: str, world: int) -> Group:
    return Group(ctx, backend, world)
