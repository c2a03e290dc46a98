"""The Mac app's build description (setup_app.py), checked on any OS without building: every
module, package and resource it names exists, the Info.plist keys are there and the version is
pyproject's; and the bundle-aware worker command, the .sbresults file type and the CLI's
export and import of it."""

from __future__ import annotations

import importlib.util
import json
import plistlib
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from siliconbench.core.export import RESULT_SUFFIX
from siliconbench.core.runner import worker_command

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def setup_app():
    spec = importlib.util.spec_from_file_location("setup_app", ROOT / "setup_app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # must build nothing: setup() runs only as __main__
    return module


def test_importing_setup_app_builds_nothing():
    out = subprocess.run([sys.executable, "-c", "import setup_app"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert not (ROOT / "build" / "bdist.macosx").exists()


def test_every_script_package_and_resource_it_names_exists(setup_app):
    for script in setup_app.APP:
        assert (ROOT / script).is_file(), script
    for package in setup_app.OPTIONS["packages"]:
        assert importlib.util.find_spec(package) is not None, package
    assert "siliconbench" in setup_app.OPTIONS["packages"]
    assert (ROOT / "siliconbench" / "__init__.py").is_file()
    assert "torch" in setup_app.OPTIONS["packages"]
    for optional in ("tensorflow", "mlx"):  # optional: the devices panel says how to add them
        assert optional in setup_app.OPTIONS["excludes"]
    assert setup_app.OPTIONS["arch"] == "arm64"


def build_outputs() -> set[str]:
    """What a build leaves in the checkout: build/, dist/ and *.egg-info, with their files."""
    found = set()
    for top in [ROOT / "build", ROOT / "dist", *ROOT.glob("*.egg-info")]:
        if top.exists():
            found |= {top.relative_to(ROOT).as_posix()} | \
                {p.relative_to(ROOT).as_posix() for p in top.rglob("*")}
    return found


def test_the_wheel_installs_one_package_named_siliconbench(tmp_path):
    """pip installs exactly one top-level package, siliconbench (and its metadata): core, gui
    and resources at the top level would collide with any other distribution's. The wheel
    holds every package of ours (a framework's folder left out would install SiliconBench
    without that framework's runs) and the data files the app reads. It is built from a copy
    of what the build reads (setuptools writes build/ and an .egg-info beside the sources it
    is given): the checkout is left as it was."""
    import shutil
    import zipfile
    source = tmp_path / "source"
    shutil.copytree(ROOT / "siliconbench", source / "siliconbench",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source)
    before = build_outputs()
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(tmp_path), str(source)], check=True, capture_output=True,
                   timeout=240, cwd=tmp_path)
    assert build_outputs() == before, "the build wrote into the checkout"
    [wheel] = tmp_path.glob("siliconbench-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    name, version = wheel.name.split("-")[:2]
    assert {n.split("/")[0] for n in names} == {"siliconbench", f"{name}-{version}.dist-info"}
    ours = {p.relative_to(ROOT).as_posix() for p in (ROOT / "siliconbench").rglob("*.py")}
    assert ours <= set(names)
    for data in ("help.html", "peaks.json", "run_record.schema.json", "SiliconBench.icns",
                 "reference/llamacpp-apple-silicon.json"):
        assert f"siliconbench/resources/{data}" in names, data


def test_the_icon_and_its_source_image_exist(setup_app):
    icns = ROOT / setup_app.OPTIONS["iconfile"]
    assert icns.read_bytes()[:4] == b"icns"
    assert (ROOT / "siliconbench" / "resources" / "icon.png").is_file()
    assert (ROOT / "scripts" / "make_icon.py").is_file()
    assert icns.name == setup_app.PLIST["CFBundleDocumentTypes"][0]["CFBundleTypeIconFile"]


def test_resources_the_app_reads_are_in_the_resources_package():
    from importlib import resources
    for name in ("help.html", "suites.json", "peaks.json", "run_record.schema.json",
                 "SiliconBench.icns"):
        assert resources.files("siliconbench.resources").joinpath(name).is_file(), name
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["siliconbench.resources"]
    assert "*.html" in package_data and "*.icns" in package_data


def test_plist_keys_and_version(setup_app):
    plist = setup_app.PLIST
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert plist["CFBundleShortVersionString"] == project["version"]
    assert plist["CFBundleVersion"] == project["version"]
    assert plist["CFBundleName"] == "SiliconBench"
    assert plist["NSRequiresAquaSystemAppearance"] is False
    assert plist["LSMinimumSystemVersion"]
    assert setup_app.OPTIONS["plist"] is plist
    plistlib.dumps(plist)  # every value is one a plist can hold


def test_result_files_are_a_document_type_the_app_opens(setup_app):
    plist = setup_app.PLIST
    (doc,) = plist["CFBundleDocumentTypes"]
    (uti,) = plist["UTExportedTypeDeclarations"]
    assert doc["LSItemContentTypes"] == [uti["UTTypeIdentifier"]]
    assert "public.json" in uti["UTTypeConformsTo"]
    assert uti["UTTypeTagSpecification"]["public.filename-extension"] == \
        [RESULT_SUFFIX.lstrip(".")]


# ---------------------------------------------------------------- the worker inside the bundle

def test_worker_command_outside_a_bundle():
    assert worker_command("run") == [sys.executable, "-m", "siliconbench.core.worker", "run"]


def test_worker_command_inside_a_bundle(monkeypatch):
    monkeypatch.setattr(sys, "frozen", "macosx_app", raising=False)
    app = "/Applications/SiliconBench.app/Contents/MacOS/SiliconBench"
    monkeypatch.setenv("EXECUTABLEPATH", app)
    assert worker_command("devices", "torch") == [app, "--worker", "devices", "torch"]
    monkeypatch.delenv("EXECUTABLEPATH")
    monkeypatch.setattr(sys, "executable", "/A/SiliconBench.app/Contents/MacOS/python")
    assert worker_command("run") == ["/A/SiliconBench.app/Contents/MacOS/SiliconBench",
                                     "--worker", "run"]


def test_bundle_main_script_runs_the_worker_without_qt():
    code = ("import runpy, sys; sys.argv = ['SiliconBench', '--worker'];"
            "runpy.run_path('siliconbench/gui/bundle_main.py', run_name='__main__')")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 2  # siliconbench.core.worker's usage: the worker ran, not the window
    assert "usage: python -m siliconbench.core.worker" in out.stderr


def test_missing_framework_in_the_bundle_says_how_to_add_it(monkeypatch):
    from siliconbench.core.frameworks import FRAMEWORKS
    monkeypatch.setattr(sys, "frozen", "macosx_app", raising=False)
    reason = FRAMEWORKS["mlx"].missing_reason()
    assert "Mac app" in reason and "pip install 'siliconbench[mlx]'" in reason


# ---------------------------------------------------------------- the .sbresults file

def test_cli_exports_and_imports_sbresults(tmp_path, monkeypatch, capsys):
    from siliconbench.core.cli import main
    from siliconbench.core.store import Store
    from tests.helpers.sample_records import gemm_run
    rec = gemm_run("M1 Max", 10.0)
    Store().save(rec)
    out = tmp_path / f"runs{RESULT_SUFFIX}"
    assert main(["export", "-o", str(out)]) == 0
    assert json.loads(out.read_text())  # JSON inside
    monkeypatch.setenv("SILICONBENCH_HOME", str(tmp_path / "other-home"))
    assert main(["import", str(out)]) == 0
    assert [r.id for r in Store().runs()] == [rec.id]
