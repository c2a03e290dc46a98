"""`python -m gui` opens the desktop app."""

import sys

from gui.app import main

sys.exit(main(sys.argv[1:]))
