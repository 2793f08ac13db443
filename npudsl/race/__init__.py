"""The race checker for captured multi-stream graphs, and npudsl's ``torch.compile`` backend.

:func:`check_graph` walks an FX graph that uses the ``torch.ops.npudsl`` runtime
ops (see ``docs/runtime.md`` for the rules) and raises
:class:`~npudsl.errors.StreamRaceError` naming the producer's and the consumer's
source lines. :func:`npudsl_backend` checks, then runs the graph as captured.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.fx
from torch._dynamo.exc import ShortenTraceback

from npudsl.errors import StreamRaceError
from npudsl.race._rules import unordered_frees, unsynchronized_reads
from npudsl.race._timeline import build

__all__ = ["check_graph", "find_races", "npudsl_backend"]


class _CompileTimeRace(StreamRaceError, ShortenTraceback):
    """A :class:`StreamRaceError` that dynamo lets through unwrapped (not as ``BackendCompilerFailed``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, first_useful_frame=None)


def find_races(gm: torch.fx.GraphModule) -> list[str]:
    """Every problem found in ``gm``'s graph, one message each (empty: no race)."""
    timeline = build(gm.graph)
    return [*timeline.problems, *unsynchronized_reads(gm.graph, timeline), *unordered_frees(gm.graph, timeline)]


def check_graph(gm: torch.fx.GraphModule) -> None:
    """Raise :class:`StreamRaceError` listing every unsynchronized cross-stream use in ``gm``."""
    problems = find_races(gm)
    if problems:
        raise StreamRaceError("\n".join(problems))


def npudsl_backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
    """``torch.compile`` backend: check the captured graph, then run it as captured (exact CPU numerics)."""
    del example_inputs
    problems = find_races(gm)
    if problems:
        raise _CompileTimeRace("\n".join(problems))
    return gm.forward
