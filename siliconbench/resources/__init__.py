"""The files the app ships (schema, reference runs, peaks, help, icons). They sit beside this
module as plain files in every form the app takes (a checkout, a wheel, the py2app bundle,
where setup_app.py copies this package unzipped), so a path is all that reading one needs.
importlib.resources, read through infer's model list, was 0.7% of the instructions to the
window's first paint (callgrind)."""

from pathlib import Path

FOLDER = Path(__file__).resolve().parent
LIMIT = 16 << 20      # the largest shipped text file is a few hundred KB


def read_text(name: str) -> str:
    """The text of a shipped file, e.g. read_text("suites.json") or "reference/x.json"
    (siliconbench.core.files.read_small: a regular file of a sane size)."""
    from siliconbench.core.files import read_small
    return read_small(FOLDER / name, LIMIT, "file SiliconBench ships")
