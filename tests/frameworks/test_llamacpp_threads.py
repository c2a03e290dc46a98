"""llama.cpp's default thread count, common_cpu_get_num_math() of its common/common.cpp as
adapter.num_math ports it, on machines made of files: a hybrid x86 CPU whose efficiency
cores are skipped, one whose count fails, and the physical cores elsewhere. Needs no
llama.cpp."""

from pathlib import Path

from siliconbench.core.frameworks.llamacpp import adapter


def machine(root: Path, siblings: list[str], atom: str | None, hybrid: bool) -> dict:
    """A /sys and /proc/cpuinfo of CPUs whose thread_siblings masks are `siblings`, with the
    kernel's cpu_atom list `atom` (efficiency cores) and the hybrid_cpu flag or not."""
    sys_root = root / "sys"
    for cpu, mask in enumerate(siblings):
        folder = sys_root / f"devices/system/cpu/cpu{cpu}/topology"
        folder.mkdir(parents=True)
        (folder / "thread_siblings").write_text(mask + "\n")
    if atom is not None:
        (sys_root / "devices/cpu_atom").mkdir(parents=True)
        (sys_root / "devices/cpu_atom/cpus").write_text(atom + "\n")
    cpuinfo = root / "cpuinfo"
    flags = "fpu sse2 avx2" + (" hybrid_cpu" if hybrid else "")
    cpuinfo.write_text("".join(f"processor\t: {i}\nflags\t\t: {flags}\n\n"
                               for i in range(len(siblings))))
    return {"system": "Linux", "machine": "x86_64", "sys_root": sys_root, "cpuinfo": cpuinfo,
            "online": len(siblings), "allowed": set(range(len(siblings)))}


# An i9-12900K: 8 performance cores with two threads each (CPUs 0-15, siblings adjacent) and
# 8 efficiency cores (CPUs 16-23).
I9_12900K = [f"{(3 << (2 * (i // 2))):06x}" for i in range(16)] + \
    [f"{(1 << i):06x}" for i in range(16, 24)]


def test_a_hybrid_x86_cpu_counts_its_performance_cores_only(tmp_path):
    m = machine(tmp_path, I9_12900K, "16-23", hybrid=True)
    assert adapter.num_math(**m) == 8
    # the physical cores would be 16: what the threads were before, and what llama-bench
    # does not run
    assert adapter.physical_cores("Linux", m["sys_root"]) == 16


def test_a_cpu_not_hybrid_runs_its_physical_cores(tmp_path):
    m = machine(tmp_path, I9_12900K, "16-23", hybrid=False)
    assert adapter.num_math(**m) == 16


def test_a_count_that_cannot_pin_every_cpu_falls_back_to_the_physical_cores(tmp_path):
    """llama.cpp pins itself to each CPU in turn; one outside the process's affinity fails
    the count (-1), and the physical cores are used."""
    m = machine(tmp_path, I9_12900K, "16-23", hybrid=True)
    assert adapter.num_math(**{**m, "allowed": set(range(4))}) == 16


def test_physical_cores_are_the_distinct_sibling_masks_up_to_the_first_missing_cpu(tmp_path):
    m = machine(tmp_path, ["3", "3", "c", "c", "10"], None, hybrid=False)
    assert adapter.num_math(**m) == 3
    # a machine with no topology files: hardware_concurrency, halved above 4
    assert adapter.physical_cores("Linux", tmp_path / "nothing") in \
        {n if n <= 4 else n // 2 for n in [__import__("os").cpu_count()]}


def test_the_count_only_applies_on_linux_x86(tmp_path):
    m = machine(tmp_path, I9_12900K, "16-23", hybrid=True)
    assert adapter.num_math(**{**m, "machine": "aarch64"}) == 16
