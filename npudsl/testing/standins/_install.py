"""Context managers that put the stand-ins in place and take them out again.

``torchair_installed()``: ``import torchair`` (and ``torchair.scope``,
``torchair.ops``) gives the stand-in; tags start empty, as in a new process.
``device_installed("cuda")`` patches ``torch.cuda.Stream``, ``Event``, ``stream``,
``current_stream``, ``is_current_stream_capturing`` and ``synchronize``;
``device_installed("npu")`` sets a ``torch.npu`` module with those and
``set_stream_limit``/``get_stream_limit``/``reset_stream_limit``, ``is_available``
(``False``) and ``npugraph_ex.scope.limit_core_num``. Both restore what was there.
``installed(target)`` installs what the generated code of ``target`` calls and,
for ``npugraph_ex``, registers a dynamo backend of that name.

Dynamo caches two tables keyed by the ``torch.cuda`` objects the first time it
uses them (``trace_rules.get_torch_obj_rule_map``, ``_in_graph_classes``); they are
filled before patching, so that the stand-ins are traced as user code.
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Iterator
from typing import Any

import torch
from torch._dynamo.backends import registry
from torch._dynamo.variables.user_defined import UserDefinedClassVariable

from npudsl.testing.standins import _device, _limits, _ops, _torchair
from npudsl.testing.standins._backend import npugraph_ex_backend, torchair_backend

__all__ = ["TARGETS", "device_installed", "installed", "torchair_installed"]

TARGETS = ("portable", "aclgraph", "ge", "npugraph_ex", "cuda")
_MISSING = object()


@contextlib.contextmanager
def _attributes(owner: Any, values: dict[str, Any]) -> Iterator[None]:
    saved = {name: getattr(owner, name, _MISSING) for name in values}
    for name, value in values.items():
        setattr(owner, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, value)


@contextlib.contextmanager
def _entries(table: dict[str, Any], values: dict[str, Any]) -> Iterator[None]:
    saved = {name: table.get(name, _MISSING) for name in values}
    table.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is _MISSING:
                table.pop(name, None)
            else:
                table[name] = value


@contextlib.contextmanager
def torchair_installed() -> Iterator[types.ModuleType]:
    modules = _torchair.build(torchair_backend)
    saved_tags = set(_ops.created_tags)
    _ops.created_tags.clear()
    try:
        # Generated code records and waits by tag through torch.ops.air (torchair's own ops): here they are
        # the stand-in's, with the same schemas.
        with _entries(sys.modules, modules), _attributes(torch.ops, {"air": getattr(torch.ops, _ops.AIR)}):
            yield modules["torchair"]
    finally:
        _ops.created_tags.clear()
        _ops.created_tags.update(saved_tags)


def _common(device: _device.Device) -> dict[str, Any]:
    return {
        "Stream": _device.Stream,
        "Event": _device.Event,
        "stream": device.stream,
        "current_stream": device.current_stream,
        "is_current_stream_capturing": lambda: False,
        "synchronize": lambda device=None: None,
    }


def _npu(device: _device.Device) -> types.ModuleType:
    npu = types.ModuleType("torch.npu")
    npu.__dict__.update(
        _common(device),
        is_available=lambda: False,
        npugraph_ex=_limits.npugraph_ex_module(),
        get_stream_limit=_limits.get_stream_limit,
        set_stream_limit=_limits.set_stream_limit,
        reset_stream_limit=_limits.reset_stream_limit,
    )
    return npu


@contextlib.contextmanager
def device_installed(kind: str) -> Iterator[_device.Device]:
    if kind not in ("cuda", "npu"):
        raise ValueError(f"kind must be 'cuda' or 'npu', not {kind!r}")
    torch._dynamo.trace_rules.get_torch_obj_rule_map()
    UserDefinedClassVariable._in_graph_classes()
    device = _device.Device(kind=kind)
    device.main()
    patch = _attributes(torch.cuda, _common(device)) if kind == "cuda" else _attributes(torch, {"npu": _npu(device)})
    _device._ACTIVE.append(device)
    try:
        with patch:
            yield device
    finally:
        _device._ACTIVE.remove(device)


@contextlib.contextmanager
def installed(target: str) -> Iterator[_device.Device | None]:
    """The stand-ins ``target``'s generated code calls; yields the device stand-in (``None``: portable)."""
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}; choose one of {', '.join(TARGETS)}")
    with contextlib.ExitStack() as stack:
        device = (
            None
            if target == "portable"
            else stack.enter_context(device_installed("cuda" if target == "cuda" else "npu"))
        )
        if target in ("aclgraph", "ge"):
            stack.enter_context(torchair_installed())
        if target == "npugraph_ex":
            stack.enter_context(_entries(registry._COMPILER_FNS, {"npugraph_ex": npugraph_ex_backend}))
            stack.enter_context(_entries(registry._BACKENDS, {"npugraph_ex": None}))
        yield device
