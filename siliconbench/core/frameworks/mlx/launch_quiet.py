"""mlx.launch without its busy loop: MLX's own launcher, whose rank threads spin.

mlx.launch (mlx._distributed_utils.launch, 0.30 to 0.32 at least) gives each local rank a
thread that calls select() on the rank's stdout and stderr to read and on its stdin to write,
on every pass, whether or not it has anything to write. A pipe's free end is always writable,
so select() returns at once and the thread loops for as long as the rank runs: measured on a
2-core Linux VM, the launcher of a two-rank all-reduce used 7.2 CPU-s in a 7.9 s run (158
CPU-s over the test suite), a core the ranks being timed did not have.

SiliconBench gives the launcher an empty stdin and never writes to it (siliconbench.core.child),
so there is never anything to forward to a rank: this module runs mlx.launch's own `main`
with a select() that waits only for output to read, as its timeout says it meant to.
Everything else is mlx.launch's.

    python -m siliconbench.core.frameworks.mlx.launch_quiet MLX-LAUNCH-ARGUMENTS...
"""

from __future__ import annotations

import select
import sys


def select_reads(rlist, wlist, xlist, timeout=None):
    """select() on what there is to read; no stdin to write is ever ready, as none is sent."""
    readable, _, errors = select.select(rlist, [], xlist, timeout)
    return readable, [], errors


def main(argv: list[str]) -> int:
    from mlx._distributed_utils import launch
    launch.select = select_reads
    sys.argv = ["mlx.launch", *argv]
    return launch.main() or 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
