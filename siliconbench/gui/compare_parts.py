"""The Compare tab's parts that hold no comparison: its sizes, the eliding combo box, a
published reference's title, which chart comes first and what its ringed points say."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QWidget

from siliconbench.core.compare_stats import ComparedRow
from siliconbench.core.results import RunRecord
from siliconbench.gui.chart_series import curve_x, param_text

MAX_VERDICT_W = 260  # a verdict column's widest; longer verdicts end in '…', whole on hover
MAX_VALUE_W = 130    # a side's value column's widest
FIXED_W = (90, 140, 200)  # Workload, Metric, Point (a whole point: "dtype=float32 size=128")
# The Point column's widest with a best vs best row whose Metric column is hidden: 'best vs
# best · dtype=float32' whole in the room the metric leaves.
BEST_POINT_W = 240
MAX_WARNINGS_H = 120  # unfolded warnings scroll here instead of squeezing the chart
# Narrower than this the Compare tab scrolls sideways: as narrow as the charts' pane at the
# window's narrowest (main_window.MIN_CHARTS_W) less the tabs' frame. Shorter than its
# layout's least height (the chart's MIN_CHART_H and the rows above it) it scrolls down.
MIN_CONTENT = (440, 0)
# Shorter than this, the sides' names and the reference's description take one line each
# (the rest on hover), and the chart the room they leave.
SHORT_H = 440
BEST_TIP = ("Best vs best: each side's best point of the workload's headline metric, "
            "where two sides share no point to compare; a ratio of values at different "
            "points, so no statistical test.")


class ElidingCombo(QComboBox):
    """A combo box whose current text ends in '…' where it does not fit (the style cut it
    mid-letter: "build 8"); the whole text is its tooltip and in its list."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(12)
        self.currentTextChanged.connect(self.setToolTip)
        self.view().setTextElideMode(Qt.TextElideMode.ElideNone)

    def _option(self):
        """The style's option for the combo, its current text elided to the text field."""
        from PySide6.QtWidgets import QStyle, QStyleOptionComboBox
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        field = self.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, opt,
                                            QStyle.SubControl.SC_ComboBoxEditField, self)
        opt.currentText = self.fontMetrics().elidedText(
            opt.currentText, Qt.TextElideMode.ElideRight, max(0, field.width() - 4))
        return opt

    def paintEvent(self, event) -> None:
        from PySide6.QtWidgets import QStyle, QStylePainter
        painter = QStylePainter(self)
        opt = self._option()
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, opt)
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, opt)

    def displayed_text(self) -> str:
        """The current text as painted at the combo's width."""
        return self._option().currentText


# A reference's parameters that tell entries of one source apart, in the order they are named.
TITLE_PARAMS = ("model", "preset", "dtype", "precision", "batch_size")


def reference_title(rec: RunRecord) -> str:
    """'M1 Max 32-core GPU · llm llama-2-7b q4_0 (llamacpp metal)': the machine, the workload
    and what sets it apart from the source's other entries (model, precision, quantization);
    the source itself is on the line under the list. Three entries read alike when the title
    gave the source instead."""
    what = " ".join(param_text(k, rec.params[k]) for k in TITLE_PARAMS
                    if k in rec.params and not isinstance(rec.params[k], (list, dict)))
    return f"{rec.device_label} · {rec.workload}{' ' + what if what else ''} " \
        f"({rec.framework} {rec.device})"


MIN_TABLE_H = 72     # the header and two rows
MIN_CHART_H = 180    # a plot with its axes and a few decades still reads


def is_curve(rows: list[ComparedRow]) -> bool:
    """GEMM, bandwidth and LLM sweeps read better as curves over their x than as bars."""
    x = curve_x(rows[0].workload, rows[0].metric) if rows else ""
    return bool(x) and all(x in r.params for r in rows)


def first_chart(groups: list[tuple], chosen: tuple | None) -> tuple:
    """The chart Compare shows: the one the user chose while the comparison still has it,
    else the first of a workload's headline metric (an LLM's decode tokens/s, not the
    temperature or the peak memory its rows list first), else the first."""
    from siliconbench.core.catalogue import catalogue
    if chosen in groups:
        return chosen
    workloads = catalogue()
    return next((g for g in groups if g[0] in workloads and workloads[g[0]].metric == g[1]),
                groups[0])


# A chart's caption names at most this many best vs best ratios; more, and it points to the
# table's rows (ten sides' eight ratios took the chart's height).
MAX_BEST_LINES = 2


def ringed_note(lines: list[str]) -> list[str]:
    """What a curve chart says of its ringed best points: their ratios (best_lines), or
    where there are many, where to read them."""
    if not lines:
        return []
    if len(lines) > MAX_BEST_LINES:
        return [f"Ringed: each side's best, where sides share no point; the table's best vs "
                f"best rows give their {len(lines)} ratios."]
    return ["Ringed: each side's best, compared best vs best where the sides share no "
            "point:", *lines]
