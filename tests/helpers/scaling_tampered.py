"""The scaling workload's ranks with one replica's weights changed after the timed steps, so
the test can see the replicas' comparison fail (loaded through SILICONBENCH_EXTRA_WORKLOADS)."""

from dataclasses import replace

from siliconbench.core.frameworks import runs_on
from siliconbench.core.workloads import scaling

WORKLOAD = replace(scaling.WORLD, name="scaling-tampered", module=__name__, entry="run",
                   frameworks=runs_on(scaling.WORLD))


def run(ctx, params):
    scaling.run_world(ctx, params, tamper=_nudge_rank_1)


def _nudge_rank_1(replica) -> None:
    if replica.group.rank != 1:
        return
    if hasattr(replica.model, "module"):        # torch's DDP wrapper
        import torch
        with torch.no_grad():
            next(replica.model.module.parameters()).add_(1e-3)
    else:
        from mlx.utils import tree_map
        replica.model.update(tree_map(lambda w: w + 1e-3, replica.model.parameters()))
