"""The README's recipes, followed in a copy of the package: a throwaway framework (NumPy
under an import name of its own, numpyfw_engine: its __init__.py, adapter.py, ops.py and its
part of a workload, and two lines of pyproject.toml) and a throwaway workload (its module with its <Name>Part Protocol, the framework's part, one
word in the framework's __init__.py). The suite's contract checks then hold for them with no
other file edited: the import contracts, the framework-package checks (each adapter against
the Adapter Protocol, the array ops against TensorOps, the part against the workload's
Protocol, every framework's process still loading SiliconBench), the catalogue and
`siliconbench workloads`; and a run of the workload on it
measures. A step the recipe leaves out fails here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.helpers.architecture import CONTRACTS, lint_imports

ROOT = Path(__file__).resolve().parents[2]
FW = "siliconbench/core/frameworks/numpyfw"

FILES = {
    # The framework's own package, which each other framework's process refuses: NumPy
    # itself cannot be that (SiliconBench and the other frameworks import it).
    "numpyfw_engine/__init__.py": '''
        """NumPy in a package of its own."""
        from numpy import __version__, ndarray  # noqa: F401
        ''',
    f"{FW}/__init__.py": '''
        """NumPy on the CPU: the README's throwaway framework."""
        from siliconbench.core.frameworks import FrameworkInfo

        FRAMEWORK = FrameworkInfo("numpyfw", "NumPy", "numpyfw_engine",
                                  "siliconbench.core.frameworks.numpyfw.adapter", "numpyfw",
                                  workloads=("gemm", "bandwidth", "rowsum"), rank=50)
        ''',
    f"{FW}/adapter.py": '''
        """NumPy's one device, the CPU: eager, so there is nothing to wait for."""
        from __future__ import annotations

        from siliconbench.core.frameworks import (
            Device, DeviceInfo, UnknownDevice, cpu_name, host_memory)


        def software() -> dict:
            import numpy
            return {"numpy": numpy.__version__}


        def devices() -> list[DeviceInfo]:
            return [DeviceInfo("numpyfw", "cpu", cpu_name(), "cpu", host_memory())]


        def resolve(device_id: str) -> Device:
            if device_id.strip().lower() != "cpu":
                raise UnknownDevice(f"NumPy has no device {device_id!r}; choose cpu.")
            return Device("cpu")


        def device_name(dev: Device) -> str:
            return cpu_name()


        def caveat(dev: Device) -> None:
            return None


        def synchronizer(dev: Device):
            return lambda: None


        def free_memory(dev: Device) -> int | None:
            import psutil
            return psutil.virtual_memory().available


        def reset_peak_memory(dev: Device) -> None:
            pass


        def peak_memory(dev: Device) -> None:
            return None


        def empty_cache(dev: Device) -> None:
            pass
        ''',
    f"{FW}/ops.py": '''
        """NumPy's array operations for GEMM and bandwidth."""
        from __future__ import annotations

        import numpy as np

        from siliconbench.core.frameworks.ops import Step, TensorOps


        class Ops(TensorOps):
            copy_kernel, scale_kernel = "np.copyto", "np.multiply(out=)"
            add_kernel, triad_kernel = "np.add(out=)", "np.multiply + np.add (out=)"
            read_kernel = "np.sum"
            errors = (MemoryError, TypeError)

            def itemsize(self, dtype: str) -> int:
                return np.dtype(dtype).itemsize

            def random(self, shape, dtype):
                return np.random.default_rng(0).standard_normal(shape).astype(dtype)

            def to_numpy(self, x) -> np.ndarray:
                return np.asarray(x, dtype=np.float64)

            def matmul(self, a, b) -> Step:
                out = np.empty_like(a)
                return lambda: np.matmul(a, b, out=out)

            def copy(self, src) -> Step:
                dst = np.empty_like(src)
                return lambda: np.copyto(dst, src)

            def scale(self, c, s: float) -> Step:
                out = np.empty_like(c)
                return lambda: np.multiply(c, s, out=out)

            def add(self, a, b) -> Step:
                out = np.empty_like(a)
                return lambda: np.add(a, b, out=out)

            def triad(self, b, c, s: float) -> Step:
                out = np.empty_like(b)
                return lambda: np.add(b, np.multiply(c, s), out=out)

            def read(self, a) -> Step:
                return lambda: np.sum(a)
        ''',
    "siliconbench/core/workloads/rowsum.py": '''
        """Row sums: rows of an n x n matrix summed per second (the README's throwaway
        workload)."""
        from __future__ import annotations

        from collections.abc import Callable
        from typing import Protocol, runtime_checkable

        from siliconbench.core.catalogue import Workload
        from siliconbench.core.frameworks import implementation
        from siliconbench.core.params import Param
        from siliconbench.core.results import Row
        from siliconbench.core.stats import summarize

        WORKLOAD = Workload(
            name="rowsum", title="Row sums (rows/s)", summary="Rows of a matrix summed per second.",
            params=(Param("n", "int", 256, "Rows and columns of the matrix.", min=1, max=8192),),
            module=__name__, metric="rows_per_s", order=990, multiplies=False)


        @runtime_checkable
        class RowsumPart(Protocol):
            def summer(self, ctx, n: int) -> Callable[[], object]: ...


        def run(ctx, params: dict) -> None:
            part: RowsumPart = implementation(ctx.framework, "rowsum")
            n = params["n"]
            m = ctx.measure(part.summer(ctx, n))
            rates = m.rates(n)
            stats = summarize(rates)
            ctx.row(Row("rows_per_s", stats.median, "rows/s", {"n": n}, stats, [], None, None,
                        rates))
        ''',
    f"{FW}/rowsum.py": '''
        """NumPy's part of the rowsum workload."""
        from collections.abc import Callable


        def summer(ctx, n: int) -> Callable[[], object]:
            import numpy as np
            a = np.random.default_rng(0).standard_normal((n, n))
            return lambda: a.sum(axis=1)
        ''',
}


def follow_the_recipes(into: Path) -> None:
    """A copy of the package with the throwaway framework and workload, and the two lines
    of pyproject.toml the framework recipe asks for; the tests the checks need beside it."""
    shutil.copytree(ROOT / "siliconbench", into / "siliconbench",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (into / FW).mkdir()
    (into / "numpyfw_engine").mkdir()
    for name, text in FILES.items():
        (into / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    toml = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    last = '"siliconbench.core.frameworks.coreml"]'
    assert toml.count(last) == 1 and toml.count("[project.optional-dependencies]\n") == 1
    toml = toml.replace(last, last[:-1] + ', "siliconbench.core.frameworks.numpyfw"]')
    toml = toml.replace("[project.optional-dependencies]\n",
                        '[project.optional-dependencies]\nnumpyfw = ["numpy>=1.26"]\n')
    (into / "pyproject.toml").write_text(toml, encoding="utf-8")
    for name in ("tests/__init__.py", "tests/conftest.py", "tests/frameworks/__init__.py",
                 "tests/frameworks/test_framework_packages.py"):
        (into / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, into / name)
    shutil.copytree(ROOT / "tests" / "helpers", into / "tests" / "helpers",   # conftest's
                    ignore=shutil.ignore_patterns("__pycache__"))


def in_copy(root: Path, *args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()      # not this session's xdist worker's
           if not k.startswith("PYTEST_") and k != "SILICONBENCH_EXTRA_WORKLOADS"}
    env |= {"PYTHONPATH": str(root), "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)


def test_a_framework_and_a_workload_added_by_the_recipes_pass_the_contract_checks(tmp_path):
    follow_the_recipes(tmp_path)

    out = lint_imports(tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert all(f"{name} KEPT" in out.stdout for name in CONTRACTS)

    # The framework-package checks on the new framework and workload (this copy's package:
    # the test ids name numpyfw, which only it has).
    out = in_copy(tmp_path, "-m", "pytest", "-n", "0", "-p", "no:cacheprovider",
                  "tests/frameworks/test_framework_packages.py", "-k",
                  "numpyfw or rowsum or every_declared or parts_are_found or loads_in", "-v")
    assert out.returncode == 0, out.stdout + out.stderr
    for test in ("test_each_adapter_provides_what_every_run_calls[numpyfw]",
                 "test_each_frameworks_array_ops_fill_in_tensor_ops[numpyfw]",
                 "test_each_framework_part_provides_every_member_of_its_protocol"
                 "[numpyfw-rowsum]",
                 "test_every_declared_framework_has_its_part_of_the_workload",
                 "test_siliconbench_loads_in_each_frameworks_process[numpyfw]",
                 "test_siliconbench_loads_in_each_frameworks_process[torch]"):
        assert f"tests/frameworks/test_framework_packages.py::{test} PASSED" in out.stdout, \
            out.stdout

    # The catalogue and the registry find them by their files; the command lists them.
    code = ("import json; from siliconbench.core.catalogue import catalogue; "
            "from siliconbench.core.frameworks import runs_on; "
            "print(json.dumps({w.name: runs_on(w) for w in catalogue().values()}))")
    out = in_copy(tmp_path, "-c", code)
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout)
    assert found["rowsum"] == ["numpyfw"]
    assert "numpyfw" in found["gemm"] and "numpyfw" in found["bandwidth"]
    out = in_copy(tmp_path, "-m", "siliconbench.core.cli", "workloads")
    assert out.returncode == 0, out.stderr
    assert "rowsum  Row sums (rows/s) (numpyfw)" in out.stdout
    assert "--n " in out.stdout.split("rowsum  ", 1)[1]
    assert "gemm  Matrix multiply (TFLOPS) (torch, tensorflow, mlx, numpyfw)" in out.stdout

    # And the workload runs on the framework: a measured rate with its spread.
    out = in_copy(tmp_path, "-m", "siliconbench.core.cli", "run", "rowsum", "--framework",
                  "numpyfw", "--device", "cpu", "--n", "64", "--quick", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    record = json.loads(out.stdout)
    [row] = record["rows"]
    assert record["framework"] == "numpyfw"
    assert record["software"]["numpy"] == __import__("numpy").__version__   # its software()
    assert row["metric"] == "rows_per_s" and row["value"] > 0 and row["stats"]["n"] >= 3
