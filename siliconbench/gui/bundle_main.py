"""The Mac app's main script (setup_app.py's APP): opens the window, or, started by the runner
as `SiliconBench --worker ...`, is the worker child (siliconbench/core/worker.py) instead."""

import sys

from siliconbench.core.bundle import WORKER_FLAG

if sys.argv[1:2] == [WORKER_FLAG]:
    from siliconbench.core.worker import main as worker_main
    sys.exit(worker_main(sys.argv[2:]))

from siliconbench.gui.app import main  # noqa: E402  (the worker never loads Qt)

sys.exit(main(sys.argv[1:]))
