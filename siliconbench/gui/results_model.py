"""What the Results table shows of each run (its columns' text, the filters' values) and the
table's model (RunTableModel: the runs, sorted by itself) and filter (RunFilter), over the
store's listings (siliconbench.core.store_schema.Listed) or whole records alike; the widget is
siliconbench.gui.results_browser."""

from __future__ import annotations

import datetime as dt

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QColor

from siliconbench.core.results import RunRecord
from siliconbench.core.store_schema import Listed, run_kind, shown_params  # noqa: F401 - run_kind: what importers of this module use
from siliconbench.gui.row_text import (
    flag_counts,
    flag_label,
    headline_text,
    warning_count,
    warnings_tooltip,
)
from siliconbench.gui.theme import LIGHT

# The result comes early so it stays in view; long names at the end are elided first.
COLUMNS = ("When", "Status", "Workload", "Headline [p25–p75]", "Device", "Machine")
WHEN, STATUS, WORKLOAD, BEST, DEVICE, MACHINE = range(len(COLUMNS))
COLUMN_WIDTHS = (118, 60, 160, 235, 190)
# The columns sized to their text (up to these widths) as runs are listed: Status and Device
# were elided at fixed widths beside an empty Machine column, and the Workload's model,
# precision and TF32 (run_kind) at 160 px.
FITTED = {STATUS: 170, WORKLOAD: 330, DEVICE: 280, MACHINE: 220}
SORT_ROLE = Qt.ItemDataRole.UserRole + 1


def local_time(iso: str) -> str:
    try:
        return dt.datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return iso


def device_text(rec: RunRecord) -> str:
    return rec.device_text     # as the command lists it (siliconbench.core.results)


def workload_title(name: str) -> str:
    from siliconbench.core.catalogue import UnknownWorkload, workload
    try:
        return workload(name).title
    except UnknownWorkload:
        return name  # imported from a newer SiliconBench


def workload_text(rec: RunRecord) -> str:
    """The Workload column: the workload and what it measured ('GEMM · float32 · TF32'); a
    sustained run's precisions are those its intervals measured (store_schema.shown_params,
    which its listing keeps)."""
    kind = run_kind(rec.workload, rec.params if isinstance(rec, Listed) else shown_params(rec))
    return workload_title(rec.workload) + (f" · {kind}" if kind else "")


def run_flags(rec: RunRecord) -> str:
    """'2 noisy, 1 above peak' over all of a run's rows (a listing counts them for it)."""
    if isinstance(rec, Listed):
        return ", ".join(f"{n} {flag_label(f)}" for f, n in rec.flags.items())
    return flag_counts(rec.rows)


def warnings_of(rec: RunRecord) -> int:
    """How many warnings a run has (a listing keeps the first few of them)."""
    return rec.warning_count if isinstance(rec, Listed) else len(rec.warnings)


def best_text(rec: RunRecord) -> str:
    """The headline with its spread and the run's flags: '0.178 TFLOPS [0.17–0.18] · 1 noisy'."""
    flagged = run_flags(rec)
    return headline_text(rec) + (f" · {flagged}" if flagged else "")


def machine_key(rec: RunRecord) -> str:
    from siliconbench.core.machine import MachineInfo
    return MachineInfo.from_dict(rec.machine).key() if rec.machine else rec.machine_label


def cell_text(rec: RunRecord, column: int, machines: dict[str, str] | None = None) -> str:
    """The text of one column of COLUMNS for a run; its machine's name told apart from other
    machines of that name by `machines` (siliconbench.core.compare_words.machine_names)."""
    if column == WHEN:
        return local_time(rec.created_at)
    if column == MACHINE:
        return (machines or {}).get(rec.id, rec.machine_label)
    if column == WORKLOAD:
        return workload_text(rec)
    if column == DEVICE:
        return device_text(rec)
    if column == STATUS:
        if rec.status != "ok":
            return f"{rec.status}: {rec.reason or ''}"
        return f"ok · {warning_count(warnings_of(rec))}" if rec.warnings else "ok"
    return best_text(rec)


def filter_device(rec: RunRecord) -> str:
    """The device as the Device filter lists it: PyTorch's "cuda" is the current GPU, cuda:0
    unless a run chose another, so "cuda" and "cuda:0" are one device there (they were two
    entries of one H200)."""
    device = "cuda:0" if rec.device == "cuda" else rec.device
    return f"{rec.device_name or device} ({rec.framework} {device})"


def filter_value(rec: RunRecord, column: int, machines: dict[str, str] | None = None) -> str:
    """What a filter combo compares: the status without its reason, the workload without
    what it measured, a device as one however it was addressed (filter_device), else the
    cell text (a machine by its identity: two Xeon
    hosts of one CPU name are two machines)."""
    if column == STATUS:
        return rec.status
    if column == WORKLOAD:
        return workload_title(rec.workload)
    if column == DEVICE:
        return filter_device(rec)
    return cell_text(rec, column, machines)


