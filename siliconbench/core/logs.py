"""SiliconBench's log: a rotating file in the platform's log dir (~/Library/Logs/SiliconBench on
a Mac), or SILICONBENCH_HOME/logs when that is set (tests, portable installs)."""

from __future__ import annotations

import logging
import logging.handlers
import os
from pathlib import Path

LOG_NAME = "siliconbench.log"
MAX_BYTES = 1_000_000
BACKUPS = 5
log = logging.getLogger("siliconbench")


class QuietFileHandler(logging.handlers.RotatingFileHandler):
    """A log that cannot be written (a full disk) is given up for that record, silently: the
    default prints a traceback on the user's stderr for every record. Only a regular file is
    written, never through a link (files.open_append): the log opened as a FIFO would wait for
    a reader for good, a link to a device (/dev/zero) is no log, and a link to a file of the
    user's would have the log appended to it."""

    def handleError(self, record: logging.LogRecord) -> None:
        pass

    def _open(self):
        from siliconbench.core.files import open_append
        return open_append(self.baseFilename, "log", self.encoding, self.errors)


class ScrubbingFormatter(logging.Formatter):
    """Every record as written, a traceback's text included, with any password in it hidden
    (store_address.scrub: the shared store's, wherever an error quoted it)."""

    def format(self, record: logging.LogRecord) -> str:
        from siliconbench.core.store_address import scrub
        return scrub(super().format(record))


def log_dir() -> Path:
    env = os.environ.get("SILICONBENCH_HOME")
    if env:
        return Path(env).expanduser() / "logs"
    import platformdirs
    return Path(platformdirs.user_log_dir("SiliconBench", appauthor=False))


def log_file() -> Path:
    return log_dir() / LOG_NAME


def setup_logging(argv: list[str] | None = None, level: int = logging.INFO) -> Path | None:
    """Send the `siliconbench` logger to the rotating file (once per file); None when the file
    cannot be opened (a read-only home must not stop the app). The passwords of the addresses
    in `argv` (--store URL) are noted first, so that no record shows them."""
    from siliconbench.core.store_address import shown_argv
    shown_argv(argv or [])
    path = log_file()
    for handler in list(log.handlers):
        if isinstance(handler, logging.handlers.RotatingFileHandler):
            if handler.baseFilename == str(path):
                return path
            log.removeHandler(handler)  # SILICONBENCH_HOME changed (tests): one file at a time
            handler.close()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = QuietFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS,
                                   encoding="utf-8")
    except OSError:
        # Without this, logging's last resort prints records (tracebacks too) on stderr.
        if not any(isinstance(h, logging.NullHandler) for h in log.handlers):
            log.addHandler(logging.NullHandler())
        return None
    handler.setFormatter(ScrubbingFormatter("%(asctime)s %(process)d %(levelname)s %(name)s: "
                                           "%(message)s"))
    log.addHandler(handler)
    log.setLevel(level)
    return path
