"""`python -m siliconbench.gui` opens the desktop app."""

import sys

from siliconbench.gui.app import main

sys.exit(main(sys.argv[1:]))