class RunTableModel(QAbstractTableModel):
    """The runs, in the order the table shows them: the model sorts itself (sort), by each
    run's SORT_ROLE value, stably from the order they came in (`_arrived`), as the proxy's
    sort did, in one Python sort rather than a Python call per comparison (10,000 runs took
    seconds)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.records: list[RunRecord] = []
        self._arrived: dict[str, int] = {}   # run id -> its place in the order runs came
        self.sort_column, self.sort_order = -1, Qt.SortOrder.AscendingOrder
        self.machines: dict[str, str] = {}   # run id -> its machine's name, told apart
        self.theme = LIGHT

    def _name_machines(self) -> None:
        from siliconbench.core.compare_words import machine_names
        self.machines = machine_names(self.records)

    def sort_key(self, rec: RunRecord, column: int) -> str:
        return rec.created_at if column == WHEN else self.cell(rec, column)

    def _sorted(self, records: list[RunRecord]) -> list[RunRecord]:
        records = sorted(records, key=lambda r: self._arrived[r.id])
        if self.sort_column < 0:
            return records
        return sorted(records, key=lambda r: self.sort_key(r, self.sort_column),
                      reverse=self.sort_order == Qt.SortOrder.DescendingOrder)

    def sort(self, column: int, order=Qt.SortOrder.AscendingOrder) -> None:
        self.sort_column, self.sort_order = column, order
        self.layoutAboutToBeChanged.emit()
        before = self.persistentIndexList()
        rows = {id(rec): row for row, rec in enumerate(self.records)}
        self.records = self._sorted(self.records)
        moved = {rows[id(rec)]: row for row, rec in enumerate(self.records)}
        self.changePersistentIndexList(
            before, [self.createIndex(moved[i.row()], i.column()) for i in before])
        self.layoutChanged.emit()

    def set_records(self, records: list[RunRecord]) -> None:
        self.beginResetModel()
        self._arrived = {r.id: n for n, r in enumerate(records)}
        self.records = self._sorted(list(records))
        self._name_machines()
        self.endResetModel()

    def add(self, rec: RunRecord) -> None:
        """A new run: first in the order runs came, in its place in the table's order."""
        self._arrived = {rec.id: -len(self._arrived) - 1} | self._arrived
        row = next(i for i, r in enumerate(self._sorted([*self.records, rec])) if r is rec)
        self.beginInsertRows(QModelIndex(), row, row)
        self.records.insert(row, rec)
        self._name_machines()
        self.endInsertRows()

    def replace(self, row: int, rec: RunRecord) -> None:
        self.records[row] = rec
        self._name_machines()
        self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMNS) - 1))
        if self.sort_column not in (-1, WHEN):   # its text may have moved it
            self.sort(self.sort_column, self.sort_order)

    def rowCount(self, parent: QModelIndex | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(self.records)

    def columnCount(self, parent: QModelIndex | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def cell(self, rec: RunRecord, column: int) -> str:
        return cell_text(rec, column, self.machines)

    def index(self, row: int, column: int, parent: QModelIndex | None = None) -> QModelIndex:
        """As Qt's, without asking rowCount and columnCount (Python calls) each time: sorting
        10,000 runs asks for an index hundreds of thousands of times."""
        if (parent is not None and parent.isValid()) or not 0 <= row < len(self.records) \
                or not 0 <= column < len(COLUMNS):
            return QModelIndex()
        return self.createIndex(row, column)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        rec = self.records[index.row()]
        if role == SORT_ROLE:   # first: sorting asks for it most
            column = index.column()
            return rec.created_at if column == WHEN else self.cell(rec, column)
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            text = self.cell(rec, index.column())
            if role == Qt.ItemDataRole.ToolTipRole and index.column() == MACHINE:
                text = rec.machine.get("model_name") or text
                text += f"\nrun {rec.id}" + (f"\nsource: {rec.source}" if rec.source else "")
            if role == Qt.ItemDataRole.ToolTipRole and index.column() == STATUS \
                    and rec.warnings:
                text += "\n" + warnings_tooltip(rec.warnings)
                more = warnings_of(rec) - len(rec.warnings)
                if more > 0:   # a listing keeps the first few: the run's record has them all
                    text += f"\n… and {more} more (select the run to read them)"
            return text
        if role == Qt.ItemDataRole.ForegroundRole and index.column() == STATUS \
                and (rec.status != "ok" or rec.warnings):
            # A failure in the error colour, warnings in the warning colour; a cancel is no
            # fault, in the muted one ('ok · ⚠' read like a cancel).
            return QColor(self.theme.error if rec.status == "failed" else
                          self.theme.muted if rec.status == "cancelled" else self.theme.warning)
        if role == Qt.ItemDataRole.UserRole:
            return rec
        return None


class RunFilter(QSortFilterProxyModel):
    """Keeps runs matching every chosen filter and the search text."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.choices: dict[int, str | None] = {}   # column -> wanted text (None = any)
        self.search = ""
        self.setSortRole(SORT_ROLE)

    def sort(self, column: int, order=Qt.SortOrder.AscendingOrder) -> None:
        """The table's sort, done by the runs' model (RunTableModel.sort); the proxy keeps
        its order."""
        self.sourceModel().sort(column, order)

    def filterAcceptsRow(self, source_row: int, source_parent) -> bool:
        model: RunTableModel = self.sourceModel()
        rec = model.records[source_row]
        for column, wanted in self.choices.items():
            if wanted is not None and filter_value(rec, column, model.machines) != wanted:
                return False
        if self.search:
            hay = " ".join(model.cell(rec, c) for c in range(len(COLUMNS))).lower()
            return all(word in hay for word in self.search.lower().split())
        return True
