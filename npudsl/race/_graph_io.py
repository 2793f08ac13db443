"""What the graph memory runtime needs to know of a captured graph, read once at compile time.

- ``symbols``: the positions of the size arguments of a dynamic graph; their values
  pick the captured graph (torchair's graph key) that a call replays.
- ``user_inputs``: the positions of the user's own tensor arguments (not parameters,
  buffers or attributes, and not written in place by the graph): the inputs that
  torchair copies into graph memory (seed 003, mode 3).
- ``outputs``: per graph output, who it is for an error message, or ``None`` when
  it is not graph memory by construction (a clone: ``@keep_output(clone=True)``).
"""

from __future__ import annotations

from typing import Any

import attrs
import torch
import torch.fx
from torch._dynamo.source import LocalSource

from npudsl.race._alias import is_clone, root, writes
from npudsl.race._names import describe
from npudsl.race._source import input_name, location
from npudsl.race._stale import Origin

__all__ = ["GraphIO", "read_graph"]


@attrs.frozen(kw_only=True)
class GraphIO:
    name: str  # how messages name the graph: "the compiled model", "graph 2 of the compiled model"
    symbols: tuple[int, ...]
    user_inputs: tuple[tuple[int, str], ...]  # (position, the user's name)
    outputs: tuple[Origin | None, ...]


def _example(node: torch.fx.Node) -> Any:
    return node.meta.get("example_value", node.meta.get("val"))


def _is_user_input(node: torch.fx.Node, mutated: set[torch.fx.Node]) -> bool:
    source = getattr(node.meta.get("grapharg"), "source", None)
    value = _example(node)
    return (
        isinstance(source, LocalSource)
        and isinstance(value, torch.Tensor)
        and not isinstance(value, torch.nn.Parameter)
        and node not in mutated
    )


def _output_nodes(gm: torch.fx.GraphModule) -> list[Any]:
    result = gm.graph.output_node().args[0]
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _origin(node: Any, graph: str) -> Origin | None:
    if not isinstance(node, torch.fx.Node) or is_clone(root(node)):
        return None
    return Origin(what=f"output {describe(node)}", made_at=location(node), graph=graph)


def read_graph(gm: torch.fx.GraphModule, graph: str) -> GraphIO:
    """The symbols, user inputs and output origins of ``gm`` (``graph`` names it in messages)."""
    placeholders = [node for node in gm.graph.nodes if node.op == "placeholder"]
    mutated = {root(target) for node in gm.graph.nodes for target in writes(node)}
    return GraphIO(
        name=graph,
        symbols=tuple(i for i, node in enumerate(placeholders) if isinstance(_example(node), torch.SymInt)),
        user_inputs=tuple(
            (i, input_name(node)) for i, node in enumerate(placeholders) if _is_user_input(node, mutated)
        ),
        outputs=tuple(_origin(node, graph) for node in _output_nodes(gm)),
    )
