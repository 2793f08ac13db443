"""Weights staged one layer ahead on a side stream (cann-recipes-infer's LongCat prefetch loop): the wait for a
layer's weights must not wait for the next layer's, and a call that touches none of another stream's state
does not wait for it.

- The next staging re-records the staging's join event; the current weights are read right after it, so the
  caller waits for them before the re-fork, once, before the ``if`` that guards the re-fork (on both paths the
  wait comes before any work), not after it, where it would also wait for the staging just issued.
- A call of a method whose body reads and writes only its own buffers needs no join of a call on another stream
  that wrote another buffer of the object; one that reads that buffer does.

Every module runs under the race checker, called with inputs its caller made right before.
"""

from __future__ import annotations

import pytest
import torch
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3, 3), requires_grad=False)


class Model(nn.Module):
    def __init__(self, layers: int):
        super().__init__()
        self.layers = nn.ModuleList(Layer() for _ in range(layers))
        self.register_buffer("staged", torch.zeros(()))
        self.register_buffer("cache", torch.zeros(layers, 2, 3))

    @on_stream("prefetch")
    def stage(self, w: torch.Tensor) -> torch.Tensor:
        self.staged.add_(1)
        return w * 2

    @on_stream("prefetch")
    def stage_from_cache(self, w: torch.Tensor) -> torch.Tensor:
        return w + self.cache.sum()

    @on_stream("d2h")
    def offload(self, h: torch.Tensor, i: int) -> None:
        self.cache[i].copy_(h)

    def ahead(self, x: torch.Tensor) -> torch.Tensor:
        w = self.stage(self.layers[0].w)
        for i, layer in enumerate(self.layers):
            following = self.layers[i + 1] if i + 1 < len(self.layers) else None
            if following is not None:
                nxt = self.stage(following.w)
            x = torch.relu(x @ w)
            self.offload(x, i)
            if following is not None:
                w = nxt
        return x

    def reads_the_cache(self, x: torch.Tensor) -> torch.Tensor:
        self.offload(x, 0)
        y = x * 2
        w = self.stage_from_cache(self.layers[0].w)
        return y @ w


class Caller(nn.Module):
    def __init__(self, method):
        super().__init__()
        self.model, self.method = Model(3), method

    def forward(self, x):
        return getattr(self.model, self.method)(x * 1)
"""


def test_nothing_is_kept_alive_for_the_caller_where_the_function_returns() -> None:
    """The loop keeps the staged weights for the main stream (the next staging, fork-less, may allocate while
    they are read); the join before the ``return`` keeps nothing: no call of the function comes after it."""
    method = method_source(transform_source(SOURCE, path="m.py", target="portable"), "ahead")
    loop, end = method.split("        for i, layer in", 1)[1].split("\n        runtime.", 1)
    assert "runtime.record_stream(w, runtime.current_stream())" in loop
    assert "record_stream" not in end


def test_the_current_weights_are_waited_for_once_before_the_next_staging() -> None:
    ahead = method_source(transform_source(SOURCE, path="m.py", target="portable"), "ahead")
    loop = ahead.split("for i, layer in", 1)[1]
    body = loop.split("\n        runtime.", 1)[0]  # the loop's body: up to the function's own next line
    assert body.count('runtime.wait("m.Model.stage.join")') == 1
    assert body.index('runtime.wait("m.Model.stage.join")') < body.index("if following is not None:")
    assert 'runtime.wait("m.Model.offload.join")' not in body  # staging touches nothing offload writes


@pytest.mark.parametrize(("method", "waits"), [("ahead", False), ("reads_the_cache", True)])
def test_a_call_waits_for_another_stream_only_for_state_it_touches(method: str, waits: bool) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    joined = method_source(code, method).split("self.offload", 1)[0 if method == "ahead" else 1]
    assert ('runtime.wait("m.Model.offload.join")' in joined) is waits
    run_checked(code, "portable", lambda m: m.Caller(method), (torch.randn(2, 3),))


def test_the_loop_is_race_free_and_exact() -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    x = torch.randn(2, 3)
    torch.manual_seed(0)
    got = run_checked(code, "portable", lambda m: m.Caller("ahead"), (x,))
    assert got.shape == (2, 3)
