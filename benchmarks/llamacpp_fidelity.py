"""Fidelity of the llm workload on llama.cpp, in one run: SiliconBench's pp and tg tokens/s
(the real path: a child process, the measure protocol) against llama-bench's avg_ts, built
from the very llama.cpp source llama-cpp-python vendors, on the same GGUF files and offload.
Target: each ratio at least 0.97 (pp and tg, and both again at --depth: `pp512 @ d512`), and
the same thread count (llama-bench is left to choose its own: the thread-count case). The
sides alternate, --rounds rounds each, so drift in the machine's speed hits both alike.

    .venv/bin/python benchmarks/llamacpp_fidelity.py [--preset tiny] [--dtypes q4_0,q8_0]
        [--layers N] [--prompt 512] [--gen 128] [--depth 512] [--device cpu] [--rounds 3]
        [--jobs 2]

llama-bench is not in the wheel, but the wheel installs llama.cpp's libraries (libllama,
libggml*, libllama-common) and headers into site-packages/lib and include. The first run
downloads llama-cpp-python's source package (pip download, the installed version) and compiles
llama-bench's two files from its vendored llama.cpp against those very libraries (half a
minute): both sides then run the same compiled llama.cpp, and only the loop that drives it
differs. Where the wheel lacks libllama-common, it builds the llama-bench target with cmake
instead (about 20 minutes on 2 cores; CMAKE_ARGS from the environment are passed on). Either
lands in ~/.cache/siliconbench/llama-bench-<version>/ (SILICONBENCH_CACHE overrides) and is
reused.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("SILICONBENCH_HOME", tempfile.mkdtemp(prefix="sb-bench-"))

from benchmarks.machine_load import warn_if_busy  # noqa: E402
from siliconbench.core.runner import RunSpec, execute  # noqa: E402
from siliconbench.core.workloads import llm  # noqa: E402

TARGET = 0.97


def cache() -> Path:
    return Path(os.environ.get("SILICONBENCH_CACHE", Path.home() / ".cache" / "siliconbench"))


def llama_bench(version: str, jobs: int) -> Path:
    """The llama-bench binary of llama-cpp-python `version`'s vendored llama.cpp, built once."""
    import sysconfig
    folder = cache() / f"llama-bench-{version}"
    linked, built = folder / "llama-bench", folder / "build" / "bin" / "llama-bench"
    for binary in (linked, built):
        if binary.exists():
            return binary
    folder.mkdir(parents=True, exist_ok=True)
    source = vendored(folder, version)
    site = Path(sysconfig.get_paths()["purelib"])
    libs = site / "lib"
    if list(libs.glob("libllama-common.*")) and (site / "include" / "llama.h").exists():
        print(f"compiling llama-bench from llama-cpp-python {version}'s source against the "
              f"wheel's libraries in {libs}", flush=True)
        bench = source / "tools" / "llama-bench"
        subprocess.run([os.environ.get("CXX", "c++"), "-O2", "-DNDEBUG", "-std=c++17",
                        f"-I{source / 'common'}", f"-I{site / 'include'}",
                        f"-I{source / 'vendor'}", f"-I{bench}", str(bench / "llama-bench.cpp"),
                        str(bench / "main.cpp"), f"-L{libs}", "-lllama-common", "-lllama",
                        "-lggml", "-lggml-base", "-pthread", f"-Wl,-rpath,{libs}", "-o",
                        str(linked)], check=True)
        return linked
    print(f"building llama-bench from llama-cpp-python {version}'s source into {folder} "
          "(once; about 20 minutes on 2 cores)", flush=True)
    flags = os.environ.get("CMAKE_ARGS", "").split()
    subprocess.run(["cmake", "-S", str(source), "-B", str(folder / "build"),
                    "-DCMAKE_BUILD_TYPE=Release", "-DLLAMA_CURL=OFF", "-DLLAMA_BUILD_TESTS=OFF",
                    "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_SERVER=OFF",
                    "-DBUILD_SHARED_LIBS=OFF", *flags], check=True)
    subprocess.run(["cmake", "--build", str(folder / "build"), "--target", "llama-bench",
                    "-j", str(jobs)], check=True)
    return built


def vendored(folder: Path, version: str) -> Path:
    """llama.cpp's source as llama-cpp-python `version` vendors it, unpacked once."""
    sdists = list(folder.glob("llama_cpp_python-*.tar.gz"))
    if not sdists:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary",
                        ":all:", f"llama-cpp-python=={version}", "-d",
                        str(folder)], check=True)
        sdists = list(folder.glob("llama_cpp_python-*.tar.gz"))
    source = folder / "src"
    if not source.exists():
        with tarfile.open(sdists[0]) as tar:
            tar.extractall(folder / "unpack", filter="data")
        shutil.move(next((folder / "unpack").iterdir()) / "vendor" / "llama.cpp", source)
        shutil.rmtree(folder / "unpack")
    return source


