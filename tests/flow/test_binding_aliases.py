"""Names that may share memory are read per binding (``codegen/lower/flow/binding_aliases.py``).

``c = x.view(-1)`` and, later, ``c = y.view(-1)``: ``c`` may be ``x`` or ``y``, but ``x`` is not ``y``. The union of
every name a binding links (main before this change) tied ``x`` to ``y`` through ``c``, so a side call reading ``y``
was joined before the caller wrote ``x``; likewise two results of a function the run cannot read given one ``rows``
(``a = extlib.pick(x, rows)``, ``b = extlib.pick(y, rows)``) tied ``x`` to ``y``, and a function of the run binding
one name to two parameters returned both (``run_results.py``). Now the side call overlaps the write, and a write
through the rebound name (``c.add_(1)`` after ``c = y.view(-1)``) still waits. Each case is generated for every
target, run race-checked, and compared exactly with the same arithmetic on one stream.
"""

from __future__ import annotations

import ast
import itertools
import sys
from pathlib import Path

import pytest
import torch
from corpus.matrix import run_generated
from method_caller import caller_source
from method_source import method_source

from codegen.driver.run import read_sources, run
from codegen.lower.flow.binding_aliases import binding_groups
from npudsl.testing.targets import _RecordStream

STANDIN = """\
def pick(t, rows):
    return t[:rows]
"""

MODEL = """\
import torch
import extlib
from torch import nn
from npudsl import on_stream


def rebound(t, u):
    c = t.view(-1)
    c = u.view(-1)
    return t


class Model(nn.Module):
    @on_stream("side")
    def side(self, x):
        return x * 2

    def rebound_name(self, x):
        y = x + 1
        c = x.view(-1)
        r = self.side(y)
        z = torch.ones(x.shape) * 3
        c = y.view(-1)
        x.add_(1)
        return r + x + z + c.view(x.shape)

    def written_through_rebound_name(self, x):
        y = x + 1
        c = x.view(-1)
        r = self.side(y)
        z = torch.ones(x.shape) * 3
        c = y.view(-1)
        c.add_(1)
        return r + y + z

    def shared_rows(self, x):
        y = x + 1
        rows = x.shape[0]
        a = extlib.pick(x, rows)
        b = extlib.pick(y, rows)
        r = self.side(b)
        z = torch.ones(x.shape) * 3
        x.add_(1)
        return r + a + z

    def run_function_rebinding(self, x):
        y = x + 1
        w = rebound(x, y)
        r = self.side(y)
        z = torch.ones(x.shape) * 3
        w.add_(1)
        return r + x + z
""" + caller_source()

INIT = """\
from . import model


def build(method):
    return model.Caller(method)
"""

OVERLAPPED = {  # method -> the write the side call now overlaps (main joined before it)
    "rebound_name": "x.add_(1)",
    "shared_rows": "x.add_(1)",
    "run_function_rebinding": "w.add_(1)",
}
METHODS = [*OVERLAPPED, "written_through_rebound_name"]
TARGETS = ("portable", "aclgraph", "ge", "npugraph_ex", "cuda")
_COUNT = itertools.count()


def _groups(source: str) -> dict[str, frozenset[str]]:
    return binding_groups(ast.parse(source).body[0])


def test_a_rebound_name_links_neither_value_to_the_other() -> None:
    groups = _groups("def f(x, y):\n    c = x.view(-1)\n    c = y.view(-1)\n")
    assert groups["x"] == {"x", "c"} and groups["y"] == {"y", "c"} and groups["c"] == {"c", "x", "y"}


def test_a_chain_of_views_stays_one_memory() -> None:
    groups = _groups("def f(x):\n    a = x.view(-1)\n    b = a[0]\n    d, e = b, x\n")
    assert groups["x"] == {"x", "a", "b", "d", "e"} and groups["d"] == groups["x"]


def test_a_shared_argument_links_the_results_not_the_other_arguments() -> None:
    fn = ast.parse("def f(x, y, rows):\n    a = g(x, rows)\n    b = g(y, rows)\n").body[0]
    first, second = fn.body  # type: ignore[attr-defined]
    groups = binding_groups(
        fn, [(first, frozenset({"a"}), frozenset({"x", "rows"})), (second, frozenset({"b"}), frozenset({"y", "rows"}))]
    )
    assert groups["x"] == {"x", "a"} and groups["y"] == {"y", "b"}
    assert groups["b"] == {"b", "y", "rows", "a"}, "a and b may both be rows"


def _generated(tmp_path: Path, target: str) -> tuple[str, str]:
    """(the generated package's name, its ``model.py``), under ``tmp_path / "out"`` with the stand-in."""
    name = f"bindalias_{target}_{next(_COUNT)}"
    folder = tmp_path / "out" / name
    folder.mkdir(parents=True)
    (tmp_path / "out" / "extlib.py").write_text(STANDIN, encoding="utf-8")
    (folder / "__init__.py").write_text(INIT, encoding="utf-8")
    (folder / "model.py").write_text(MODEL, encoding="utf-8")
    result = next(iter(run(read_sources([(str(folder / "model.py"), str(folder))]), target=target, jobs=1)))
    assert not result.has_errors and result.code is not None, result.internal_error
    loaded = ast.unparse(ast.fix_missing_locations(_RecordStream().visit(ast.parse(result.code))))
    (folder / "model.py").write_text(loaded, encoding="utf-8")  # ``record_stream`` through the stand-ins
    return name, result.code


def _want(method: str, x: torch.Tensor) -> torch.Tensor:
    """The same arithmetic, on one stream."""
    if method == "written_through_rebound_name":
        return (x + 1) * 2 + (x + 1 + 1) + 3  # ``c.add_(1)`` adds to ``y = x + 1``
    return (x + 1) * 2 + (x + 1) + 3 + (x + 1 if method == "rebound_name" else 0)


@pytest.mark.parametrize("method", OVERLAPPED)
def test_the_side_call_overlaps_a_write_of_other_memory(tmp_path: Path, method: str) -> None:
    """Main waited for the side call before the write; now the wait comes at the return, after the write."""
    body = method_source(_generated(tmp_path, "portable")[1], method)
    write = OVERLAPPED[method]
    assert body.index("runtime.stream(") < body.index(write) < body.rindex('runtime.wait("') < body.index("return")
    assert body.count('runtime.wait("') == 2  # the fork's and the return's


def test_a_write_through_the_rebound_name_still_waits(tmp_path: Path) -> None:
    body = method_source(_generated(tmp_path, "portable")[1], "written_through_rebound_name")
    assert body.index("z = ") < body.rindex("runtime.wait(") < body.index("c.add_(1)")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", METHODS)
def test_race_free_and_exact(tmp_path: Path, method: str, target: str) -> None:
    name, _ = _generated(tmp_path, target)
    x = torch.randn(3, 4)
    native = target in ("cuda", "npugraph_ex")
    try:
        got = run_generated(name, tmp_path / "out", target, lambda: (x.clone(),), eager_first=native, method=method)
    finally:
        sys.modules.pop("extlib", None)
    torch.testing.assert_close(got, _want(method, x), rtol=0, atol=0)
