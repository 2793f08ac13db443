"""What a dropout hands back is its input: a write through the result writes the input; and an in-place dropout
writes only in training.

``d = F.dropout(t, 0.1, training=self.training)`` is ``t`` itself in eval (ATen's ``dropout`` runs no op and hands
its input back), so ``d.add_(1)`` writes ``t``; on main the result counted as new memory, and the write was not
joined with a side call still reading ``t``: "tensor 't' is read on stream 'side' ... and written in place on
stream 'default' with no wait in between". The same holds for ``torch.dropout``, ``torch.feature_dropout``,
``F.alpha_dropout`` (whose ``training`` is False unless given) and ``torch.conj_physical`` of a real tensor: their
ATen ops are composites that hand the input back (``aten_probe.py``, the table's ``TORCH_PASSED``; ``F``'s from
``PASSED``), read by ``foreign_writes.foreign_results`` through ``torch_functional.handed_back_args``.

An in-place dropout writes its input only in training: ``F.dropout``'s body runs ``_VF.dropout_(input, p, training)``
under ``if inplace``, and its runs find ``training`` needed too (``input:inplace:training``), so
``F.dropout(t, 0.1, False, self.inplace)`` writes nothing: the side call reading ``t`` is no longer joined before it.
"""

from __future__ import annotations

import pytest
import torch
from method_caller import caller_source
from method_source import method_source

from codegen.driver.api import transform_source
from codegen.lower.flow import torch_functional_table as table
from npudsl.testing.targets import run_checked

MODEL = """\
import torch
from torch import nn
import torch.nn.functional as F
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.train(False)
        self.inplace = True

    @on_stream("side")
    def side(self, x):
        return x * 3

    def written(self, x):
        t = x * 2
        y = self.side(t)
        d = HANDED
        d.add_(1)
        return y + d

    def eval_inplace(self, x):
        t = x * 2
        y = self.side(t)
        d = F.dropout(t, 0.1, False, self.inplace)
        return y + d
"""
HANDED = {
    "F.dropout": "F.dropout(t, 0.1, training=self.training)",
    "torch.dropout": "torch.dropout(t, 0.1, self.training)",
    "torch.feature_dropout": "torch.feature_dropout(t, 0.1, False)",
    "F.alpha_dropout": "F.alpha_dropout(t, 0.1)",
    "torch.conj_physical": "torch.conj_physical(t)",
}
JOIN = 'runtime.wait("m.Model.side.join")'


def _source(handed: str = "F.dropout") -> str:
    return MODEL.replace("HANDED", HANDED[handed]) + caller_source()


def test_the_table_reads_what_torch_hands_back_and_when_dropout_writes() -> None:
    torch_passed = getattr(table, "TORCH_PASSED", {})
    assert torch_passed.get("dropout", "").endswith("| input:p input:train")
    assert torch_passed.get("feature_dropout", "").endswith("| input:p input:train")
    assert torch_passed.get("conj_physical") == "input@0 | input"
    assert table.FUNCTIONS["dropout"].endswith("| input:inplace:training")


@pytest.mark.parametrize("handed", HANDED)
def test_a_write_through_the_result_waits(handed: str) -> None:
    body = method_source(transform_source(_source(handed), path="m.py", target="portable"), "written")
    assert body.index(JOIN) < body.index("d.add_(1)"), body


def test_an_eval_inplace_dropout_keeps_the_overlap() -> None:
    body = method_source(transform_source(_source(), path="m.py", target="portable"), "eval_inplace")
    assert body.index("d = F.dropout(") < body.index(JOIN), body


@pytest.mark.parametrize("target", ["portable", "aclgraph"])
@pytest.mark.parametrize("case", [*(("written", h) for h in HANDED), ("eval_inplace", "F.dropout")])
def test_race_free(case: tuple[str, str], target: str) -> None:
    method, handed = case
    source = _source(handed)
    x = torch.randn(2, 3)
    reference = transform_source(source.replace('@on_stream("side")', ""), path="m.py", target=target)
    expected = run_checked(reference, target, lambda m: m.Caller(method), (x,))
    got = run_checked(transform_source(source, path="m.py", target=target), target, lambda m: m.Caller(method), (x,))
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
