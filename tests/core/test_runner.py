"""The runner keeps every way a run can end as a record: ok, a raise, an out-of-memory, a
crash, a kill, a hang past the time limit, a cancel; rows that arrived are never lost."""

import threading

import pytest

from siliconbench.core.runner import ChildRun, RunSpec, UsageError, execute
from siliconbench.core.store import Store
from tests.helpers.cli_processes import stored_records
from tests.helpers.fake_workloads import FRAMEWORK

pytestmark = pytest.mark.usefixtures("fake_workloads")


def run(name, **kw):
    return execute(RunSpec(f"fake-{name}", FRAMEWORK, params={"steps": 2}, **kw), Store())


def test_ok_run_streams_rows_despite_stray_prints():
    events = []
    rec = execute(RunSpec("fake-ok", FRAMEWORK, params={"steps": 3}), Store(), on_event=events.append)
    assert rec.status == "ok" and rec.reason is None
    assert [r.value for r in rec.rows] == [1.0, 2.0, 3.0]
    assert "stray output" in rec.stderr_tail
    kinds = [e["event"] for e in events]
    assert kinds[0] == "started" and kinds[-1] == "finished" and "progress" in kinds
    assert rec.machine["memory_bytes"] > 0 and rec.software[FRAMEWORK]


def test_raise_is_a_failed_run_with_reason_and_rows():
    rec = run("raises")
    assert rec.status == "failed"
    assert rec.reason == "RuntimeError: the workload broke"
    assert len(rec.rows) == 2
    assert "Traceback" in rec.stderr_tail  # kept with the run, never shown to the user
    assert Store().get(rec.id).status == "failed"


def test_out_of_memory_is_named():
    rec = run("oom")
    assert rec.status == "failed" and rec.reason.startswith("out of memory")
    assert len(rec.rows) == 2


def test_crash_is_a_failed_run():
    rec = run("crash")
    assert rec.status == "failed" and "crashed (SIGSEGV)" in rec.reason
    assert len(rec.rows) == 2


def test_a_crash_inside_native_code_names_it_and_where_to_report_it():
    """A llama.cpp run says which file and quant it was loading or running (ctx.inside)."""
    rec = run("crash_inside")
    assert rec.status == "failed" and len(rec.rows) == 2
    assert rec.reason == ("the run's process crashed (SIGSEGV) in libfake decoding tiny.gguf "
                          "(Q4_0); report it to libfake's tracker")


def test_sigkill_reads_as_out_of_memory():
    rec = run("killed")
    assert rec.status == "failed" and "SIGKILL" in rec.reason and "memory" in rec.reason


def test_hang_stops_at_time_limit_even_ignoring_sigterm(monkeypatch):
    import types

    from siliconbench.core import child
    monkeypatch.setattr(child, "KILL_GRACE_S", 0.5)
    # The runner's clock stands still until both rows are in, then passes the limit: on a
    # loaded machine the child's imports alone can outlast a real few seconds, and the test is
    # about the hang after them.
    rows = []
    monkeypatch.setattr(child, "time", types.SimpleNamespace(
        monotonic=lambda: 3600.0 if len(rows) == 2 else 0.0))
    rec = execute(RunSpec("fake-hang", FRAMEWORK, params={"steps": 2}, time_limit_s=4), Store(),
                  on_event=lambda e: e["event"] == "row" and rows.append(e))
    assert rec.status == "failed" and "time limit of 4 s" in rec.reason
    assert len(rec.rows) == 2


def test_cancel_mid_run(monkeypatch):
    monkeypatch.setattr("siliconbench.core.child.KILL_GRACE_S", 0.5)
    seen_row = threading.Event()

    def on_event(e):
        if e["event"] == "row":
            seen_row.set()

    child = ChildRun(RunSpec("fake-hang", FRAMEWORK, params={"steps": 1}), on_event).start()
    threading.Thread(target=lambda: (seen_row.wait(30), child.cancel()), daemon=True).start()
    rec = child.wait()
    assert rec.status == "cancelled" and rec.reason == "cancelled by the user"
    assert len(rec.rows) == 1


def test_unknown_device_is_a_usage_error_and_not_stored():
    with pytest.raises(UsageError, match="no device 'tpu'"):
        run("ok", device="tpu")
    assert Store().runs() == []
    # Not even as a run under way (kept from its start), which a later start would list.
    assert stored_records(Store().path) == []


@pytest.mark.parametrize("spec, message", [
    (RunSpec("nope"), "Unknown workload 'nope'"),
    (RunSpec("fake-ok", framework="jax"), "Unknown framework 'jax'"),
    (RunSpec("fake-ok", params={"steps": -1}), "--steps must be at least 0"),
    (RunSpec("fake-ok", params={"speed": 3}), "Unknown parameter 'speed'"),
])
def test_bad_specs_are_refused_before_a_process_starts(spec, message):
    with pytest.raises(UsageError, match=message):
        ChildRun(spec)


def test_discovery_reports_each_framework_as_it_answers(monkeypatch):
    import threading

    from siliconbench.core import devices
    from siliconbench.core.frameworks import DeviceInfo
    monkeypatch.setattr(devices, "FRAMEWORKS", {"torch": None, "slow": None})
    torch_reported = threading.Event()

    class FakeFramework:
        def __init__(self, name):
            self.name, self.title = name, name

        def installed(self):
            # "slow" answers only once torch's answer was reported: ordered by an event,
            # not by a sleep that a loaded machine can outlast.
            if self.name == "slow":
                assert torch_reported.wait(30)
            return False

        def missing_reason(self):
            return f"{self.name} missing"

    monkeypatch.setattr(devices, "framework", FakeFramework)
    seen = []

    def on_found(devices):
        seen.append([d.framework for d in devices])
        torch_reported.set()
    found = devices.discover_devices(on_found=on_found)
    assert seen == [["torch"], ["torch", "slow"]]
    assert [d.framework for d in found] == ["torch", "slow"]
    assert all(isinstance(d, DeviceInfo) and not d.usable for d in found)


def test_device_lists_are_kept_until_the_installation_changes(monkeypatch):
    from siliconbench.core import devices
    from siliconbench.core.frameworks import DeviceInfo
    asked = []

    def child(name, fw):
        asked.append(name)
        return [DeviceInfo(name, "cpu", "a CPU", "cpu")]

    monkeypatch.setattr(devices, "_ask_child", child)
    monkeypatch.setattr(devices, "_installation_key", lambda: "install-1")
    first = devices.discover_devices(["torch"], fresh=False)
    again = devices.discover_devices(["torch"], fresh=False)
    assert asked == ["torch"] and again == first
    devices.discover_devices(["torch"], fresh=True)          # --refresh, the GUI
    assert asked == ["torch", "torch"]
    monkeypatch.setattr(devices, "_installation_key", lambda: "install-2")  # e.g. torch upgraded
    devices.discover_devices(["torch"], fresh=False)
    assert asked == ["torch", "torch", "torch"]
