"""GE: a function imported by absolute name from a module of the package (``from pkg_abs.ops import grouped``) says
what it returns as one imported relatively does, together and alone (``codegen/index/pending.py``: the run's return
facts read a module no relative import named through ``Returns.tree_of``, as ``called_function.py`` already read
its body).

Before, such a call was no certain tensor: the event kept ``record()`` and its waiter a ``wait``, one call more than
needed. The tokens now are the results (``grouped`` returns ``torch.mm(...)``; ``twice`` calls it), and the race
checker, told to trust only the waits the code states (``data_edges="explicit"``), finds the waiter ordered after
each body; a function returning its input (``ident``) keeps ``record()``, which orders after the body's write.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest
import torch

from codegen.driver.run import read_sources, run
from npudsl.testing.targets import run_checked

OPS = """\
import torch


def ident(t: torch.Tensor) -> torch.Tensor:
    return t


def grouped(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.mm(a, b)


def twice(t: torch.Tensor) -> torch.Tensor:
    return grouped(t, t)
"""

MODEL = """\
import torch
from npudsl import after, on_stream, records

from pkg_abs.ops import grouped, ident, twice


class M(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("buf", torch.ones(4, 4))

    @on_stream("side", sync="manual")
    @records("same")
    def same(self, x: torch.Tensor) -> torch.Tensor:
        self.buf.mul_(2)
        return ident(x)

    @on_stream("side", sync="manual")
    @records("made")
    def made(self, x: torch.Tensor) -> torch.Tensor:
        return grouped(x, x)

    @on_stream("side", sync="manual")
    @records("doubled")
    def doubled(self, x: torch.Tensor) -> torch.Tensor:
        return twice(x)

    @after("same", "made", "doubled")
    def combine(self, x: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return x + self.buf + a + b

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.same(x)
        a = self.made(x)
        b = self.doubled(x)
        return self.combine(y, a, b)
"""


def _code(tmp_path: Path, *, alone: bool) -> str:
    folder = tmp_path / "pkg_abs"
    folder.mkdir()
    (folder / "__init__.py").write_text("", encoding="utf-8")
    (folder / "ops.py").write_text(OPS, encoding="utf-8")
    (folder / "model.py").write_text(MODEL, encoding="utf-8")
    names = ["model.py"] if alone else ["ops.py", "model.py"]
    results = run(read_sources([(str(folder / n), str(folder)) for n in names]), target="ge", jobs=1)
    (code,) = [r.code for r in results if r.file.path.endswith("model.py")]
    assert code is not None
    return code


def _token(code: str, event: str) -> str:
    line = next(x for x in code.splitlines() if f'["pkg_abs.model.M.{event}"] = ' in x and "_EVENT_TOKEN" in x)
    return line.split(" = ", 1)[1]


@pytest.mark.parametrize("alone", [False, True], ids=["together", "alone"])
def test_the_results_are_the_tokens_and_the_waiter_is_ordered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, alone: bool
) -> None:
    code = _code(tmp_path, alone=alone)
    tokens = {e: _token(code, e) for e in ("same", "made", "doubled")}
    assert tokens == {"same": "torchair.ops.record()", "made": "out", "doubled": "out"}  # before: all record()
    package, ops = types.ModuleType("pkg_abs"), types.ModuleType("pkg_abs.ops")
    exec(compile(OPS, "ops.py", "exec"), ops.__dict__)  # noqa: S102 (the test's own source)
    package.__path__ = [str(tmp_path / "pkg_abs")]
    monkeypatch.setitem(sys.modules, "pkg_abs", package)
    monkeypatch.setitem(sys.modules, "pkg_abs.ops", ops)
    x = torch.randn(4, 4)
    got = run_checked(code, "ge", lambda m: m.M(), (x.clone(),), data_edges="explicit")
    made = torch.mm(x, x)
    torch.testing.assert_close(got, x + 2 + made + made, rtol=0, atol=0)
