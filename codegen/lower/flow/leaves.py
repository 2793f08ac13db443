"""Whether the function returns right after a join: then the results it joins need not be kept alive.

A result is kept alive for the caller's stream so that a later call on the side stream cannot reuse its memory
while the caller still reads it (:mod:`~codegen.lower.flow.keep_alive`). Where the function returns right after
the join (before a ``return`` no ``finally`` follows, or at the end of its body), no later call of it runs to
allocate, so no ``record_stream`` is needed there.
"""

from __future__ import annotations

import ast

from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.plan import Anchor

__all__ = ["leaves"]


def leaves(facts: CallerFacts, anchor: Anchor) -> bool:
    """The function returns right after ``anchor``."""
    kind, node, _ = anchor
    if kind == "end":
        return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    if kind != "before" or not isinstance(node, ast.Return):
        return False
    owner = facts.owner(node)
    while owner is not None and not (isinstance(owner, (ast.Try, ast.TryStar)) and owner.finalbody):
        owner = facts.owner(owner)
    return owner is None
