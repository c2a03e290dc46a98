"""Compare's sides: the runs in groups of one run identity (machine, device, framework) and
every setting that changes the measurement (repeats together), named by what sets them
apart (the user's name, the Mac's model, then chip, hardware, framework, settings and a host
tag). siliconbench.core.compare_words offers these names to the app, the command and the
report."""

from __future__ import annotations

from siliconbench.core.compare_stats import Side, unique_labels
from siliconbench.core.pairing import run_traits
from siliconbench.core.results import RunRecord


def machine_identity(rec: RunRecord) -> tuple:
    """The machine a run was made on: its name where it was given one, else its hardware's
    fingerprint (siliconbench.core.machine.MachineInfo.key) with its core count. Two hosts
    whose CPUs report one name ('Intel(R) Xeon(R) Processor': a 2-core VM, a GPU server's
    16 cores) are two machines. A run from a shared store carries `owner`, the database role
    that wrote it: two roles' runs are two machines, whatever hardware or name they give."""
    owner = getattr(rec, "owner", None)
    if rec.label:
        return ("name", rec.label, owner)
    from siliconbench.core.machine import MachineInfo
    info = MachineInfo.from_dict(rec.machine or {})
    return ("hardware", info.key(), info.cpu_cores, owner)


def run_identity(rec: RunRecord) -> tuple:
    """Machine, device and framework: what a run is a run of ('cuda' and 'cuda:0' alike)."""
    device = rec.device[:-2] if rec.device.endswith(":0") else rec.device
    return machine_identity(rec), rec.device_label, rec.framework, device


def _run_key(rec: RunRecord) -> tuple:
    """What a run must share with another to be its repeat, beside its identity: every
    setting that changes the measurement (siliconbench.core.pairing.run_traits; one a record
    does not name is unknown, so an older record is not taken for a newer one's repeat) and
    its models (an 8B and a 1B run never merge)."""
    models = sorted({str(row.params[k]) for row in rec.rows for k in ("preset", "model")
                     if k in row.params})
    return tuple(sorted(run_traits(rec).items())), tuple(models)


def group_runs(records: list[RunRecord]) -> list[list[RunRecord]]:
    """The runs in groups of one run identity each (machine, device, framework) whose runs of
    one workload share every setting that changes the measurement and their model (_run_key):
    repeats, and the identity's other workloads beside them. In the order the runs come."""
    groups: list[tuple[tuple, dict[str, tuple], list[RunRecord]]] = []
    for rec in records:
        who, mine = run_identity(rec), _run_key(rec)
        for ident, settings, recs in groups:
            if ident == who and settings.get(rec.workload, mine) == mine:
                settings.setdefault(rec.workload, mine)
                recs.append(rec)
                break
        else:
            groups.append((who, {rec.workload: mine}, [rec]))
    return [recs for _, _, recs in groups]


def sides_for(records: list[RunRecord]) -> list[Side]:
    """One side per run identity and measurement settings (group_runs), named apart
    (name_sides). Where every run is a repeat of one, the runs are compared run by run, each
    under its identity (device · framework device · time)."""
    groups = group_runs(records)
    if len(groups) == 1 and len(records) > 1:
        return [Side(rec.identity, [rec]) for rec in records]
    return name_sides([Side("", recs) for recs in groups])


def split_sides(sides: list[Side]) -> list[Side]:
    """The command's sides (one per argument) split by run identity (group_runs): a machine
    label or a result file holding torch and MLX runs is two sides, never one whose points
    mix them. Named apart (name_sides)."""
    out: list[Side] = []
    for side in sides:
        out += [side] if side.published else [Side("", recs)
                                              for recs in group_runs(side.records)]
    return name_sides(out)


def _settings_of(side: Side) -> dict:
    """{(workload, setting): value in words} of a side's runs: every setting that changes
    the measurement (run_traits), and the models they ran."""
    out: dict = {}
    for rec in side.records:
        out.update({(rec.workload, k): v for k, v in run_traits(rec).items()})
        for model in _run_key(rec)[1]:
            out[(rec.workload, "model")] = model
    return out


def _setting_text(key: tuple, value) -> str:
    from siliconbench.core.pairing import word
    if key[1] == "model":
        return value
    if key[1] == "parameters" and str(value).isdigit():     # '8.03B parameters'
        n = int(value)
        return f"{n / 1e9:.3g}B parameters" if n >= 1e9 else f"{n / 1e6:.3g}M parameters"
    return f"{word(key[1])} {value}"


OLDER_RECORD = "machine not told apart (older record)"


def _host_words(info) -> str:
    """'host 3fa2c1', or where the record names no host (written before hosts were told
    apart) OLDER_RECORD: its fingerprint is the hardware's, which identical machines share."""
    return info.host_tag() if info.told_apart else OLDER_RECORD


def _machine_facts(rec: RunRecord) -> dict[str, str]:
    """What tells machines of one name apart, in words."""
    from siliconbench.core.machine import MachineInfo
    from siliconbench.core.numbers import size
    m = rec.machine or {}
    info = MachineInfo.from_dict(m)
    # A binned chip's cores by tier ('14-core CPU: 10 performance + 4 efficiency').
    cores = info.cpu_summary() or (f"{info.cpu_cores} cores" if info.cpu_cores else "")
    return {"cores": cores,
            "memory": size(info.memory_bytes) if info.memory_bytes else "",
            "gpu": info.gpu_name or "no GPU",
            "os": " ".join(str(x) for x in (info.os_name, info.os_version) if x),
            "host": _host_words(info),
            "owner": f"sent by {rec.owner}" if getattr(rec, "owner", None) else ""}


