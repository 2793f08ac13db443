"""One method of a flow test's model, transformed, traced under the race checker, checked and counted.

Many flow tests hold one model source (a ``Model`` with a method per case, and the ``Caller`` of
``method_caller.py``) and ask the same three things of it: the generated code for a target, the method's result
run eagerly (the decorators keep their meaning untransformed: the reference), and the sync calls of the traced
graph once its outputs matched the reference, the race checker running (a race raises ``StreamRaceError``).
Each test wrote those three helpers again; they live here once, with the check most flow tests end with
(:func:`assert_race_free_and_exact`: the ``Caller``'s outputs traced under the race checker equal its eager outputs).
The model is built with seed 0 on both sides, so random parameters match; a native target (``cuda``,
``npugraph_ex``) runs once eagerly first, making its streams and events as a first eager step would, so its traced
call is the second and is compared with the second eager call.
"""

from __future__ import annotations

from typing import Any

import torch

from bench.sync_count import count_graph
from codegen.driver.api import transform_source
from npudsl.testing.targets import Trace, trace_graph

__all__ = [
    "EVERY_TARGET",
    "NATIVE",
    "TARGETS",
    "assert_race_free_and_exact",
    "checked_outputs",
    "eager_outputs",
    "eager_result",
    "generated",
    "sync_counts",
]

TARGETS = ["portable", "aclgraph", "npugraph_ex", "cuda"]
EVERY_TARGET = [*TARGETS, "ge"]
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


def eager_outputs(source: str, method: str, x: torch.Tensor, *args: object, runs: int = 1) -> Any:
    """What ``Caller(method, *args)(x)`` returns untransformed (its ``runs``-th call)."""
    namespace: dict[str, Any] = {}
    exec(compile(source, "eager_m.py", "exec"), namespace)  # npudsl's decorators run eagerly, same meaning
    torch.manual_seed(0)
    caller = namespace["Caller"](method, *args)
    return [caller(x) for _ in range(runs)][-1]


def _trace(code: str, target: str, method: str, x: torch.Tensor, *args: object) -> Trace:
    """``Caller(method, *args)(x)`` of ``code`` (generated for ``target``), traced under the race checker."""

    def build(module: Any) -> torch.nn.Module:
        torch.manual_seed(0)
        return module.Caller(method, *args)  # type: ignore[no-any-return]

    return trace_graph(code, target, build, (x,), eager_first=target in NATIVE)


def checked_outputs(source: str, target: str, method: str, x: torch.Tensor, *args: object) -> Any:
    """The outputs of ``Caller(method, *args)(x)`` of ``source`` generated for ``target``, traced under the race
    checker (a race raises ``StreamRaceError``)."""
    return _trace(generated(source, target), target, method, x, *args).outputs


def assert_race_free_and_exact(source: str, target: str, method: str, x: torch.Tensor, *args: object) -> None:
    """``source`` generated for ``target`` traces race-free, and ``Caller(method, *args)(x)`` returns what it returns
    untransformed on the same call (a native target's traced call is its second)."""
    want = eager_outputs(source, method, x, *args, runs=2 if target in NATIVE else 1)
    torch.testing.assert_close(checked_outputs(source, target, method, x, *args), want)


def sync_counts(
    code: str, target: str, method: str, x: torch.Tensor, want: torch.Tensor, *args: object
) -> dict[str, int]:
    """The sync calls of the graph of ``Caller(method, *args)(x)`` in ``code`` (generated for ``target``), traced
    under the race checker, once its outputs equal ``want``."""
    trace = _trace(code, target, method, x, *args)
    torch.testing.assert_close(trace.outputs, want)
    return count_graph(trace.dynamo[0])
