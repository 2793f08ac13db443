"""An import inside a function binds its name for the calls there: ``import torch as th`` in a stream method's body,
then ``th.relu_(self.count)``, writes ``self.count``; ``from torch import relu_`` there, then ``relu_(t)``, writes
the parameter ``t``.

The module's imports were read at its top level only (``imports.module_bindings``), so a name a function imported
itself reached nothing the run knows (``imported_writes.ModuleFunctions.reached``: a call of nothing imported)
and wrote nothing: the caller's read of ``self.count`` or of its argument after the call did not wait (raced on
main on every event target). Deferred imports are common in real model code (``import torch_npu`` inside a
``forward``). ``import_chains.absolute_imports`` now reads a name no top-level import binds by the imports the
module's functions make (``imports.function_bindings``; None, unknown, where two bind it differently).
"""

from __future__ import annotations

import ast

import pytest
import torch
from method_caller import caller_source
from method_source import method_source
from method_trace import EVERY_TARGET, assert_race_free_and_exact

from codegen.driver.api import transform_source
from codegen.lower.flow.import_chains import absolute_imports

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.tensor([-1.0, 2.0, -3.0]))

    @on_stream("side")
    def side_state(self, t):
        import torch as th
        th.relu_(self.count)
        return t * 2

    @on_stream("side")
    def side_param(self, t):
        from torch import relu_
        relu_(t)
        return t * 2

    def state(self, x):
        a = self.side_state(x)
        c = x.relu() + self.count
        return a + c

    def param(self, x):
        h = x - 0.5
        a = self.side_param(h)
        d = x.cos()
        c = h.sin()
        return a + c + d
""" + caller_source()


@pytest.mark.parametrize("target", EVERY_TARGET)
@pytest.mark.parametrize("method", ["state", "param"])
def test_race_free_and_exact(method: str, target: str) -> None:
    assert_race_free_and_exact(SOURCE, target, method, torch.randn(3))


@pytest.mark.parametrize(("method", "read"), [("state", "self.count"), ("param", "c = h.sin()")])
def test_the_read_waits(method: str, read: str) -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), method)
    assert body.index(f'runtime.wait("m.Model.side_{method}.join")') < body.index(read)


@pytest.mark.parametrize(
    ("source", "name", "named"),
    [
        ("def f():\n    import torch as th\n", "th", ("torch",)),
        ("def f():\n    from torch import relu_\n", "relu_", ("torch", "relu_")),
        ("import numpy as th\ndef f():\n    import torch as th\n", "th", ("numpy",)),
        ("def f():\n    import torch as th\ndef g():\n    import numpy as th\n", "th", None),
        ("class C:\n    def f(self):\n        from . import helpers\n", "helpers", ("pkg", "helpers")),
    ],
)
def test_a_function_import_binds_its_name(source: str, name: str, named: tuple[str, ...] | None) -> None:
    assert absolute_imports(ast.parse(source), "pkg")[name] == named
