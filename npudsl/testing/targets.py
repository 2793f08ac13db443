"""Run and trace generated code of any target on the CPU, under the stand-ins of :mod:`npudsl.testing.standins`.

:func:`run_checked` imports generated source as a module under its target's
stand-ins, compiles the model ``build(module)`` makes with ``fullgraph=True`` and
the race-checking backend, runs it and returns the outputs (a race raises
:class:`~npudsl.errors.StreamRaceError`). :func:`trace_graph` does the same and
returns the graphs: dynamo's, and those ``aot_autograd`` makes from them.

Before compiling, calls ``x.record_stream(s)`` in the source become
``standins.record_stream(x, s)`` (dynamo does not trace the tensor method with a
stand-in stream); line numbers stay those of the source.
"""

from __future__ import annotations

import ast
import contextlib
import itertools
import linecache
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import torch

from npudsl.testing import standins

__all__ = ["Trace", "load", "run_checked", "trace_graph"]

_RECORD_STREAM = "__npudsl_record_stream__"
_LOADS = itertools.count(1)


class _RecordStream(ast.NodeTransformer):
    def visit_Call(self, node: ast.Call) -> ast.AST:  # noqa: N802 (ast's name)
        self.generic_visit(node)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "record_stream" and len(node.args) == 1:
            call = ast.Call(
                func=ast.Name(_RECORD_STREAM, ast.Load()), args=[node.func.value, *node.args], keywords=node.keywords
            )
            return ast.copy_location(call, node)
        return node


def load(source: str, target: str, name: str = "generated") -> types.ModuleType:
    """Execute ``source`` as module ``name``, registered in ``sys.modules`` (the caller removes it).

    Call it under ``standins.installed(target)``.
    """
    filename = f"<{name}.py>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    tree = ast.parse(source, filename)
    if target in ("cuda", "npugraph_ex"):
        tree = ast.fix_missing_locations(_RecordStream().visit(tree))
    module = types.ModuleType(name)
    module.__file__ = filename
    module.__dict__[_RECORD_STREAM] = standins.record_stream
    sys.modules[name] = module
    try:
        exec(compile(tree, filename, "exec"), module.__dict__)  # noqa: S102 (the code under test)
    except BaseException:
        del sys.modules[name]
        raise
    return module


@attrs.define(eq=False)
class Trace:
    """What one :func:`trace_graph` saw."""

    outputs: Any = None
    dynamo: list[torch.fx.GraphModule] = attrs.Factory(list)  # one per compile (a recompile adds one)
    aot: list[torch.fx.GraphModule] = attrs.Factory(list)  # aot_autograd's graphs (forward, then backward)
    device: standins.Device | None = None  # the stand-in torch.cuda / torch.npu, with the streams made


@contextlib.contextmanager
def _module(source: str, target: str, name: str) -> Iterator[tuple[types.ModuleType, standins.Device | None]]:
    """Each load gets its own module name: dynamo keeps a module it traced in its caller's globals by name."""
    name = f"{name}_{next(_LOADS)}"
    with standins.installed(target) as device:
        try:
            yield load(source, target, name), device
        finally:
            sys.modules.pop(name, None)


def _run(model: Any, inputs: tuple[Any, ...], backend: Any, eager_first: bool, calls: int) -> Any:
    if eager_first:
        model(*inputs)
    compiled = torch.compile(model, backend=backend, fullgraph=True)
    outputs = None
    for _ in range(calls):
        outputs = compiled(*inputs)
    return outputs


def trace_graph(
    source: str,
    target: str,
    build: Callable[[types.ModuleType], Any],
    inputs: tuple[Any, ...],
    *,
    name: str = "generated",
    eager_first: bool = False,
    calls: int = 1,
    data_edges: str | None = None,
) -> Trace:
    """Compile and run ``build(module)(*inputs)`` ``calls`` times; return the outputs and every graph.

    The module is ``<name>_<n>`` (file ``<<name>_<n>.py>``), a new ``n`` each time.
    ``eager_first``: run once eagerly before compiling (makes lazily created
    streams and events, as a first eager step would). ``data_edges``: see
    :func:`npudsl.testing.standins.lower`.
    """
    trace = Trace()
    with _module(source, target, name) as (module, trace.device):
        backend = standins.checking_backend(
            target, data_edges=data_edges, seen=trace.dynamo.append, aot_seen=trace.aot.append
        )
        trace.outputs = _run(build(module), inputs, backend, eager_first, calls)
    return trace


def run_checked(
    source: str, target: str, build: Callable[[types.ModuleType], Any], inputs: tuple[Any, ...], **options: Any
) -> Any:
    """The outputs of ``build(module)(*inputs)``, compiled with the race checker (see :func:`trace_graph`)."""
    return trace_graph(source, target, build, inputs, **options).outputs
