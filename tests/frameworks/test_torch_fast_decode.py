"""PyTorch's `fast` decode loop (gpt-fast's method: one compiled step with the greedy choice
inside the graph, fullgraph, the tokens read by the host once at the end of the block). On the
CPU with the tiny Llama config and random weights. The fixed cost of a decode step is
tests/core/test_decode_fit.py's."""

import torch

from siliconbench.core.frameworks.torch import llm as torch_llm
from siliconbench.core.workloads import llm

TINY = llm.PRESETS["tiny"]


def test_the_fast_loop_gives_eager_s_tokens_from_one_graph_read_once(spread_model,
                                                                    monkeypatch):
    """torch.compile with inductor: a minute or two on this CPU, once in this test."""
    from torch._dynamo.utils import counters
    lm, batch, depth, steps = spread_model, 2, 8, 6
    torch.manual_seed(3)
    eager = lm.decoder(batch, depth, steps, "eager")
    tokens = eager()
    assert len({t for step in tokens for [t] in step}) > steps      # the tokens vary
    torch.manual_seed(3)
    fast = lm.decoder(batch, depth, steps, "fast")
    assert torch.equal(fast.prompt, eager.prompt)
    # compiled as one graph (fullgraph=True held), in its first call, before any timing
    assert fast.fullgraph and fast.compile_s > 0 and fast.loop == "fast"
    graphs = counters["stats"]["unique_graphs"]
    reads = []
    tolist = torch.Tensor.tolist

    def counted(self):
        reads.append(tuple(self.shape))
        return tolist(self)
    monkeypatch.setattr(torch.Tensor, "tolist", counted)
    for _ in range(3):
        assert fast() == tokens
    # the host read the block once per call: every step's token at the end
    assert reads == [(steps, batch, 1)] * 3
    reads.clear()
    eager()
    assert len(reads) == steps                  # generate's loop reads every token
    assert counters["stats"]["unique_graphs"] == graphs and not fast.recompiled()
    assert torch_llm.Engine.decode_note(None, "fast").startswith("fast decode loop (gpt-fast")


def test_no_token_the_step_returned_is_fed_back_to_it(spread_model, monkeypatch):
    """On CUDA the step is a CUDA graph, whose outputs its next replay overwrites: the H100 run
    of 2026-11-27 failed with "accessing tensor output of CUDAGraphs that has been overwritten
    by a subsequent run" where the loop fed a step's token straight back to it. Each token is
    a copy before it is fed back, as gpt-fast's `cur_token = next_token.clone()`. Here the
    compiled step is the plain function, watched (no CUDA on this machine)."""
    returned = []

    def watched(fn, **options):
        def step(y, position):
            assert not any(y.untyped_storage().data_ptr() == out.untyped_storage().data_ptr()
                           for out in returned)
            returned.append(fn(y, position))
            return returned[-1]
        return step
    monkeypatch.setattr(torch, "compile", watched)
    batch, depth, steps = 2, 8, 6
    fast = spread_model.decoder(batch, depth, steps, "fast")
    assert len(fast()) == steps and len(returned) == 2 * steps     # first call, and this one


def test_the_step_has_gpt_fast_s_inductor_settings_and_math_only_sdpa(spread_model,
                                                                     monkeypatch):
    """gpt-fast's generate.py compiles decode_one_token with coordinate-descent tuning, unique
    kernel names and the FX graph cache, and runs it under SDPA's math backend alone, so
    inductor writes attention's kernels itself. The step is watched uncompiled (the options
    it is compiled with are read), then compiled for real in the other tests."""
    given = []

    def compile(fn, options=None, fullgraph=False):
        given.append(options)
        return fn
    monkeypatch.setattr(torch, "compile", compile)
    backends = []
    real = torch.nn.functional.scaled_dot_product_attention

    def watched(*args, **kwargs):
        b = torch.backends.cuda
        backends.append((b.flash_sdp_enabled(), b.mem_efficient_sdp_enabled(),
                         b.math_sdp_enabled()))
        return real(*args, **kwargs)
    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", watched)
    fast = spread_model.decoder(2, 8, 6, "fast")
    assert given == [{"coordinate_descent_tuning": True, "triton.unique_kernel_names": True,
                      "fx_graph_cache": True}]
    assert torch_llm.fast_options("cuda") == {**given[0], "triton.cudagraphs": True}
    backends.clear()
    fast()
    assert backends and set(backends) == {(False, False, True)}     # math alone, every step
    b = torch.backends.cuda
    assert b.flash_sdp_enabled() and b.math_sdp_enabled()           # as it was, outside
    backends.clear()
    spread_model.decoder(2, 8, 6, "eager")()
    assert backends and set(backends) == {(True, True, True)}       # eager: SDPA's choice


def test_a_forward_that_breaks_the_graph_is_compiled_in_pieces_and_the_run_says_so(
        spread_model, monkeypatch):
    compiled = []

    def compile(fn, options=None, fullgraph=False):
        compiled.append(fullgraph)

        def broken(*args):       # dynamo raises at the first call, where it traces
            raise torch._dynamo.exc.Unsupported("a graph break")
        return broken if fullgraph else fn
    monkeypatch.setattr(torch, "compile", compile)
    fast = spread_model.decoder(2, 8, 6, "fast")
    assert compiled == [True, False] and fast.fullgraph is False

    class Run:
        warnings = []

        def warn(self, text):
            self.warnings.append(text)

        def measure(self, decoder):
            return "measured"

    class Engine:
        def decoder(self, batch, depth, gen, loop):
            return fast
    run = Run()
    llm._decode(run, Engine(), {"batch": 2, "depth": 8, "gen_tokens": 6}, "fast")
    assert run.warnings == ["The fast decode at depth 8 was compiled in pieces: the model's "
                            "forward breaks the graph, so it is not gpt-fast's one graph a "
                            "step."]
