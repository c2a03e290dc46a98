"""Each framework is one package, siliconbench/core/frameworks/<name>/, holding its part of every workload
it declares; a workload reaches it only through siliconbench.core.frameworks.implementation."""

import importlib.util

import pytest

from siliconbench.core.frameworks import FRAMEWORKS, Unsupported, implementation, runs_on
from siliconbench.core.params import ParamError
from siliconbench.core.catalogue import catalogue

# Workloads whose run asks implementation(framework, <its name>) for the framework's part;
# gemm and bandwidth share the framework's array ops, memory runs train probes.
OWN_PART = {"train", "infer", "mlp"}


def test_every_declared_framework_has_its_part_of_the_workload():
    missing = [f"siliconbench.core.frameworks.{fw}.{w.name}" for w in catalogue().values()
               if w.name in OWN_PART for fw in runs_on(w)
               if importlib.util.find_spec(f"siliconbench.core.frameworks.{fw}.{w.name}") is None]
    assert missing == []
    for fw in FRAMEWORKS:
        # Core ML has no array API (its models are converted, never built from ops): it runs
        # no workload that uses them (gemm, bandwidth, the llm's triad).
        for module in ("adapter",) if fw == "coreml" else ("adapter", "ops"):
            assert importlib.util.find_spec(f"siliconbench.core.frameworks.{fw}.{module}"), (fw, module)


def test_a_framework_without_the_workload_is_one_usage_sentence():
    with pytest.raises(Unsupported) as caught:
        implementation("tensorflow", "infer")
    assert isinstance(caught.value, ParamError)   # the worker reports it as a usage error
    assert str(caught.value) == "The infer workload is not available on TensorFlow."
    with pytest.raises(ValueError, match="Unknown framework 'jax'"):
        implementation("jax", "train")
