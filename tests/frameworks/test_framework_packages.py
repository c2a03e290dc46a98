"""Each framework is one package, siliconbench/core/frameworks/<name>/, holding its adapter
(the Adapter Protocol: what every run calls) and its part of every workload it declares; a
workload reaches it only through siliconbench.core.frameworks.implementation, and that part
provides every member of the workload's Protocol (checked here, so that a missing function
fails a test, not a run)."""

import ast
import importlib
import importlib.util
import inspect
import pkgutil
import subprocess
import sys
import textwrap
import types
import typing
from contextlib import contextmanager

import pytest

from siliconbench.core.catalogue import catalogue
from siliconbench.core.frameworks import (
    FRAMEWORKS,
    Adapter,
    Unsupported,
    implementation,
    runs_on,
)
from siliconbench.core.frameworks.ops import TensorOps
from siliconbench.core.params import ParamError
from siliconbench.core.workloads import train


def workload_parts() -> dict[str, type]:
    """The Protocol a framework's part of each workload satisfies, by the workload module's
    name (workloads/<name>.py asks implementation(framework, "<name>") for
    frameworks/<fw>/<name>.py): the runtime-checkable <Name>Part the module declares, as the
    README's recipe has it. gemm and bandwidth share the framework's array ops (TensorOps),
    memory runs train probes, llm's engine is a class (tests/frameworks/test_llm.py)."""
    import siliconbench.core.workloads as package
    found = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        found |= {info.name: cls for cls in vars(module).values()
                  if isinstance(cls, type) and cls.__module__ == module.__name__
                  and cls.__name__.endswith("Part") and getattr(cls, "_is_runtime_protocol", 0)}
    return found


PARTS = workload_parts()
OWN_PART = set(PARTS)


def test_every_declared_framework_has_its_part_of_the_workload():
    """Each framework whose package declares a workload (FrameworkInfo.workloads) has its
    part. A workload that names its frameworks itself (serve: any framework's server, given
    its --url) needs a part only where a framework declares it."""
    missing = [f"siliconbench.core.frameworks.{fw}.{w.name}" for w in catalogue().values()
               if w.name in OWN_PART for fw in runs_on(w) if w.name in FRAMEWORKS[fw].workloads
               if importlib.util.find_spec(f"siliconbench.core.frameworks.{fw}.{w.name}") is None]
    assert missing == []
    for fw in FRAMEWORKS:
        # Core ML has no array API (its models are converted, never built from ops): it runs
        # no workload that uses them (gemm, bandwidth, the llm's triad).
        for module in ("adapter",) if fw == "coreml" else ("adapter", "ops"):
            assert importlib.util.find_spec(f"siliconbench.core.frameworks.{fw}.{module}"), (fw, module)


def test_the_parts_are_found_in_the_workload_modules():
    assert set(PARTS) >= {"train", "infer", "mlp", "allreduce", "scaling"}
    assert PARTS["train"] is train.TrainPart


def test_a_framework_without_the_workload_is_one_usage_sentence():
    with pytest.raises(Unsupported) as caught:
        implementation("tensorflow", "infer")
    assert isinstance(caught.value, ParamError)   # the worker reports it as a usage error
    assert str(caught.value) == "The infer workload is not available on TensorFlow."
    with pytest.raises(ValueError, match="Unknown framework 'jax'"):
        implementation("jax", "train")


# ---------------------------------------------------------------- the parts against their Protocols

def protocol_members(proto: type) -> set[str]:
    """typing.get_protocol_members (Python 3.13) for the Pythons before it."""
    if hasattr(typing, "get_protocol_members"):
        return set(typing.get_protocol_members(proto))
    return {name for base in proto.__mro__[:-1] if base not in (typing.Protocol, typing.Generic)
            for name in (*vars(base), *getattr(base, "__annotations__", {}))
            if not name.startswith("_") or name == "__call__"}


def provided(cls: type) -> set[str]:
    """What an instance of `cls` has: its class's and bases' attributes and annotations, and
    whatever its methods assign to self (self.x = ..., self.a, self.b = ...)."""
    names = set()
    for base in cls.__mro__[:-1]:
        names |= set(vars(base)) | set(getattr(base, "__annotations__", {}))
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(base)))
        except (OSError, TypeError):
            continue
        names |= {node.attr for node in ast.walk(tree)
                  if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                  and isinstance(node.value, ast.Name) and node.value.id == "self"}
    return names


def declared_type(owner, name: str):
    """The type `owner` (a class or a module) declares for its member `name`: a method's or a
    property's return annotation, or an attribute's annotation; None when it declares none."""
    if isinstance(owner, types.ModuleType):
        member, namespace = getattr(owner, name, None), vars(owner)
    else:
        member = next((vars(c)[name] for c in owner.__mro__ if name in vars(c)), None)
        namespace = vars(sys.modules[owner.__module__])
        if member is None or not callable(member) and not isinstance(member, property):
            member = next((c.__annotations__[name] for c in owner.__mro__
                           if name in getattr(c, "__annotations__", {})), member)
    if isinstance(member, property):
        member = member.fget
    if callable(member) and not isinstance(member, type):
        member = inspect.unwrap(member).__annotations__.get("return")
    while isinstance(member, str):  # from __future__ import annotations: evaluated where written
        member = eval(member, namespace)  # noqa: S307 - our own annotations
    return member


def inner(annotation):
    """The class an annotation names, through one layer of generics: Iterator[Training] and
    AbstractContextManager[Training] are what a context manager yields, a Training."""
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is not None and len(args) == 1:
        return inner(args[0])
    return annotation if isinstance(annotation, type) else None


