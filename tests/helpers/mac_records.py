"""Runs of Macs made from a real run: tests/data/records/gemm-torch.json with the machine
fields an M2 Max MacBook Pro or Mac Studio reports (through the probe's parsers) and its
values scaled; and the H100's and H200's real runs (tests/data)."""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from pathlib import Path

from siliconbench.core.machine import MachineInfo, mac_model_name, parse_system_profiler
from siliconbench.core.results import RunRecord
from tests.helpers.recorded import recorded

DATA = Path(__file__).parents[1] / "data"


def gpu(name: str) -> RunRecord:
    folder = "h100" if name.startswith("h100") else "h200"
    return RunRecord.from_dict(json.loads((DATA / folder / f"{name}.json").read_text("utf-8")))


def mac_machine(identifier: str, host: str | None) -> dict:
    """What the probe records for an M2 Max Mac: system_profiler's fields as
    parse_system_profiler reads them, the model's name from mac_models.json."""
    profile = {"SPHardwareDataType": [{
        "chip_type": "Apple M2 Max", "machine_model": identifier,
        "machine_name": "Mac", "number_processors": "proc 12:8:4",
        "physical_memory": "32 GB",
        # A host's IOPlatformUUID, made up: the record keeps only its hash.
        "platform_UUID": str(uuid.uuid5(uuid.NAMESPACE_DNS, host)).upper() if host else None}],
        "SPDisplaysDataType": [{"sppci_model": "Apple M2 Max", "sppci_cores": "38"}]}
    info = MachineInfo(os_name="macOS", os_version="14.5", arch="arm64",
                       cpu_model="Apple M2 Max", cpu_cores=12)
    for k, v in parse_system_profiler(profile).items():
        setattr(info, k, v)
    info.model_name = mac_model_name(identifier)
    return info.to_dict()


def mac_run(identifier: str, host: str | None, scale: float, n: int = 0,
            label: str | None = None) -> RunRecord:
    rec = recorded("gemm-torch")
    rec.id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{identifier}-{host}-{scale}-{n}"))
    rec.created_at = f"2026-11-2{n}T05:41:19+00:00"
    rec.machine = mac_machine(identifier, host)
    rec.label = label
    for row in rec.rows:       # every figure of the row scaled alike, its spread included
        row.value = row.value * scale if row.value is not None else None
        row.samples = [x * scale for x in row.samples]
        if row.stats is not None:
            row.stats = replace(row.stats, **{k: getattr(row.stats, k) * scale for k in
                                              ("median", "p25", "p75", "ci_low", "ci_high")})
    return rec


MBP, STUDIO = "Mac14,6", "Mac14,13"


def three_macs() -> list[RunRecord]:
    return [mac_run(MBP, "my-laptop", 1.0), mac_run(STUDIO, "the-studio", 1.5),
            mac_run(MBP, "colleagues-laptop", 0.7)]


def repeats_with_an_outlier() -> list[RunRecord]:
    """Three runs of one Mac: two agree, one read 14 times higher (a run disturbed)."""
    return [mac_run(STUDIO, "the-studio", 14.0, n=0), mac_run(STUDIO, "the-studio", 1.0, n=1),
            mac_run(STUDIO, "the-studio", 0.95, n=2)]
