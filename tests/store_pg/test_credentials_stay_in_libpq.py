"""A shared store's password never leaves libpq: the address is read by libpq's own parser, and
the password is taken out before anything is printed, logged, kept or shown. A canary password
(holding `#`, `?` and `&`, which a URL parser reads as a fragment and a query, and libpq as
the password) is given to every store command, working and failing (a refused connection, an
address libpq cannot read, a badly percent-encoded password, a wrong password against the real
server), and then looked for everywhere SiliconBench writes: stdout, stderr, the log, the
app's settings, exports, the whole data folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest

from siliconbench.core import cli
from siliconbench.core.store_pg import without_password
from tests.helpers.recorded import recorded

ROOT = Path(__file__).resolve().parents[2]
CANARY = "Kanar1e"                              # in every form the password takes
PASSWORD = f"{CANARY}#x?y&z"
RUN = ["run", "gemm", "--sizes", "16", "--dtypes", "float32", "--quick", "--json",
       "--framework", "mlx"]


def _sb(home: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "siliconbench.core.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=240,
                          env={**os.environ, "SILICONBENCH_HOME": str(home),
                               "PYTHONPATH": str(ROOT), **(env or {})})


def _nowhere(home: Path, *outputs: str) -> None:
    """The canary in no output and in no file under the data folder (the log, the settings,
    the store, exports written there)."""
    for text in outputs:
        assert CANARY not in text, text[-2000:]
    for path in home.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert CANARY.encode() not in path.read_bytes(), path


@pytest.fixture
def canary(shared):
    """A machine's role of its own whose password is the canary, a member of the writers."""
    role = f"canary_{shared.dbname}"
    with shared.admin() as db:
        db.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{PASSWORD}'")
        db.execute(f"GRANT siliconbench_writer TO {role}")
    return role


def _urls(shared, role: str, password: str = PASSWORD) -> list[str]:
    """The address in libpq's three forms: a URL with the password as typed (`#`, `?`, `&`
    raw: libpq takes them), percent-encoded, and key=value."""
    host, db = str(shared.server.folder), shared.dbname
    return [f"postgresql://{role}:{password}@/{db}?host={host}",
            f"postgresql://{role}:{quote(password, safe='')}@/{db}?host={host}",
            f"host={host} dbname={db} user={role} password='{password}'"]


@pytest.mark.parametrize("given", [
    "postgresql://mach_a:Kanar1e#x?y@db.lab.example:5433/lab?sslmode=verify-full",
    "postgresql://mach_a:Kanar1e?x@db.lab.example/lab",
    "postgresql://mach_a:Kanar1e%23x@db.lab.example/lab",
    "postgresql://db.lab.example/lab?user=mach_a&password=Kanar1e#x",
    "postgresql://mach_a@db.lab.example/lab?sslpassword=Kanar1e",
    "host=db.lab.example user=mach_a password='Kanar1e #x?' sslmode=require",
])
def test_the_password_is_gone_from_the_address_shown_as_libpq_reads_it(given):
    """Was: urlsplit read `#` and `?` as a fragment and a query, and the password stayed."""
    from psycopg.conninfo import conninfo_to_dict
    shown = without_password(given)
    assert CANARY not in shown
    expected = {k: v for k, v in conninfo_to_dict(given).items()
                if k not in ("password", "sslpassword")}
    assert conninfo_to_dict(shown) == expected


@pytest.mark.parametrize("address", [
    "postgresql://mach_a:Kanar1e@[::1/lab",              # libpq: no closing bracket
    "postgresql://mach_a:Kanar1e%zz@db.lab.example/lab",  # libpq quotes the token back
    "host=db.lab.example password='Kanar1e",              # an unclosed quote
])
@pytest.mark.parametrize("how", ["flag", "flag=", "env", "init"])
def test_an_address_libpq_cannot_read_is_one_sentence_never_echoed(address, how, tmp_path):
    """Was: an internal error (ValueError from urlsplit), or libpq's message quoting the
    password, on stderr and in the log."""
    home = tmp_path / "home"
    argv, env = {"flag": (["results", "--store", address], None),
                 "flag=": ([f"--store={address}", "results"], None),
                 "env": (["store", "check"], {"SILICONBENCH_STORE": address}),
                 "init": (["store", "init", address], None)}[how]
    done = _sb(home, *argv, env=env)
    assert done.returncode == 2, done.stderr
    err = done.stderr.strip()
    assert err.count("\n") == 0 and "internal error" not in err and "Traceback" not in err
    assert "cannot be read" in err or "not repeated here" in err
    _nowhere(home, done.stdout, done.stderr)


