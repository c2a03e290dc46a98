"""An LLM run's model, worked out once where the run starts: the preset or the user's model
file (read once, with the sha256 of its header), the shape it gives, and the precision the run
takes (a file that stores its weights quantised decides it; else --dtype). The llm workload's
plan (siliconbench.core.workloads.llm.planned) makes it into the run's plan
(siliconbench.core.plan.PlannedModel), which crosses to the run's own process as JSON; there the
workload and the engines read it back (ctx.plan.model, run_own_model), and nothing reads the file's
header again. The estimate, before any run, reads the same rules here."""

from __future__ import annotations

from dataclasses import asdict, replace

from siliconbench.core.kit.llm_presets import PRESETS
from siliconbench.core.kit.llm_shapes import ModelShape
from siliconbench.core.kit.model_files import ModelFile, OwnModel, read_model
from siliconbench.core.params import ParamError
from siliconbench.core.plan import PlannedModel, thawed

CUSTOM = ("layers", "hidden", "heads", "kv_heads", "vocab")    # parameters that change a shape


def own_model(params: dict) -> OwnModel | None:
    """The user's model file (--model-path), read and checked; None for a preset."""
    path = params.get("model_path")
    if not path:
        return None
    try:
        return read_model(path)
    except ValueError as e:
        raise ParamError(str(e)) from None


def precision(params: dict, own: OwnModel | None) -> str:
    """The precision the run takes: a file that stores its weights quantised (a GGUF type, an
    MLX quantisation) decides it, else --dtype. The one place it is decided."""
    return own.stored_dtype if own is not None and own.stored_dtype else params["dtype"]


def shape_for(params: dict, own: OwnModel | None = None) -> ModelShape:
    """The preset with the custom shape parameters applied, or the shape the model file
    (`own`, read once by the caller; read here when None and --model-path is given) gives;
    ParamError for a shape no model can have."""
    custom = {k: params[k] for k in CUSTOM if params.get(k) is not None}
    own = own if own is not None else own_model(params)
    if own is not None:
        if custom:
            raise ParamError(f"--{next(iter(custom)).replace('_', '-')} changes a preset's "
                             "shape; a model file has its own: leave it out.")
        return own.shape
    shape = PRESETS[params["preset"]]
    if not custom:
        return shape
    shape = replace(shape, **custom)
    if "hidden" in custom or "heads" in custom:
        if shape.hidden % shape.heads:
            raise ParamError(f"--hidden ({shape.hidden}) must be a multiple of --heads "
                             f"({shape.heads}).")
        shape = replace(shape, head_dim=shape.hidden // shape.heads)
        if shape.head_dim % 2:
            raise ParamError(f"--hidden ({shape.hidden}) over --heads ({shape.heads}) makes "
                             f"heads of {shape.head_dim}; rotary embeddings need an even "
                             "size.")
    if shape.heads % shape.kv_heads:
        raise ParamError(f"--heads ({shape.heads}) must be a multiple of --kv-heads "
                         f"({shape.kv_heads}).")
    return shape


def plan_model(params: dict) -> tuple[dict, PlannedModel]:
    """(the parameters the run keeps, its model): the file read once, the precision decided
    (the parameters' dtype is the precision the run takes, as its record has always said), and
    a file leaves no preset in the record (the preset's default was left beside it)."""
    own = own_model(params)
    shape = shape_for(params, own)
    kept = {**params, "dtype": precision(params, own)}
    if own is not None:
        kept["preset"] = None
        return kept, PlannedModel(name=own.file.name, shape=asdict(shape),
                                  file=own.file.to_dict(), stored_dtype=own.stored_dtype,
                                  sha256=own.fingerprint, config=own.config,
                                  tensors=own.tensor_bytes)
    return kept, PlannedModel(name=params["preset"], shape=asdict(shape),
                              preset=params["preset"])


def run_own_model(ctx, params: dict) -> OwnModel | None:
    """The user's model file of the run, as its plan read it (never read again); read from
    --model-path for an engine made without a plan (a test's); None for a preset."""
    plan = getattr(ctx, "plan", None)
    if plan is not None and plan.model is not None:
        return own_model_of(plan.model)
    return own_model(params)


def shape_of(model: PlannedModel) -> ModelShape:
    return ModelShape(**model.shape)


def own_model_of(model: PlannedModel) -> OwnModel | None:
    """The user's model file as the plan read it (None for a preset): never read again."""
    if model.file is None:
        return None
    f = dict(model.file)
    f["engines"] = tuple(f.get("engines") or ())
    f["experts"] = tuple(f["experts"]) if f.get("experts") else None
    f["notes"] = tuple(f.get("notes") or ())
    return OwnModel(ModelFile(**f), shape_of(model), model.stored_dtype, model.sha256 or "",
                    None if model.config is None else thawed(model.config),
                    None if model.tensors is None else thawed(model.tensors))


def model_label(params: dict, model: PlannedModel | None = None) -> str:
    """The model as rows and sentences name it: the preset, or the file's name."""
    if model is not None:
        return model.name
    own = own_model(params)
    return own.file.name if own else params["preset"]
