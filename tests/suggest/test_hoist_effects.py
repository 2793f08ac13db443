"""``suggest`` never moves a call above a write it only sees in the data (a view, ``.data``, a module's in-place
activation or running statistics) nor above a Python-level effect it cannot prove harmless; it says why."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from effect_models import model  # noqa: E402
from npudsl.suggest import suggest  # noqa: E402

# ``side`` is called last: only moving its statement up, above ``{line}``, would overlap anything.
MODEL = model("""        self.flag = True
        self.calls = 0

    @property
    def scale(self):
        self.calls += 1
        self.flag = not self.flag
        return 2.0

    def side(self, y):
        return torch.tanh({read}) * 2 + torch.ones(64, 64) * self.calls

    def forward(self, x, y):
        a = torch.relu(x) * 3 + x
        {line}
        b = self.side(y)
        return a + b
""")

CASES = {
    "a write through a transposed view": ("y", "y.T.add_(1)", "writes memory the call reads"),
    "a write through .data": ("y", "y.data.mul_(2)", "writes memory the call reads"),
    "an in-place activation module": ("y", "z = self.act(y)", "writes memory the call reads"),
    "F.relu with inplace=True": ("y", "z = nn.functional.relu(y, True)", "writes memory the call reads"),
    "a view of a buffer written in place": (
        "self.cache",
        "v = self.cache[:2]\n        v.add_(1)",
        "writes memory the call reads",
    ),
    "batch-norm running statistics": ("self.norm.running_mean + y", "z = self.norm(x)", "writes memory the call reads"),
    "a property with a side effect": ("y", "s = self.scale", "the graph cannot see"),
    "global torch state": ("y", "torch.set_default_dtype(torch.float32)", "global torch state"),
    "random numbers on both sides": ("y + torch.rand(64, 64)", "z = torch.rand(64, 64)", "random numbers"),
}


@pytest.mark.parametrize(("read", "line", "reason"), CASES.values(), ids=list(CASES))
def test_the_call_stays_below_and_the_reason_is_given(tmp_path: Path, read: str, line: str, reason: str) -> None:
    path = tmp_path / "model.py"
    path.write_text(MODEL.format(read=read, line=line))
    suggestion = suggest(str(path), sync_cost=0.0)
    assert [m.hoist for m in suggestion.plan.moves if m.hoist] == []
    assert any(reason in why for why in suggestion.declined), suggestion.declined


def test_a_harmless_statement_is_passed(tmp_path: Path) -> None:
    path = tmp_path / "model.py"
    path.write_text(MODEL.format(read="y", line="z = x * 2"))
    suggestion = suggest(str(path), sync_cost=0.0)
    assert [m.hoist.before for m in suggestion.plan.moves if m.hoist] == [24]


def test_explain_says_why_a_move_up_was_declined(tmp_path: Path) -> None:
    from npudsl.suggest.report import explanation

    path = tmp_path / "model.py"
    path.write_text(MODEL.format(read="y", line="torch.set_default_dtype(torch.float32)"))
    text = explanation(suggest(str(path), sync_cost=0.0))
    assert "  stopped " in text and "global torch state" in text
