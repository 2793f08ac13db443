"""GE: a recording body's returned call is its event's token only where the function called makes the value itself.

``return ident(x)`` with ``def ident(t: torch.Tensor) -> torch.Tensor: return t``: the annotation says a tensor,
but the call makes nothing, ``x`` was made before the body (by the caller), so ``_EVENT_TOKENS[tag] = out`` ordered
the waiter after the caller's work only, not after the body's ``self.buf.mul_(2)``: the race checker named both
lines (on main, same module and another file of the run alike; so did ``return self.pick(x)`` with a method
``pick`` of the class returning its input, ``return self.skip(x)`` with ``self.skip = nn.Identity()``, and
``return passthrough(d)`` with ``def passthrough(d) -> dict[str, torch.Tensor]: return d``, whose values were listed
as the token). Where the run can read the function called (its
module, another file of the run, or its package's file on disk), its own last work must make the one value it
returns, followed through the functions it calls in turn (``wrap`` calls ``ident``: no; ``twice`` calls
``grouped``, which returns ``torch.mm(...)``: yes); else ``record()`` stays. A function the run cannot read keeps
the premise of its annotation, as before.

Modules the run reaches only through ``index.returns.tree_of`` (a module of the package that no relative import
names, here ``from pkg_made.ops import ...``): ``index.returns`` reads their return annotations through ``tree_of``
too (``codegen/index/pending.py``), so they give the tokens a relative import gives, together and alone (before:
``record()`` for all four, a call more than needed; race-checked in ``test_ge_absolute_returns.py``).
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest
import torch

from codegen.driver.run import read_sources, run
from npudsl.testing.targets import run_checked
from targets_util import transform

SAME = """
import torch
from npudsl import after, on_stream, records


def ident(t: torch.Tensor) -> torch.Tensor:
    return t


