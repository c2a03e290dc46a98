"""The test suite's own shape: what several test modules share lives in tests/helpers/, and no
file under tests/ imports a test module (importing one collects its tests' dependencies with
it, runs its module-level code, and ties two tests' files together: moving or deleting one
broke the other). And a test that needs llama-cpp-python is in the Makefile's LLAMACPP_TESTS,
which `make test-llamacpp` runs and `make test` leaves out: CI's `make test` has no llama.cpp,
so a module missing from the list would skip in both CI steps. A costly make shared by several
tests and started when the session starts fails as itself, never made twice."""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
MAKEFILE = TESTS.parent / "Makefile"
TEST_MODULE = re.compile(r"^tests(\.\w+)*\.test_\w+$")
# An import statement inside a string of code: `from tests.x.test_y import z`, `import tests.x`.
IN_CODE = re.compile(r"^\s*(?:from|import)\s+(tests(?:\.\w+)+)", re.MULTILINE)


def imports_of_test_modules(root: Path) -> list[str]:
    """Every import of a test module (tests.<...>.test_<name>) by a Python file under `root`
    (tests/data's records and scripts left out), as 'path:line: module': import statements,
    and those in code a test runs in a process of its own (a string), where a test module may
    import only itself."""
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] == "data":
            continue
        itself = ".".join(("tests", *rel.with_suffix("").parts))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                modules = [m for m in IN_CODE.findall(node.value) if m != itself]
            else:
                continue
            found += [f"{rel}:{node.lineno}: {m}" for m in modules if TEST_MODULE.match(m)]
    return found


def test_no_file_under_tests_imports_a_test_module():
    # this file's own strings are the planted imports of the test below
    found = [f for f in imports_of_test_modules(TESTS)
             if not f.startswith(f"{Path(__file__).name}:")]
    assert found == [], ("move what these import into tests/helpers/ (a fixture: register it "
                         "in tests/conftest.py):\n" + "\n".join(found))


def test_an_import_of_a_test_module_is_found_in_each_form(tmp_path):
    """The check can fail: each way of importing a test module, in a test module, a helper,
    a function body and code run in a child, is found; imports of helpers, and a child's
    import of the test module that starts it, are not."""
    (tmp_path / "core").mkdir()
    (tmp_path / "helpers").mkdir()
    (tmp_path / "core" / "test_a.py").write_text(
        "from tests.cli.test_cli import sb\n"
        "from tests.helpers.cli_processes import ROOT\n"
        "def test_x():\n"
        "    import tests.core.test_b\n"
        "    from tests.gui import test_c\n")
    (tmp_path / "core" / "test_b.py").write_text(
        'CHILD = """\nimport json\nfrom tests.core.test_b import Plan\n'
        'from tests.gui.test_c import runs\n"""\n')
    (tmp_path / "helpers" / "h.py").write_text("from tests.core.test_b import thing\n")
    assert imports_of_test_modules(tmp_path) == [
        "core/test_a.py:1: tests.cli.test_cli",
        "core/test_a.py:4: tests.core.test_b",
        "core/test_a.py:5: tests.gui.test_c",
        "core/test_b.py:1: tests.gui.test_c",
        "helpers/h.py:1: tests.core.test_b"]


def test_helpers_hold_no_tests():
    """tests/helpers/ is imported, never collected: a test_*.py there would be both."""
    assert sorted(p.name for p in (TESTS / "helpers").glob("test_*.py")) == []


def needing_llamacpp(root: Path) -> list[str]:
    """The test modules under `root` that skip without llama-cpp-python: those that ask for
    its module or use tests/helpers/llamacpp.py's marker, relative to root's parent."""
    return sorted(str(p.relative_to(root.parent)) for p in root.rglob("test_*.py")
                  if re.search(r"""find_spec\(["']llama_cpp["']\)|tests\.helpers\.llamacpp""",
                               p.read_text(encoding="utf-8")))


def llamacpp_step(makefile: Path) -> set[str]:
    """The test modules of the Makefile's LLAMACPP_TESTS, which test-llamacpp runs and test
    leaves out (both recipes name the list, or none is returned)."""
    text = makefile.read_text(encoding="utf-8")
    listed = re.search(r"^LLAMACPP_TESTS\s*:?=((?:.*\\\n)*.*)$", text, re.MULTILINE)
    assert listed, f"{makefile} has no LLAMACPP_TESTS list"
    for target, use in (("test-llamacpp", "$(LLAMACPP_TESTS)"),
                        ("test", "--ignore=,$(LLAMACPP_TESTS)")):
        recipe = re.search(rf"^{target}:.*\n((?:\t.*\n?)+)", text, re.MULTILINE)
        if not recipe or use not in recipe.group(1):
            return set()
    return set(re.findall(r"tests/\S+\.py", listed.group(1)))


def test_every_test_that_needs_llamacpp_runs_in_make_test_llamacpp():
    needing = needing_llamacpp(TESTS)
    assert "tests/frameworks/test_llamacpp.py" in needing     # the check sees what it must
    missing = sorted(set(needing) - llamacpp_step(MAKEFILE))
    assert missing == [], ("these need llama.cpp and are not in the Makefile's LLAMACPP_TESTS "
                           "(run by `make test-llamacpp`, left out of `make test`): "
                           + ", ".join(missing))


def test_a_shared_make_that_failed_when_the_session_started_is_shown_never_made_again(
        tmp_path, monkeypatch):
    """tests.helpers.cli_processes.start_shared: what a background make raised is what the
    test that asks sees, and a make whose process died is never made a second time (either
    would be a retry)."""
    import pytest

    from tests.helpers.cli_processes import make_in_background, shared_at

    def fails(home: Path):
        raise RuntimeError("the stand-in intruder never connected")

    def again(home: Path):
        raise AssertionError("made a second time")
    monkeypatch.setattr("sys.argv", ["intruded", str(tmp_path)])
    with pytest.raises(SystemExit) as ended:
        make_in_background("broken", fails)
    assert ended.value.code == 1
    with pytest.raises(AssertionError, match="(?s)made when the session started.*RuntimeError: "
                                             "the stand-in intruder never connected"):
        shared_at(tmp_path, "broken", again)
    (tmp_path / "shared-died.json.started").touch()      # as a process killed mid-way left it
    with pytest.raises(AssertionError, match="died before it was made"):
        shared_at(tmp_path, "died", again)
    assert shared_at(tmp_path, "fine", lambda home: {"made": str(home)}) == \
        (tmp_path / "shared-fine", {"made": str(tmp_path / "shared-fine")})
