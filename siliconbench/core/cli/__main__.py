"""`python -m siliconbench.core.cli`: the command, as `siliconbench` runs it (the package's
first lines have set its Ctrl-C handler by now)."""

import sys

from siliconbench.core.cli import main

sys.exit(main())