class M(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("buf", torch.ones(4, 4))

    @on_stream("side", sync="manual")
    @records("e")
    def f(self, x: torch.Tensor) -> torch.Tensor:
        self.buf.mul_(2)
        return ident(x)

    @after("e")
    def g(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.buf

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.f(x)
        return self.g(y)
"""

OPS = """\
import torch


def ident(t: torch.Tensor) -> torch.Tensor:
    return t


def wrap(t: torch.Tensor) -> torch.Tensor:
    return ident(t)


def grouped(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.mm(a, b)


def twice(t: torch.Tensor) -> torch.Tensor:
    return grouped(t, t)
"""

MODEL = """\
import torch
from npudsl import after, on_stream, records

from IMPORTED import grouped, ident, twice, wrap


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
    @records("wrapped")
    def wrapped(self, x: torch.Tensor) -> torch.Tensor:
        self.buf.add_(1)
        return wrap(x)

    @on_stream("side", sync="manual")
    @records("made")
    def made(self, x: torch.Tensor) -> torch.Tensor:
        return grouped(x, x)

    @on_stream("side", sync="manual")
    @records("doubled")
    def doubled(self, x: torch.Tensor) -> torch.Tensor:
        return twice(x)

    @after("same", "wrapped", "made", "doubled")
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x
"""

RUN = """\
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.same(x)
        return self.g(y)

    @after("same")
    def g(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.buf
"""


def _token(code: str, module: str, event: str) -> str:
    line = next(x for x in code.splitlines() if f'["{module}.M.{event}"] = ' in x and "_EVENT_TOKEN" in x)
    return line.split(" = ", 1)[1]


METHOD = SAME.replace("return ident(x)", "return self.pick(x)").replace(
    "    @after", "    def pick(self, t: torch.Tensor) -> torch.Tensor:\n        return t\n\n    @after"
)
MADE = SAME.replace("return ident(x)", "return self.scaled(x)").replace(
    "    @after", "    def scaled(self, t: torch.Tensor) -> torch.Tensor:\n        return t * 1\n\n    @after"
)

IDENTITY = SAME.replace("return ident(x)", "return self.skip(x)").replace(
    '        self.register_buffer("buf", torch.ones(4, 4))\n',
    '        self.register_buffer("buf", torch.ones(4, 4))\n        self.skip = torch.nn.Identity()\n',
)


@pytest.mark.parametrize("source", [SAME, METHOD, IDENTITY], ids=["function", "method", "identity"])
def test_a_function_returning_its_input_is_no_token(source: str) -> None:
    assert _token(transform(source, "ge"), "m", "e") == "torchair.ops.record()"  # on main: ``out``, which is ``x``


def test_a_method_making_its_value_is_the_token() -> None:
    assert _token(transform(MADE, "ge"), "m", "e") == "out"


@pytest.mark.parametrize("source", [SAME, METHOD, IDENTITY, MADE], ids=["function", "method", "identity", "made"])
def test_a_function_returning_its_input_orders_the_waiter_after_the_body(source: str) -> None:
    x = torch.randn(4, 4)
    got = run_checked(transform(source, "ge"), "ge", lambda m: m.M(), (x.clone(),), data_edges="explicit")
    torch.testing.assert_close(got, x + 2, rtol=0, atol=0)


DICT = """
import torch
from npudsl import after, on_stream, records


def passthrough(d: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return d


def doubled(d: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {k: torch.mul(v, 1) for k, v in d.items()}


def packed(d: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    s = d["a"].abs()
    return {"a": torch.mul(d["a"], 1), "s": s}


class M(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("buf", torch.ones(4, 4))

    @on_stream("side", sync="manual")
    @records("e")
    def f(self, d: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        self.buf.mul_(2)
        return passthrough(d)

    @after("e")
    def g(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.buf

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.f({"a": x})
        return self.g(y["a"])
"""
DICT_MADE = DICT.replace("return passthrough(d)", "return doubled(d)")
DICT_DISPLAY = DICT.replace("return passthrough(d)", "return packed(d)")  # its last op makes a value of the display


def test_a_function_returning_its_input_dict_is_no_token() -> None:
    """``def passthrough(d) -> dict[str, torch.Tensor]: return d``: on main its values were the token."""
    assert _token(transform(DICT, "ge"), "m", "e") == "torchair.ops.record()"
    assert _token(transform(DICT_MADE, "ge"), "m", "e") == "[*out.values()] or [torchair.ops.record()]"
    assert _token(transform(DICT_DISPLAY, "ge"), "m", "e") == "[*out.values()] or [torchair.ops.record()]"


@pytest.mark.parametrize("source", [DICT, DICT_MADE, DICT_DISPLAY], ids=["passthrough", "made", "display"])
def test_a_returned_dict_orders_the_waiter_after_the_body(source: str) -> None:
    x = torch.randn(4, 4)
    got = run_checked(transform(source, "ge"), "ge", lambda m: m.M(), (x.clone(),), data_edges="explicit")
    torch.testing.assert_close(got, x + 2, rtol=0, atol=0)


def _package(tmp_path: Path, imported: str, model: str = MODEL) -> Path:
    folder = tmp_path / "pkg_made"
    folder.mkdir()
    (folder / "__init__.py").write_text("", encoding="utf-8")
    (folder / "ops.py").write_text(OPS, encoding="utf-8")
    (folder / "model.py").write_text(model.replace("IMPORTED", imported), encoding="utf-8")
    return folder


def _model_code(folder: Path, *, alone: bool) -> str:
    names = ["model.py"] if alone else ["ops.py", "model.py"]
    results = run(read_sources([(str(folder / n), str(folder)) for n in names]), target="ge", jobs=1)
    (code,) = [r.code for r in results if r.file.path.endswith("model.py")]
    assert code is not None
    return code


@pytest.mark.parametrize("alone", [False, True], ids=["together", "alone"])
def test_another_file_is_read_for_what_its_function_makes(tmp_path: Path, alone: bool) -> None:
    code = _model_code(_package(tmp_path, ".ops"), alone=alone)
    tokens = {e: _token(code, "pkg_made.model", e) for e in ("same", "wrapped", "made", "doubled")}
    assert tokens == {"same": "torchair.ops.record()", "wrapped": "torchair.ops.record()", "made": "out",
                      "doubled": "out"}  # fmt: skip


@pytest.mark.parametrize("alone", [False, True], ids=["together", "alone"])
def test_a_module_reached_only_through_tree_of_is_read_alike(tmp_path: Path, alone: bool) -> None:
    code = _model_code(_package(tmp_path, "pkg_made.ops"), alone=alone)
    tokens = {e: _token(code, "pkg_made.model", e) for e in ("same", "wrapped", "made", "doubled")}
    assert tokens == {"same": "torchair.ops.record()", "wrapped": "torchair.ops.record()", "made": "out",
                      "doubled": "out"}  # fmt: skip


@pytest.mark.parametrize("imported", [".ops", "pkg_made.ops"], ids=["relative", "absolute"])
@pytest.mark.parametrize("alone", [False, True], ids=["together", "alone"])
def test_race_free(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, imported: str, alone: bool) -> None:
    """``model.py`` runs as a module of its own, ``pkg_made.ops`` in place; the waiter reads the buffer that the
    body wrote in place, ordered only by the event (``data_edges="explicit"``)."""
    folder = _package(tmp_path, imported, MODEL.replace(MODEL[MODEL.index("    @after") :], RUN))
    package, ops = types.ModuleType("pkg_made"), types.ModuleType("pkg_made.ops")
    exec(compile(OPS, "ops.py", "exec"), ops.__dict__)  # noqa: S102 (the test's own source)
    package.__path__ = [str(folder)]
    monkeypatch.setitem(sys.modules, "pkg_made", package)
    monkeypatch.setitem(sys.modules, "pkg_made.ops", ops)
    code = _model_code(folder, alone=alone).replace("from .ops import", "from pkg_made.ops import")
    x = torch.randn(4, 4)
    got = run_checked(code, "ge", lambda m: m.M(), (x.clone(),), data_edges="explicit")
    torch.testing.assert_close(got, x + 2, rtol=0, atol=0)
