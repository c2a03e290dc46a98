"""`siliconbench run serve --framework llamacpp`: llama-cpp-python's server started on the tiny
preset written as a GGUF file with a byte-level vocabulary (a server tokenises text), measured
and stopped. Run by `make test-llamacpp`: the file needs llama-cpp-python, the run its
`server` extra (fastapi, uvicorn, sse-starlette, pydantic-settings)."""

from __future__ import annotations

import importlib.util
import json

import pytest

from siliconbench.core.frameworks.llamacpp.models import byte_vocabulary
from siliconbench.core.results import RunRecord
from tests.helpers.cli_processes import run_cli, wait_until_gone
from tests.helpers.llamacpp import child, needs_llamacpp

HAVE_SERVER = all(importlib.util.find_spec(m) is not None for m in
                  ("llama_cpp", "fastapi", "uvicorn", "sse_starlette", "pydantic_settings"))
needs_server = pytest.mark.skipif(
    not HAVE_SERVER, reason="llama-cpp-python's server extra is not installed: `make "
                            "test-llamacpp` installs the llamacpp extra, which has it")


def test_the_byte_vocabulary_covers_every_byte_once():
    tokens, types, merges, eos = byte_vocabulary(300)
    assert len(tokens) == len(types) == 300 and len(set(tokens)) == 300
    assert eos == 0 and types[eos] == 3 and merges == ["Ġ Ġ"] and tokens[1] == "ĠĠ"
    assert tokens[ord("a")] == "a" and tokens[ord(" ")] == "Ġ"


@needs_llamacpp
def test_the_presets_text_file_tokenises_text_and_answers(siliconbench_home):
    out = child(
        "import json\n"
        "from siliconbench.core.frameworks.llamacpp import serve\n"
        "from siliconbench.core.workloads.llm import PRESETS\n"
        "path, about = serve.model(PRESETS['tiny'], 'tiny', {'prompt_tokens': 16, "
        "'output_tokens': 8}, lambda s: None)\n"
        "import llama_cpp\n"
        "llm = llama_cpp.Llama(model_path=path, n_ctx=about['context'], n_gpu_layers=0, "
        "verbose=False)\n"
        "r = llm.create_completion('hello world', max_tokens=8, temperature=0)\n"
        "print(json.dumps({'tokens': llm.tokenize(b'hello world', add_bos=False), "
        "'usage': r['usage']}))\n", siliconbench_home)
    assert out["tokens"] == list(b"hello world")
    assert out["usage"]["prompt_tokens"] == 11 and out["usage"]["completion_tokens"] >= 1


@needs_server
def test_llama_cpp_server_is_started_measured_and_stopped(siliconbench_home):
    r = run_cli("run", "serve", "--framework", "llamacpp", "--device", "cpu", "--concurrency",
                "1,2", "--requests", "4", "--output-tokens", "8", "--prompt-tokens", "16",
                "--json", timeout=300)
    assert r.returncode == 0, r.stderr
    rec = RunRecord.from_dict(json.loads(r.stdout), validate_schema=True)
    assert rec.status == "ok" and rec.device_name.startswith("llama_cpp.server · tiny")
    tok = {x.params["concurrency"]: x for x in rec.rows if x.metric == "output_tok_s"}
    assert set(tok) == {1, 2} and all(x.value > 0 for x in tok.values())
    # Concurrent requests wait their turn (the server's default interrupts one with the
    # next), and min_tokens holds every answer to its length.
    kept = rec.settings["serve_requests"]
    assert [k["reason"] for k in kept if not k["ok"]] == []
    assert all(k["tokens"] == 8 for k in kept)
    assert wait_until_gone(siliconbench_home) == []
