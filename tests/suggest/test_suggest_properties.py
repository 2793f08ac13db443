"""Property: on random small models with in-place ops, views, buffers and ``inplace=True`` modules sprinkled
above a side call, ``suggest --diff`` applied never changes the numbers, and the result compiles race-free."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from effect_models import model  # noqa: E402

MODEL = model("""
    def side(self, y):
        return torch.tanh({read}) * 2

    def forward(self, x0, y0):
        x = x0 * 1
        y = y0 * 1
        a = torch.relu(x) * 3 + x
{body}
        b = self.side(y)
        return a + b + x + y + self.cache + self.norm.running_mean
""")

READS = ["y", "self.cache", "self.norm.running_mean + y", "y.T", "y.data[:, :1]"]
TENSORS = ["x", "y", "a", "self.cache"]
WRITES = [
    "{v}.add_(1)",
    "{v}.T.mul_(2)",
    "{v}.data.mul_(2)",
    "z{k} = self.act({v})",
    "z{k} = nn.functional.relu({v}, True)",
    "z{k} = self.norm({v})",
    "w{k} = {v}[:2]\n        w{k}.add_(1)",
    "z{k} = {v} * 2",
    "z{k} = {v}.sum()",
    "{v}[0] = 1.0",
    "{v} += a",
]

statements = st.lists(st.tuples(st.sampled_from(WRITES), st.sampled_from(TENSORS)), min_size=1, max_size=4)


def _body(chosen: list[tuple[str, str]]) -> str:
    lines = [template.format(v=v, k=k) for k, (template, v) in enumerate(chosen)]
    return "\n".join(f"        {line}" for line in lines if not line.startswith("self.cache +="))


@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(read=st.sampled_from(READS), chosen=statements)
def test_an_applied_suggestion_keeps_the_numbers_and_is_race_free(
    tmp_path: Path, read: str, chosen: list[tuple[str, str]]
) -> None:
    from suggest_checks import apply_suggestion, assert_same_numbers

    source = MODEL.format(read=read, body=_body(chosen))
    original, path = tmp_path / "original.py", tmp_path / "model.py"
    original.write_text(source)
    path.write_text(source)
    apply_suggestion(path, sync_cost=0.0)
    assert_same_numbers(original, path)  # compiles for portable: a race raises
