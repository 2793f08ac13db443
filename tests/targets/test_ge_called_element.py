"""GE: a recording body that ends by calling a function of another file orders its event on the element of the
returned tuple that function makes last (``codegen/lower/flow/ge_called.py``).

``return dispatch(x, ids, 4)``, where ``dispatch`` (another file) ends ``return rows, flat,
torch.cumsum(flat, 0).remainder(experts)`` (omni-infer's dispatch ends with its expert counts): the body's last work
is the call, and the call's last work is ``remainder``, so the token is ``out[2]`` (one call; before, ``record()``
and the waiter's ``wait``: two). Read from the run, or from the file on disk when the model's file is transformed
alone. The race checker, told to trust only the waits the code states (``data_edges="explicit"``), sees the waiter
ordered after the whole body, and a race where the token is another element: ``out[1]`` (a view of the input, made
first) or ``out[0]`` (made before ``remainder``). A last element that is a view of an input, that a user function
makes, a decorated callee, and a name the body binds itself keep ``record()``. (The entry's dispatch ends with
``bincount``, whose size is data-dependent: with it, the checker reported no race for the wrong elements either, so
this test ends with ``remainder``.)
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest
import torch

from codegen.driver.run import read_sources, run
from npudsl.race import StreamRaceError
from npudsl.testing.targets import run_checked

OPS = """\
import torch


def dispatch(x: torch.Tensor, ids: torch.Tensor, experts: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    flat = ids.reshape(-1)
    return x.repeat_interleave(ids.shape[-1], dim=0), flat, torch.cumsum(flat, 0).remainder(experts)


def viewed(x: torch.Tensor, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return x * 2, ids.reshape(-1)


def counted(ids: torch.Tensor) -> torch.Tensor:
    return ids


def called(x: torch.Tensor, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return x * 2, counted(ids)


@torch.no_grad()
def decorated(x: torch.Tensor, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return x.flip(0), ids * 2
"""

MODEL = """\
import torch
from npudsl import after, on_stream, records

from ge_called_ops import dispatch


class M(torch.nn.Module):
    @on_stream("side", sync="manual")
    @records("dispatched")
    def send(self, x: torch.Tensor, ids: torch.Tensor):
        return dispatch(x, ids, 4)

    @after("dispatched")
    def combine(self, x: torch.Tensor, rows: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
        return x * 3 + rows.sum() + counts.sum()

    def forward(self, x: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        rows, flat, counts = self.send(x, ids)
        return self.combine(x, rows, counts) + flat.sum()
"""

KEPT = """\
import torch
from npudsl import after, on_stream, records

from ge_called_ops import called, decorated, dispatch, viewed


class M(torch.nn.Module):
    @on_stream("side", sync="manual")
    @records("viewed")
    def view(self, x: torch.Tensor, ids: torch.Tensor):
        out = viewed(x, ids)
        return out

    @on_stream("side", sync="manual")
    @records("called")
    def call(self, x: torch.Tensor, ids: torch.Tensor):
        return called(x, ids)

    @on_stream("side", sync="manual")
    @records("decorated")
    def wrapped(self, x: torch.Tensor, ids: torch.Tensor):
        return decorated(x, ids)

    @on_stream("side", sync="manual")
    @records("shadowed")
    def shadowed(self, x: torch.Tensor, ids: torch.Tensor, dispatch=dispatch):
        return dispatch(x, ids, 4)

    @after("viewed", "called", "decorated", "shadowed")
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x
"""

TOKEN = '_EVENT_TOKENS["ge_called_model.M.dispatched"] = '


def _folder(tmp_path: Path, model: str = MODEL) -> Path:
    """The two files beside each other, in no package (``from ge_called_ops import ...``)."""
    (tmp_path / "ge_called_ops.py").write_text(OPS, encoding="utf-8")
    (tmp_path / "ge_called_model.py").write_text(model, encoding="utf-8")
    return tmp_path


def _model_code(folder: Path, *, alone: bool) -> str:
    """``ge_called_model.py`` for GE, in a run with ``ge_called_ops.py`` or alone (that file read from disk)."""
    names = ["ge_called_model.py"] if alone else ["ge_called_ops.py", "ge_called_model.py"]
    results = run(read_sources([(str(folder / n), str(folder)) for n in names]), target="ge", jobs=1)
    (code,) = [r.code for r in results if r.file.path.endswith("ge_called_model.py")]
    assert code is not None
    return code


@pytest.fixture
def ops(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("ge_called_ops")
    exec(compile(OPS, "ge_called_ops.py", "exec"), module.__dict__)  # noqa: S102 (the test's own source)
    monkeypatch.setitem(sys.modules, "ge_called_ops", module)


def _run(code: str) -> torch.Tensor:
    x, ids = torch.randn(3, 4), torch.tensor([[0, 2], [1, 2], [3, 0]])
    got = run_checked(code, "ge", lambda m: m.M(), (x, ids), data_edges="explicit")
    counts = torch.cumsum(ids.reshape(-1), 0).remainder(4)
    want = x * 3 + x.repeat_interleave(2, dim=0).sum() + counts.sum() + ids.sum()
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    return got


@pytest.mark.parametrize("alone", [False, True], ids=["together", "alone"])
def test_the_element_the_callee_makes_last_is_the_token(tmp_path: Path, alone: bool) -> None:
    code = _model_code(_folder(tmp_path), alone=alone)
    assert "        out = dispatch(x, ids, 4)\n        " + TOKEN + "out[2]\n        return out\n" in code
    assert "torchair.ops.record()" not in code  # before: the token was ``record()``, and the waiter's ``wait``


@pytest.mark.usefixtures("ops")
@pytest.mark.parametrize("alone", [False, True], ids=["together", "alone"])
def test_the_token_orders_the_waiter_after_the_whole_body(tmp_path: Path, alone: bool) -> None:
    _run(_model_code(_folder(tmp_path), alone=alone))


@pytest.mark.usefixtures("ops")
@pytest.mark.parametrize("element", [0, 1], ids=["made-before-the-last", "a-view-of-the-input"])
def test_another_element_as_the_token_races(tmp_path: Path, element: int) -> None:
    """The checker tells the elements apart: ``rows`` is made before ``remainder``, ``flat`` is a view of ``ids``
    (its producer ran first); waiting for either leaves the waiter unordered after the rest of the body."""
    code = _model_code(_folder(tmp_path), alone=False).replace(TOKEN + "out[2]", TOKEN + f"out[{element}]")
    with pytest.raises(StreamRaceError):
        _run(code)


@pytest.mark.parametrize("event", ["viewed", "called", "decorated", "shadowed"])
def test_an_element_not_certainly_made_last_keeps_the_token(tmp_path: Path, event: str) -> None:
    """A view of an input last (``ids.reshape(-1)``), a user function's result last (``counted`` returns its
    input), a decorated callee (it may run elsewhere), a name the body binds itself (``dispatch=dispatch``)."""
    code = _model_code(_folder(tmp_path, KEPT), alone=False)
    assert f'_EVENT_TOKENS["ge_called_model.M.{event}"] = torchair.ops.record()' in code
