"""What one op of a captured graph reads, writes in place, and returns an alias of, from ATen's schemas.

A dynamo graph calls torch-level functions and methods (``F.relu(h, True)``,
``h.T``, ``torch._foreach_add_``, ``F.batch_norm`` with running statistics...).
Names say little about memory; the ATen operators they run say everything: an
argument annotated ``Tensor(a!)`` is written, a result annotated ``Tensor(a)``
is a view. So each node runs once on ``meta`` tensors shaped like its example
values (no data, no device), under a dispatch mode that reads the schema of
every ATen op it reaches, as PyTorch's CUDA sanitizer does with real memory:

- an argument whose storage reaches a write-annotated slot is *written*;
- one that reaches any other op that is not a pure view is *read*;
- the result *aliases* the argument whose storage it shares (a view, ``.data``,
  ``x.to(x.dtype)``, the result of an in-place op);
- the node is *random* when an op tagged ``nondeterministic_seeded`` runs.

What cannot run on ``meta`` (data-dependent ops, unknown example values) falls
back to the overload schemas of ``torch.ops.aten.<name>`` (:mod:`._fallback`).
Results are cached per op and argument layout, so a 60-layer model costs little.
"""

from __future__ import annotations

import operator
from typing import Any

import attrs
import torch
import torch.fx
from torch._decomp import decomposition_table
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map

from npudsl.race._fallback import by_schema
from npudsl.race._meta import example, metas
from npudsl.runtime._ops import OPS

__all__ = ["Effect", "effect"]

_RUNTIME = {target for packet in OPS.values() for target in (packet, packet.default)}
_KEY = "npudsl_effect"


@attrs.frozen(kw_only=True)
class Effect:
    """What a node does to the memory of its argument nodes."""

    reads: tuple[torch.fx.Node, ...] = ()
    writes: tuple[torch.fx.Node, ...] = ()
    aliases: torch.fx.Node | None = None  # the argument whose memory the result stands for
    random: bool = False


_NONE = Effect()


class _Recorder(TorchDispatchMode):
    """Notes, per input storage, whether an ATen op wrote it or read it, and whether any op was seeded.

    A few schemas say less than their kernels do (``native_batch_norm`` updates its running
    statistics through slots without ``(a!)``), so an op reached from the user's call that
    has a reference decomposition also runs that, one level deep, and its ops count too.
    """

    def __init__(self, storages: dict[int, int]) -> None:
        super().__init__()
        self.storages = storages  # storage id -> input position
        self.reads: set[int] = set()
        self.writes: set[int] = set()
        self.random = False
        self.depth = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        annotated = self._note(func, args, kwargs)
        if self.depth == 0 and not annotated and func in decomposition_table:
            self._decomposed(func, args, kwargs)
        return func(*args, **kwargs)  # the kernel's own result: what it aliases is the kernel's

    def _decomposed(self, func: Any, args: Any, kwargs: Any) -> None:
        """Run ``func``'s reference decomposition for what its ops write (the result is the kernel's)."""
        self.depth += 1
        try:
            with self:
                decomposition_table[func](*args, **kwargs)
        except Exception:  # noqa: BLE001, S110 - a decomposition that fails on meta: the kernel's schema stands
            pass
        finally:
            self.depth -= 1

    def _note(self, func: Any, args: Any, kwargs: Any) -> bool:
        """Record what ``func`` does to the inputs' storages; whether its schema has any alias annotation."""
        schema = func._schema
        view = any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)
        self.random = self.random or torch.Tag.nondeterministic_seeded in func.tags
        named = dict(zip((a.name for a in schema.arguments), args)) | kwargs
        for argument in schema.arguments:
            written = argument.alias_info is not None and argument.alias_info.is_write
            if view and not written:
                continue
            for value in tree_flatten(named.get(argument.name))[0]:
                position = self.storages.get(_storage(value)) if isinstance(value, torch.Tensor) else None
                if position is not None:
                    (self.writes if written else self.reads).add(position)
        return view or any(a.alias_info is not None for a in schema.arguments)


