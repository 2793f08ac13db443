"""A fork and its join in different captured graphs: ``npudsl.compile`` names the line that broke the graph and
how to keep the region whole (not the runtime-call advice meant for hand-written records); ``schedule`` and
``suggest``, which capture one graph, name the line too, with the same cure."""

from __future__ import annotations

from pathlib import Path

import pytest

from npudsl.cli import main

torch = pytest.importorskip("torch")
import npudsl  # noqa: E402
from npudsl.errors import StreamRaceError  # noqa: E402
from npudsl.timeline.capture import load_example  # noqa: E402

BROKEN = """import torch
from torch import nn

from npudsl import on_stream


@on_stream("side")
class Side(nn.Module):
    def forward(self, x):
        return x * 3


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = Side()

    def forward(self, x):
        s = self.side(x)
        y = x + 1
        torch._dynamo.graph_break()
        return y + s


def example_inputs():
    return (torch.ones(4),)
"""
CURE = "capture the region whole: remove what breaks the graph"


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    path = tmp_path / "broken_fork.py"
    path.write_text(BROKEN)
    return path


def test_compile_names_the_line_that_broke_the_graph_between_fork_and_join(broken: Path) -> None:
    module = load_example(str(broken))
    torch._dynamo.reset()
    with pytest.raises(StreamRaceError) as raised:
        npudsl.compile(module.Model(), target="portable")(*module.example_inputs())
    message = str(raised.value)
    assert (
        f"waits for event 'broken_fork.Side.forward.join' at {broken}:22, but no earlier op of this graph "
        f"records it: its fork is in an earlier captured graph, torch.compile broke the graph between the fork "
        f"and this join at {broken}:21 ("
    ) in message
    assert CURE in message and 'config._experts_implementation = "batched_mm"' in message
    assert "runtime.record" not in message


def test_one_graph_compiles_race_free_with_the_same_numbers(broken: Path) -> None:
    broken.write_text(BROKEN.replace("        torch._dynamo.graph_break()\n", ""))
    module = load_example(str(broken))
    torch._dynamo.reset()
    out = npudsl.compile(module.Model(), target="portable", fullgraph=True)(*module.example_inputs())
    assert torch.equal(out, torch.full((4,), 5.0))


@pytest.mark.parametrize("command", ["schedule", "suggest"])
def test_schedule_and_suggest_name_the_break_and_the_cure(command: str, broken: Path, capsys) -> None:
    assert main([command, str(broken)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{broken}:21: torch.compile cannot capture Model as one graph (") and CURE in err
