"""One method of a flow test's model, transformed, traced under the race checker, checked and counted.

Many flow tests hold one model source (a ``Model`` with a method per case, and the ``Caller`` of
``method_caller.py``) and ask the same three things of it: the generated code for a target, the method's result
run eagerly (the decorators keep their meaning untransformed: the reference), and the sync calls of the traced
graph once its outputs matched the reference, the race checker running (a race raises ``StreamRaceError``).
Each test wrote those three helpers again; they live here once. The model is built with seed 0 on both sides, so
random parameters match; a native target (``cuda``, ``npugraph_ex``) runs once eagerly first, making its streams
and events as a first eager step would.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from bench.sync_count import count_graph
from codegen.driver.api import transform_source
from npudsl.testing.targets import trace_graph

__all__ = ["NATIVE", "TARGETS", "eager_result", "generated", "sync_counts"]

TARGETS = ["portable", "aclgraph", "npugraph_ex", "cuda"]
NATIVE = ("cuda", "npugraph_ex")  # their events are made at their first eager use


def generated(source: str, target: str = "portable") -> str:
    """``source`` (module ``m.py``) transformed for ``target``."""
    return transform_source(source, path="m.py", target=target)


def eager_result(source: str, method: str, x: torch.Tensor, *args: object, runs: int = 1) -> torch.Tensor:
    """What ``Model(*args).method(x * 1)`` returns untransformed (its ``runs``-th call: a model keeping state across
    calls, run once eagerly first by a native target, answers the second)."""
    namespace: dict[str, object] = {}
    exec(compile(source, "eager_m.py", "exec"), namespace)  # npudsl's decorators run eagerly, same meaning
    torch.manual_seed(0)
    model = namespace["Model"](*args)  # type: ignore[operator]
    return [getattr(model, method)(x * 1) for _ in range(runs)][-1]  # type: ignore[no-any-return]


def sync_counts(
    code: str, target: str, method: str, x: torch.Tensor, want: torch.Tensor, *args: object
) -> dict[str, int]:
    """The sync calls of the graph of ``Caller(method, *args)(x)`` in ``code`` (generated for ``target``), traced
    under the race checker, once its outputs equal ``want``."""

    def build(module: object) -> torch.nn.Module:
        torch.manual_seed(0)
        caller: Callable[..., torch.nn.Module] = module.Caller  # type: ignore[attr-defined]
        return caller(method, *args)

    trace = trace_graph(code, target, build, (x,), eager_first=target in NATIVE)
    torch.testing.assert_close(trace.outputs, want)
    return count_graph(trace.dynamo[0])
