"""``suggest`` moves a call's statement up in its block when the data allows it, and only then."""

from __future__ import annotations

from pathlib import Path

import pytest

from npudsl.suggest.blocks import Source
from npudsl.suggest.names import Scope, facts

ROOT = Path(__file__).resolve().parents[2]

# The side call is made last, so on a side stream it overlaps nothing where it stands: only moving it up, above
# the main stream's work, pays. ``{line}`` is the statement just above it.
MODEL = """import torch
from torch import nn


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.flag = True

    def side(self, y):
        return torch.tanh(y) * 2

    def forward(self, x, y, b):
        a = torch.relu(x) * 3 + x
        {line}
        # the side branch
        b = self.side(y)
        return a + b + z
"""
INPUTS = """

def example_inputs():
    g = torch.Generator().manual_seed(0)
    return tuple(torch.randn(64, 64, generator=g) for _ in range(3))
"""
MOVED = """import torch
from torch import nn

from npudsl import on_stream


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.flag = True

    @on_stream("side")
    def side(self, y):
        return torch.tanh(y) * 2

    def forward(self, x, y, b):
        # the side branch
        b = self.side(y)
        a = torch.relu(x) * 3 + x
        z = x * 2
        return a + b + z
"""


def _model(tmp_path: Path, line: str) -> Path:
    path = tmp_path / "model.py"
    path.write_text(MODEL.format(line=line) + INPUTS)
    return path