def test_every_store_command_keeps_the_password_to_libpq(shared, canary, tmp_path):
    """Working commands with the canary in the address (each of its forms), as a flag, as
    --store=, before or after the command, and in SILICONBENCH_STORE."""
    home = tmp_path / "home"
    rec = recorded("gemm-torch")
    source = tmp_path / "in.json"
    from siliconbench.core.results import records_to_json
    source.write_text(records_to_json([rec]))
    outputs = []
    for i, url in enumerate(_urls(shared, canary)):
        out = home / f"export{i}.json"
        for argv, env in (
                (["store", "check", "--store", url], None),
                (["import", str(source), "--store", url], None),
                (["--store=" + url, "results"], None),
                (["results", "--json", "--store", url], None),
                (["results", "--show", rec.id[:8], f"--store={url}"], None),
                (["export", "-o", str(out), "--store", url], None),
                (["export", "-o", str(home / f"export{i}.csv")], {"SILICONBENCH_STORE": url}),
                (["compare", rec.id, rec.id, "--store", url], None),
                (["store", "push", "--store", url], None),
                (["store", "sync"], {"SILICONBENCH_STORE": url}),
                (["store", "init", url, "--machine", "mach_b"], None)):   # not an admin
            done = _sb(home, *argv, env=env)
            assert done.returncode in (0, 2), (argv, done.stderr)
            outputs += [done.stdout, done.stderr]
        assert out.is_file()
    check = _sb(home, "store", "check", "--store", _urls(shared, canary)[0])
    assert check.returncode == 0 and f"writes as {canary}" in check.stdout, check.stderr
    _nowhere(home, *outputs)


def test_a_run_with_the_password_in_its_address_keeps_it_to_libpq(shared, canary, tmp_path):
    home = tmp_path / "home"
    done = _sb(home, *RUN, "--store", _urls(shared, canary)[0])
    assert done.returncode == 0, done.stderr
    assert shared.count() == 1
    _nowhere(home, done.stdout, done.stderr)


@pytest.mark.parametrize("failure", ["refused", "wrong password", "no database"])
def test_a_failing_store_says_one_sentence_without_the_password(failure, shared, canary,
                                                                 tmp_path):
    home = tmp_path / "home"
    from siliconbench.core.results import records_to_json
    (tmp_path / "in.json").write_text(records_to_json([recorded("gemm-torch")]))
    assert _sb(home, "import", str(tmp_path / "in.json")).returncode == 0   # for push to send
    if failure == "refused":          # nothing listens on port 1
        urls = [f"postgresql://{canary}:{PASSWORD}@127.0.0.1:1/lab",
                f"host=127.0.0.1 port=1 user={canary} password='{PASSWORD}'"]
    elif failure == "wrong password":
        urls = _urls(shared, canary, password=f"{CANARY}-not#it?")
    else:
        urls = [u.replace(f"/{shared.dbname}?", "/no_such_lab?").replace(
            f"dbname={shared.dbname}", "dbname=no_such_lab") for u in _urls(shared, canary)]
    outputs = []
    for url in urls:
        for argv in (["store", "check", "--store", url], ["results", "--store", url],
                     ["export", "-o", str(home / "out.json"), "--store", url],
                     ["store", "push", "--store", url]):
            done = _sb(home, *argv)
            assert done.returncode != 0, (argv, done.stdout)
            err = done.stderr.strip()
            assert "internal error" not in err and "Traceback" not in err, err
            said = err + done.stdout     # push says what it kept unsent on stdout
            assert {"refused": "cannot be reached", "wrong password": "refused the password",
                    "no database": "has no such database"}[failure] in said, said
            outputs += [done.stdout, done.stderr]
    _nowhere(home, *outputs)