def _storage(tensor: torch.Tensor) -> int:
    return tensor.untyped_storage()._cdata


def _call(node: torch.fx.Node, args: Any, kwargs: Any) -> Any:
    if node.op == "call_method":
        return getattr(args[0], str(node.target))(*args[1:], **kwargs)
    assert callable(node.target)  # call_function: the op itself
    return node.target(*args, **kwargs)


def _record(node: torch.fx.Node, inputs: list[torch.fx.Node]) -> tuple[Any, ...]:
    """Run ``node`` on meta: (read positions, written positions, aliased position, random)."""
    args, kwargs, tensors = metas(node, inputs)
    storages = {_storage(t): i for i, group in enumerate(tensors) for t in group}
    recorder = _Recorder(storages)
    with torch.no_grad(), recorder:
        result = _call(node, args, kwargs)
    shared = [storages.get(_storage(t)) for t in tree_flatten(result)[0] if isinstance(t, torch.Tensor)]
    alias = next((p for p in shared if p is not None), None)
    return tuple(sorted(recorder.reads - recorder.writes)), tuple(sorted(recorder.writes)), alias, recorder.random


def _layout(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"T{tuple(value.shape)}{value.stride()}{value.dtype}"
    if isinstance(value, (tuple, list)):
        return "[" + ",".join(map(_layout, value)) + "]"
    return repr(value)


def _key(node: torch.fx.Node, inputs: list[torch.fx.Node]) -> str:
    """The op and its arguments' layouts: nodes with one key have one effect (by argument position)."""
    position = {n: i for i, n in enumerate(inputs)}
    shape = tree_map(
        lambda a: f"@{position[a]}:{_layout(example(a))}" if isinstance(a, torch.fx.Node) else a,
        (node.args, node.kwargs),
    )
    return f"{node.op}:{node.target!r}:{shape!r}"


_CACHE: dict[str, tuple[Any, ...]] = {}


def _run(node: torch.fx.Node, inputs: list[torch.fx.Node]) -> Effect:
    key = _key(node, inputs)
    if key not in _CACHE:
        if len(_CACHE) >= 65536:
            _CACHE.clear()
        _CACHE[key] = _record(node, inputs)
    reads, writes, alias, random = _CACHE[key]
    return Effect(
        reads=tuple(inputs[i] for i in reads),
        writes=tuple(inputs[i] for i in writes),
        aliases=inputs[alias] if alias is not None else None,
        random=random,
    )


def _inputs(node: torch.fx.Node) -> list[torch.fx.Node]:
    found: list[torch.fx.Node] = []
    tree_map(
        lambda a: found.append(a) if isinstance(a, torch.fx.Node) and a not in found else None, (node.args, node.kwargs)
    )
    return found


def _compute(node: torch.fx.Node) -> Effect:
    if node.op == "call_module":
        return Effect(reads=tuple(_inputs(node)), random=True)
    if node.op not in ("call_function", "call_method") or node.target in _RUNTIME:
        return _NONE
    if node.target is operator.getitem and not node.kwargs and isinstance(node.args[1], int):
        return Effect(aliases=node.args[0]) if isinstance(node.args[0], torch.fx.Node) else _NONE
    inputs = _inputs(node)
    if not inputs:  # a factory (``torch.randn(...)``): nothing to read; the registry says if it draws
        return Effect(random=by_schema(node, inputs)["random"])
    try:
        return _run(node, inputs)
    except Exception:  # noqa: BLE001 - any op that meta cannot run (Unrunnable included) is judged by its schemas
        return Effect(**by_schema(node, inputs))


def effect(node: torch.fx.Node) -> Effect:
    """What ``node`` reads, writes and aliases (computed once per node, again if its arguments change)."""
    arguments = tuple(node.all_input_nodes)
    found = node.meta.get(_KEY)
    if found is None or found[0] != arguments:
        found = node.meta[_KEY] = (arguments, _compute(node))
    return found[1]
