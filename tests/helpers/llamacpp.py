"""llama.cpp's tests: whether llama-cpp-python is here (`make test-llamacpp` installs it) and
code run in a process of llama.cpp's own, as a run is."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli_processes import ROOT

HAVE = importlib.util.find_spec("llama_cpp") is not None and \
    importlib.util.find_spec("gguf") is not None


needs_llamacpp = pytest.mark.skipif(
    not HAVE, reason="llama-cpp-python is not installed: `make test-llamacpp` installs the "
                     "llamacpp extra (it compiles llama.cpp, once) and runs these tests")


def child(code: str, home: Path) -> dict:
    """Run `code` in a process of llama.cpp's own (as a run is), in the store at `home`; it
    prints one JSON line last."""
    import os
    env = dict(os.environ, SILICONBENCH_HOME=str(home))
    r = subprocess.run([sys.executable, "-c", "from siliconbench.core.frameworks import isolate\n"
                        "isolate('llamacpp')\n" + code], capture_output=True, text=True,
                       cwd=ROOT, env=env, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])
