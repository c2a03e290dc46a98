"""Serving: how fast an LLM server answers, from one request to many at once. Either a server
SiliconBench starts (llama.cpp's through llama-cpp-python, mlx_lm.server; on a preset's
random weights or the user's own model file), bound to 127.0.0.1 on a free port and stopped at
the end, or one already running given by --url (Ollama, LM Studio, llama-server, vLLM, any
OpenAI-compatible endpoint), on this machine unless --allow-remote.

A closed-loop sweep of concurrent requests (--concurrency), warm-up left out, prompts of a
given length from a fixed seed, answers of a forced length where the API allows; each metric
named by its formula (siliconbench.core.kit.serving_metrics), the server's own figures beside
the client's, each request's chunk arrival times kept in the record (settings.serve_requests).
The run's own process imports no framework (the server does, in its process): a framework's
part is siliconbench.core.frameworks.<framework>.serve, the ServePart below."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, runtime_checkable

from siliconbench.core.catalogue import Workload
from siliconbench.core.frameworks import FRAMEWORKS
from siliconbench.core.kit.serving_apis import APIS
from siliconbench.core.kit.serving_http import Target, parse_target
from siliconbench.core.kit.serving_load import Server, detect
from siliconbench.core.kit.serving_metrics import parse_slo
from siliconbench.core.params import Param, ParamError

STARTS = ("llamacpp", "mlx")          # the frameworks whose server SiliconBench starts
READY_S = 300.0                        # a started server's time to answer (loads its model)
NOT_STARTED = (f"SiliconBench starts a server for {' and '.join(STARTS)} (--framework "
               "llamacpp or mlx); for another server give its address with --url.")

WORKLOAD = Workload(
    name="serve",
    title="Serving (LLM server)",
    summary="An LLM server's time to first token, per-user and total tokens/s from one "
            "request to many at once: a server SiliconBench starts, or yours with --url.",
    order=75,
    metric="output_tok_s",
    x="concurrency",
    module=__name__,
    # Every framework: with --url the server's engine is measured, whatever --framework
    # says; without it, STARTS' servers (checked in check_params).
    frameworks=tuple(FRAMEWORKS),
    starts_runs=True,        # its process imports no framework: the server runs it
    checks="check_params",
    params=(
        Param("url", "str", None, "A running server's address, e.g. http://127.0.0.1:11434 "
              "(Ollama), :1234 (LM Studio), :8080 (llama-server).",
              auto="a server SiliconBench starts (llamacpp, mlx)", title="Server URL"),
        Param("api", "choice", "auto", "The server's API: OpenAI-compatible (/v1), Ollama's "
              "(/api) or LM Studio's (/api/v0); auto tries them.", choices=("auto",) + APIS,
              title="API"),
        Param("allow_remote", "bool", False, "Allow --url to name another host than this "
              "machine (the record says so)."),
        Param("api_key_env", "str", None, "The environment variable holding the server's API "
              "key (sent as a bearer token; never stored or shown).", auto="no key",
              title="API key variable"),
        Param("model", "str", None, "The server's model to ask (its name in the server's "
              "list).", auto="the first the server lists"),
        Param("preset", "choice", "tiny", "The model shape SiliconBench writes with random "
              "weights for a server it starts.", choices=("tiny", "llama-3.2-1b", "qwen3-4b")),
        Param("model_path", "str", None, "Your own model for a server SiliconBench starts: a "
              "GGUF file (llamacpp) or an mlx-lm folder (mlx).", path=True,
              auto="the preset", title="Model file"),
        Param("concurrency", "int_list", [1, 2, 4, 8], "Requests in flight at once, one "
              "level each (closed loop).", min=1, max=1024),
        Param("requests", "int", None, "Measured requests per level.", min=1, max=10_000,
              auto="4 per concurrent request, at least 8"),
        Param("rate", "float", None, "Measured requests arriving at random (Poisson) at "
              "this many a second, at most --concurrency in flight, instead of a closed loop.",
              min=0.001, max=100_000, auto="closed loop", title="Arrival rate (req/s)"),
        Param("warmup", "int", None, "Requests per level sent first and left out.", min=0,
              max=10_000, auto="one per concurrent request"),
        Param("prompt_tokens", "int", 128, "Prompt length (words from a fixed seed, about "
              "a token each; the record keeps the server's count).", min=1, max=131_072),
        Param("output_tokens", "int", 64, "Answer length asked for.", min=1, max=32_768),
        Param("force_length", "bool", True, "Ask the server to ignore end-of-sequence "
              "(ignore_eos, min_tokens; Ollama's num_predict caps only)."),
        Param("endpoint", "choice", "chat", "Chat messages or a plain text completion.",
              choices=("chat", "completions")),
        Param("cache", "choice", "cold", "Prompt cache: cold (a unique salt starts each "
              "prompt), warm (a long shared prefix primed once), or both.",
              choices=("cold", "warm", "both")),
        Param("slo", "str", None, "Limits for goodput, e.g. ttft=500ms,tpot=50ms.",
              auto="no goodput", title="SLO"),
        Param("seed", "int", 0, "The prompts' seed.", min=0, max=2**31 - 1),
        Param("stall_s", "float", 60.0, "A request fails after this long without a byte.",
              min=0.1, max=3600, title="Stall limit (s)"),
        Param("request_s", "float", 600.0, "A request fails after this long in all.",
              min=0.1, max=86_400, title="Request limit (s)"),
    ),
)


@runtime_checkable
class ServePart(Protocol):
    """A framework's server: siliconbench.core.frameworks.<framework>.serve."""
    NAME: str               # what the server is called ("mlx_lm.server")
    READY_PATH: str         # a GET that answers 200 once the server can take requests
    FAILED_STATUS: int | None   # READY_PATH's answer where it never will (None: none)

    def model(self, shape, name: str, params: dict, say: Callable[[str], None]
              ) -> tuple[str, dict]:
        """(what the server loads: a path, what the record says of it): --model-path, or
        the preset `name` of `shape` (siliconbench.core.kit.llm_shapes.ModelShape) written
        now with random weights unless kept from before."""

    def command(self, model: str, port: int, params: dict, device: str, about: dict
                ) -> list[str]:
        """The server's command line, bound to 127.0.0.1:port (`about`: model()'s)."""

    def software(self) -> dict:
        """The server's package versions."""


