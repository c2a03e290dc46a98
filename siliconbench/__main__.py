"""`python -m siliconbench`: the command (`siliconbench`), which opens the app where there is a
display and no subcommand."""

import sys

from siliconbench.core.cli import main

sys.exit(main())
