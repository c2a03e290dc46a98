"""Runs questioned before they start (issue 51): `run allreduce --processes N` (4096 torch ranks
passed every check; 8 ranks started on 2 cores without a question), the mlp workload that had
no estimate, and a 20 GB sparse file at the CIFAR path that was MD5-hashed whole."""

from __future__ import annotations

import os

import pytest

from siliconbench.core import cifar
from siliconbench.core.estimate import PROCESS_BYTES, estimate
from siliconbench.core.frameworks import DeviceInfo
from tests.helpers.estimates import GB, refused, run

pytestmark = pytest.mark.timeout(120)
LAPTOP = DeviceInfo("torch", "cpu", "Test CPU", "cpu", int(23.5 * GB))


@pytest.mark.parametrize("workload", ["allreduce", "scaling"])
@pytest.mark.parametrize("processes", [65, 4096])
def test_more_ranks_than_a_machine_can_hold_are_refused(machine, capsys, workload, processes):
    """2 cores here: at most 64 ranks (4 a core, at least 64), said before anything starts."""
    sentence = refused(machine, *run(capsys, workload, "--framework", "torch",
                                     "--processes", str(processes), "--yes"))
    assert sentence == (f"--processes {processes} would start {processes} ranks on this "
                        "machine (2 logical cores), each a process with its framework "
                        "loaded; SiliconBench starts at most 64 there.")


def test_ranks_on_hosts_are_held_to_a_bound_too(machine, capsys):
    sentence = refused(machine, *run(capsys, "allreduce", "--framework", "torch",
                                     "--processes", "4096", "--hosts", "10.0.0.1,10.0.0.2"))
    assert sentence.startswith("--processes 4096 would start 4096 ranks on each host")


def test_8_ranks_on_2_cores_are_asked_about(machine, capsys):
    machine.memory(1024 * GB)
    sentence = refused(machine, *run(capsys, "allreduce", "--framework", "torch",
                                     "--processes", "8", "--sizes", "4096"))
    assert sentence == ("8 processes on 2 cores: each rank gets 1/4 of a core, so the "
                        "all-reduce measures the cores' time-sharing; --processes 2 gives "
                        "each its own. Add --yes to run it anyway.")
    code, err = run(capsys, "allreduce", "--framework", "torch", "--processes", "8",
                    "--sizes", "4096", "--yes")
    assert err.startswith("siliconbench: warning: 8 processes on 2 cores") and \
        len(machine.started) == 1


def test_each_rank_s_process_counts_in_memory():
    est = estimate("allreduce", {"processes": 64, "sizes": [4096]}, LAPTOP)
    assert est.points == 0 and est.too_big          # 64 x 0.5 GB of processes: no room
    two = estimate("allreduce", {"processes": 2, "sizes": [4096]}, LAPTOP)
    assert two.peak_bytes == 2 * (3 * 4096 + PROCESS_BYTES)


def test_mlp_is_estimated():
    wide = estimate("mlp", {"preset": "3000-1000"}, LAPTOP)
    assert wide.points == 1 and wide.seconds > 0 and wide.peak_bytes > 50_000 * 3072 * 4
    sweep = estimate("mlp", {}, LAPTOP)          # depths 5, 10, 15, 20 for 3 epochs each
    assert sweep.points == 4 and sweep.seconds > wide.seconds / 5
    small = estimate("mlp", {"preset": "3000-1000", "samples": 1000, "epochs": 1}, LAPTOP)
    assert small.seconds < wide.seconds


@pytest.mark.timeout(30)
def test_a_20_gb_sparse_file_at_the_cifar_path_is_not_hashed(tmp_path, monkeypatch):
    def no_hash(f):
        raise AssertionError("hashed")
    monkeypatch.setattr(cifar, "md5sum", no_hash)
    sparse = tmp_path / "cifar-10-python.tar.gz"
    with open(sparse, "wb") as f:
        f.truncate(20 * 10**9)
    with pytest.raises(cifar.CifarError) as why:
        cifar.load(sparse)
    assert str(why.value) == (f"{sparse} holds 18.6 GB; the CIFAR-10 archive is 163 MB, so "
                              "SiliconBench does not read it.")
    cifar.data_dir().mkdir(parents=True)
    os.rename(sparse, cifar.data_dir() / cifar.ARCHIVE_NAME)
    data, said = cifar.find(None, allow_download=False)
    assert data is None and "its size or checksum differs" in said
