"""Which files a run reads for return facts, and when it parses them (``codegen/index/return_files.py``).

A decorated module that calls a function it imports from its own package (``from .ops import grouped``) sees
what it returns on GE; the file is read once, parsed only when a lowering asks (targets that never ask never
parse it), and a file that merely names the function (a re-export) or a module the importer never names again
is not read.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from codegen.driver.run import SourceFile, discover, index_run, read_sources, run
from codegen.index import pending
from frontend_util import write_tree

OPS = """
import torch


def grouped(rows: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    return torch.mm(rows, weights)
"""

META = """
class Meta:
    def forward(self) -> int:
        return 1
"""

MODEL = """
import torch
from npudsl import after, on_stream, records

from .meta import Meta  # noqa: F401  (never used again)
from .ops import grouped


class M(torch.nn.Module):
    @on_stream("side", sync="manual")
    @records("done")
    def mlp(self, x: torch.Tensor) -> torch.Tensor:
        return grouped(x, x)

    @after("done")
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y
"""

LINEAR = """
import torch
from torch import nn


class Linear(nn.Linear):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, None]:
        return super().forward(x), None
"""

WEIGHTS = """
from torch import nn

from .linear import Linear


class Weights(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = Linear(4, 4)
"""

DERIVED = """
import torch
from npudsl import after, on_stream, records

from .weights import Weights


class D(Weights):
    @on_stream("side", sync="manual")
    @records("projected")
    def project(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x)[0]

    @after("projected")
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x
"""


def _files(tmp_path: Path, tree: dict[str, str]) -> list[SourceFile]:
    write_tree(tmp_path, {"pkg/__init__.py": "from .ops import grouped  # re-exported\n", **tree})
    return read_sources(discover([str(tmp_path)]))


def _parses(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The functions of each file the index parsed only when asked, in order."""
    seen: list[list[str]] = []
    returns = pending.function_returns

    def counted(tree: ast.Module) -> dict[str, str]:
        seen.append([n.name for n in tree.body if isinstance(n, ast.FunctionDef)])
        return returns(tree)

    monkeypatch.setattr(pending, "function_returns", counted)
    return seen


def test_an_imported_module_is_parsed_once_and_only_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = _files(tmp_path, {"pkg/ops.py": OPS, "pkg/meta.py": META, "pkg/model.py": MODEL})
    parsed = _parses(monkeypatch)
    index = index_run(files)
    assert parsed == []  # read, not parsed: no lowering has asked yet
    assert index.returns["pkg.ops"] == {"grouped": "torch.Tensor"}
    assert index.returns.get("pkg.ops") == {"grouped": "torch.Tensor"}
    assert parsed == [["grouped"]]  # once
    assert set(index.returns) == {"pkg.model", "pkg.ops"}  # not ``meta`` (unused), nor ``__init__`` (re-exports)


def test_targets_that_never_ask_never_parse_and_ge_keeps_the_fact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _files(tmp_path, {"pkg/ops.py": OPS, "pkg/model.py": MODEL})
    parsed = _parses(monkeypatch)
    model = [r for r in run(files, target="aclgraph", jobs=1) if r.file.path.endswith("model.py")][0]
    assert model.code is not None and parsed == []
    ge = [r for r in run(files, target="ge", jobs=1) if r.file.path.endswith("model.py")][0]
    assert ge.code is not None and '_EVENT_TOKENS["pkg.model.M.done"] = out' in ge.code
    assert parsed == [["grouped"]]


def test_the_file_of_a_base_class_reads_where_its_submodules_come_from(tmp_path: Path) -> None:
    """``class D(Weights)``: ``weights.py`` assigns ``self.proj = Linear(...)``, ``Linear`` from ``linear.py``:
    the run reads both, so ``self.proj(x)[0]`` is known to be a tensor on GE."""
    files = _files(
        tmp_path, {"pkg/ops.py": OPS, "pkg/linear.py": LINEAR, "pkg/weights.py": WEIGHTS, "pkg/derived.py": DERIVED}
    )
    index = index_run(files)
    assert index.submodules["pkg.weights:Weights"] == {"proj": "Linear"}
    assert index.returns["pkg.linear"] == {"Linear.forward": "tuple[torch.Tensor, None]"}
    derived = [r for r in run(files, target="ge", jobs=1) if r.file.path.endswith("derived.py")][0]
    assert derived.code is not None and '_EVENT_TOKENS["pkg.derived.D.projected"] = out' in derived.code


GATE = """
import torch
from torch import nn


class Gate(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2
"""

HELPER = """
import torch
from npudsl import on_stream


@on_stream("side")
def run_side(x: torch.Tensor) -> torch.Tensor:
    return x + 1
"""

CALLER = """
import torch
from torch import nn

from .gate import Gate
from .helper import run_side


class M(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gate = Gate()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * 3
        logits = self.gate(x)
        y = run_side(h)
        return logits + y
"""

TWIN = """
from .gate import Gate

TWIN = Gate
"""


def test_a_callers_imports_are_read_whatever_else_the_run_holds(tmp_path: Path) -> None:
    """The caller of a stream function in another file (``model.py`` calls ``run_side`` of ``helper.py``) has its
    own relative imports read for return facts: its GE fork orders after ``logits`` (``self.gate`` returns a
    tensor) whether or not another file of the run happens to import ``gate.py`` (an undecorated twin did)."""
    code = {}
    for name, extra in (("alone", {}), ("with_twin", {"pkg/twin.py": TWIN})):
        files = _files(tmp_path / name, {"pkg/gate.py": GATE, "pkg/helper.py": HELPER, "pkg/model.py": CALLER, **extra})
        model = [r for r in run(files, target="ge", jobs=1) if r.file.path.endswith("model.py")][0]
        assert model.code is not None
        code[name] = model.code
    assert code["alone"] == code["with_twin"]
    assert "torchair.scope.npu_wait_tensor(h, logits)" in code["alone"]
