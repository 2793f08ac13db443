"""Which parameters a function surely reads in an op (``codegen/index/used_params.py``), and which every caller of a
private function reads again after the call (``codegen/index/held_params.py``).

A read counts only where it is an op on every path: not under a guard, not only metadata, not inside a lambda, not
in a statement that calls a stream function (another stream reads it there), not after a rebinding; a view is
followed to its use, and a call into a function or private method of the module counts where that one surely reads
its parameter.
"""

from __future__ import annotations

import ast
from pathlib import Path

import attrs
import pytest

from codegen.driver.run import index_run, read_sources
from codegen.index import scan
from codegen.index.held_params import held_by_callers
from codegen.index.used_calls import Scope
from codegen.index.used_params import surely_used

SOURCE = """
import torch
from torch import nn
from npudsl import on_stream


def rotate(x, c):
    v = c.view(-1)
    return x * v


def guarded(x, c, on):
    if on:
        return x * c
    return x


def shape_only(x, c):
    return x.new_zeros(c.shape)


def later(x, c):
    f = lambda: x * c
    return f


def rebound(x, c):
    c = x
    return x * c


def both_branches(x, c, on):
    if on:
        y = c + 1
    else:
        y = torch.neg(c)
    return y


def through_call(x, c):
    return rotate(x, c)


class M(nn.Module):
    @on_stream("side")
    def side(self, c):
        return c * 2

    def aside(self, x, c):
        y = self.side(c)
        return y

    def _use(self, c):
        return -c

    def by_method(self, x, c):
        return self._use(c)

    def _prolog(self, x: torch.Tensor, c: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
        y = self.side(c)
        return y + x

    def forward(self, x):
        c = x * 1
        d = x * 2
        out = self._prolog(x, c, d)
        if out.shape[0] > 1:
            out = out + 1
        return rotate(out, c)

    def other(self, x):
        c = x * 1
        d = x * 2
        out = self._prolog(x, c, d)
        return out * c + d
"""


@pytest.fixture(scope="module")
def scope(tmp_path_factory: pytest.TempPathFactory) -> Scope:
    root = tmp_path_factory.mktemp("used")
    path = Path(root, "m.py")
    path.write_text(SOURCE, encoding="utf-8")
    index = index_run(read_sources([(str(path), str(root))]))
    (module,) = index.modules
    return Scope(index=index, module=module, tree=index.returns.tree_of(module) or ast.parse(SOURCE))


def _used(scope: Scope, qualname: str) -> frozenset[str]:
    fn = scan.functions_by_qualname(scope.tree)[qualname]
    owner = qualname.rpartition(".")[0] or None
    receiver = fn.args.args[0].arg if owner else None
    return surely_used(attrs.evolve(scope, owner=owner, receiver=receiver), fn)


@pytest.mark.parametrize(
    ("qualname", "used"),
    [
        ("rotate", {"x", "c"}),
        ("guarded", set()),
        ("shape_only", set()),
        ("later", set()),
        ("rebound", {"x"}),
        ("both_branches", {"c"}),
        ("through_call", {"x", "c"}),
        ("M.aside", set()),
        ("M.by_method", {"c"}),
    ],
)
def test_surely_used(scope: Scope, qualname: str, used: set[str]) -> None:
    assert _used(scope, qualname) & {"x", "c"} == used


def test_every_caller_reads_it_again(scope: Scope) -> None:
    fn = scan.functions_by_qualname(scope.tree)["M._prolog"]
    # forward reads c after (past the end of an ``if``), other reads c and d; d: forward does not
    assert held_by_callers(scope.index, (scope.module, scope.tree), "M._prolog", fn) == {"c"}


def test_a_public_function_has_no_fact(scope: Scope) -> None:
    fn = scan.functions_by_qualname(scope.tree)["M.aside"]
    assert held_by_callers(scope.index, (scope.module, scope.tree), "M.aside", fn) == frozenset()
