"""py2app bundle for macOS: `make app` on a Mac builds dist/SiliconBench.app.

A stub until the packaging work lands (icon, Info.plist document types, bundled torch)."""

from setuptools import setup

APP = ["gui/__main__.py"]
OPTIONS = {
    "arch": "arm64",  # torch and TensorFlow publish no Intel-Mac wheels any more
    "packages": ["core", "gui", "resources"],
    "plist": {
        "CFBundleName": "SiliconBench",
        "NSRequiresAquaSystemAppearance": False,  # follow the system's dark mode
    },
}

if __name__ == "__main__":
    setup(app=APP, options={"py2app": OPTIONS}, setup_requires=["py2app"])
