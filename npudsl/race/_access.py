"""The memory accesses of a captured graph, in program order.

Each op that is not a runtime op, a view or a metadata query accesses memory
through the *roots* of its tensor arguments (:func:`~npudsl.race._alias.root`):

- an op that makes a new tensor writes its own memory (the tensor's producer);
- an in-place op writes the root of each argument its schema marks ``Tensor(a!)``
  (and does not count as reading it);
- every other tensor argument that reaches an op's data is read (a view or a
  size query reads nothing). See :mod:`~npudsl.race._effects`.

Graph inputs and attributes are written once, before everything (see the timeline).
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs
import torch
import torch.fx

from npudsl.race._alias import effect, is_tensor, root
from npudsl.race._timeline import runtime_op

__all__ = ["Access", "accesses", "aliases"]


@attrs.frozen(kw_only=True)
class Access:
    """``node`` reads or writes the memory allocated by ``memory``, through ``through`` (the value it names)."""

    node: torch.fx.Node
    memory: torch.fx.Node
    write: bool
    through: torch.fx.Node


def _accesses(node: torch.fx.Node) -> Iterator[Access]:
    if node.op in ("placeholder", "get_attr"):
        yield Access(node=node, memory=node, write=True, through=node)
        return
    if node.op not in ("call_function", "call_method", "call_module") or runtime_op(node):
        return
    found = effect(node)
    for argument in found.reads:
        if is_tensor(argument):
            yield Access(node=node, memory=root(argument), write=False, through=argument)
    for target in found.writes:
        yield Access(node=node, memory=root(target), write=True, through=target)
    if found.aliases is None and is_tensor(node):  # a new tensor (batch norm also writes its statistics)
        yield Access(node=node, memory=node, write=True, through=node)


def accesses(graph: torch.fx.Graph) -> Iterator[Access]:
    """Every access of every node, in program order (a node's reads before its write)."""
    for node in graph.nodes:
        yield from _accesses(node)


def aliases(graph: torch.fx.Graph) -> dict[torch.fx.Node, list[torch.fx.Node]]:
    """Each root with every node that stands for its memory (itself, its views, in-place results)."""
    groups: dict[torch.fx.Node, list[torch.fx.Node]] = {}
    for node in graph.nodes:
        if node.op != "output":
            groups.setdefault(root(node), []).append(node)
    return groups
