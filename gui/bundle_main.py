"""The Mac app's main script (setup_app.py's APP): opens the window, or, started by the runner
as `SiliconBench --worker ...`, is the worker child (core/worker.py) instead."""

import sys

from core.bundle import WORKER_FLAG

if sys.argv[1:2] == [WORKER_FLAG]:
    from core.worker import main as worker_main
    sys.exit(worker_main(sys.argv[2:]))

from gui.app import main  # noqa: E402  (the worker never loads Qt)

sys.exit(main(sys.argv[1:]))
