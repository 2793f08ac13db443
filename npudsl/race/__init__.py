"""The race checker for captured multi-stream graphs, and npudsl's ``torch.compile`` backends.

:func:`check_graph` walks an FX graph that uses the ``torch.ops.npudsl`` runtime
ops (see ``docs/runtime.md`` for the rules) and raises
:class:`~npudsl.errors.StreamRaceError` naming the source lines on both sides.
:func:`npudsl_backend` checks, then runs the graph as captured;
:func:`portable_backend` also gives its outputs the lifetime of graph memory
(:class:`~npudsl.errors.StaleOutputError`), as ``npudsl.compile(target="portable")`` does.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable
from typing import Any

import torch
import torch.fx
from torch.fx._lazy_graph_module import _LazyGraphModule

from npudsl.errors import StreamRaceError
from npudsl.graph_config import GraphMemory
from npudsl.race._compile_time import compile_time_error
from npudsl.race._conflicts import unordered_accesses
from npudsl.race._graph_io import read_graph
from npudsl.race._memory import Replays
from npudsl.race._rules import unordered_frees
from npudsl.race._stale import first_stale, stale_error
from npudsl.race._timeline import build

__all__ = ["check_graph", "find_races", "npudsl_backend", "portable_backend"]


def find_races(gm: torch.fx.GraphModule) -> list[str]:
    """Every problem found in ``gm``'s graph, one message each (empty: no race)."""
    timeline = build(gm.graph)
    return [*timeline.problems, *unordered_accesses(gm.graph, timeline), *unordered_frees(gm.graph, timeline)]


def check_graph(gm: torch.fx.GraphModule) -> None:
    """Raise :class:`StreamRaceError` listing every unsynchronized cross-stream use in ``gm``."""
    problems = find_races(gm)
    if problems:
        raise StreamRaceError("\n".join(problems))


def _check_at_compile_time(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> None:
    """Raise what dynamo passes through unwrapped, with a traceback that starts here."""
    stale = first_stale(example_inputs)
    if stale is not None:
        raise stale_error(stale)
    try:
        problems = find_races(gm)
    except StreamRaceError as error:
        raise compile_time_error(StreamRaceError, str(error), sys._getframe()) from None
    if problems:
        raise compile_time_error(StreamRaceError, "\n".join(problems), sys._getframe())


def npudsl_backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
    """``torch.compile`` backend: check the captured graph, then run it as captured (exact CPU numerics)."""
    _check_at_compile_time(gm, example_inputs)
    return gm.forward


def _own_tensors(gm: torch.fx.GraphModule) -> set[int]:
    """The addresses of the graph's parameters, buffers and constants: never graph memory."""
    tensors = [operator.attrgetter(str(node.target))(gm) for node in gm.graph.nodes if node.op == "get_attr"]
    tensors += [*gm.parameters(), *gm.buffers()]
    return {t.untyped_storage().data_ptr() for t in tensors if isinstance(t, torch.Tensor)}


def portable_backend(memory: GraphMemory | None = None) -> Callable[..., Any]:
    """A ``torch.compile`` backend that checks each graph and runs it with graph memory semantics.

    ``memory``: the seed 003 options (``npudsl.graph_config.graph_memory(...)``); the
    default is torchair's default. See :mod:`npudsl.race._memory` and docs/runtime.md.
    """
    policy = memory or GraphMemory()
    compiled = [0]

    def backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
        _check_at_compile_time(gm, example_inputs)
        compiled[0] += 1
        name = "the compiled model" if compiled[0] == 1 else f"graph {compiled[0]} of the compiled model"
        _LazyGraphModule.force_recompile(gm)  # the real forward now: a lazy one re-enters nn.Module.__call__ each call
        return Replays(gm.forward, read_graph(gm, name), policy, _own_tensors(gm))

    return backend