def is_protocol(cls) -> bool:
    return isinstance(cls, type) and getattr(cls, "_is_protocol", False)


def missing(impl, proto: type, where: str) -> list[str]:
    """What `impl` (a module, or the class of the objects it makes) lacks of `proto`, each as
    where.member; members that are themselves Protocols (what a method returns, a context
    manager yields or an attribute holds) are followed into the class `impl` declares."""
    has = set(dir(impl)) if isinstance(impl, types.ModuleType) else provided(impl)
    out = []
    for name in sorted(protocol_members(proto)):
        if name not in has:
            out.append(f"{where}.{name}")
            continue
        wanted = getattr(proto, name, None)
        given = inspect.getattr_static(impl, name, None)
        if inspect.isfunction(wanted) and given is not None \
                and inspect.isfunction(inspect.unwrap(given)):
            arity = len(inspect.signature(wanted).parameters) - 1    # without self
            args = ([] if isinstance(impl, types.ModuleType) else [None]) + [None] * arity
            try:
                inspect.signature(given).bind(*args)
            except TypeError as e:
                out.append(f"{where}.{name}: takes other arguments than the Protocol ({e})")
        sub = inner(declared_type(proto, name))
        if not is_protocol(sub):
            continue
        made = inner(declared_type(impl, name))
        if made is None:
            out.append(f"{where}.{name}: no annotation names the class it gives "
                       f"(a {sub.__name__})")
        else:
            out += missing(made, sub, f"{where}.{name}->{made.__name__}")
    return out


def parts() -> list[tuple[str, str]]:
    return [(fw, w) for fw in FRAMEWORKS for w in PARTS
            if importlib.util.find_spec(f"siliconbench.core.frameworks.{fw}.{w}") is not None]


@pytest.mark.parametrize("fw, workload", parts())
def test_each_framework_part_provides_every_member_of_its_protocol(fw, workload):
    module = implementation(fw, workload)
    assert isinstance(module, PARTS[workload])      # runtime_checkable: its functions are there
    assert missing(module, PARTS[workload], module.__name__) == []


def test_a_part_missing_a_member_fails_here():
    """The check itself: a train part whose Training lacks release, and whose training()
    takes one argument too few, is named for both."""

    class Training:
        unit, dtype = "img/s", "float32"

        def __init__(self) -> None:
            self.step = lambda: None

        def flops(self) -> tuple[float, dict]: ...

        def compile(self) -> None: ...

        def verified(self) -> tuple[list[str], None]: ...

        def check(self, size: int, steps: int) -> tuple: ...

    @contextmanager
    def training(ctx, params) -> typing.Iterator[Training]:
        yield Training()

    part = types.ModuleType("fake_train")
    part.training = training
    assert [m.split(":")[0] for m in missing(part, train.TrainPart, "fake_train")] == [
        "fake_train.training", "fake_train.training->Training.release"]


@pytest.mark.parametrize("fw", [fw for fw in FRAMEWORKS if importlib.util.find_spec(
    f"siliconbench.core.frameworks.{fw}.ops") is not None])
def test_each_frameworks_array_ops_fill_in_tensor_ops(fw):
    ops = implementation(fw, "ops").Ops
    assert issubclass(ops, TensorOps)
    assert not inspect.isabstract(ops), sorted(ops.__abstractmethods__)


@pytest.mark.parametrize("fw", list(FRAMEWORKS))
def test_each_adapter_provides_what_every_run_calls(fw):
    """software() and caveat() too: the worker calls both at every run's start."""
    adapter = FRAMEWORKS[fw].load()      # imports no framework: the adapter does, lazily
    assert isinstance(adapter, Adapter)
    assert missing(adapter, Adapter, adapter.__name__) == []


def test_an_adapter_missing_a_member_fails_here():
    """The check itself: an adapter without caveat, whose resolve takes no device id."""
    adapter = types.ModuleType("fake_adapter")
    for name in protocol_members(Adapter) - {"caveat", "resolve"}:
        setattr(adapter, name, lambda dev=None: None)
    adapter.resolve = lambda: None
    assert not isinstance(adapter, Adapter)
    assert [m.split(":")[0] for m in missing(adapter, Adapter, "fake_adapter")] == [
        "fake_adapter.caveat", "fake_adapter.resolve"]


# What every run's process imports of SiliconBench's own, whatever its framework.
SHARED = ("siliconbench.core.frameworks.ops", "siliconbench.core.context",
          "siliconbench.core.measure", "siliconbench.core.kit.rows", "siliconbench.core.results")


def load_shared_after_isolating(fw: str, before: str = "") -> subprocess.CompletedProcess:
    code = (f"{before}\nimport importlib\nfrom siliconbench.core.frameworks import isolate\n"
            f"isolate({fw!r})\nfor m in {SHARED!r}:\n    importlib.import_module(m)\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.mark.parametrize("fw", list(FRAMEWORKS))
def test_siliconbench_loads_in_each_frameworks_process(fw):
    """A framework's import name is its own package: each run's process refuses every other
    framework's, so one that SiliconBench itself imports (NumPy) would stop every run."""
    out = load_shared_after_isolating(fw)
    assert out.returncode == 0, out.stderr


def test_a_framework_named_as_a_package_siliconbench_imports_fails_here():
    before = ("from siliconbench.core import frameworks as f\nf.FRAMEWORKS['numpyfw'] = "
              "f.FrameworkInfo('numpyfw', 'NumPy', 'numpy', 'x', 'numpyfw')")
    out = load_shared_after_isolating("torch", before)
    assert out.returncode != 0
    assert "SecondFramework: NumPy cannot be loaded into this process, which runs PyTorch" \
        in out.stderr, out.stderr
