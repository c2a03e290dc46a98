"""One run's plan: its inputs worked out once, where the run starts (siliconbench.core.child.
plan_run, in the command's or the app's process, before any process starts), and never changed
after: the resolved parameters, the precision the run takes, the model (a preset, or the user's
file read once, with the sha256 of its header) and its shape, and the ceilings its numbers are
held against (read by the command or the app from the store it opened). It crosses to the run's
own process as JSON (to_dict, from_dict), where the worker hands it to the workload
(RunContext.plan); what the plan read is not read again there."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


def frozen(value: Any) -> Any:
    """A read-only copy: mappings as MappingProxyType, lists as tuples, all the way down."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: frozen(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(frozen(v) for v in value)
    return value


def thawed(value: Any) -> Any:
    """A plain JSON-able copy of a frozen value (dicts and lists), for a workload to use."""
    if isinstance(value, Mapping):
        return {k: thawed(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [thawed(v) for v in value]
    return copy.copy(value)


@dataclass(frozen=True)
class PlannedModel:
    """The model a run takes (the llm workload's), as read where the run started."""
    name: str                                  # how rows name it: the preset, or the file's name
    shape: Mapping[str, Any]                   # kit.llm_shapes.ModelShape's fields
    preset: str | None = None
    file: Mapping[str, Any] | None = None      # kit.model_files.ModelFile's fields: the user's
    stored_dtype: str | None = None            # the precision the file stores its weights in
    sha256: str | None = None                  # of the file's header (metadata, tensor table)
    config: Mapping[str, Any] | None = None    # a folder's config.json, as the plan read it
    tensors: Mapping[str, int] | None = None   # a GGUF file's tensors' bytes, from its header

    def __post_init__(self) -> None:
        for name in ("shape", "file", "config", "tensors"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, frozen(getattr(self, name)))

    def to_dict(self) -> dict:
        return {"name": self.name, "shape": thawed(self.shape), "preset": self.preset,
                "file": thawed(self.file), "stored_dtype": self.stored_dtype,
                "sha256": self.sha256, "config": thawed(self.config),
                "tensors": thawed(self.tensors)}

    @classmethod
    def from_dict(cls, d: Mapping) -> PlannedModel:
        return cls(d["name"], d["shape"], d.get("preset"), d.get("file"),
                   d.get("stored_dtype"), d.get("sha256"), d.get("config"), d.get("tensors"))


@dataclass(frozen=True)
class RunPlan:
    """What one run takes, decided once. `params` are the workload's resolved parameters as
    the record keeps them (read-only: a workload is given thawed_params(), a copy);
    `precision` the one the run takes where the workload decides one (the llm's: a model file
    that stores its weights quantised sets it), else None; `ceilings` what the command or the
    app read from its store (siliconbench.core.kit.ceilings.stored_bounds)."""
    workload: str
    framework: str
    device: str
    params: Mapping[str, Any]
    label: str | None = None
    quick: bool = False
    time_limit_s: float | None = None
    precision: str | None = None
    model: PlannedModel | None = None
    ceilings: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", frozen(self.params))
        object.__setattr__(self, "ceilings", frozen(self.ceilings or {}))

    def thawed_params(self) -> dict:
        return thawed(self.params)

    def to_dict(self) -> dict:
        """Plain JSON: the spec's keys (workload, framework, device, params, label, quick,
        time_limit_s, ceilings) and the plan's."""
        return {"workload": self.workload, "framework": self.framework, "device": self.device,
                "params": self.thawed_params(), "label": self.label, "quick": self.quick,
                "time_limit_s": self.time_limit_s, "precision": self.precision,
                "model": None if self.model is None else self.model.to_dict(),
                "ceilings": thawed(self.ceilings)}

    @classmethod
    def from_dict(cls, d: Mapping) -> RunPlan:
        model = d.get("model")
        return cls(d["workload"], d.get("framework", "torch"), d.get("device", "cpu"),
                   d.get("params") or {}, d.get("label"), bool(d.get("quick")),
                   d.get("time_limit_s"), d.get("precision"),
                   None if model is None else PlannedModel.from_dict(model),
                   d.get("ceilings") or {})


__all__ = ["PlannedModel", "RunPlan", "frozen", "thawed"]