def check_params(params: dict, framework: str | None = None) -> None:
    parse_slo(params.get("slo"))
    if params.get("url"):
        parse_target(params["url"], bool(params.get("allow_remote")))
    elif params.get("allow_remote") or params.get("api_key_env"):
        raise ParamError("--allow-remote and --api-key-env apply to a server given by --url.")
    elif framework is not None and framework not in STARTS:
        raise ParamError(NOT_STARTED)
    if (name := params.get("api_key_env")) and not name.replace("_", "").isalnum():
        raise ParamError("--api-key-env takes the name of an environment variable, "
                         "e.g. OPENAI_API_KEY.")


def run(ctx, params: dict) -> None:
    from siliconbench.core.kit.serving_run import Sweep
    url = params.get("url")
    if not url and ctx.framework not in STARTS:
        raise ParamError(NOT_STARTED)
    key = api_key(params.get("api_key_env"))
    if url:
        target = parse_target(url, bool(params.get("allow_remote")))
        server = asyncio.run(detect(target, params["api"], key))
        Sweep(ctx, params, target, server, key, started=None).run()
        return
    started(ctx, params)


def api_key(env: str | None) -> str | None:
    if not env:
        return None
    value = os.environ.get(env)
    if not value:
        raise ParamError(f"The environment variable {env} named by --api-key-env is not set.")
    return value


def started(ctx, params: dict) -> None:
    """A server of the run's framework: its model made or found, started, measured, stopped."""
    from siliconbench.core.frameworks import implementation
    from siliconbench.core.kit.serving_process import ServerProcess, free_port
    from siliconbench.core.kit.serving_run import Sweep
    part = implementation(ctx.framework, "serve")
    if params.get("model_path") and not Path(params["model_path"]).expanduser().exists():
        raise ParamError(f"--model-path {params['model_path']} does not exist.")
    ctx.progress(0, 1, f"preparing the model for {part.NAME}")
    from siliconbench.core.workloads.llm import PRESETS
    model, about = part.model(PRESETS[params["preset"]], params["preset"], params,
                              lambda text: ctx.progress(0, 1, text))
    port = free_port()
    target = Target("http", "127.0.0.1", port)
    command = part.command(model, port, params, ctx.device_id, about)
    ctx.progress(0, 1, f"starting {part.NAME} on 127.0.0.1:{port}")
    with ServerProcess(command, name=part.NAME) as proc:
        ready_s = proc.wait_ready(target, part.READY_PATH, READY_S, part.FAILED_STATUS)
        # The model is the one it was started with (mlx_lm.server's own model list reads
        # the Hugging Face cache, and fails where there is none).
        server = Server("openai", [model], part.NAME)
        # The command as run, the interpreter and the model's path named only (a path
        # tells where the user keeps files: an export names them only).
        shown = [Path(c).name if c == command[0] else "MODEL" if c == model else c
                 for c in command]
        ctx.record_settings(server_ready_s=round(ready_s, 3), server_command=" ".join(shown),
                            **about)
        Sweep(ctx, params, target, server, None, started=part.software(),
              shown=about.get("model_name")).run()

