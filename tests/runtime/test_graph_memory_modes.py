"""Seed 003's memory-reuse modes decide which outputs a replay overwrites, with target="portable" as on the device.

Mode 1 (``mempool``): one pool for every graph of the config; mode 2 (on by default,
off with a pool): the captured graphs of one FX graph (one per shape with
``dynamic=True``) share their memory; mode 3 (``clone_inputs``, on by default): user
inputs are copied into graph memory, so the user's own tensors are never the graph's.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import nn

import npudsl
from helpers import marked_line

POOL = ("pool",)  # what torch.npu.graph_pool_handle() returns: a tuple


class Head(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.lin = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x).relu()


class PassThrough(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.table = nn.Parameter(torch.ones(4))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return x, self.table, x * 2


def _stale(tensor: torch.Tensor) -> bool:
    try:
        tensor.sum()
    except npudsl.StaleOutputError:
        return True
    return False


def _two_shapes(**options: Any) -> tuple[Any, torch.Tensor, torch.Tensor]:
    """One FX graph (dynamic), called with 2 rows then 3 rows: two captured graphs."""
    compiled = npudsl.compile(Head(), dynamic=True, fullgraph=True, **options)
    return compiled, compiled(torch.randn(2, 4)), compiled(torch.randn(3, 4))


def test_mode_2_default_the_shapes_of_one_fx_graph_share_memory() -> None:
    compiled, two_rows, three_rows = _two_shapes()
    assert _stale(two_rows) and not _stale(three_rows)
    compiled(torch.randn(2, 4))
    assert _stale(three_rows)


@pytest.mark.parametrize("options", [{"reuse_within_graph": False}, {"mempool": POOL}], ids=["mode_2_off", "mode_1"])
def test_without_mode_2_each_shape_keeps_its_outputs_until_its_own_replay(options: dict[str, Any]) -> None:
    compiled, two_rows, three_rows = _two_shapes(**options)
    assert not _stale(two_rows) and not _stale(three_rows)
    compiled(torch.randn(2, 4))
    assert _stale(two_rows) and not _stale(three_rows)


@pytest.mark.parametrize(
    "options",
    [{}, {"mempool": POOL}, {"mempool": POOL, "share_inputs_across_graphs": True}],
    ids=["own_pools", "mode_1", "mode_1_shared_inputs"],
)
def test_fx_graphs_never_overwrite_each_others_outputs(options: dict[str, Any]) -> None:
    first, second = (npudsl.compile(Head(), fullgraph=True, **options) for _ in range(2))
    x = torch.randn(2, 4)
    kept = first(x)
    second(x), second(x)
    assert not _stale(kept)
    first(x)
    assert _stale(kept)


def test_mode_3_default_the_users_inputs_stay_theirs() -> None:
    compiled, first_input = npudsl.compile(Head(), fullgraph=True), torch.randn(2, 4)
    compiled(first_input)
    compiled(torch.randn(2, 4))
    assert not _stale(first_input)


def test_mode_3_off_the_capturing_input_becomes_the_graphs_buffer() -> None:
    compiled, first_input = npudsl.compile(Head(), fullgraph=True, clone_inputs=False), torch.randn(2, 4)
    compiled(first_input)  # U:captured_input
    compiled(first_input)
    assert not _stale(first_input)  # the same tensor again: nothing is copied
    compiled(torch.randn(2, 4))
    with pytest.raises(npudsl.StaleOutputError) as caught:
        first_input.sum()
    where = marked_line(__file__, "U:captured_input")
    assert str(caught.value).startswith(f"input 'x' of the compiled model, passed at {where} to call 1")


def test_clone_outputs_turns_every_mode_off_for_outputs() -> None:
    compiled, two_rows, three_rows = _two_shapes(clone_outputs=True)
    compiled(torch.randn(2, 4)), compiled(torch.randn(3, 4))
    assert not _stale(two_rows) and not _stale(three_rows)


def test_an_output_that_is_a_parameter_or_an_input_is_not_graph_memory() -> None:
    compiled = npudsl.compile(PassThrough(), fullgraph=True)
    same, table, doubled = compiled(torch.randn(2, 4))
    compiled(torch.randn(2, 4))
    assert (_stale(same), _stale(table), _stale(doubled)) == (False, False, True)


def test_contradictory_options_fail_before_compiling() -> None:
    with pytest.raises(npudsl.NpudslError, match="contradicts"):
        npudsl.compile(Head(), mempool=POOL, reuse_within_graph=True)