def machine_details(records: list[RunRecord]) -> dict[tuple, str]:
    """{machine identity: what tells it apart from the other machines of these runs that
    bear its name ('16 cores, 126 GB, NVIDIA H100 80GB HBM3'), '' where its name is its own}."""
    named: dict[str, dict[tuple, RunRecord]] = {}
    for rec in records:
        named.setdefault(rec.machine_label, {}).setdefault(machine_identity(rec), rec)
    out: dict[tuple, str] = {}
    for machines in named.values():
        facts = {who: _machine_facts(rec) for who, rec in machines.items()}
        telling = [k for k in ("cores", "memory", "gpu", "os", "owner")
                   if len({f[k] for f in facts.values()}) > 1] or ["host"]
        for who, f in facts.items():
            out[who] = ", ".join(f[k] for k in telling if f[k]) if len(machines) > 1 else ""
    return out


def machine_names(records: list[RunRecord]) -> dict[str, str]:
    """{run id: its machine's name, told apart from other machines of that name}: 'Intel(R)
    Xeon(R) Processor [2 cores, 24 GB, no GPU]' beside '... [16 cores, 126 GB, NVIDIA H100
    80GB HBM3]'. What the Results' Machine filter lists."""
    details = machine_details(records)
    out = {}
    for rec in records:
        detail = details[machine_identity(rec)]
        out[rec.id] = rec.machine_label + (f" [{detail}]" if detail else "")
    return out


def base_name(rec: RunRecord) -> str:
    """What a side is called first: the user's name for its machine, else the Mac's model
    ('MacBook Pro (16-inch, 2023)'), else its device ('NVIDIA H200', 'AMD EPYC')."""
    return rec.label or (rec.machine or {}).get("model_name") or rec.device_label


def name_sides(sides: list[Side]) -> list[Side]:
    """Name measured sides by what sets them apart, in this order: the user's name for the
    machine, else its model (a Mac's) or device (base_name); then, only where two sides would
    still read alike, the chip, the machine's hardware ('[2 cores, ...]'), the framework and
    device, the settings that change the measurement ('TF32 on', the model), and last a
    short tag of the host ('host 3fa2c1': identical machines); then how many runs a side
    holds ('· 3 runs'). Published sides keep their names. Relabels in place and returns the
    sides."""
    from siliconbench.core.machine import MachineInfo
    for s in sides:
        if s.published and not s.label:
            s.label = s.records[0].identity
    measured = [s for s in sides if s.records and not s.published]
    names = {id(s): base_name(s.records[0]) for s in measured}

    def refine(part) -> None:
        alike: dict[str, list[Side]] = {}
        for s in measured:
            alike.setdefault(names[id(s)], []).append(s)
        for group in alike.values():
            texts = [part(s, group) for s in group]
            if len(set(texts)) > 1:
                for s, text in zip(group, texts):
                    names[id(s)] += text

    def chip(s: Side, _) -> str:
        m = s.records[0].machine or {}
        return f" · {m['chip']}" if m.get("chip") and m.get("model_name") else ""

    def hardware(s: Side, group: list[Side]) -> str:
        facts = [_machine_facts(o.records[0]) for o in group]
        mine = _machine_facts(s.records[0])
        telling = [k for k in ("cores", "memory", "gpu", "os", "owner")
                   if len({f[k] for f in facts}) > 1]
        detail = ", ".join(mine[k] for k in telling if mine[k])
        return f" [{detail}]" if detail else ""

    def settings(s: Side, group: list[Side]) -> str:
        mine = _settings_of(s)
        # Of the workloads both sides ran: a GEMM side is not named by its twin's LLM runs.
        others = [(_settings_of(o), {r.workload for r in o.records}) for o in group
                  if o is not s]
        differ = [k for k in mine
                  if any(k[0] in ran and o.get(k) != mine[k] for o, ran in others)]
        return "".join(dict.fromkeys(f" · {_setting_text(k, mine[k])}" for k in differ))

    def host(s: Side, _) -> str:
        info = MachineInfo.from_dict(s.records[0].machine or {})
        return f" · {_host_words(info)}" if s.records[0].machine else ""

    refine(chip)
    refine(hardware)
    refine(lambda s, _: f" · {s.records[0].framework} {run_identity(s.records[0])[3]}")
    refine(settings)
    refine(host)
    for s in measured:
        runs = len(s.records)
        s.label = names[id(s)] + (f" · {runs} runs" if runs > 1 else "")
    return unique_labels(sides)


def older_machine_notes(sides: list[Side]) -> list[str]:
    """A sentence per side of several runs some of whose records name no host (written
    before hosts were told apart): its runs may be of identical machines, counted as one."""
    from siliconbench.core.machine import MachineInfo
    out = []
    for s in sides:
        old = [r for r in s.records if r.machine and not s.published
               and not MachineInfo.from_dict(r.machine).told_apart]
        if len(s.records) > 1 and old:
            out.append(f"{OLDER_RECORD}: {s.label} may hold runs of identical machines, "
                       "counted as one")
    return out
