"""Which inputs a torch layer's ``forward`` surely reads in an op, read from the pinned torch's sources.

``nn.Linear`` runs ``F.linear(input, ...)``, ``nn.RMSNorm`` ``F.rms_norm(x, ...)``, ``nn.Conv1d`` its
``_conv_forward(input, ...)`` (padded or not, it convolves): each a read of its input on the caller's stream, which
``used_calls.py`` counts where a caller hands its tensor to such a submodule (``torch_layer_reads.py``).
``nn.Identity`` returns its input, ``nn.Flatten`` returns a view of it (``flatten``'s schema: ``Tensor(a)``),
``nn.Dropout`` hands it to ``F.dropout`` with ``self.training`` (in eval: its input back, no kernel), and
``nn.Softmax2d`` raises on some inputs before it reads: none of those is a read. The table is rebuilt from the
pinned torch and compared, and a class is found through the module's imports however it is spelled.
"""

from __future__ import annotations

import ast

import pytest

from codegen.index.index import build_index
from codegen.lower.flow.imported_writes import module_functions
from codegen.lower.flow.torch_layer_reads import layer_reads, torch_layer
from codegen.lower.flow.torch_layer_reads_build import TABLE, build


def test_the_table_is_what_the_pinned_torch_makes() -> None:
    assert TABLE.read_text(encoding="utf-8") == build()


@pytest.mark.parametrize(("cls", "slot"), [("Linear", 0), ("RMSNorm", "x"), ("Conv1d", 0), ("Bilinear", 1)])
def test_layers_that_run_an_op_on_their_input(cls: str, slot: int | str) -> None:
    assert layer_reads(cls, slot)


@pytest.mark.parametrize("cls", ["Identity", "Flatten", "Unflatten", "Dropout", "AlphaDropout", "Softmax2d"])
def test_layers_that_launch_nothing_on_it_or_only_a_view_or_may_raise_first(cls: str) -> None:
    assert not layer_reads(cls, 0) and not layer_reads(cls, "input")


def test_a_slot_past_the_forward_s_parameters_is_no_read() -> None:
    assert not layer_reads("Linear", 1) and not layer_reads("Linear", "weight") and not layer_reads("Nothing", 0)


SOURCE = """\
import torch
import torch.nn as tnn
from torch import nn
from torch.nn import Linear, Identity as Same
"""


@pytest.mark.parametrize(
    ("dotted", "cls"),
    [
        ("nn.Linear", "Linear"),
        ("torch.nn.Linear", "Linear"),
        ("tnn.Dropout", "Dropout"),
        ("Linear", "Linear"),
        ("Same", "Identity"),
        ("nn.Nothing", None),
        ("Other", None),
    ],
)
def test_a_class_is_found_through_the_module_s_imports(dotted: str, cls: str | None) -> None:
    index = build_index([("m", SOURCE)])
    assert torch_layer(module_functions(index, "m", ast.parse(SOURCE)), dotted) == cls
