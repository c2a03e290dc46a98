"""SiliconBench's core: measurement, runs, results and their store. No Qt here."""

from importlib import metadata

try:
    __version__ = metadata.version("siliconbench")
except metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
