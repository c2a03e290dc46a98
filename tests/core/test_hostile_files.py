"""Hostile and mutated result files, made from a record a real run wrote (tests/data/records):
every file is imported or refused with one short sentence, a refused file never changes the
store, and after every accepted import `results`, `compare` and the exports work and print
standard JSON. Whatever text a field holds, the HTML report, both CSV exports and the terminal
listings show it as inert characters."""

from __future__ import annotations

import copy
import csv
import functools
import io
import json
import random
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from siliconbench.core import cli
from siliconbench.core.results import (
    NotAResultFile,
    RunRecord,
    records_from_file,
    records_from_json,
)
from siliconbench.core.store import Store
from tests.helpers.cli_processes import cli_in_process
from tests.helpers.hostile_files import FIXTURE, fixture

SEED = 14
MUTATIONS = 300
# C0 and C1 controls, DEL, ESC: none may reach a terminal or a message from a file's data.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
FORMULA = ("=", "+", "-", "@")


def strict_json(text: str):
    """Parse as standard JSON: NaN and Infinity are not JSON, whatever Python's json writes."""
    def refuse(name):
        raise AssertionError(f"non-standard JSON: {name}")
    return json.loads(text, parse_constant=refuse)


@pytest.fixture(autouse=True)
def one_parser(monkeypatch):
    """The command line is parsed as in a real call; building argparse's tree of every
    workload's flags once instead of per call keeps thousands of calls to seconds."""
    monkeypatch.setattr(cli, "build_parser", functools.cache(cli.build_parser))


sb = cli_in_process


def assert_one_sentence(rc: int, err: str) -> None:
    assert rc == 2, err
    assert len(err.strip().splitlines()) == 1 and len(err) < 300, err[:500]
    assert not CONTROL.search(err) and "internal error" not in err, err[:500]


def snapshot(home: Path) -> list:
    s = Store(home / "results.sqlite3")
    try:
        return s.db.execute("SELECT * FROM runs ORDER BY id").fetchall()
    finally:
        s.close()


# ---------------------------------------------------------------- mutations

class Raw(str):
    """A JSON token json.dumps cannot write (NaN, 1e999, a 5,000-digit integer, a lone
    surrogate): put in as a placeholder, swapped in the text."""


HOSTILE_VALUES = [
    {}, [], {"a": {"b": [1, {"c": None}]}}, "text", "", True, False, None, 0, -1, 0.0, 1.5,
    1e308, -1e308, 2**70, Raw("NaN"), Raw("Infinity"), Raw("-Infinity"), Raw("1e999"),
    Raw("-1e999"), Raw("9" * 30), Raw("1" * 5000), Raw('"\\ud800 label"'), "\x1b[31mred\x1b[0m",
    "[/]", "[link=https://evil.example]click[/link]", "=cmd|' /C calc'!A0", " \t=1+1",
    "Lab Mac\r=cmd|' /C calc'!A0", "javascript:alert(1)", "<script>alert(1)</script>",
    "é漢字🙂\u202eevil", "x" * 200_000, Raw("[" * 500 + "]" * 500), Raw('{"a":' * 40 + "1" + "}" * 40), [0.0] * 5, [-1.0, 2.0], ["a", {"b": 1}],
]


