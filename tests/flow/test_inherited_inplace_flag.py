"""A torch layer whose ``inplace`` a base's ``__init__`` stores: ``nn.ReLU6(inplace=False)`` writes nothing.

``ReLU6``'s ``forward`` is ``Hardtanh``'s, ``F.hardtanh(input, self.min_val, self.max_val, self.inplace)``, and
``self.inplace = inplace`` is stored by ``Hardtanh.__init__``, reached from ``ReLU6.__init__`` through
``super().__init__(0.0, 6.0, inplace)``. The table read only the class's own ``__init__``, found no store there
and marked ``ReLU6`` as writing its input whatever it was built with: ``nn.ReLU6()`` then joined the side call
reading its input before it ran (a safe over-wait, no overlap). The base chain's ``super().__init__`` now passes
``inplace`` down (``functional_input_writes._constructor_flag``): ``nn.ReLU6()`` overlaps the side call again,
``nn.ReLU6(inplace=True)`` and ``nn.ReLU6(True)`` still wait for it, race-free on every target.

An in-place dropout writes its input only in training (``F.dropout``: ``input:inplace:training``), and the module's
mode is no constructor argument: ``eval()`` sets it at run time, and nothing says a captured model is in eval
(``npudsl.compile`` compiles what it is given, in either mode). So ``nn.Dropout(p, inplace=True)`` writes, as
``F.dropout(x, p, training=self.training, inplace=True)`` does.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from corpus.matrix import generated_files, run_generated
from method_caller import caller_source
from method_source import method_source

from codegen.lower.flow.torch_layer_writes_table import WRITES

MODEL = """\
import torch
from torch import nn
from npudsl import on_stream


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.plain = nn.ReLU6()
        self.named = nn.ReLU6(inplace=True)
        self.given = nn.ReLU6(True)
        self.drop = nn.Dropout(0.0, inplace=True)

    @on_stream("side")
    def send(self, x):
        return x.tanh()

    def by_plain(self, x):
        a = self.send(x)
        h = self.plain(x)
        return h + a

    def by_named(self, x):
        a = self.send(x)
        h = self.named(x)
        return h + a

    def by_given(self, x):
        a = self.send(x)
        h = self.given(x)
        return h + a

    def by_dropout(self, x):
        a = self.send(x)
        h = self.drop(x)
        return h + a
""" + caller_source()

INIT = """\
from . import model


def build(method):
    return model.Caller(method)
"""

CALLS = {
    "by_plain": "h = self.plain(x)",
    "by_named": "h = self.named(x)",
    "by_given": "h = self.given(x)",
    "by_dropout": "h = self.drop(x)",
}
WRITING = ("by_named", "by_given", "by_dropout")
EXPECTED = {
    "by_plain": lambda x: torch.clamp(x, 0, 6) + x.tanh(),
    "by_named": lambda x: torch.clamp(x, 0, 6) + x.tanh(),
    "by_given": lambda x: torch.clamp(x, 0, 6) + x.tanh(),
    "by_dropout": lambda x: x + x.tanh(),  # p = 0: the mask keeps every element
}


def _generated(tmp_path: Path, target: str) -> tuple[str, str]:
    name, codes = generated_files(tmp_path, "pkg_inherited_flag", {"__init__.py": INIT, "model.py": MODEL}, target)
    return name, codes["model.py"]


def _waits_for_the_side(text: str) -> bool:
    return any(line.strip().startswith("runtime.wait(") and 'send.join")' in line for line in text.splitlines())


def test_the_table_reads_relu6s_flag_through_hardtanh() -> None:
    assert WRITES["ReLU6"] == "input@0:inplace@0="  # was "input@0": written whatever the constructor was given
    assert WRITES["Hardtanh"] == "input@0:inplace@2="
    assert WRITES["Dropout"] == "input@0:inplace@1="  # in training only, which the run decides


def test_relu6_built_without_inplace_overlaps_the_side_read(tmp_path: Path) -> None:
    body = method_source(_generated(tmp_path, "portable")[1], "by_plain")
    before, after = body.split(CALLS["by_plain"])
    assert "runtime.stream" in before and not _waits_for_the_side(before) and _waits_for_the_side(after)


@pytest.mark.parametrize("method", WRITING)
def test_an_inplace_layer_waits_for_the_side_read(tmp_path: Path, method: str) -> None:
    body = method_source(_generated(tmp_path, "portable")[1], method)
    before, after = body.split(CALLS[method])
    assert (_waits_for_the_side(before) or "runtime.stream" not in before) and not _waits_for_the_side(after)


@pytest.mark.parametrize("target", ["portable", "aclgraph", "ge", "npugraph_ex", "cuda"])
@pytest.mark.parametrize("method", EXPECTED)
def test_race_free_and_exact(tmp_path: Path, method: str, target: str) -> None:
    name, _ = _generated(tmp_path, target)
    x = torch.randn(2, 3) * 8
    native = target in ("cuda", "npugraph_ex")  # a native stream is made outside the graph: run once eagerly
    got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), eager_first=native, method=method)
    torch.testing.assert_close(got, EXPECTED[method](x))
