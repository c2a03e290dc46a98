"""PyTorch has no collective backend for MPS tensors (#17): the device list says so beside an
MPS device that is ready, in the command and in the app, and a distributed run on it says so
in one sentence. There is no Mac here: PyTorch's own MPS switches are turned on, and the
listing is the torch adapter's real output from them."""

import json

import pytest

torch = pytest.importorskip("torch")

from siliconbench.core.frameworks.torch import adapter  # noqa: E402
from tests.helpers.cli_processes import cli_in_process  # noqa: E402


@pytest.fixture
def with_mps(monkeypatch):
    monkeypatch.setattr(torch.backends.mps, "is_built", lambda: True)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    [mps] = [d for d in adapter.devices() if d.id == "mps"]
    return mps


def test_the_mps_device_is_ready_and_says_it_has_no_collectives(with_mps):
    assert with_mps.usable and with_mps.note == adapter.NO_MPS_COLLECTIVES
    assert "gloo on the CPU" in with_mps.note


def test_the_devices_command_shows_it(with_mps, siliconbench_home, capsys):
    from siliconbench.core.devices import DEVICE_CACHE, _installation_key
    listed = [d.to_dict() for d in adapter.devices()]
    siliconbench_home.mkdir(parents=True, exist_ok=True)
    (siliconbench_home / DEVICE_CACHE).write_text(json.dumps(
        {"key": _installation_key(),
         "frameworks": {"torch": listed, "tensorflow": [], "mlx": []}}))
    rc, out, err = cli_in_process(capsys, "devices", "--json")
    assert rc == 0 and [d["note"] for d in json.loads(out) if d["id"] == "mps"] == \
        [adapter.NO_MPS_COLLECTIVES]
    rc, out, err = cli_in_process(capsys, "devices")
    table = " ".join(out.split())   # rich wraps the status column
    assert rc == 0 and "ready (PyTorch has no collective backend for MPS tensors:" in table


def test_the_apps_device_list_shows_it(with_mps, qtbot):
    from siliconbench.gui.device_list import DeviceList
    listing = DeviceList()
    qtbot.addWidget(listing)
    listing.set_devices(adapter.devices())
    from PySide6.QtWidgets import QLabel
    texts = [label.text() for label in listing.findChildren(QLabel)]
    [mps] = [t for t in texts if t.startswith("mps ·")]
    assert mps.endswith("· ready\n" + adapter.NO_MPS_COLLECTIVES)
    assert not any(adapter.NO_MPS_COLLECTIVES in t for t in texts if t.startswith("cpu ·"))


def test_a_distributed_run_on_mps_is_one_sentence(with_mps):
    from siliconbench.core.frameworks.torch.allreduce import Group
    from siliconbench.core.params import ParamError

    class Ctx:
        device = torch.device("mps")
    with pytest.raises(ParamError, match=r"^PyTorch has no collective backend for MPS "
                                         r"tensors; run it on the CPU \(--device cpu\), "
                                         r"where gloo works\.$"):
        Group(Ctx(), "auto", 2)
