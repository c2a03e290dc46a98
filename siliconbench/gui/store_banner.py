"""The shared store at the app's start. When the store Preferences chose (PostgreSQL) refuses,
the window says so at once, in a banner over its panes: the server's sentence, which names
what to fix, with Try Again and Preferences…; Results shows this machine's runs meanwhile, and
new runs are kept here and sent once the shared store answers (siliconbench.core.store_sync).
Before, Results stayed empty and the reason was only in its footer, cut off, behind the Run
Queue tab."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from siliconbench.gui.background import BackgroundCall
from siliconbench.gui.theme import Theme

HEADLINE = "The shared store could not be opened: Results shows this machine's runs meanwhile."
MEANWHILE = ("Runs you make now are kept on this machine and sent to the shared store once it "
             "answers.")


class StoreBanner(QFrame):
    """The refusal, said over the window's panes until the store answers or is changed."""

    retry = Signal()
    preferences = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("StoreBanner")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.headline = QLabel(HEADLINE)
        self.headline.setWordWrap(True)
        self.sentence = QLabel()
        self.sentence.setWordWrap(True)
        from PySide6.QtCore import Qt
        self.sentence.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.sentence.setTextFormat(Qt.TextFormat.PlainText)   # the server's words, as said
        self.try_again = QPushButton("Try Again")
        self.try_again.clicked.connect(self.retry)
        self.open_preferences = QPushButton("Preferences…")
        self.open_preferences.clicked.connect(self.preferences)
        words = QVBoxLayout()
        words.setSpacing(2)
        words.addWidget(self.headline)
        words.addWidget(self.sentence)
        row = QHBoxLayout(self)
        row.setContentsMargins(12, 8, 12, 8)
        row.addLayout(words, 1)
        row.addWidget(self.try_again)
        row.addWidget(self.open_preferences)
        self.hide()

    def say(self, sentence: str) -> None:
        """Show the store's sentence (what it refused and what to fix)."""
        self.sentence.setText(sentence + " " + MEANWHILE)
        self.try_again.setEnabled(True)
        self.try_again.setText("Try Again")
        self.show()

    def trying(self) -> None:
        self.try_again.setEnabled(False)
        self.try_again.setText("Trying…")

    def text(self) -> str:
        """What the banner says, as plain text (for the status line and tests)."""
        return f"{self.headline.text()} {self.sentence.text()}"

    def apply_theme(self, theme: Theme) -> None:
        from siliconbench.gui.theme import tone
        palette = self.palette()
        tint = QColor(theme.warning)
        tint.setAlpha(40)
        base = palette.color(QPalette.ColorRole.Window)
        mixed = QColor((base.red() * 215 + tint.red() * 40) // 255,
                       (base.green() * 215 + tint.green() * 40) // 255,
                       (base.blue() * 215 + tint.blue() * 40) // 255)
        palette.setColor(QPalette.ColorRole.Window, mixed)
        self.setPalette(palette)
        tone(self.headline, theme.warning, bold=True)


class SharedStoreWatch:
    """Opens the store at the start and keeps the banner true: said at once when the shared
    store refuses, Results reading this machine's runs until Try Again finds it answering."""

    def __init__(self, window) -> None:
        self.window = window
        self.banner = StoreBanner()
        window.central_layout.insertWidget(0, self.banner)
        self.banner.retry.connect(self.try_again)
        self.banner.preferences.connect(window.show_preferences)
        self._trial: BackgroundCall | None = None

    def refused(self, store) -> str | None:
        """Why the shared store of `store` could not be opened, or None (a local store, or a
        shared one that answered)."""
        reason = getattr(store, "offline", None)
        return reason if isinstance(reason, str) else None

    def opened(self, store) -> None:
        """The store the window was given: a refusal is said now, and Results reads this
        machine's runs meanwhile."""
        reason = self.refused(store)
        if reason is None:
            return
        self.window.results.read_locally(reason)
        self.window.show_results()   # this machine's runs, in view
        self.banner.say(reason)
        if self.window.theme is not None:
            self.banner.apply_theme(self.window.theme)

    def try_again(self) -> BackgroundCall:
        """Connect again, off the GUI thread (a stalled server waits out libpq's timeout): the
        banner goes and Results reads the shared store when it answers; else its new
        sentence."""
        from siliconbench.core.store_pg import check
        url = self.window.store.url
        self.banner.trying()
        self._trial = BackgroundCall(lambda: check(url), self.banner)
        self._trial.done.connect(self._tried)
        self._trial.failed.connect(lambda message: self.banner.say(message))
        return self._trial.start()

    def _tried(self, answer: tuple[bool, str]) -> None:
        answered, sentence = answer
        if not answered:
            self.banner.say(sentence)
            return
        self.banner.hide()
        store = self.window.store
        store.offline = None
        results = self.window.results
        results.read_locally(None)
        sent = store.sync()   # the runs kept here meanwhile
        self.window.statusBar().showMessage(f"{sentence} {sent.summary()}", 10000)
        results.load_in_background(switched=True)
