"""SiliconBench: benchmarks for machine learning on Apple Silicon, NVIDIA GPUs and CPUs.

The one package the distribution installs. Its layers, from the bottom: core/ (values, the
store, the frameworks, the workloads, the runner, the command line; no Qt), gui/ (the desktop
app, PySide6 + pyqtgraph) and resources/ (the files both read). docs/architecture.md maps it."""

def _version() -> str:
    from importlib import metadata
    try:
        return metadata.version("siliconbench")
    except metadata.PackageNotFoundError:
        pass
    import os
    import plistlib
    resources = os.environ.get("RESOURCEPATH")  # set by the Mac app's launcher (py2app)
    if resources:  # the bundle has no package metadata; its Info.plist has the version
        try:
            from siliconbench.core.files import read_small
            plist = read_small(os.path.join(resources, os.pardir, "Info.plist"), 1 << 20,
                               "Info.plist", encoding=None)
            return plistlib.loads(plist)["CFBundleShortVersionString"]
        except (OSError, KeyError, plistlib.InvalidFileException):
            pass
    return "0+unknown"  # a source tree that was never installed


def __getattr__(name: str):
    # Computed on first use: `import siliconbench` must stay instant, so that the command's
    # Ctrl-C handler (siliconbench.core.cli) is in place within milliseconds of the start.
    if name == "__version__":
        globals()["__version__"] = version = _version()
        return version
    raise AttributeError(f"module 'siliconbench' has no attribute {name!r}")