def _paths(doc) -> list[tuple]:
    """Every place in the record (lists: their first and last item only)."""
    out, stack = [], [((), doc)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            children = list(node.items())
        elif isinstance(node, list):
            children = [(i, node[i]) for i in {0, len(node) - 1} if node]
        else:
            continue
        for key, value in children:
            out.append(path + (key,))
            stack.append((path + (key,), value))
    return sorted(out, key=repr)


def _dump(doc) -> str:
    raws: dict[str, str] = {}

    def swap(node):
        if isinstance(node, Raw):
            raws[f"@@raw{len(raws)}@@"] = str(node)
            return f"@@raw{len(raws) - 1}@@"
        if isinstance(node, dict):
            return {k: swap(v) for k, v in node.items()}
        if isinstance(node, list):
            return [swap(v) for v in node]
        return node
    text = json.dumps(swap(doc))
    for key, token in raws.items():
        text = text.replace(f'"{key}"', token)
    return text


def _set(doc, path, value) -> None:
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


def mutations(base_text: str, seed: int = SEED, count: int = MUTATIONS):
    """(name, bytes) for `count` mutated files: bit flips, truncation, a value of the wrong
    type, size or kind anywhere, a deleted or added field, and whole-record changes."""
    rng = random.Random(seed)
    base = json.loads(base_text)
    paths = _paths(base)
    raw = base_text.encode("utf-8")
    whole = [
        ("newer schema", lambda d: d.update(schema=2)),
        ("id in upper case", lambda d: d.update(id=base["id"].upper())),
        ("id is the base's 8-character prefix", lambda d: d.update(id=base["id"][:8])),
        ("id with LIKE wildcard", lambda d: d.update(id=base["id"][:6] + "_%" + "0" * 8)),
    ]
    for i in range(count):
        doc = json.loads(base_text)
        doc["id"] = f"fuzz{seed:02d}{i:06d}" + "0" * 20
        kind = i % 8
        if kind == 0:
            data = bytearray(raw)
            for _ in range(rng.randint(1, 8)):
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            yield f"{i}: bit flips", bytes(data)
            continue
        if kind == 1:
            yield f"{i}: truncated", raw[:rng.randrange(len(raw))]
            continue
        if kind in (2, 3, 4):
            path = rng.choice(paths)
            value = copy.deepcopy(rng.choice(HOSTILE_VALUES))
            _set(doc, path, value)
            yield f"{i}: {'/'.join(map(str, path))} = {str(value)[:30]!r}", _dump(doc).encode()
            continue
        if kind == 5:
            path = rng.choice([p for p in paths if p[-1] != "id"])
            parent = doc
            for key in path[:-1]:
                parent = parent[key]
            del parent[path[-1]]
            yield f"{i}: without {'/'.join(map(str, path))}", _dump(doc).encode()
            continue
        if kind == 6:
            dicts = [p for p in paths if isinstance(_get(base, p), dict)]
            path = rng.choice(dicts)
            _set(doc, path + (rng.choice(["x", "[/]", "\x1b[2J", "=1+1"]),),
                 copy.deepcopy(rng.choice(HOSTILE_VALUES)))
            yield f"{i}: field added under {'/'.join(map(str, path))}", _dump(doc).encode()
            continue
        name, change = whole[(i // 8) % len(whole)]
        change(doc)
        yield f"{i}: {name}", _dump(doc).encode()
    # Files, not fields: a byte-order mark, two runs with one id, a foreign document.
    twice = base | {"id": "fuzz-duplicate-0001"}
    yield "BOM", b"\xef\xbb\xbf" + json.dumps(twice | {"id": "fuzz-bom-00000001"}).encode()
    yield "duplicate ids", json.dumps({"format": "siliconbench-results", "schema": 1,
                                        "runs": [twice, twice]}).encode()
    yield "runs not a list", b'{"format": "siliconbench-results", "runs": {}}'
    yield "a list", b"[1, 2, 3]"
    yield "empty", b""
    yield "UTF-16", json.dumps(twice).encode("utf-16")


def _get(doc, path):
    for key in path:
        doc = doc[key]
    return doc


# ---------------------------------------------------------------- the fuzz test

def check_accepted(capsys, tmp_path: Path, base_id: str, run_id: str) -> None:
    """Everything a user does with an imported run works and prints standard JSON."""
    rc, out, err = sb(capsys, "results", "--json", "--limit", "5")
    assert rc == 0, err
    strict_json(out)
    rc, out, err = sb(capsys, "results")
    assert rc == 0 and not CONTROL.search(out), err
    rc, out, err = sb(capsys, "results", "--show", run_id)
    assert rc == 0 and not CONTROL.search(out), err
    html, table = tmp_path / "cmp.html", tmp_path / "cmp.csv"
    rc, out, err = sb(capsys, "compare", base_id, run_id, "--json", "--html", html,
                      "--csv", table)
    if rc == 0:
        strict_json(out)
        assert_safe_html(html.read_text(encoding="utf-8"))
        assert_safe_csv(table.read_text(encoding="utf-8"))
    else:   # nothing in common: said in one sentence
        assert_one_sentence(rc, err)
    for name in ("x.csv", "x.json"):
        out_path = tmp_path / name
        rc, out, err = sb(capsys, "export", "-o", out_path, "--run", run_id)
        assert rc == 0, err
    assert_safe_csv((tmp_path / "x.csv").read_text(encoding="utf-8"))
    back = records_from_json((tmp_path / "x.json").read_text(encoding="utf-8"))
    strict_json((tmp_path / "x.json").read_text(encoding="utf-8"))
    assert [r.id for r in back] == [run_id]


def test_mutated_result_files_are_imported_or_refused_in_one_sentence(tmp_path, capsys,
                                                                       siliconbench_home):
    base_text = FIXTURE.read_text(encoding="utf-8")
    base_id = fixture()["id"]
    assert sb(capsys, "import", FIXTURE)[0] == 0
    counts = {"accepted": 0, "refused": 0}
    for i, (name, data) in enumerate(mutations(base_text)):
        path = tmp_path / "mutant.json"
        path.write_bytes(data)
        before = snapshot(siliconbench_home)
        rc, out, err = sb(capsys, "import", path)
        after = snapshot(siliconbench_home)
        if rc != 0:
            assert_one_sentence(rc, err)
            assert after == before, name
            with pytest.raises(NotAResultFile):
                records_from_file(path)
            counts["refused"] += 1
            continue
        counts["accepted"] += 1
        new = sorted({row[0] for row in after} - {row[0] for row in before})
        assert len(after) - len(before) == len(new), name
        for run_id in new:
            check_accepted(capsys, tmp_path, base_id, run_id)
        rc, out, err = sb(capsys, "import", path)       # again: nothing is added twice
        assert rc == 0 and snapshot(siliconbench_home) == after, name
        # Deleted again (as the app's Delete does), so the next file meets the base run alone
        # and the listings stay short: with every accepted run kept, `results` rendered ~100
        # rows per file and took most of this test's 13 CPU-s.
        s = Store(siliconbench_home / "results.sqlite3")
        try:
            assert s.delete(new) == len(new), name
        finally:
            s.close()
        assert snapshot(siliconbench_home) == before, name
    print(f"fuzzed files: {sum(counts.values())}, {counts}")
    # The mix exercises both outcomes broadly, not one of them.
    assert counts["accepted"] >= 40 and counts["refused"] >= 100, counts


def test_ids_that_differ_in_case_or_are_a_prefix_can_each_be_selected(capsys):
    base = fixture()
    ids = [base["id"], base["id"].upper(), base["id"][:8]]
    runs = [base | {"id": run_id} for run_id in ids]
    Store().import_records(records_from_json(json.dumps(
        {"format": "siliconbench-results", "runs": runs})))
    for run_id in ids:
        rc, out, err = sb(capsys, "results", "--show", run_id)
        assert rc == 0, err
        assert f"run {run_id[:8]}" in out


# ---------------------------------------------------------------- hostile fields

HOSTILE_TEXT = [
    "[/]", "[link=https://evil.example]click here[/link]", "[bold red]alarm",
    "\x1b]8;;https://evil.example\x1b\\spoof\x1b]8;;\x1b\\", "\x1b[2J\x1b[31mred\x07",
    "=cmd|' /C calc'!A0", " \t=1+1", "\x00\x01=2*3", "Lab Mac\r=cmd|' /C calc'!A0",
    "Lab Mac\n@SUM(1+1)", "+1", "-2+3", "\u202eevil", "javascript:alert(1)",
    " JavaScript:alert(1)", "data:text/html,<script>alert(1)</script>",
    "<script>alert(1)</script>\"'><img src=x onerror=alert(1)>", "é漢字🙂",
]


def hostile_record(text: str, run_id: str) -> dict:
    """The real record with `text` in every field a person or a received file can fill."""
    d = fixture()
    row = d["rows"][0]
    d.update(id=run_id, label=text, workload=text, device_name=text, framework=text,
             device=text, warnings=[text], status="failed", reason=text)
    d["machine"]["chip"] = text
    d["software"][text] = text
    row.update(note=text, flags=row["flags"] + [text], unit=text, metric=text)
    row["params"] = {**row["params"], text: text}
    d["params"] = {**d["params"], text: [text]}
    return d


def published_record(text: str, run_id: str) -> dict:
    d = hostile_record(text, run_id)
    d.update(source="published", provenance={"source": text, "url": text, "hardware": text})
    return d


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def assert_safe_html(text: str) -> None:
    p = _Tags()
    p.feed(text)
    for tag, attrs in p.tags:
        assert tag not in ("script", "img", "iframe", "object", "embed"), (tag, attrs)
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        if "href" in attrs:
            assert re.match(r"https?://", attrs["href"]), attrs["href"]


def assert_safe_csv(text: str) -> None:
    """Read as a spreadsheet would, taking a bare CR as a line break too: every line has the
    header's cell count, and no cell starts a formula (a number may start with a minus)."""
    lines = list(csv.reader(io.StringIO(text, newline=None)))
    assert lines and all(len(line) == len(lines[0]) for line in lines), lines[:3]
    for line in lines:
        for cell in line:
            start = cell.lstrip("".join(map(chr, range(33))) + "\x7f")
            if start.startswith(FORMULA):
                float(cell)


@pytest.mark.parametrize("text", HOSTILE_TEXT)
def test_a_hostile_field_is_inert_in_html_csv_and_the_terminal(text, tmp_path, capsys):
    files = []
    for i, make in enumerate((hostile_record, hostile_record, published_record)):
        path = tmp_path / f"side{i}.json"
        path.write_text(json.dumps(make(text, f"hostile{i:04d}-run")), encoding="utf-8")
        files.append(path)
    html, table = tmp_path / "report.html", tmp_path / "report.csv"
    rc, out, err = sb(capsys, "compare", *files, "--html", html, "--csv", table)
    assert rc == 0, err
    assert not CONTROL.search(out) and "\x1b" not in out
    assert_safe_html(html.read_text(encoding="utf-8"))
    assert_safe_csv(table.read_text(encoding="utf-8"))
    rc, out, err = sb(capsys, "compare", *files, "--json")
    assert rc == 0 and strict_json(out)["rows"], err

    assert sb(capsys, "import", files[0], files[1])[0] == 0
    for args in (["results"], ["results", "--show", "hostile0000-run"]):
        rc, out, err = sb(capsys, *args)
        assert rc == 0, err
        assert not CONTROL.search(out), out
        if "[" in text and "\x1b" not in text:
            assert text.strip().split("\n")[0][:8] in out     # shown as the characters it is
    export = tmp_path / "runs.csv"
    assert sb(capsys, "export", "-o", export)[0] == 0
    assert_safe_csv(export.read_text(encoding="utf-8"))


# ---------------------------------------------------------------- one item each

def measured(**changes) -> RunRecord:
    """The real record as the app holds it (no import cleaning), with `changes`: what a
    label typed in the app or a framework's message can put in."""
    d = fixture() | {k: v for k, v in changes.items() if k != "note"}
    if "note" in changes:
        d["rows"][0]["note"] = changes["note"]
    return RunRecord.from_dict(d, validate_schema=False)


def test_csv_exports_quote_a_cr_and_neutralise_formulas_after_whitespace_and_in_headers():
    from siliconbench.core import export, report
    from siliconbench.core.compare_stats import Side, compare
    a = measured(label="Lab Mac\r=cmd|' /C calc'!A0", note=" \t=1+1")
    a.rows[0].params["=HYPERLINK(\"http://x\")"] = "@SUM(1)"
    b = measured(id="other-run-0001", label="\x01-2+3")
    b.rows[0].params = dict(a.rows[0].params)
    for text in (export.to_csv([a, b]),
                 report.to_csv(compare([Side("\r=1+1", [a]), Side("+1", [b])]))):
        assert_safe_csv(text)
        assert '"Lab Mac\r=cmd' in text or '"\'\r=1+1"' in text    # the CR is inside quotes
        header = next(csv.reader(io.StringIO(text)))
        assert "'=HYPERLINK(\"http://x\")" in header


def test_the_html_report_links_http_addresses_only():
    from siliconbench.core import report
    from siliconbench.core.compare_stats import Side, compare
    a = measured()
    for url, linked in (("javascript:alert(1)", False), ("data:text/html,x", False),
                        ("  JAVASCRIPT:alert(1)", False), ("https://example.org/x", True)):
        pub = measured(id="published-0001", source="published",
                       provenance={"source": "a paper", "url": url})
        page = report.to_html(compare([Side("us", [a]), Side("them", [pub])]))
        assert_safe_html(page)
        assert ('href="https://example.org/x"' in page) == linked
        assert url.strip().split(":")[0].lower() in page.lower()      # still shown, as text


@pytest.mark.parametrize("change", [
    {"label": {"x": "A" * 1_000_000}},
    {"status": "\x1b[31m" * 100_000},
    {"machine": {"chip": ["\x1b]8;;https://evil.example\x1b\\" * 10_000]}},
    {"rows": [{"metric": "tflops", "value": "9" * 100_000, "unit": "x", "params": {}}]},
    {"params": {"\x1b[2J" * 1000: {"deep": 1}}},
])
def test_a_refusal_never_repeats_the_value(change):
    with pytest.raises(NotAResultFile) as e:
        records_from_json(json.dumps(fixture() | change))
    message = str(e.value)
    assert len(message) < 150 and not CONTROL.search(message), message[:300]


@pytest.mark.parametrize("text, says", [
    ('{"workload": "x", "rows": ' + "[" * 500 + "]" * 500 + "}", "nested too deeply"),
    ("[" * 5000 + "]" * 5000, "nested too deeply"),
    ('{"workload": "x", "rows": [], "n": ' + "1" * 5000 + "}", "number too large"),
    ('{"workload": "x", "rows": [NaN]}', "NaN, which is not a number JSON allows"),
    ('{"workload": "x", "rows": [1e999]}', "number too large"),
    ('{"workload": "x", "rows": [], "label": "\\ud800"}', "lone surrogate"),
])
def test_what_python_cannot_hold_is_refused_in_a_sentence(text, says):
    with pytest.raises(NotAResultFile, match=says):
        records_from_json(text)


def test_a_file_with_a_byte_order_mark_imports(tmp_path, capsys):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + FIXTURE.read_bytes())
    rc, out, err = sb(capsys, "import", path)
    assert rc == 0 and "Imported 1 run" in out, err


def test_every_json_siliconbench_prints_is_standard_even_from_a_broken_measurement(
        tmp_path, capsys):
    """A workload that divided by zero must not make `results --json` or the exports print
    NaN: the store keeps what the run sent, the output says null."""
    rec = measured(note="broken \ud800 note")
    rec.rows[0].value = float("nan")
    rec.rows[0].pct_of_peak = float("inf")
    Store().save(rec)
    rc, out, err = sb(capsys, "results", "--json")
    assert rc == 0 and strict_json(out)[0]["rows"][0]["value"] is None
    for name in ("all.json", "all.csv"):
        rc, out, err = sb(capsys, "export", "-o", tmp_path / name)
        assert rc == 0, err
    strict_json((tmp_path / "all.json").read_text(encoding="utf-8"))
    assert "broken ? note" in (tmp_path / "all.csv").read_text(encoding="utf-8")


def test_the_progress_bar_shows_a_step_as_text(monkeypatch, capsys):
    """A progress message names a point (a model, a label): '[/]' in it must not end the run
    with a MarkupError, nor an escape sequence reach the terminal."""
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    from siliconbench.core.cli.printing import ProgressBar
    progress = ProgressBar("[/] gemm on torch:cpu")
    progress.start -= 2                    # shown once a run has taken over a second
    for done, message in enumerate(["[/]", "[link=https://evil.example]x[/link]", "\x1b[2J"]):
        progress({"event": "progress", "done": done, "total": 3, "message": message})
    progress.close()
    assert "\x1b[2J" not in capsys.readouterr().err
