"""Which nodes keep a memory alive: an op on its data, not a node that only stands for it.

The free rule (:mod:`._rules`) drops a tensor after the last node that uses its memory. A view (``t.view(-1)``) or
an op that hands its argument back as it came (``F.dropout(t, 0.1, training=False)``: ATen's ``dropout`` returns
``t`` itself in eval, running no op) reads nothing; what it returns is the same memory, so its own users count, and
it does not. Dynamo keeps such a node in the graph even where nothing uses its result, but the compilers behind the
targets drop it (AOT autograd's functionalization and dead-code elimination: torchair, inductor), and the memory goes
back to its stream after the last op that reads it. Counted as a use, a dead one placed after a join hid that a
side stream still read the memory when the maker's stream allocated again.
"""

from __future__ import annotations

import torch.fx

from npudsl.race._alias import effect

__all__ = ["only_alias"]


def only_alias(node: torch.fx.Node) -> bool:
    """``node`` returns memory of an argument and reads or writes none: a view, or an argument handed back."""
    found = effect(node)
    return found.aliases is not None and not found.reads and not found.writes
