"""MLX's part of the serve workload: mlx_lm.server (mlx-lm's OpenAI-compatible server) on
the user's mlx-lm folder, or on a preset's shape written as one: config.json, random weights
(model.safetensors, MLX's own initialisation, seed 0) and a byte-level tokenizer whose
end-of-sequence token lies past the model's vocabulary, so a random model never ends an
answer early (mlx_lm.server takes no ignore_eos). The server runs in a process of its own,
started by serve_main (below), which puts MLX's default device first: mlx_lm.server has no
device flag."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

NAME = "mlx_lm.server"
READY_PATH = "/health"      # its /v1/models fails without a Hugging Face cache
FAILED_STATUS = 503         # /health's answer once the model failed to load (it stays up)
FORMAT = 1          # bump when the written folder changes: old ones are then not reused
EOS = "<|endoftext|>"
CHAT_TEMPLATE = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"


def folder_for(shape, name: str) -> Path:
    from siliconbench.core.store_schema import home
    text = json.dumps({"format": FORMAT, **asdict(shape)}, sort_keys=True)
    return home() / "models" / "mlx" / f"{name}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def model(shape, name: str, params: dict, say: Callable[[str], None]) -> tuple[str, dict]:
    own = params.get("model_path")
    if own:
        path = Path(own).expanduser()
        if not (path / "config.json").is_file():
            from siliconbench.core.params import ParamError
            raise ParamError(f"--model-path {own} is not an mlx-lm folder (no config.json).")
        return str(path), {"model_name": path.name}
    dest = folder_for(shape, name)
    if not (dest / "done").is_file():
        say(f"writing the {name} preset's random weights to {dest}")
        write(shape, dest)
    return str(dest), {"model_name": f"{name} (random weights)"}


def write(shape, dest: Path) -> None:
    """The preset as an mlx-lm folder, written into a new folder and renamed into place."""
    import shutil
    import tempfile

    import mlx.core as mx
    from mlx.utils import tree_flatten

    from siliconbench.core.files import own_folder, remove
    from siliconbench.core.frameworks.mlx.llm import MlxLM, model_args
    own_folder(dest.parent)      # a real folder, never a link that would send the files away
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=".writing-"))
    try:
        dtype = "float32" if shape.hidden <= 256 else "bfloat16"
        built = MlxLM(shape, dtype)      # mlx-lm's own model class, seed 0
        mx.save_safetensors(str(tmp / "model.safetensors"),
                            dict(tree_flatten(built.model.parameters())))
        (tmp / "config.json").write_text(json.dumps(
            {**model_args(shape), "eos_token_id": shape.vocab, "torch_dtype": dtype}))
        tokenizer(shape.vocab, tmp)
        (tmp / "done").write_text("")
        remove(dest)             # an older or damaged copy; a link itself, never its target
        tmp.rename(dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def tokenizer(vocab: int, folder: Path) -> None:
    """A byte-level BPE without merges: each byte a token (ids below 256), the rest of the
    model's vocabulary tokens of their own (<t256>...), and EOS at id `vocab`, which the model
    cannot produce."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    table = {ch: i for i, ch in enumerate(alphabet)}
    table.update({f"<t{i}>": i for i in range(len(table), vocab)})
    tok = Tokenizer(models.BPE(vocab=table, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([EOS])
    tok.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "PreTrainedTokenizerFast", "eos_token": EOS, "bos_token": None,
        "chat_template": CHAT_TEMPLATE, "model_max_length": 1 << 20}))


def command(model_path: str, port: int, params: dict, device: str, about: dict
            ) -> list[str]:
    return [sys.executable, "-m", __name__, device, "--model", model_path, "--host",
            "127.0.0.1", "--port", str(port), "--max-tokens", str(params["output_tokens"]),
            "--log-level", "WARNING"]


def software() -> dict:
    from importlib.metadata import PackageNotFoundError, version
    out = {}
    for package in ("mlx", "mlx-lm"):
        try:
            out[package.replace("-", "_")] = version(package)
        except PackageNotFoundError:
            pass
    return out


def serve_main(argv: list[str]) -> None:
    """`python -m siliconbench.core.frameworks.mlx.serve DEVICE ARGS...`: mlx_lm.server's
    main with ARGS, on DEVICE (cpu or gpu) made MLX's default before mlx-lm is imported
    (its generation stream is made on the default device at import)."""
    import mlx.core as mx
    device = argv[0].split(":")[0]
    mx.set_default_device(mx.cpu if device == "cpu" else mx.gpu)
    from mlx_lm.server import main
    sys.argv = ["mlx_lm.server", *argv[1:]]
    main()


if __name__ == "__main__":
    serve_main(sys.argv[1:])
