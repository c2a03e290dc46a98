"""The log: a rotating file under SILICONBENCH_HOME/logs in tests (the platform's log dir
otherwise); the CLI's internal errors and failed runs' child stderr end up in it."""

from __future__ import annotations

import logging.handlers

import pytest

from siliconbench.core import cli
from siliconbench.core.logs import BACKUPS, MAX_BYTES, log, log_dir, log_file, setup_logging


def test_log_file_rotates_under_siliconbench_home(siliconbench_home):
    path = setup_logging()
    assert path == log_file() == siliconbench_home / "logs" / "siliconbench.log"
    assert log_dir() == siliconbench_home / "logs"
    (handler,) = [h for h in log.handlers
                  if isinstance(h, logging.handlers.RotatingFileHandler)]
    assert (handler.maxBytes, handler.backupCount) == (MAX_BYTES, BACKUPS) == (1_000_000, 5)
    log.info("hello from the test")
    handler.flush()
    assert "hello from the test" in path.read_text()
    assert setup_logging() == path  # twice: still one handler
    assert len([h for h in log.handlers if isinstance(h, logging.FileHandler)]) == 1


def test_internal_error_writes_the_traceback_to_the_log(monkeypatch, capsys):
    def broken(args):
        raise RuntimeError("something went wrong inside")
    monkeypatch.setitem(cli.COMMANDS, "results", broken)
    monkeypatch.delenv("SILICONBENCH_DEBUG", raising=False)
    assert cli.main(["results"]) == cli.EXIT_FAILED
    err = capsys.readouterr().err
    assert err.count("\n") == 1  # one sentence, naming the log
    assert str(log_file()) in err
    text = log_file().read_text()
    assert "Traceback" in text and "RuntimeError: something went wrong inside" in text


@pytest.mark.usefixtures("fake_workloads")
def test_a_failed_run_logs_its_child_stderr():
    from siliconbench.core.runner import RunSpec, execute
    setup_logging()
    rec = execute(RunSpec("fake-raises"))
    assert rec.status == "failed" and rec.stderr_tail  # kept with the run
    text = log_file().read_text()
    assert f"run {rec.id}" in text and "child stderr" in text
    assert rec.stderr_tail.splitlines()[-1] in text


def test_a_log_that_cannot_be_written_stays_off_the_users_screen(siliconbench_home, capfd):
    """SILICONBENCH_HOME a file: no log file; a full disk: the log's writes fail. Either way
    the user's stderr gets no traceback from the logging machinery."""
    import logging
    import logging.handlers

    from siliconbench.core.logs import QuietFileHandler, log, setup_logging

    class FullDisk:
        def write(self, text):
            raise OSError(28, "No space left on device")

        def flush(self):
            pass
    record = logging.makeLogRecord({"msg": "a run failed", "levelno": logging.WARNING})
    for cls in (logging.handlers.RotatingFileHandler, QuietFileHandler):
        handler = cls(siliconbench_home.parent / f"{cls.__name__}.log", delay=True)
        handler.stream = FullDisk()
        handler.emit(record)
        handler.stream = None
        handler.close()
        err = capfd.readouterr().err
        if cls is QuietFileHandler:
            assert err == ""
        else:  # what users saw before, for every record written on a full disk
            assert "No space left on device" in err and "Traceback" in err
    siliconbench_home.write_text("a file, not a folder")
    assert setup_logging() is None
    log.exception("an internal error with nowhere to go")
    assert capfd.readouterr().err == ""
