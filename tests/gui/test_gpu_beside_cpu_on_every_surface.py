"""What was left of a GPU beside a laptop (issue 31), on the real records: the command's
compare table says its ratios in the app's words, the HTML report's chart of an H200 beside a
CPU is logarithmic, the queue counts an all-reduce's points (not its rows), a form's error
reads as English, and the first window fits a 1440x900 screen."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pytest
from PySide6.QtCore import QPoint, QRect, QSize

from siliconbench.core.compare_stats import compare, direction, resolve_sides
from siliconbench.core.report import to_html
from tests.helpers.cli_processes import cli_in_process
from tests.helpers.h200_records import FOLDER as H200
from tests.helpers.recorded import FOLDER as HERE
from tests.helpers.recorded import recorded

SVG = "{http://www.w3.org/2000/svg}"
CPU_GEMM = str(HERE / "gemm-torch-quick-8192.json")    # this machine's CPU, float32 N=8192


def h200_file(stem: str) -> str:
    path = H200 / f"{stem}.json"
    if not path.is_file():
        pytest.skip(f"the H200 records are not here ({H200})")
    return str(path)


# ---------------------------------------------------------------- siliconbench compare

def test_compare_command_says_how_many_times_faster_or_slower(capsys):
    """50.7 TFLOPS against the CPU's 0.0710 read '0.001×', and 0.0710 against 360 '0.000×'
    (a ratio nobody reads); now the app's words, from the app's function."""
    gemm, tf32 = h200_file("h200-gemm"), h200_file("h200-gemmtf32")
    cases = (([gemm, CPU_GEMM], "714× slower"), ([tf32, CPU_GEMM], "≈5,080× slower"),
             ([CPU_GEMM, tf32], "≈5,080× faster"))
    for files, said in cases:
        rc, out, err = cli_in_process(capsys, "compare", *files)
        assert rc == 0, err
        line = next(t for t in out.splitlines() if "Throughput (TFLOPS)" in t)
        assert said in line
        assert not re.search(r"\b0\.00\d×", out)
    # Paired against the TF32 run where no plain float32 one was given: the cell says so,
    # as the app's does.
    assert "unlike: TF32 on vs off" in line
    # The words are the app's own function's (siliconbench.core.compare_stats, which Compare's cells use).
    from siliconbench.core.compare_stats import ratio_words
    for files, said in cases:
        (row,) = [r for r in compare(resolve_sides(files)).rows if r.metric == "tflops"]
        assert ratio_words(row.cells[1].ratio, direction(row.metric, row.unit)) == said


# ---------------------------------------------------------------- the HTML report's chart

def _charts(page: str) -> list[ET.Element]:
    return [ET.fromstring(svg) for svg in re.findall(r"<svg .*?</svg>", page, re.S)]


def _bar_height(svg: ET.Element, side: str) -> float:
    (bar,) = [r for r in svg.iter(f"{SVG}rect")
              if (r.findtext(f"{SVG}title") or "").startswith(side)]
    return float(bar.get("height"))


def test_report_draws_a_gpu_beside_a_cpu_on_a_log_axis(tmp_path):
    """On a linear axis the CPU's 0.0710 TFLOPS beside the H200's 50.7 was a bar 0.3 px high
    (the report's 'one thin bar'): the bars span 714x, more than the app's 30x, so the axis is
    logarithmic, each decade labelled, and each bar stands as high as its logarithm."""
    # The TF32 run's TFLOPS, unlike the plain float32 beside it, is left out.
    page = to_html(compare(resolve_sides([h200_file("h200-gemm"), h200_file("h200-gemmtf32"),
                                          CPU_GEMM])))
    charts = {svg.get("aria-label"): svg for svg in _charts(page)}
    tflops = charts["Throughput"]
    gpu, cpu = _bar_height(tflops, "NVIDIA H200"), _bar_height(tflops, "AMD EPYC")
    assert cpu > 0.2 * 220                   # a fifth of the plot, where it was 0.3 px
    assert tflops.get("data-scale") == "log"
    ticks = [t.text for t in tflops.iter(f"{SVG}text") if t.get("class") == "tick"]
    assert ticks == ["0.01", "0.1", "1", "10", "100"]
    foot = 0.01                               # the lowest tick: the bars stand on it
    assert gpu / cpu == pytest.approx(math.log10(50.69 / foot) / math.log10(0.07102 / foot),
                                      rel=0.01)
    assert "Log scale: the bars span more than 30×." in page
    # The H200's two temperatures (54 and 39 °C) are a reading, not an amount bars add up
    # to: their table row, no chart (report.charted).
    assert "Highest temperature" not in charts and "Highest temperature" in page
    assert page.count("Log scale") == 1


def test_report_says_where_a_cell_was_not_paired_like_with_like():
    """As the app's cell and the command's verdict say it: the CPU's plain float32 against
    the H200's TF32 run."""
    page = to_html(compare(resolve_sides([CPU_GEMM, h200_file("h200-gemmtf32")])))
    assert "≈5,080× faster · unlike: TF32 on vs off</td>" in page


def test_the_app_and_the_report_share_one_log_rule():
    from siliconbench.core.numbers import LOG_SPAN, needs_log_axis
    from siliconbench.gui.charts import axes
    assert LOG_SPAN == 30 and axes.LOG_SPAN is LOG_SPAN
    assert needs_log_axis([1.0, 31.0, None, 0.0]) and not needs_log_axis([1.0, 30.0, -5.0])
    assert not needs_log_axis([]) and not needs_log_axis([0.0, None])


# ---------------------------------------------------------------- the queue and the form

@pytest.mark.parametrize(("rec", "points"), [
    ("allreduce-torch", 4),     # 2 sizes x 2 dtypes, 12 rows
    ("h200-allred", 4),         # the H200's: 12 rows and its highest temperature
    ("gemm-torch", 2),
])
def test_a_done_run_counts_its_points_not_its_rows(rec, points):
    from siliconbench.core.runner import RunSpec
    from siliconbench.gui.queue_view import outcome_text
    from siliconbench.gui.run_queue import OK, RunJob
    from tests.helpers.h200_records import h200
    record = h200(rec) if rec.startswith("h200") else recorded(rec)
    job = RunJob(RunSpec(record.workload), "run")
    job.state, job.record = OK, record
    assert outcome_text(job).startswith(f"Done · {points} points")


def test_a_form_field_says_what_it_takes_in_english(qtbot):
    """'Message sizes takes whole numbers' read as broken English under the field."""
    from siliconbench.core.catalogue import workload
    from siliconbench.gui.param_form import ParamField
    (sizes,) = [p for p in workload("allreduce").params if p.name == "sizes"]
    field = ParamField(sizes)
    qtbot.addWidget(field)
    for text, said in (("1024,abc", "Message sizes: whole numbers only, not 'abc'."),
                       ("8", "Message sizes: at least 16, not 8."),
                       (" , ", "Message sizes: at least one value needed."),
                       ("1024", "")):
        field.set_text(text)
        assert field.error == said
        assert field.error_label.text() == said


# ---------------------------------------------------------------- the first window

MAC_1440x900 = QRect(0, 25, 1440, 875)     # a 1440x900 Mac's room under its menu bar


def test_first_window_place_fits_the_screen_with_its_frame():
    from siliconbench.gui.settings import FRAME_ALLOWANCE, first_window_place
    size, corner = first_window_place(QSize(1440, 900), QSize(720, 520), MAC_1440x900)
    frame = QRect(corner, size + FRAME_ALLOWANCE)
    assert MAC_1440x900.contains(frame) and size.height() == 875 - FRAME_ALLOWANCE.height()
    # A large screen gets the size wanted, centred; a tiny one the minimum.
    size, corner = first_window_place(QSize(1440, 900), QSize(720, 520), QRect(0, 0, 2560, 1440))
    assert size == QSize(1440, 900) and corner == QPoint((2560 - 1456) // 2, (1440 - 940) // 2)
    size, _ = first_window_place(QSize(1440, 900), QSize(720, 520), QRect(0, 0, 640, 480))
    assert size == QSize(720, 520)


def test_first_window_opens_inside_a_1440x900_screen(qtbot, store, settings, monkeypatch):
    from siliconbench.gui import settings as prefs
    from siliconbench.gui.main_window import MainWindow
    monkeypatch.setattr(prefs, "available_geometry", lambda window: MAC_1440x900,
                        raising=False)
    w = MainWindow(store, settings, defer=True)
    w.ask_before_closing = False
    qtbot.addWidget(w)
    assert w.height() + 40 <= MAC_1440x900.height()      # 40: a title bar, generously
    assert MAC_1440x900.contains(QRect(w.pos(), w.size() + prefs.FRAME_ALLOWANCE))
    # A window the user sized is restored as it was, not refitted.
    # 740 px wide: the sidebar hidden (shown, the window keeps room for it and the charts).
    w.show_sidebar(False)
    w.resize(740, 560)      # (restoreGeometry itself keeps a window inside the real screen)
    w.close()                                 # it keeps its size
    again = MainWindow(store, settings, defer=True)
    again.ask_before_closing = False
    qtbot.addWidget(again)
    assert again.size() == QSize(740, 560)


def test_the_report_shows_the_cpu_bar_in_chromium(tmp_path):
    """What a person sees: the report of the H200 beside the CPU, shot by headless Chromium.
    The CPU's colour fills its legend key and its table chip (about 270 pixels) and, on the
    log axis, a bar of 14 x 47 pixels; on the linear axis the bar was 0.3 px high."""
    import shutil
    import subprocess
    import tempfile

    from PIL import Image

    from siliconbench.core.palette import LIGHT
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install -y chromium)")
    report, shot = tmp_path / "report.html", tmp_path / "shot.png"
    report.write_text(to_html(compare(resolve_sides([h200_file("h200-gemm"), CPU_GEMM]))),
                      encoding="utf-8")
    with tempfile.TemporaryDirectory() as profile:
        out = subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--no-first-run", "--force-device-scale-factor=1", "--window-size=1200,1600",
             f"--user-data-dir={profile}", f"--screenshot={shot}", report.as_uri()],
            capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0 and shot.is_file(), out.stderr[-2000:]
    cpu = LIGHT.series_color(1).lstrip("#")       # the second side's colour
    rgb = tuple(int(cpu[i:i + 2], 16) for i in (0, 2, 4))
    with Image.open(shot) as image:
        pixels = sum(n for n, colour in image.convert("RGB").getcolors(1 << 24) if colour == rgb)
    assert pixels > 600, pixels
