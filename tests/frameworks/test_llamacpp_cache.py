"""llama.cpp's model cache with something else in a cached GGUF's place (a FIFO, a link to
/dev/zero, a folder, a link to a file of the user's, random or truncated bytes, no checksum
record): each is rebuilt and said, never read or written through, and a run over a FIFO
there rebuilds it and warns. Moved from tests/core/test_files_checked.py, where `make test`
(without llama-cpp-python) skipped them and `make test-llamacpp` did not collect them:
`make test-llamacpp` lists this module."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.cli_processes import run_cli
from tests.helpers.framework_runs import cpu_read, store_a_triad  # noqa: F401  (a fixture)
from tests.helpers.hostile_files import CASES, GUARD_S, OUTSIDE_TEXT, answer, in_child
from tests.helpers.llamacpp import needs_llamacpp

GGUF_CHILD = """
    import json, os, stat, sys
    from siliconbench.core.frameworks.llamacpp import models
    from siliconbench.core.workloads import llm
    shape, case, outside = llm.PRESETS["tiny"], sys.argv[1], sys.argv[2]
    path = models.model_file(shape, "tiny", "q4_0", 1)
    whole = path.read_bytes()
    sums = models.checksum_path(path).read_text()
    path.unlink()
    if case == "fifo": os.mkfifo(path)
    elif case == "dev_zero_link": path.symlink_to("/dev/zero")
    elif case == "folder": path.mkdir()
    elif case == "link_outside": path.symlink_to(outside)
    elif case == "random": path.write_bytes(os.urandom(len(whole)))
    elif case == "truncated": path.write_bytes(whole[:len(whole) // 2])
    elif case == "no_checksum":
        path.write_bytes(whole)
        models.checksum_path(path).unlink()
    said = []
    again = models.model_file(shape, "tiny", "q4_0", 1, say=said.append)
    reused = models.model_file(shape, "tiny", "q4_0", 1, say=said.append)
    print(json.dumps({"said": said, "same": again == path == reused,
                      "regular": stat.S_ISREG(os.lstat(path).st_mode),
                      "tensors": len(models.tensor_bytes(path)),
                      "damage": models.damage(path)}))
    """


@needs_llamacpp
@pytest.mark.parametrize("case", [*CASES, "random", "truncated", "no_checksum"])
def test_a_damaged_cached_gguf_model_is_rebuilt_and_said(case, outside):
    got = answer(in_child(GGUF_CHILD, args=[case, str(outside)]))
    reason = {"fifo": "it is a FIFO", "dev_zero_link": "it is a link",
              "folder": "it is a folder", "link_outside": "it is a link",
              "random": "checksum of it is not the one it was built with",
              "truncated": "bytes, not the", "no_checksum": "checksum record is missing"}[case]
    # Said once, for the rebuild; the second call reuses the rebuilt file.
    assert len(got["said"]) == 2 and got["said"][-1].startswith("the cached model tiny-")
    assert reason in got["said"][-1] and got["said"][-1].endswith("; rebuilt")
    assert got["same"] and got["regular"] and got["tensors"] > 0 and got["damage"] is None
    assert outside.read_bytes() == OUTSIDE_TEXT


@needs_llamacpp
@pytest.mark.usefixtures("short_protocol")
def test_a_run_over_a_fifo_in_the_model_cache_rebuilds_it_and_warns(tmp_path, cpu_read,
                                                                    siliconbench_home):
    store_a_triad(siliconbench_home, cpu_read)   # the run then measures no bound of its own
    built = answer(in_child("""
        import json
        from siliconbench.core.frameworks.llamacpp import models
        from siliconbench.core.workloads import llm
        print(json.dumps(str(models.model_file(llm.PRESETS["tiny"], "tiny", "q4_0", 1))))
        """))
    path = Path(built)
    path.unlink()
    os.mkfifo(path)
    done = run_cli("run", "llm", "--framework", "llamacpp", "--device", "cpu", "--preset",
                   "tiny", "--dtype", "q4_0", "--prompts", "8", "--depths", "0",
                   "--gen-tokens", "4", "--quick", cwd=tmp_path, timeout=GUARD_S)
    assert done.returncode == 0, done.stderr[-3000:]
    said = (f"the cached model {path.name} was damaged (it is a FIFO, not a regular file); "
            "rebuilt")
    assert f"warning: {said}" in done.stdout
    from siliconbench.core.store import Store
    store = Store()
    try:
        [rec] = store.runs(workload="llm")
    finally:
        store.close()
    assert rec.status == "ok" and said in rec.warnings