def test_the_log_records_argv_without_the_password(tmp_path, monkeypatch, siliconbench_home):
    """An internal error logs the command line: every --store value (--store URL, --store=URL,
    --stor=URL as argparse takes it, store init's URL) without its password; the traceback's
    text and the sentence on stderr too."""
    from siliconbench.core.logs import log_file

    def boom(args):
        raise RuntimeError(f"failed on {os.environ.get('SILICONBENCH_STORE')}")
    monkeypatch.setitem(cli.COMMANDS, "results", boom)
    monkeypatch.setenv("SILICONBENCH_DEBUG", "")
    url = f"postgresql://mach_a:{PASSWORD}@db.lab.example/lab"
    for argv in (["results", "--store", url], [f"--store={url}", "results"],
                 [f"--stor={url}", "results"]):
        assert cli.main(argv) == 1
        monkeypatch.delenv("SILICONBENCH_STORE", raising=False)
    text = log_file().read_text()
    assert text.count("internal error in siliconbench") == 3
    assert "db.lab.example" in text and CANARY not in text
    monkeypatch.setenv("SILICONBENCH_STORE", url)
    monkeypatch.setitem(cli.COMMANDS, "results", boom)
    assert cli.main(["results"]) == 1
    assert CANARY not in log_file().read_text()


def test_preferences_keep_no_password_and_say_an_unreadable_one_in_a_sentence(qtbot,
                                                                              siliconbench_home):
    """Was: a password with `#` or `?` was written to gui-settings.ini."""
    from siliconbench.gui.settings import app_settings, settings_file, store_preferences
    from tests.helpers.dialogs import click_ok
    settings = app_settings()
    for address in (f"postgresql://mach_a:{PASSWORD}@127.0.0.1:1/lab",
                    f"postgresql://mach_a:{CANARY}@[::1/lab"):
        dialog = store_preferences(None, settings)
        qtbot.addWidget(dialog)
        dialog.address.setText(address)
        dialog.shared.setChecked(True)
        dialog.test.click()                          # Test Connection: refused, or unreadable
        assert dialog.answer.text() and CANARY not in dialog.answer.text()
        click_ok(dialog)
        assert CANARY not in dialog.answer.text()
    assert "cannot be read" in dialog.answer.text()      # the second: said, not kept
    text = settings_file().read_text()
    assert "127.0.0.1" in text and CANARY not in text


def test_a_password_an_older_version_kept_in_the_settings_is_taken_out(siliconbench_home):
    """Was: a password with `#` survived without_password and was written to gui-settings.ini;
    the next start keeps the address again without it."""
    from siliconbench.gui.settings import STORE_KEY, app_settings, settings_file, shared_store
    settings = app_settings()
    settings.setValue(STORE_KEY, f"postgresql://mach_a:{PASSWORD}@db.lab.example/lab")
    settings.sync()
    assert CANARY in settings_file().read_text()
    kept = shared_store(app_settings())
    assert "db.lab.example" in kept and CANARY not in kept
    assert CANARY not in settings_file().read_text()


@pytest.mark.parametrize("argv", [
    ["store", "check", f"postgresql://mach_a:{PASSWORD}@db.lab.example/lab"],
    ["results", f"host=db.lab.example password='{PASSWORD}'"],
    ["results", "--show", f"postgresql://mach_a:{PASSWORD}@db.lab.example/lab"],
    ["compare", "a", f"postgresql://mach_a:{CANARY}@[::1/lab"],
])
def test_an_address_where_it_does_not_belong_is_not_repeated(argv, tmp_path):
    """Was: argparse's "unrecognized arguments: ..." and "No run with id ..." quoted it."""
    home = tmp_path / "home"
    done = _sb(home, *argv)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    _nowhere(home, done.stdout, done.stderr)
