"""A torch container built from children ``__init__`` holds in a local first reads them by their ``forward``.

``layer = Block(); self.enc = nn.TransformerEncoder(layer, 2)`` and ``blocks = [Block() for _ in range(2)];
self.seq = nn.Sequential(*blocks)``: a name or ``*blocks`` was a child nothing says of (``container_children.py``),
so the container's call was taken to write every state under it and a side call reading ``self.seq[0].lin.weight``
was joined before it (main: the wait before ``w = self.seq(z)``, no overlap). ``init_locals.py`` reads the call
through locals bound once (to a class's call; to a list display or comprehension read nowhere else): children that
only read keep the overlap, and one whose ``forward`` writes its buffer (``Counting``) still makes the call wait.
(``TransformerEncoder`` is checked in the generated code only: its ``forward`` reads ``self_attn`` of its first
layer, which these layers lack.)
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from npudsl.testing.targets import run_checked

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        with torch.no_grad():
            self.lin.weight.fill_(0.5)
            self.lin.bias.fill_(0.1)

    def forward(self, x, *args, **kwargs):
        return self.lin(x)


class Counting(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("seen", torch.zeros(3))

    def forward(self, x, *args, **kwargs):
        self.seen.add_(1)
        return x + self.seen


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        layer = Block()
        self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        blocks = [Block() for _ in range(2)]
        self.seq = nn.Sequential(*blocks)
        counting = Counting()
        self.cenc = nn.TransformerEncoder(counting, 2, enable_nested_tensor=False)
        listed = [Block(), Counting()]
        self.cseq = nn.Sequential(*listed)

    @on_stream("side")
    def side_enc(self, x):
        return x * self.enc.layers[0].lin.weight[0]

    @on_stream("side")
    def side_seq(self, x):
        return x * self.seq[0].lin.weight[0]

    @on_stream("side")
    def side_cenc(self, x):
        return x * self.cenc.layers[0].seen

    @on_stream("side")
    def side_cseq(self, x):
        return x * self.cseq[1].seen

    def enc_kept(self, x):
        y = self.side_enc(x)
        z = x * 5
        w = self.enc(z)
        return y + z + w

    def seq_kept(self, x):
        y = self.side_seq(x)
        z = x * 5
        w = self.seq(z)
        return y + z + w

    def enc_waits(self, x):
        y = self.side_cenc(x)
        z = x * 5
        w = self.cenc(z)
        return y + z + w

    def seq_waits(self, x):
        y = self.side_cseq(x)
        z = x * 5
        w = self.cseq(z)
        return y + z + w
""" + caller_source()

KEPT = {"enc_kept": "w = self.enc(z)", "seq_kept": "w = self.seq(z)"}
WAITS = {"enc_waits": "w = self.cenc(z)", "seq_waits": "w = self.cseq(z)"}


def _body(method: str) -> str:
    return method_source(transform_source(SOURCE, path="m.py", target="portable"), method)


@pytest.mark.parametrize("method", KEPT)
def test_children_that_only_read_keep_the_overlap(method: str) -> None:
    body = _body(method)
    assert body.index('runtime.stream("side"') < body.index(KEPT[method]) < body.rindex("runtime.wait("), body


@pytest.mark.parametrize("method", WAITS)
def test_a_child_writing_its_state_waits(method: str) -> None:
    body = _body(method)
    assert body.rindex("runtime.wait(", 0, body.index(WAITS[method])) > body.index('runtime.stream("side"'), body


@pytest.mark.parametrize("target", ["portable", "aclgraph", "cuda"])
@pytest.mark.parametrize("method", ["seq_kept", "seq_waits"])
def test_race_free(method: str, target: str) -> None:
    code = transform_source(SOURCE, path="m.py", target=target)
    x = torch.randn(2, 3)
    reference = transform_source(SOURCE.replace('@on_stream("side")', ""), path="m.py", target=target)
    eager = target == "cuda"  # its events are made on a first eager step
    expected = run_checked(reference, target, lambda m: m.Caller(method), (x,), eager_first=eager)
    got = run_checked(code, target, lambda m: m.Caller(method), (x,), eager_first=eager)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
