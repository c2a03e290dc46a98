"""SiliconBench's core: measurement, runs, results and their store. No Qt here."""


def _version() -> str:
    from importlib import metadata  # a tenth of a second: only when the version is asked
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


def __getattr__(name: str):
    # core.__version__ is worked out on first use: the app's window must not wait for it.
    if name == "__version__":
        globals()[name] = version = _version()
        return version
    raise AttributeError(f"module 'core' has no attribute {name!r}")
