"""Every place the package writes a file goes through the one safe-write helper
(siliconbench.core.files: atomic_file, write_atomic, open_append, own_folder) or is in the
reasoned list below: never through a link, never over a device node or a FIFO. The package is
read as Python (ast) for every call that writes: open() with a mode that writes, os.open with
flags that write, write_text/write_bytes, os.replace/rename/link/symlink/mkfifo, Path.rename/
symlink_to/hardlink_to/touch, shutil's copies and moves, tempfile's files, sqlite3.connect and
QSettings. A new one that is neither through the helper nor listed fails here, naming it."""

from __future__ import annotations

import ast
from pathlib import Path

import siliconbench

PACKAGE = Path(siliconbench.__file__).parent
HELPER = "core/files.py"      # the helper itself: every primitive write lives there

# (module, function) -> why this write is safe without the helper.
ALLOWED = {
    ("core/frameworks/mlx/serve.py", "write"):
        "the serve preset's mlx-lm folder is written inside a fresh mkdtemp folder (private, "
        "new, so nothing can be in the place of its files) in a folder own_folder made real, "
        "then renamed over the preset's folder after files.remove took what was there (a link "
        "itself, never its target)",
    ("core/frameworks/mlx/serve.py", "tokenizer"):
        "called by write() only, into write()'s fresh mkdtemp folder",
    ("core/kit/serving_process.py", "__init__"):
        "tempfile.TemporaryFile: an unnamed file for the server's output, nothing at a path",
    ("core/pgpass.py", "keep_password"):
        "the password file is written to a mkstemp file (mode 0600 from its creation, so the "
        "password is never readable by others, which atomic_file's part file does not "
        "promise) and renamed over the path, after keep_password refused a link there and "
        "_read refused anything but a regular file (O_NOFOLLOW, O_NONBLOCK for a FIFO)",
    ("gui/settings.py", "app_settings"):
        "QSettings opens the settings file only after unusable_settings looked at it with "
        "lstat and _set_aside moved a link, FIFO, folder or huge file out of the way (a link "
        "itself, never its target); where that fails it gets a file in a fresh private "
        "temporary folder",
    ("gui/settings.py", "_set_aside"):
        "os.replace moves the unusable settings entry itself (a link is renamed, its target "
        "untouched) to a new name beside it",
    ("core/store_schema.py", "_connect"):
        "the results store is a SQLite database updated in place, opened only after "
        "Database.__init__ refused a folder, FIFO, device or dangling link there "
        "(files.not_regular); a link to the user's own database file is theirs to keep",
    ("core/launch.py", "_lock"):
        "a port's lock file opened with O_NOFOLLOW and checked by inode against lstat, in "
        "lock_folder(), which refuses a link or a folder others can write",
    ("core/hosts.py", "owned_folder"):
        "tempfile.mkdtemp: a new 0700 folder that cannot exist before",
    ("core/worker.py", "_event_stream"):
        "os.fdopen of a dup of the child's own stdout (the pipe its parent reads), no path",
    ("core/frameworks/coreml/convert.py", "main"):
        "os.fdopen of a dup of the converter child's own stdout (its parent's pipe), no path",
    ("core/frameworks/llamacpp/models.py", "_build"):
        "gguf-py and llama.cpp's quantiser write by path: the file is a fresh mkstemp name "
        "in own_folder() (a real folder, never a link), renamed into place after "
        "files.remove cleared whatever was there",
    ("core/frameworks/coreml/convert.py", "convert"):
        "Core ML saves a package folder by path: into a fresh mkdtemp folder in the cache's "
        "own folder, then renamed into place",
    ("core/frameworks/coreml/infer.py", "compiled_model"):
        "Core ML compiles into a fresh mkdtemp folder beside the package, then renamed",
}

WRITE_MODES = set("wax+")
OS_WRITES = {"replace", "rename", "renames", "link", "symlink", "mkfifo", "mknod", "truncate"}
PATH_WRITES = {"write_text", "write_bytes", "symlink_to", "hardlink_to", "touch"}
SHUTIL_WRITES = {"copy", "copy2", "copyfile", "copytree", "move", "copyfileobj"}
TEMPFILE_WRITES = {"mkstemp", "mkdtemp", "NamedTemporaryFile", "TemporaryFile",
                   "SpooledTemporaryFile"}
WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"}
# numpy, torch and archives writing by path; `.save(path)` (Qt images, Core ML models) when
# its first argument is a path (text, str(...), a Path joined with /), not store.save(rec).
ARRAY_WRITES = {"savez", "savez_compressed", "tofile", "savetxt", "extractall", "extract"}


def _path_like(node: ast.AST) -> bool:
    return (isinstance(node, (ast.Constant, ast.JoinedStr)) and not isinstance(
        getattr(node, "value", ""), (int, float))) or (
        isinstance(node, ast.Call) and _name(node.func) in ("str", "os.fspath", "Path")) or (
        isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div))


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return "?"


def _mode(call: ast.Call, position: int) -> str | None:
    arg = call.args[position] if len(call.args) > position else next(
        (k.value for k in call.keywords if k.arg == "mode"), None)
    return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None


