"""A chart exported over a FIFO, a link to /dev/zero, a folder or a link to a file of the
user's elsewhere (tests/core/test_files_checked.py holds every other path to the same): the
chart is drawn in memory and written whole through siliconbench.core.files, so the link is
replaced and its target never written, and a folder is refused in a sentence; a FIFO nothing
reads and a link to a device are refused and left as they are (issue 51: a path the user
names is never replaced when it is a device or a FIFO). In a child
process: Qt writing into a FIFO would block this one (its timeout only guards the suite)."""

from __future__ import annotations

import pytest

from tests.helpers.hostile_files import CASES, OUTSIDE_TEXT, answer, in_child, plant

MAGIC = {"png": b"\x89PNG", "svg": b"<?xml"}
FORMATS = ("png", "svg")
# Every case's chart in one child (a Qt start and a Compare view cost 2.2 CPU-s a process
# here): each path is exported in turn, and what each export said is kept by its path.
CHILD = """
    import json, sys
    from PySide6.QtWidgets import QApplication
    app = QApplication([])
    from siliconbench.gui.charts.export import export_chart
    from siliconbench.gui.compare_view import CompareView
    from tests.helpers.recorded import gemm_runs
    view = CompareView()
    view.resize(1440, 700)
    view.show()
    view.set_records(gemm_runs())
    said = {}
    for path in sys.argv[1:]:
        try:
            export_chart(path, view.current_chart())
            said[path] = None
        except OSError as e:
            said[path] = [type(e).__name__, str(e)]
    print(json.dumps(said))
    """


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict:
    """{(case, format): (the path, the user's file outside, what the export said)}: every
    case planted in a folder of its own, then exported over by one child."""
    places = {}
    for case in CASES:
        for fmt in FORMATS:
            folder = tmp_path_factory.mktemp(f"{case}-{fmt}")
            outside = folder / "elsewhere" / "notes.txt"
            outside.parent.mkdir()
            outside.write_bytes(OUTSIDE_TEXT)
            path = folder / f"chart.{fmt}"
            plant(path, case, outside)
            places[case, fmt] = (path, outside)
    said = answer(in_child(CHILD, ("QT_QPA_PLATFORM", "offscreen"),
                           args=[str(path) for path, _ in places.values()]))
    return {key: (path, outside, said[str(path)]) for key, (path, outside) in places.items()}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("case", CASES)
def test_a_chart_export_never_writes_through_what_is_in_its_place(case, fmt, exported):
    import os
    import stat
    path, outside, refused = exported[case, fmt]
    if case == "folder":
        assert refused == ["NotWritable", f"{path} is a folder, so SiliconBench does not "
                                          "write a file there; move it aside or choose "
                                          "another name."]
    elif case == "fifo":
        assert refused == ["NotWritable", f"{path} is a FIFO that nothing reads, so "
                                          "SiliconBench does not write there."]
        assert stat.S_ISFIFO(os.lstat(path).st_mode)
    elif case == "dev_zero_link":
        assert refused == ["NotWritable", f"{path} is a device, so SiliconBench does not "
                                          "write there; choose a file's name."]
        assert path.is_symlink() and os.readlink(path) == "/dev/zero"
    else:
        assert refused is None
        assert not path.is_symlink() and path.read_bytes().startswith(MAGIC[fmt])
    assert outside.read_bytes() == OUTSIDE_TEXT
