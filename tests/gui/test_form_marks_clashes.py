"""The LLM form marks a context sweep given with prompt lengths on the Context sweep field as it
is typed, and Run waits: before, the clash came only in a sheet after Run."""

from __future__ import annotations


def test_a_context_sweep_with_prompts_is_marked_on_its_field(qtbot, window):
    window.catalogue.select("llm")
    form = window.form
    form.set_texts({"preset": "tiny", "prompts": "", "depths": ""})
    form.fields["context_sweep"].set_text("1024")
    form._on_change()
    assert form.clash is None and not form.fields["context_sweep"].error
    form.fields["prompts"].editor.setText("16, 64")    # as typed: each keystroke checks
    sweep = form.fields["context_sweep"]
    assert form.clash == "context_sweep"
    assert sweep.error.startswith("Context sweep sets the prompt lengths and context depths "
                                  "itself; leave out Prompt lengths")
    assert sweep.error_label.isVisibleTo(form) and "--" not in sweep.error
    assert not form.is_valid() and not window.run_button.isEnabled()
    assert window.run_hint.text() == "Fix the marked parameter before running."
    form.fields["prompts"].editor.setText("")          # the clash gone, the mark too
    assert form.clash is None and not sweep.error and form.is_valid()
