"""The race checker for captured multi-stream graphs, and npudsl's ``torch.compile`` backend.

:func:`check_graph` walks an FX graph that uses the ``torch.ops.npudsl`` runtime
ops (see ``docs/runtime.md`` for the rules) and raises
:class:`~npudsl.errors.StreamRaceError` naming the source lines on both sides.
:func:`npudsl_backend` checks, then runs the graph as captured.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import torch
import torch.fx

from npudsl.errors import StreamRaceError
from npudsl.race._compile_time import compile_time_error
from npudsl.race._conflicts import unordered_accesses
from npudsl.race._rules import unordered_frees
from npudsl.race._timeline import build

__all__ = ["check_graph", "find_races", "npudsl_backend"]


def find_races(gm: torch.fx.GraphModule) -> list[str]:
    """Every problem found in ``gm``'s graph, one message each (empty: no race)."""
    timeline = build(gm.graph)
    return [*timeline.problems, *unordered_accesses(gm.graph, timeline), *unordered_frees(gm.graph, timeline)]


def check_graph(gm: torch.fx.GraphModule) -> None:
    """Raise :class:`StreamRaceError` listing every unsynchronized cross-stream use in ``gm``."""
    problems = find_races(gm)
    if problems:
        raise StreamRaceError("\n".join(problems))


def _check_at_compile_time(gm: torch.fx.GraphModule) -> None:
    """Raise what dynamo passes through unwrapped, with a traceback that starts here."""
    try:
        problems = find_races(gm)
    except StreamRaceError as error:
        raise compile_time_error(StreamRaceError, str(error), sys._getframe()) from None
    if problems:
        raise compile_time_error(StreamRaceError, "\n".join(problems), sys._getframe())


def npudsl_backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
    """``torch.compile`` backend: check the captured graph, then run it as captured (exact CPU numerics)."""
    del example_inputs
    _check_at_compile_time(gm)
    return gm.forward

