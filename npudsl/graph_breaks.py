"""Where torch.compile last broke a graph, for the messages of a fork and a join that fell in different graphs.

A decorated call forks to its stream in one captured graph and joins in the
next when dynamo breaks the graph in between (a data-dependent loop, a
``print``): each graph alone is then wrong, and the race checker finds a wait
whose record is in the other graph. The user wrote decorators, not records, so
the message names the line that broke the graph and how to keep the region in
one graph. Dynamo keeps the reasons of the breaks of the current compile in
``torch._dynamo.utils.graph_break_reasons`` (cleared by ``torch._dynamo.reset()``).
"""

from __future__ import annotations

import sys

__all__ = ["WHOLE", "last_break"]

WHOLE = (
    "capture the region whole: remove what breaks the graph (torch._dynamo.explain(model)(*inputs) lists "
    'the breaks; with a Hugging Face MoE, set config._experts_implementation = "batched_mm"), or keep the '
    "fork and its join on the same side of it"
)


def last_break() -> str | None:
    """``FILE:LINE (reason)`` of the latest graph break of this compile, when torch is loaded and one happened."""
    utils = sys.modules.get("torch._dynamo.utils")
    reasons = getattr(utils, "graph_break_reasons", None) or []
    for reason in reversed(reasons):
        stack = getattr(reason, "user_stack", None) or []
        if stack:
            frame = stack[-1]
            why = str(getattr(reason, "reason", "")).strip().splitlines()
            return f"{frame.filename}:{frame.lineno}" + (f" ({why[0]})" if why else "")
    return None
