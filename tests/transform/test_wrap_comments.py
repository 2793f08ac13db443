"""Blank and comment lines between two calls on one side stream do not split their ``with``.

Real engine code comments its steps: ``y = self.a(x)``, a blank line, ``# then b``, ``z = self.b(y)``, both on
"side". The plan runs the two in one block (one fork, one join); the rewriters used to keep a statement with
lines above it out of the ``with`` before it, which spelled the block as two switches. The lines now move inside
the one ``with``, above the statement they were above, on the text path and on libcst's alike; a statement
between that the second call may not be issued above (``hoist.py``: it writes in place what that call reads) still
keeps two blocks. Every case runs under the race checker and equals the undecorated arithmetic.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from codegen.rewrite import splice
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    @on_stream("side")
    def a(self, x):
        return x * 2

    @on_stream("side")
    def b(self, x):
        return x + 1

    def commented(self, x):
        y = self.a(x)

        # then b on the same stream
        z = self.b(y)
        w = x - 1
        return z + w

    def outdented(self, x):
        y = self.a(x)
# a comment at the margin
        z = self.b(y)
        w = x - 1
        return z + w

    def statement_between(self, x):
        y = self.a(x)
        # the caller's own work
        v = x * 4
        y.mul_(1)
        z = self.b(y)
        w = x - 1
        return z + w + (v - v)

""" + caller_source()

_ONE = ["commented", "outdented"]


def _both(target: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    text = transform_source(SOURCE, path="m.py", target=target)
    with monkeypatch.context() as patched:
        patched.setattr(splice, "rewrite_unit", lambda *_: None)
        return text, transform_source(SOURCE, path="m.py", target=target)


@pytest.mark.parametrize("method", _ONE)
def test_lines_between_move_inside_one_with(method: str) -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), method)
    assert body.count("runtime.stream(") == 1
    head, inside = body.split('with runtime.stream("side", 0):\n', 1)
    comment = next(line for line in body.splitlines() if line.lstrip().startswith("#"))
    assert comment in inside and inside.index(comment) < inside.index("z = self.b(y)")
    assert inside.index("y = self.a(x)") < inside.index(comment)


def test_the_blank_line_stays_above_the_comment() -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), "commented")
    assert "y = self.a(x)\n\n            # then b on the same stream\n            z = self.b(y)\n" in body


def test_a_statement_between_keeps_two_blocks() -> None:
    body = method_source(transform_source(SOURCE, path="m.py", target="portable"), "statement_between")
    assert body.count("runtime.stream(") == 2


@pytest.mark.parametrize("target", ["portable", "aclgraph", "ge", "npugraph_ex", "cuda"])
def test_text_and_libcst_print_the_same(target: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text, libcst = _both(target, monkeypatch)
    assert text == libcst


@pytest.mark.parametrize("target", ["portable", "ge"])
@pytest.mark.parametrize("method", [*_ONE, "statement_between"])
def test_race_free_and_exact(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    got = run_checked(code, target, lambda m: m.Caller(method), (x,))
    torch.testing.assert_close(got, (x * 2 + 1) + (x - 1))