def test_an_independent_call_moves_to_the_top_with_its_comment(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from npudsl.suggest.report import report
    from suggest_checks import apply_suggestion, assert_checks_clean, assert_promised, assert_same_numbers

    path = _model(tmp_path, "z = x * 2")
    original = tmp_path / "original.py"
    original.write_text(path.read_text())
    suggestion = apply_suggestion(path)
    assert suggestion.proposed == MOVED + INPUTS
    [move] = suggestion.plan.moves
    assert move.hoist is not None and (move.hoist.line, move.hoist.before, move.hoist.after) == (17, 14, None)
    assert "    moved up from line 17 to the top of its block (line 14): b = self.side(y)\n" in report(suggestion)
    assert_checks_clean(path)
    assert_promised(suggestion, path)
    assert_same_numbers(original, path)


@pytest.mark.parametrize(
    "line",
    [
        pytest.param("z = x * 2\n        y = x", id="it rebinds a name the call reads"),
        pytest.param("z = b + 1", id="it reads the name the call binds"),
        pytest.param("z = x * 2\n        y.add_(1)", id="an in-place write of what the call reads"),
        pytest.param("z = x * 2\n        t = y\n        t += 1", id="the same, by += through another name"),
        pytest.param("z = torch.randn(64, 64)", id="it draws random numbers"),
        pytest.param("z = x * 2\n        if self.flag:\n            a = a * 2", id="an if block"),
    ],
)
def test_no_statement_moves_past(tmp_path: Path, line: str) -> None:
    pytest.importorskip("torch")
    from npudsl.suggest import suggest

    path = _model(tmp_path, line)
    suggestion = suggest(str(path), sync_cost=0.0)
    assert [m.hoist for m in suggestion.plan.moves] == []
    assert suggestion.proposed == suggestion.source


def test_in_place_write_through_another_name(tmp_path: Path) -> None:
    """``t`` is ``y``'s tensor under another name: only the graph sees that ``t.add_`` writes what the call reads."""
    pytest.importorskip("torch")
    from npudsl.suggest import suggest

    path = _model(tmp_path, "t = y\n        t.add_(1)\n        z = x * 2")
    source = Source.parse(path.read_text())
    assert [s.code for s in source.above("Model.forward", 19).passable] == [
        "z = x * 2",
        "t.add_(1)",
        "t = y",
        "a = torch.relu(x) * 3 + x",
    ]
    suggestion = suggest(str(path), sync_cost=0.0)
    assert [m.hoist.before for m in suggestion.plan.moves if m.hoist] == [17]  # above `z = x * 2`, not `t.add_(1)`


BEFORE = """class Model:
    def forward(self, x, y):
        a = torch.relu(x)
        {line}
        b = self.side(y)
        return a + b
"""


@pytest.mark.parametrize(
    "line, passable",
    [
        ("z = x * 2", ["z = x * 2", "a = torch.relu(x)"]),
        ("print(x)", []),
        ("log(x)", []),
        ("self.count = 1", []),
        ("cache.append(x)", []),
        ("y = x", []),
        ("del y", []),
        ("y += 1", []),
        ("z = (y := x)", []),
        ("f = lambda: b", []),
        ("zs = [b for _ in x]", []),
        ("for i in x:\n            pass", []),
        ("with torch.no_grad():\n            pass", []),
    ],
)
def test_which_statements_names_allow_to_pass(line: str, passable: list[str]) -> None:
    """Nearest first; the call reads ``self`` and ``y`` and binds ``b``. A print, an unknown function, a store into
    an attribute or a container: the graph would not see what they do."""
    source = "import torch\n\n\n" + BEFORE.format(line=line)
    above = Source.parse(source).above("Model.forward", source.splitlines().index("        b = self.side(y)") + 1)
    assert above is not None
    assert [s.code for s in above.passable] == passable


def test_names_inside_lambdas_comprehensions_walrus_and_del_count() -> None:
    scope = Scope(locals=frozenset({"x", "y"}), libraries=frozenset({"torch"}), shadowed=frozenset())
    found = facts("del a\nb += 1\nc = (d := x)\nf = lambda: g\nh = [i for i in y]\nx.sort()\n", scope)
    assert found.writes == {"a", "b", "c", "d", "f", "h", "i", "x"} and {"b", "g", "x", "y"} <= found.reads
    assert found.visible and not found.pure
    assert facts("n = x.shape[0]\ndel m\n", scope).pure
    assert not facts("print(x)\n", scope).visible and not facts("x.append(1)\n", scope).visible
    assert not facts("y = await x\n", scope).visible


def test_the_seed000_schedule_needs_a_moved_call(tmp_path: Path) -> None:
    """seed000 as the seed writes it starts ``late_add`` early with hand-placed events; without them, moving its
    statement up gets the same saving with automatic sync only."""
    pytest.importorskip("torch")
    from npudsl.suggest.report import report
    from npudsl.suggest.strip import strip_decorators
    from npudsl.timeline import picture
    from suggest_checks import apply_suggestion, assert_checks_clean, assert_promised, assert_same_numbers

    original = tmp_path / "original.py"
    original.write_text(strip_decorators((ROOT / "examples" / "seed000.py").read_text()))
    path = tmp_path / "seed000.py"
    path.write_text(original.read_text())
    suggestion = apply_suggestion(path, streams=2)
    [hoist] = [m.hoist for m in suggestion.plan.moves if m.hoist]
    assert (hoist.code, hoist.line, hoist.after) == ("add2 = self.late_add(in3, in4)", 37, 34)
    assert "        del b\n        add2 = self.late_add(in3, in4)\n        c = torch.ones(" in suggestion.proposed
    assert "    moved up from line 37 to after line 34: add2 = self.late_add(in3, in4)\n" in report(suggestion)
    assert_checks_clean(path)
    assert_promised(suggestion, path)
    assert_same_numbers(original, path)
    hand = picture(str(ROOT / "examples" / "seed000.py")).schedule.saving
    assert suggestion.plan.schedule.saving >= 0.95 * hand


def test_a_submodule_call_moves_up_in_every_layer(tmp_path: Path) -> None:
    """One statement moved serves every instance of the layer; a statement on two lines moves with its comment."""
    pytest.importorskip("torch")
    from npudsl.suggest.report import report
    from suggest_checks import apply_suggestion, assert_checks_clean, assert_promised, assert_same_numbers

    original = Path(__file__).parent / "models" / "late_shared.py"
    path = tmp_path / "late_shared.py"
    path.write_text(original.read_text())
    suggestion = apply_suggestion(path)
    [move] = suggestion.plan.moves
    assert move.stream == "shared" and len(move.units) == 2
    assert move.hoist is not None and (move.hoist.line, move.hoist.before, move.hoist.after) == (33, 30, 29)
    assert "    moved up from line 33 to after line 29: shared = self.shared( ...\n" in report(suggestion)
    assert (
        "        y = self.norm(x)\n        # the shared expert, called last\n        shared = self.shared(\n"
        "            y)\n        routed = self.routed(y)\n"
    ) in suggestion.proposed
    assert_checks_clean(path)
    assert_promised(suggestion, path)
    assert_same_numbers(original, path)
