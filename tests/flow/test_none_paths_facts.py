"""Which callables never return None, and which branches the paths under one guard leave out."""

from __future__ import annotations

import ast
import textwrap

import pytest

from codegen.index import scan
from codegen.lower.flow.guard_paths import Assumed, pruned
from codegen.lower.flow.none_facts import never_none

MODULE = """
class M:
    def sure(self, x) -> tuple[torch.Tensor, torch.Tensor]:
        return x, x

    def tensor(self, x) -> torch.Tensor:
        return x * 2

    def optional(self, x) -> torch.Tensor | None:
        return x

    def bare(self, x):
        return x

    def explicit(self, x) -> torch.Tensor:
        if x.numel() == 0:
            return None
        return x

    def either(self, x) -> torch.Tensor:
        return x if x.numel() else None

    def off_the_end(self, x) -> torch.Tensor:
        if x.numel():
            return x

    def forward(self, x) -> torch.Tensor:
        return x
"""


def test_only_callables_that_surely_return_a_value_give_facts() -> None:
    found = never_none(ast.parse(MODULE), "M.forward", "self")
    assert set(found) == {"self.sure", "self.tensor", "self.forward"}


def _pruned(body: str, stable: bool = True) -> str | None:
    tree = ast.parse(textwrap.dedent(MODULE) + "\n\ndef caller(self, x):\n" + textwrap.indent(body, "    "))
    fn = scan.functions_by_qualname(tree)["caller"]
    returns = never_none(tree, "M.forward", "self")
    assumed = Assumed(key="self.on", key_of=lambda dotted, line: dotted if stable else None, returns=returns)
    out = pruned(fn, assumed)
    return None if out is None else ast.unparse(out)


def test_the_guard_and_the_none_test_both_go() -> None:
    body = "q = None\nif self.on: q, s = self.sure(x)\nif q is None:\n    q = x\nreturn self.side(q)\n"
    assert _pruned(body) == "def caller(self, x):\n    q = None\n    q, s = self.sure(x)\n    return self.side(q)"


def test_is_not_none_keeps_its_body() -> None:
    body = "q = self.tensor(x)\nif q is not None:\n    y = 1\nelse:\n    y = 2\nreturn y\n"
    assert _pruned(body) == "def caller(self, x):\n    q = self.tensor(x)\n    y = 1\n    return y"


@pytest.mark.parametrize(
    "body",
    [
        "q = self.tensor(x)\nq = f(x)\nif q is None:\n    q = x\n",  # rebound on the way
        "q = self.optional(x)\nif q is None:\n    q = x\n",  # may return None
        "q = self.tensor(x)\nfor i in x:\n    q = None\nif q is None:\n    q = x\n",  # a loop rebinds it
        "q = self.tensor(x)\nwith c() as q:\n    pass\nif q is None:\n    q = x\n",  # ``with ... as``
        "q = self.tensor(x)\ndef q():\n    pass\nif q is None:\n    q = x\n",  # a definition rebinds it
        "q = self.tensor(x)\ndef g():\n    nonlocal q\n    q = None\ng()\nif q is None:\n    q = x\n",
        "if self.off: q = self.tensor(x)\nelse: q = None\nif q is None:\n    q = x\n",  # another guard
    ],
)
def test_anything_else_keeps_every_branch(body: str) -> None:
    assert _pruned(body) is None


def test_a_guard_the_caller_may_change_keeps_its_branches() -> None:
    assert _pruned("if self.on: y = 1\nreturn y\n", stable=False) is None
    assert _pruned("if not self.on: y = 1\nelse: y = 2\nreturn y\n") == "def caller(self, x):\n    y = 2\n    return y"


def test_a_callable_the_caller_shadows_gives_no_fact() -> None:
    module = "def make(x) -> torch.Tensor:\n    return x\n\n\ndef caller(make, x):\n    q = make(x)\n"
    module += "    if q is None:\n        q = x\n"
    tree = ast.parse(module)
    fn = scan.functions_by_qualname(tree)["caller"]
    assumed = Assumed(key="self.on", key_of=lambda dotted, line: dotted, returns=never_none(tree, "caller", None))
    assert "make" in assumed.returns
    assert pruned(fn, assumed) is None
