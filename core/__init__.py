"""SiliconBench's core: measurement, runs, results and their store. No Qt here."""

from importlib import metadata


def _version() -> str:
    try:
        return metadata.version("siliconbench")
    except metadata.PackageNotFoundError:
        pass
    import os
    import plistlib
    resources = os.environ.get("RESOURCEPATH")  # set by the Mac app's launcher (py2app)
    if resources:  # the bundle has no package metadata; its Info.plist has the version
        try:
            with open(os.path.join(resources, os.pardir, "Info.plist"), "rb") as f:
                return plistlib.load(f)["CFBundleShortVersionString"]
        except (OSError, KeyError, plistlib.InvalidFileException):
            pass
    return "0+unknown"  # a source tree that was never installed


__version__ = _version()
