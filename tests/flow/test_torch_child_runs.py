"""A method of torch's module class that calls hooks or weak references runs no child: it writes nothing of them.

``torch_module_methods_build.py`` marked ``c`` (runs its children: writes what they write) every method calling
what a loop over its own object gives. ``Module.state_dict`` loops over ``self._state_dict_pre_hooks.values()`` and
calls each hook, ``Module._call_impl`` its forward hooks, ``RNNBase._weights_have_changed`` its weak references:
all three were ``c``, so ``n = len(self.sub.state_dict())`` counted as writing every state of ``self.sub`` (a class
of the run deriving ``nn.Module``: its children nothing says of), and a side call reading ``self.sub.w`` ran on the
caller's stream, with no overlap (main: no ``runtime.stream("side"`` in ``counted``). torch's annotations say what a
loop iterates (``_forward_hooks: dict[int, Callable]``, ``Sequential.__iter__ -> Iterator[Module]``,
``TransformerEncoder``'s ``self.layers`` built by ``_get_clones``, a ``ModuleList``): only a loop over modules runs
children (``torch_child_runs.py``). What ``state_dict()`` hands out is still the module's memory: a write through it
waits (``handed_state.py``, ``test_handed_state.py``).
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from codegen.lower.flow.torch_module_methods import torch_method_runs_children
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Sub(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("w", torch.full((3,), 2.0))

    def forward(self, x):
        return x * self.w


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = Sub()
        self.seq = nn.Sequential(nn.BatchNorm1d(3))

    @on_stream("side")
    def side(self, x):
        return x * self.sub.w

    @on_stream("side")
    def side_stats(self, x):
        return x * self.seq[0].running_mean

    def counted(self, x):
        y = self.side(x)
        n = len(self.sub.state_dict())
        z = x * n
        return y + z

    def counted_whole(self, x):
        y = self.side(x)
        n = len(self.state_dict())
        z = x * n
        return y + z

    def sequential(self, x):
        y = self.side_stats(x)
        z = x * 5
        w = self.seq(z)
        return y + z + w * 0
""" + caller_source()

KEPT = {"counted": "n = len(self.sub.state_dict())", "counted_whole": "n = len(self.state_dict())"}


def test_loops_over_modules_run_children() -> None:
    for cls, method in [
        ("Sequential", "forward"),
        ("TransformerEncoder", "forward"),
        ("TransformerDecoder", "forward"),
    ]:
        assert torch_method_runs_children(cls, method), (cls, method)
    for cls, method in [("Module", "_call_impl"), ("Module", "state_dict"), ("RNNBase", "_weights_have_changed")]:
        assert not torch_method_runs_children(cls, method), (cls, method)


@pytest.mark.parametrize("method", KEPT)
def test_a_state_dict_read_keeps_the_overlap(method: str) -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), method)
    assert 'runtime.stream("side"' in body, body
    assert body.index('runtime.stream("side"') < body.index(KEPT[method]) < body.rindex("runtime.wait("), body


def test_a_container_still_runs_its_children() -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), "sequential")
    assert body.index('runtime.wait("m.Model.side_stats.join")') < body.index("w = self.seq(z)"), body


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("method", [*KEPT, "sequential"])
def test_race_free(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    reference = transform_source(SOURCE.replace('@on_stream("side")', ""), path="m.py", target=target)
    expected = run_checked(reference, target, lambda m: m.Caller(method), (x,))
    got = run_checked(code, target, lambda m: m.Caller(method), (x,))
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
