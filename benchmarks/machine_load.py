"""Whether other work shared the machine while a benchmark ran: its ratios say little then."""

import os


def warn_if_busy() -> None:
    """Say so when the load average is above the number of cores."""
    load = os.getloadavg()[0]
    if load > (os.cpu_count() or 1):
        print(f"warning: load {load:.1f} on {os.cpu_count()} cores: other work shared the "
              "machine, so these ratios are unreliable; run again on a quiet machine")
