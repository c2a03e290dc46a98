"""llama.cpp's part of the serve workload: llama-cpp-python's OpenAI-compatible server
(`python -m llama_cpp.server`, its `server` extra) on the user's GGUF file, or on a preset's
shape written as one with a byte-level vocabulary (models.byte_vocabulary: a server tokenises
text, which the llm workload's files cannot). It honours min_tokens, which the workload sends
to force the answer's length; it streams one token a chunk and reports no usage, so n is the
chunks' count (the rows say so)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

NAME = "llama_cpp.server"
READY_PATH = "/v1/models"
FAILED_STATUS = None
DTYPE = "float16"           # a preset's file: written directly, no quantiser run here
BYTES_PER_WORD = 6          # a prompt word in the byte vocabulary: its letters and a space


def model(shape, name: str, params: dict, say: Callable[[str], None]) -> tuple[str, dict]:
    own = params.get("model_path")
    if own:
        path = Path(own).expanduser()
        if not path.is_file() or path.suffix.lower() != ".gguf":
            from siliconbench.core.params import ParamError
            raise ParamError(f"--model-path {own} is not a GGUF file.")
        return str(path), {"model_name": path.name, "context": _context(params, None)}
    from siliconbench.core.frameworks.llamacpp import models
    path = models.model_file(shape, f"{name}-text", DTYPE, 1, say, vocabulary=True)
    return str(path), {"model_name": f"{name} (random weights, {DTYPE}, byte vocabulary)",
                       "context": _context(params, shape.max_positions)}


def _context(params: dict, most: int | None) -> int:
    """The server's context: the prompt in bytes (a preset's vocabulary) and the answer."""
    need = params["prompt_tokens"] * BYTES_PER_WORD + params["output_tokens"] + 64
    need = max(2048, need)
    return min(need, most) if most else need


def command(model_path: str, port: int, params: dict, device: str, about: dict
            ) -> list[str]:
    """Every layer on the GPU (Metal, CUDA) unless the device is the CPU. Requests wait
    their turn: by default the server ends a streaming answer when the next request comes
    (interrupt_requests), which would fail every concurrent request but one."""
    layers = "0" if device.split(":")[0] == "cpu" else "-1"
    return [sys.executable, "-m", "llama_cpp.server", "--model", model_path, "--host",
            "127.0.0.1", "--port", str(port), "--n_gpu_layers", layers, "--n_ctx",
            str(about["context"]), "--interrupt_requests", "False"]


def software() -> dict:
    from importlib.metadata import PackageNotFoundError, version
    out = {}
    for package in ("llama-cpp-python", "fastapi", "uvicorn"):
        try:
            out[package.replace("-", "_")] = version(package)
        except PackageNotFoundError:
            pass
    return out
