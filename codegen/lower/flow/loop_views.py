"""A loop over views of one tensor keeps that tensor alive once, before the loop, not each view in turn.

``for chunk in hidden_states.split(n): ... self.quantize(chunk) ...`` (omni-infer's chunked MoE) reads a view
of one storage on the side stream in each iteration. ``record_stream`` marks the storage, and when the
storage is freed its memory waits for all the work the stream was given until then: one mark before the
loop covers every chunk the loop passes, where a mark per iteration repeats it. The rule holds when the
call stands in the loop's own body, the loop's target is the name the call reads, the loop runs over an op
whose results are views of its receiver (the ATen schema's ``Tensor(a)[]``: ``split``, ``chunk``,
``unbind``), and nothing in the loop binds the receiver's name.
"""

from __future__ import annotations

import ast

from codegen.index.walked import walked_of
from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.schema import aliases_self, tensors_only
from codegen.lower.flow.sites import Site
from codegen.lower.plan import Anchor, Cond, KeepAlive, Step, Value

__all__ = ["loop_base", "placed_before_loops"]


def loop_base(facts: CallerFacts, site: Site, name: str) -> tuple[ast.stmt, str] | None:
    """The loop around the call and the tensor whose views it passes in ``name``, or None."""
    loop = facts.owner(site.stmt)
    if not isinstance(loop, ast.For) or facts.block(site.stmt) is not loop.body or facts.syncs[site.index].flag:
        return None
    if not (isinstance(loop.target, ast.Name) and loop.target.id == name):
        return None
    base = _receiver_of_views(loop.iter)
    stored = {n.id for n in walked_of(loop, ast.Name) if not isinstance(n.ctx, ast.Load)}
    return (loop, base) if base is not None and base not in stored else None


def _receiver_of_views(node: ast.expr) -> str | None:
    """``x`` of ``x.split(...)`` (an op whose results are all views of ``x``), else None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    method, receiver = node.func.attr, node.func.value
    views = aliases_self(method) and tensors_only(method)
    return receiver.id if views and isinstance(receiver, ast.Name) else None


def placed_before_loops(
    ahead: dict[tuple[ast.stmt, str], Value],
    placed: set[tuple[ast.stmt, str]],
    steps: dict[Anchor, list[Step]],
    when: Cond | None,
) -> None:
    """Each tensor kept alive once before a loop over its views (``ahead``: by loop and stream), placed before
    that loop the first time it is found (``placed``: those already placed)."""
    for loop, tag in set(ahead) - placed:
        steps.setdefault(("before", loop, ""), []).append(KeepAlive(stream=tag, when=when, values=(ahead[loop, tag],)))
        placed.add((loop, tag))
