"""GE: the token on a tuple ending in ``torch.bincount`` (omni-infer's dispatch returns its expert counts last), told
apart from a wrong element by the race checker.

``tests/targets/test_ge_called_element.py`` ends its ``dispatch`` with ``remainder`` because, with ``bincount``,
the checker found no race for a token on ``out[0]`` or ``out[1]``: ``bincount``'s size is data-dependent, so it
could not run on ``meta``, and its schemas (``.out`` included, whose result is ``Tensor(a!)``) made it a view of
``ids``, a graph input made before everything (``npudsl/race/_fallback.py``; ``tests/runtime/
test_race_data_dependent.py``). Now the waiter's read of ``counts`` after a wait on another element races.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest
import torch

from npudsl.race import StreamRaceError
from npudsl.testing.targets import run_checked
from test_ge_called_element import MODEL, OPS, TOKEN, _model_code

BINCOUNT = OPS.replace("torch.cumsum(flat, 0).remainder(experts)", "torch.bincount(flat, minlength=experts)")


@pytest.fixture
def code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    module = types.ModuleType("ge_called_ops")
    exec(compile(BINCOUNT, "ge_called_ops.py", "exec"), module.__dict__)  # noqa: S102 (the test's own source)
    monkeypatch.setitem(sys.modules, "ge_called_ops", module)
    (tmp_path / "ge_called_ops.py").write_text(BINCOUNT, encoding="utf-8")
    (tmp_path / "ge_called_model.py").write_text(MODEL, encoding="utf-8")
    return _model_code(tmp_path, alone=False)


def _run(code: str) -> None:
    x, ids = torch.randn(3, 4), torch.tensor([[0, 2], [1, 2], [3, 0]])
    got = run_checked(code, "ge", lambda m: m.M(), (x, ids), data_edges="explicit")
    counts = torch.bincount(ids.reshape(-1), minlength=4)
    want = x * 3 + x.repeat_interleave(2, dim=0).sum() + counts.sum() + ids.sum()
    torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_the_counts_are_the_token(code: str) -> None:
    assert TOKEN + "out[2]\n" in code
    _run(code)


@pytest.mark.parametrize("element", [0, 1], ids=["made-before-the-last", "a-view-of-the-input"])
def test_another_element_as_the_token_races(code: str, element: int) -> None:
    """On main: no race found for either (``counts`` stood for ``ids``' memory)."""
    with pytest.raises(StreamRaceError, match="counts"):
        _run(code.replace(TOKEN + "out[2]", TOKEN + f"out[{element}]"))
