"""``torch.compile`` backends over the stand-ins: check a lowered copy of the graph, run the graph itself.

:func:`checking_backend` lowers a copy of the captured graph (:func:`lower`) and
hands it to :func:`npudsl.race.npudsl_backend`, which raises
:class:`~npudsl.errors.StreamRaceError` on a race. The graph as captured (with
the stand-in ops) then goes through ``aot_autograd``, as torchair's backends do,
so functionalization acts on the outputs and on in-place writes to inputs exactly
as it would on the device.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.fx
from torch._dynamo.backends.common import aot_autograd

from npudsl.race import npudsl_backend
from npudsl.testing.standins._config import CompilerConfig, NpuGraphExConfig, apply_options
from npudsl.testing.standins._lower import lower

__all__ = ["MODES", "checking_backend", "copy_graph", "npugraph_ex_backend", "torchair_backend"]

MODES = {"max-autotune": "ge", "reduce-overhead": "aclgraph", "npugraph_ex": "npugraph_ex"}

Backend = Callable[[torch.fx.GraphModule, list[Any]], Callable[..., Any]]


def copy_graph(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """A new module over a copy of ``gm``'s graph (node meta copied), sharing its parameters."""
    graph = torch.fx.Graph()
    graph.output(graph.graph_copy(gm.graph, {}))
    return torch.fx.GraphModule(gm, graph)


def checking_backend(
    target: str,
    *,
    data_edges: str | None = None,
    seen: Callable[[torch.fx.GraphModule], None] | None = None,
    aot_seen: Callable[[torch.fx.GraphModule], None] | None = None,
) -> Backend:
    """Check each graph for races as ``target`` runs it, then run it through ``aot_autograd``.

    ``seen``/``aot_seen`` are called with the dynamo graph and with each graph
    ``aot_autograd`` makes (forward, and backward where there is one).
    """

    def compile_forward(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
        if aot_seen is not None:
            aot_seen(gm)
        return gm.forward

    def backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
        if seen is not None:
            seen(gm)
        npudsl_backend(lower(copy_graph(gm), target, data_edges=data_edges), example_inputs)
        return aot_autograd(fw_compiler=compile_forward, bw_compiler=compile_forward)(gm, example_inputs)

    return backend


def torchair_backend(config: CompilerConfig) -> Backend:
    """What the stand-in ``torchair.get_npu_backend(compiler_config=config)`` returns: the checking backend."""
    return checking_backend(MODES[str(config.mode.value)])


def npugraph_ex_backend(gm: torch.fx.GraphModule, example_inputs: list[Any], **kwargs: Any) -> Callable[..., Any]:
    """``torch.compile(backend="npugraph_ex", options={...})``: options checked by name and value, then checked."""
    apply_options(NpuGraphExConfig(), kwargs.get("options"))
    return checking_backend("npugraph_ex")(gm, example_inputs)