def test_name(prompt: int, gen: int, depth: int) -> str:
    """llama-bench's test column: pp512, tg128, pp512 @ d4096."""
    return (f"pp{prompt}" if prompt else f"tg{gen}") + (f" @ d{depth}" if depth else "")


def siliconbench(args, dtype: str) -> tuple[dict[str, float], dict]:
    """{test: tokens/s} of the real run (pp and tg at depth 0 and --depth), and its settings
    (file, threads, ngl)."""
    params = {"preset": args.preset, "dtype": dtype, "prompts": [args.prompt],
              "depths": sorted({0, args.depth}), "gen_tokens": args.gen,
              "layers": args.layers}
    rec = execute(RunSpec("llm", "llamacpp", args.device, params))
    if rec.status != "ok":
        sys.exit(f"the SiliconBench run failed: {rec.reason}")
    out = {}
    for r in rec.rows:
        p = r.params
        if r.metric == "prefill_tokens_per_s":
            out[test_name(p["prompt"], 0, p.get("depth", 0))] = r.value
        elif r.metric == "decode_tokens_per_s":
            out[test_name(0, p["gen_tokens"], p["depth"])] = r.value
    return out, rec.settings


def reference(binary: Path, settings: dict, args) -> tuple[dict[str, float], int]:
    """llama-bench's avg_ts of each test (pp<prompt> and tg<gen> at -d 0,<depth>) on the same
    file, ngl and repacking (off where the build's AMX kernels crash: --repack 0), with the
    threads llama-bench chooses itself (no -t): the thread-count case; and those threads."""
    r = subprocess.run([str(binary), "-m", settings["gguf_file"], "-p", str(args.prompt),
                        "-n", str(args.gen), "-d", ",".join(map(str, sorted({0, args.depth}))),
                        "-ngl", str(settings["n_gpu_layers"]), "--repack",
                        "1" if settings.get("repack", True) else "0", "-o", "json"],
                       capture_output=True, text=True, check=True)
    tests = json.loads(r.stdout)
    [threads] = {t["n_threads"] for t in tests}
    return {test_name(t["n_prompt"], t["n_gen"], t["n_depth"]): t["avg_ts"]
            for t in tests}, threads


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="tiny", choices=tuple(llm.PRESETS))
    ap.add_argument("--layers", type=int, default=None, help="the preset's with fewer layers")
    ap.add_argument("--dtypes", default="q4_0,q8_0")
    ap.add_argument("--prompt", type=int, default=512)
    ap.add_argument("--gen", type=int, default=128)
    ap.add_argument("--depth", type=int, default=512,
                    help="the depth case: pp and tg after this many positions (0: none)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    from importlib.metadata import version
    binary = llama_bench(version("llama-cpp-python"), args.jobs)
    warn_if_busy()
    failed = False
    for dtype in args.dtypes.split(","):
        ours: dict[str, list[float]] = {}
        theirs: dict[str, list[float]] = {}
        for i in range(args.rounds):
            mine, settings = siliconbench(args, dtype)
            bench, bench_threads = reference(binary, settings, args)
            for test in bench:
                ours.setdefault(test, []).append(mine[test])
                theirs.setdefault(test, []).append(bench[test])
            print(f"  {dtype} round {i + 1}: " + ", ".join(
                f"{t} SiliconBench {mine[t]:.2f} llama-bench {bench[t]:.2f}" for t in bench)
                + " tok/s", flush=True)
        print(f"\n{settings['model']} ({settings['gguf_file']}), ngl "
              f"{settings['n_gpu_layers']}, repack {settings['extra_buffers']}; weights in "
              f"{settings['weight_buffers']}; thread pool {settings.get('threadpool')}")
        same = settings["threads"] == bench_threads
        failed |= not same
        print(f"  threads: SiliconBench {settings['threads']}, llama-bench's own default "
              f"{bench_threads}: {'ok' if same else 'DIFFERENT'}")
        for test in ours:
            a, b = statistics.median(ours[test]), statistics.median(theirs[test])
            ratio = a / b
            failed |= ratio < TARGET
            print(f"  {test:>14}: SiliconBench {a:10.2f} tok/s   llama-bench {b:10.2f} tok/s"
                  f"   ratio {ratio:.3f} {'ok' if ratio >= TARGET else f'BELOW {TARGET}'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
