"""The LLM form as a user meets it: the model files of a Hugging Face cache laid out as
huggingface_hub lays it out (tests/core/test_model_files.py's hub_repo, with a tiny Llama
saved by transformers) are listed after the presets, found in the background; a file no
ticked device's framework runs, or none can, is greyed with why; choosing one and running it
draws its run beside a preset's on the LLM tab, and a context sweep's charts read "Context"."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt  # noqa: E402

from siliconbench.core.frameworks import DeviceInfo  # noqa: E402
from tests.helpers.framework_runs import cpu_read, store_a_triad  # noqa: E402, F401  (a fixture)
from tests.helpers.gui import this_cpu  # noqa: E402
from tests.helpers.model_files import folder_files, hub_repo, tiny_llama, write_gguf

RUN_TIMEOUT_MS = 480_000


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """A hub cache with a tiny Llama (torch or MLX), a GGUF (llama.cpp) and a folder of
    pickled weights (no engine); every other place a tool keeps models empty."""
    cache = tmp_path / "hub"
    for var, folder in (("HF_HUB_CACHE", cache), ("HOME", tmp_path / "home"),
                        ("OLLAMA_MODELS", tmp_path / "ollama"),
                        ("LLAMA_CACHE", tmp_path / "llama.cpp")):
        monkeypatch.setenv(var, str(folder))
    tiny_llama().save_pretrained(tmp_path / "built", safe_serialization=True)
    llama = hub_repo(cache, "someone/tiny-llama", folder_files(tmp_path / "built"))
    write_gguf(tmp_path / "tiny.gguf")
    hub_repo(cache, "someone/tiny-GGUF", {"tiny-Q8_0.gguf": (tmp_path / "tiny.gguf")
                                          .read_bytes()})
    hub_repo(cache, "someone/pickled", {"config.json": b'{"model_type": "llama"}',
                                        "pytorch_model.bin": b"not read"})
    return llama


def llm_form(qtbot, window):
    window.catalogue.select("llm")
    form = window.form
    qtbot.waitUntil(lambda: form.models.models is not None, timeout=60_000)
    return form


def choose(form, name: str) -> None:
    """Choose the entry that starts with `name` as a person does (activated)."""
    combo = form.fields["preset"].editor
    row = next(i for i in range(combo.count()) if combo.itemText(i).startswith(name))
    combo.setCurrentIndex(row)
    combo.activated.emit(row)


def test_the_llm_form_lists_the_hub_cache_s_models_after_the_presets(qtbot, window, hub):
    from siliconbench.core.workloads.llm import PRESETS
    from siliconbench.gui.qt_values import TOOL_TIP_ROLE
    assert TOOL_TIP_ROLE == Qt.ItemDataRole.ToolTipRole.value
    form = llm_form(qtbot, window)
    combo = form.fields["preset"].editor
    texts = [combo.itemText(i) for i in range(combo.count())]
    assert texts[:len(PRESETS)] == list(PRESETS)
    assert texts[len(PRESETS) + 1] == "Your models"
    listed = {text.split(" · ")[0]: (path, enabled) for text, path, enabled in
              form.models.listed()}
    assert set(listed) == {"someone/tiny-llama", "someone/tiny-GGUF/tiny-Q8_0.gguf",
                           "someone/pickled"}
    assert listed["someone/tiny-llama"] == (str(hub), True)
    # No engine reads pickled weights: greyed, its tooltip the reason.
    row = combo.findData(listed["someone/pickled"][0])
    assert not listed["someone/pickled"][1]
    assert "pickle" in combo.itemData(row, TOOL_TIP_ROLE).lower()

    # With PyTorch's CPU ticked, the GGUF (llama.cpp's) is greyed and says why.
    window.devices.set_devices([this_cpu()], {"torch": "test"})
    window.devices.set_checked(["torch:cpu"])
    gguf = dict((t.split(" · ")[0], e) for t, _, e in form.models.listed())
    assert gguf == {"someone/tiny-llama": True, "someone/tiny-GGUF/tiny-Q8_0.gguf": False,
                    "someone/pickled": False}
    tip = combo.itemData(combo.findData(listed["someone/tiny-GGUF/tiny-Q8_0.gguf"][0]),
                         TOOL_TIP_ROLE)
    assert "runs on llama.cpp: tick a device of it." in tip

    # Choosing it fills the model file; the preset stays valid; a preset empties it again.
    choose(form, "someone/tiny-llama")
    assert form.fields["model_path"].text() == str(hub)
    assert combo.currentText().startswith("someone/tiny-llama")
    assert form.is_valid() and form.values()["model_path"] == str(hub)
    choose(form, "tiny")
    assert form.fields["model_path"].text() == "" and form.values()["preset"] == "tiny"
    # A path typed into the field shows its entry in the list.
    form.fields["model_path"].set_text(str(hub))
    assert combo.currentText().startswith("someone/tiny-llama")


def test_a_sweep_and_both_fields_are_refused_in_the_form(qtbot, window, hub):
    form = llm_form(qtbot, window)
    window.devices.set_devices([this_cpu()], {"torch": "test"})
    window.devices.set_checked(["torch:cpu"])
    form.fields["context_sweep"].editor.setText("1024")
    form.fields["prompts"].editor.setText("8")
    assert window.run_clicked() == [] and window.queue.jobs == []
    # Marked on the field as it is typed, Run waiting (it came in a sheet after Run).
    assert not window.run_button.isEnabled()
    assert form.fields["context_sweep"].error == (
        "Context sweep sets the prompt lengths and context depths itself; leave out "
        "Prompt lengths.")


def test_the_app_asks_before_a_32k_sweep_of_llama_3_2_1b(qtbot, window):
    """The app's Run goes through the estimate: a 32K sweep on this CPU is asked about (its
    time; or refused, where the memory free now lacks the weights), and on a GPU too small
    for the weights refused; nothing is queued."""
    from tests.helpers.dialogs import the_sheet
    form = llm_form(qtbot, window)
    form.fields["context_sweep"].editor.setText("32768")
    small_gpu = DeviceInfo("torch", "cuda:0", "Small GPU", "gpu", 2**30)
    window.devices.set_devices([this_cpu(), small_gpu], {"torch": "test"})
    window.devices.set_checked(["torch:cpu"])
    specs, _ = window.starter.build_specs()
    assert specs[0].params == {"preset": "llama-3.2-1b", "dtype": "bfloat16",
                               "decode_loop": "auto", "context_sweep": 32768}
    assert window.run_clicked() == [] and window.queue.jobs == []
    sheet = the_sheet(window)
    said = sheet.text() + " " + sheet.informativeText()
    assert "may take about" in said or "Nothing of this run fits" in said
    sheet.reject()
    window.devices.set_checked(["torch:cuda:0"])
    assert window.run_clicked() == [] and window.queue.jobs == []
    sheet = the_sheet(window)
    assert sheet.windowTitle() == "This run cannot start"
    assert sheet.text().startswith("Nothing of this run fits in the 80% of Small GPU's 1 GB "
                                   "of memory")
    assert "llama-3.2-1b in bfloat16 with a 32768-token prompt" in sheet.text()


def test_a_run_of_a_listed_model_draws_beside_a_preset_run(qtbot, window, hub, store,
                                                            short_protocol, cpu_read,
                                                            siliconbench_home):
    # A CPU bound in the store: neither run measures its own (the charts are tested here).
    store_a_triad(siliconbench_home, cpu_read)
    form = llm_form(qtbot, window)
    window.devices.set_devices([this_cpu()], {"torch": "test"})
    window.devices.set_checked(["torch:cpu"])
    window.quick_box.setChecked(True)
    form.fields["dtype"].set_text("float32")
    form.fields["gen_tokens"].set_text("4")

    # The listed model, at a short prompt and an empty context.
    choose(form, "someone/tiny-llama")
    form.fields["prompts"].set_text("8")
    form.fields["depths"].set_text("0")
    jobs = window.run_clicked()
    assert len(jobs) == 1 and jobs[0].spec.params["model_path"] == str(hub)
    # A preset's context sweep up to 512: prompts 512, depths 0 and 512.
    choose(form, "tiny")
    form.fields["prompts"].set_text("")
    form.fields["depths"].set_text("")
    form.fields["context_sweep"].set_text("512")
    jobs += window.run_clicked()
    assert len(jobs) == 2 and "model_path" not in jobs[1].spec.params
    qtbot.waitUntil(lambda: not window.queue.busy, timeout=RUN_TIMEOUT_MS)
    assert [j.state for j in jobs] == ["ok", "ok"], [j.reason for j in jobs]

    window.results.select_ids({j.record.id for j in jobs})
    charts = window.charts
    prefill, decode = (charts.curves[m] for m in ("prefill_tokens_per_s",
                                                  "decode_tokens_per_s"))
    qtbot.waitUntil(lambda: len(decode.series) == 2)
    names = sorted(s.name for s in decode.series)
    assert any("someone/tiny-llama" in n for n in names) and any("tiny ·" in n
                                                                  for n in names)
    model = next(s for s in prefill.series if "someone/tiny-llama" in s.name)
    assert [r.params["prompt"] for r in model.rows] == [8]
    # Beside an ordinary run the axes say what they always say ...
    axis = prefill.plot_item.getAxis("bottom")
    assert axis.labelText == "Prompt length in tokens (log₂ scale)"
    # ... and a context sweep alone reads against the context.
    window.results.select_ids({jobs[1].record.id})
    qtbot.waitUntil(lambda: len(decode.series) == 1)
    assert axis.labelText == "Context (tokens, log₂ scale)"
    assert decode.plot_item.getAxis("bottom").labelText == "Context (tokens, linear)"
    assert [r.params["depth"] for r in decode.series[0].rows] == [0, 512]


def test_a_listed_model_is_sized_before_it_runs(qtbot, window, hub):
    """Run with a listed model goes through the estimate as a preset does, sized from the
    file and named by it: on a GPU smaller than its weights, refused before anything runs."""
    from siliconbench.core.kit.model_files import read_model
    from tests.helpers.dialogs import the_sheet
    form = llm_form(qtbot, window)
    weights = read_model(str(hub)).file.size
    tiny_gpu = DeviceInfo("torch", "cuda:0", "Tiny GPU", "gpu", weights // 2)
    window.devices.set_devices([tiny_gpu], {"torch": "test"})
    window.devices.set_checked(["torch:cuda:0"])
    choose(form, "someone/tiny-llama")
    assert window.run_clicked() == [] and window.queue.jobs == []
    sheet = the_sheet(window)
    assert sheet.windowTitle() == "This run cannot start"
    assert sheet.text().startswith("Nothing of this run fits in the 80% of Tiny GPU's")
    assert "someone/tiny-llama in bfloat16 with a 128-token prompt" in sheet.text()
