"""A module function reaching a stream submodule through a parameter annotated with its owner's class.

sglang's NPU attention passes the attention module to module functions (``forward_dsa_prepare_npu(m:
"DeepseekV2AttentionMLA", ...)``), which call its fused preprocess submodule (``m.mla_preprocess.forward(...)``).
The call resolves to the submodule's class, as ``self.sub(...)`` does in a method, when the annotation is the
only binding of ``m`` and the owner's ``__init__`` assigns the submodule: read in the caller's module, or
(``class_in``) in the owner's module through its own imports. An unannotated or rebound ``m``, or an owner
whose submodule is not a stream class, leaves the call on its caller's stream. Race-checked, calls counted.
"""

from __future__ import annotations

import ast

import pytest
import torch

from bench.sync_count import count_graph, total
from codegen.driver.api import transform_source
from codegen.index.written_class import class_in
from codegen.lower.flow.callees import Resolver
from codegen.lower.flow.callsites import module_level_names
from codegen.lower.flow.imports import module_bindings
from npudsl.testing.targets import trace_graph

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


@on_stream("alt")
class Prologue(nn.Module):
    def forward(self, x):
        return x * 2


class Plain(nn.Module):
    def forward(self, x):
        return x * 2


class Attention(nn.Module):
    def __init__(self, method):
        super().__init__()
        self.pre = Prologue()
        self.plain = Plain()
        self.method = method

    def forward(self, x):
        x = x * 1
        if self.method == "called":
            return called(self, x)
        if self.method == "forward_called":
            return forward_called(self, x)
        if self.method == "unannotated":
            return unannotated(self, x)
        return rebound(self, x) if self.method == "rebound" else plain(self, x)


def called(m: "Attention", x):
    y = m.pre(x)
    z = x + 1
    return y + z * x


def forward_called(m: "Attention", x):
    y = m.pre.forward(x)
    z = x + 1
    return y + z * x


def unannotated(m, x):
    y = m.pre(x)
    z = x + 1
    return y + z * x


def rebound(m: "Attention", x):
    m = m
    y = m.pre(x)
    z = x + 1
    return y + z * x


def plain(m: "Attention", x):
    y = m.plain(x)
    z = x + 1
    return y + z * x
"""

STREAMED = ["called", "forward_called"]
KEPT_ON_CALLER = ["unannotated", "rebound", "plain"]


def _graph(method: str) -> tuple[torch.fx.GraphModule, torch.Tensor, torch.Tensor]:
    code = transform_source(SOURCE, path="m.py", target="portable")
    x = torch.randn(3, 4)
    trace = trace_graph(code, "portable", lambda m: m.Attention(method), (x,), name="annotated")
    return trace.dynamo[0], trace.outputs, x * 2 + (x + 1) * x


@pytest.mark.parametrize("method", STREAMED + KEPT_ON_CALLER)
def test_race_free_and_exact(method: str) -> None:
    graph, got, want = _graph(method)
    torch.testing.assert_close(got, want)
    streamed = total(count_graph(graph)) > 0
    assert streamed is (method in STREAMED)


@pytest.mark.parametrize("method", STREAMED)
def test_the_call_forks_and_joins_after_the_callers_own_work(method: str) -> None:
    code = transform_source(SOURCE, path="m.py", target="portable")
    body = code.split(f"def {method}(")[1].split("\ndef ")[0]
    assert body.index('runtime.record("m.Prologue.forward.join")') < body.index("z = x + 1")
    assert body.index("z = x + 1") < body.index('runtime.wait("m.Prologue.forward.join")')


class _Index:
    """The run index as ``class_in`` reads it: ``pkg.model`` imports ``Prologue`` from ``pkg.ops`` (which
    defines it), ``Twice`` from two places, ``Reexported`` from a module that only imports it."""

    imports = {"pkg.model": {"Prologue": (".ops", "Prologue"), "Reexported": (".ops", "Reexported")}}
    submodules = {"pkg.ops:Prologue": {}, "pkg.model:Attention": {"pre": "Prologue", "again": "Reexported"}}

    def package_of(self, module: str) -> str:
        return module.rpartition(".")[0]

    def key_of(self, dotted: str) -> str:
        return dotted


def test_a_written_class_is_read_through_the_writing_modules_imports() -> None:
    index = _Index()
    assert class_in(index, "pkg.model", "Prologue") == "pkg.ops:Prologue"
    assert class_in(index, "pkg.model", "Reexported") is None  # pkg.ops defines no such class
    assert class_in(index, "pkg.model", "Twice") is None  # not imported with certainty
    assert class_in(index, "pkg.other", "Prologue") is None  # a module the run did not read


CALLER = """\
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .model import Attention


def prepare(m: "Attention", x):
    return m.pre.forward(x), m.again(x)
"""


@pytest.mark.parametrize("wired", [True, False])
def test_another_modules_owner_resolves_only_through_class_in(wired: bool) -> None:
    tree = ast.parse(CALLER)
    fn = tree.body[-1]
    assert isinstance(fn, ast.FunctionDef)
    resolver = Resolver(
        module="pkg.prepare",
        owner=None,
        callees={"pkg.ops:Prologue.forward": object(), "pkg.ops:Reexported.forward": object()},
        submodules=_Index.submodules,
        bindings=module_bindings(tree, "pkg"),
        module_names=module_level_names(tree),
        function=fn,
        receiver=None,
        class_in=(lambda module, written: class_in(_Index(), module, written)) if wired else None,
    )
    first, second = (resolver.resolve(c) for c in ast.walk(fn) if isinstance(c, ast.Call))
    assert (first.key, first.receiver) == ("pkg.ops:Prologue.forward", "m.pre") if wired else first is None
    assert second is None
