"""Capture a compiled graph with its real inputs, so the cost model prices the shapes one real run sees.

The cost model of ``npudsl schedule`` (:func:`npudsl.timeline.cost.model_cost`)
reads each node's ``example_value``: fake tensors, whose sizes are symbols when
they depend on data (an MoE's per-expert token count, a ``nonzero``). Such a size
has no value to price. Here each graph a backend receives is copied with clones of
its real inputs (taken before the graph first runs, so in-place writes do not
leak in); :func:`schedule` runs the copy once on them with an FX interpreter,
stores every node's real result as its ``example_value`` and simulates it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import torch
import torch.fx

from npudsl.testing import standins
from npudsl.testing.standins import copy_graph
from npudsl.timeline.cost import model_cost
from npudsl.timeline.simulate import Schedule, simulate

__all__ = ["Captured", "checked_graphs", "recording_backend", "schedule"]

Backend = Callable[[torch.fx.GraphModule, list[Any]], Callable[..., Any]]


@attrs.frozen
class Captured:
    gm: torch.fx.GraphModule  # a copy of the graph dynamo captured
    inputs: list[Any]  # clones of its real inputs, as they were before it first ran


def _cloned(value: Any) -> Any:
    return value.detach().clone() if isinstance(value, torch.Tensor) else value


def recording_backend(seen: list[Captured], inner: Backend) -> Backend:
    """``inner``, appending each graph it compiles (and its inputs) to ``seen`` first."""

    def backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
        seen.append(Captured(copy_graph(gm), [_cloned(x) for x in example_inputs]))
        return inner(gm, example_inputs)

    return backend


@contextlib.contextmanager
def checked_graphs(seen: list[Captured]) -> Iterator[None]:
    """While open, every race-checking backend of the stand-ins (``standins.checking_backend``,
    what the corpus matrix compiles the generated code with) also records into ``seen``."""
    original = standins.checking_backend

    def checking(*args: Any, **kwargs: Any) -> Backend:
        return recording_backend(seen, original(*args, **kwargs))

    standins.checking_backend = checking
    try:
        yield
    finally:
        standins.checking_backend = original


class _Realize(torch.fx.Interpreter):
    def run_node(self, n: torch.fx.Node) -> Any:
        result = super().run_node(n)
        n.meta["example_value"] = result
        return result


def schedule(captured: Captured) -> Schedule:
    """The simulated schedule of ``captured`` on the nominal cost model, priced on its real shapes."""
    with torch.no_grad():
        _Realize(captured.gm).run(*captured.inputs)
    return simulate(captured.gm.graph, model_cost())
