"""py2app bundle for macOS: `make app` on a Mac builds dist/SiliconBench.app (arm64).
Importing this file builds nothing: tests read APP, OPTIONS and PLIST from it on any OS."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
RESULT_UTI = "org.siliconbench.results"
RESULT_EXTENSION = "sbresults"   # siliconbench.core.export.RESULT_SUFFIX without the dot

# The main script; it also runs the worker child (`SiliconBench --worker run`), since the
# bundle's Contents/MacOS/python cannot start on its own.
APP = ["siliconbench/gui/bundle_main.py"]

PLIST = {
    "CFBundleName": "SiliconBench",
    "CFBundleDisplayName": "SiliconBench",
    "CFBundleIdentifier": "org.siliconbench.SiliconBench",
    "CFBundleShortVersionString": VERSION,
    "CFBundleVersion": VERSION,
    "NSHumanReadableCopyright": "MIT License",
    "NSRequiresAquaSystemAppearance": False,  # follow the system's dark mode
    "NSHighResolutionCapable": True,
    # MLX (an optional extra) needs macOS 14; torch's MPS backend needs 12.3.
    "LSMinimumSystemVersion": "12.3",
    "LSApplicationCategoryType": "public.app-category.developer-tools",
    # Double-clicking a result file opens it in the app (a QFileOpenEvent, see siliconbench/gui/app.py).
    "CFBundleDocumentTypes": [{
        "CFBundleTypeName": "SiliconBench Results",
        "CFBundleTypeRole": "Viewer",
        "LSHandlerRank": "Owner",
        "LSItemContentTypes": [RESULT_UTI],
        "CFBundleTypeIconFile": "SiliconBench.icns",
    }],
    "UTExportedTypeDeclarations": [{
        "UTTypeIdentifier": RESULT_UTI,
        "UTTypeDescription": "SiliconBench Results",
        "UTTypeConformsTo": ["public.json", "public.data"],  # JSON inside: any tool reads it
        "UTTypeIconFile": "SiliconBench.icns",
        "UTTypeTagSpecification": {"public.filename-extension": [RESULT_EXTENSION],
                                   "public.mime-type": ["application/json"]},
    }],
}

OPTIONS = {
    "arch": "arm64",  # torch and TensorFlow publish no Intel-Mac wheels any more
    "iconfile": "siliconbench/resources/SiliconBench.icns",  # from siliconbench/resources/icon.png (scripts/make_icon.py)
    # Whole package folders (siliconbench/core/ with every workload and framework package, siliconbench/core/frameworks/
    # <name>/, subpackages included, which only the worker imports by name, so the module
    # finder would miss them), not zipped: siliconbench/resources/ is read by path beside its __init__.py
    # (resources.read_text) and torch loads its dylibs from its package directory.
    "packages": ["siliconbench", "torch", "torchvision", "transformers", "numpy",
                 "scipy", "fastjsonschema", "rich", "platformdirs",
                 "psutil", "pyqtgraph", "PySide6", "shiboken6"],
    # Optional frameworks stay out: a bundle holding TensorFlow and MLX would be gigabytes;
    # the devices panel says how to measure them (siliconbench.core.frameworks.FrameworkInfo).
    "excludes": ["tensorflow", "tensorflow_metal", "keras", "mlx", "tkinter", "pytest"],
    "plist": PLIST,
}

if __name__ == "__main__":
    # Name, version and dependencies come from pyproject.toml (setuptools reads it); py2app
    # comes from the `app` extra (make app), never from setup_requires.
    from setuptools import setup
    setup(app=APP, options={"py2app": OPTIONS})