def _writes(call: ast.Call) -> str | None:
    """What kind of write `call` is, or None."""
    name = _name(call.func)
    last = name.rsplit(".", 1)[-1]
    if name in ("open", "io.open", "builtins.open"):
        mode = _mode(call, 1)
        return f"open(mode={mode!r})" if mode and WRITE_MODES & set(mode) else None
    if name in ("os.fdopen",):
        mode = _mode(call, 1)
        return f"os.fdopen(mode={mode!r})" if mode and WRITE_MODES & set(mode) else None
    if name == "os.open":
        flags = {n.attr for n in ast.walk(call) if isinstance(n, ast.Attribute)}
        return "os.open(writing)" if flags & WRITE_FLAGS else None
    if name.startswith("os.") and last in OS_WRITES:
        return name
    if name.startswith("shutil.") and last in SHUTIL_WRITES:
        return name
    if name.startswith("tempfile.") and last in TEMPFILE_WRITES:
        return name
    if name in ("sqlite3.connect", "torch.save", "np.save", "numpy.save") or last == "QSettings":
        return name
    if isinstance(call.func, ast.Attribute) and last in PATH_WRITES | {"rename"}:
        return f".{last}()"
    if isinstance(call.func, ast.Attribute) and last in ARRAY_WRITES:
        return f".{last}()"
    if isinstance(call.func, ast.Attribute) and last == "save" and call.args and _path_like(
            call.args[0]):
        return ".save(path)"
    if isinstance(call.func, ast.Name) and last in TEMPFILE_WRITES | {"QSettings"}:
        return name
    return None


def write_sites() -> list[tuple[str, str, int, str]]:
    """(module, enclosing function, line, kind) of every write outside the helper."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module == HELPER:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))

        def visit(node: ast.AST, function: str, module=module) -> None:
            for child in ast.iter_child_nodes(node):
                here = child.name if isinstance(child, (ast.FunctionDef,
                                                        ast.AsyncFunctionDef)) else function
                if isinstance(child, ast.Call):
                    kind = _writes(child)
                    if kind:
                        found.append((module, function, child.lineno, kind))
                visit(child, here)
        visit(tree, "<module>")
    return found


def test_every_write_goes_through_the_safe_write_helper_or_is_reasoned():
    loose = [f"{m}:{line} in {f}(): {kind}" for m, f, line, kind in write_sites()
             if (m, f) not in ALLOWED]
    assert not loose, ("Write through siliconbench.core.files (atomic_file, write_atomic, "
                       "open_append, own_folder), or add the site to ALLOWED with why it is "
                       "safe: " + "; ".join(loose))


def test_every_reasoned_exception_is_still_a_write_site():
    """An entry whose write went away (or moved) is taken out, not left to cover a new one."""
    sites = {(m, f) for m, f, _, _ in write_sites()}
    assert not set(ALLOWED) - sites, sorted(set(ALLOWED) - sites)


def test_the_scan_sees_each_kind_of_write():
    """The scanner itself: each primitive is found (a scan that finds nothing passes the
    first test for nothing)."""
    source = """
def f(p, os, shutil, tempfile, sqlite3):
    open(p, "w"); open(p, mode="ab"); open(p); p.write_text("x"); p.write_bytes(b"")
    os.replace(p, p); os.rename(p, p); os.open(p, os.O_WRONLY | os.O_CREAT); os.open(p, os.O_RDONLY)
    shutil.copy(p, p); shutil.move(p, p); tempfile.mkstemp(); sqlite3.connect(p)
    QSettings("a", "b"); p.rename(p); p.symlink_to(p); os.fdopen(3, "wb"); "s".replace("a", "b")
    image.save(str(p)); store.save(rec); torch.save(x, p / "w.pt"); tar.extractall(p)
"""
    kinds = [_writes(n) for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)]
    found = sorted(k for k in kinds if k)
    assert found == sorted(["open(mode='w')", "open(mode='ab')", ".write_text()", ".write_bytes()",
                     "os.replace", "os.rename", "os.open(writing)", "shutil.copy",
                     "shutil.move", "tempfile.mkstemp", "sqlite3.connect", "QSettings",
                     ".rename()", ".symlink_to()", "os.fdopen(mode='wb')", ".save(path)",
                     "torch.save", ".extractall()"])


# Writes of SiliconBench's own files in its own folders (atomic_file's `own=True`): anything
# but a regular file in their place is damage and is replaced (a link itself, never its
# target). A path the user names (export -o, Compare's reports, the app's exports) never is:
# a FIFO, a terminal or the null device there is written as it is, another device refused.
OWN_FILES = {
    ("gui/help.py", "help_page"): "help.html in the data folder",
    ("core/devices.py", "discover_devices"): "devices.json beside the store",
    ("core/machine_names.py", "set_names"): "machine-names.json beside the store",
    ("core/hosts.py", "first_hosts"): "a hostfile in the run's own temporary folder",
    ("core/cli/commands.py", "cmd_quick"): "the quick suite's CSV in the data folder",
    ("core/cifar.py", "download"): "the CIFAR archive at its default place in the data folder",
    ("core/store.py", "keep_elsewhere"): "a run the store could not keep, under a new name",
    ("core/frameworks/mlx/launcher.py", "command"): "the hostfile in the run's own folder",
    ("core/frameworks/llamacpp/models.py", "_build"): "a model's checksum in models/gguf",
    ("core/frameworks/coreml/convert.py", "convert"): "a package's record in its cache",
}


def own_writes() -> set[tuple[str, str]]:
    found = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for call in ast.walk(function):
                if isinstance(call, ast.Call) and _name(call.func).rsplit(".", 1)[-1] in (
                        "write_atomic", "atomic_file") and any(
                        k.arg == "own" and not (isinstance(k.value, ast.Constant)
                                                and k.value.value is False)
                        for k in call.keywords):
                    found.add((module, function.name))
    return found


def test_only_siliconbench_s_own_files_replace_a_device_or_fifo_in_their_place():
    assert own_writes() == set(OWN_FILES)
