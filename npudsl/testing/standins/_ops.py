"""The torchair / npugraph_ex custom ops, with torch-npu 2.13.0's schemas, in test namespaces.

``torch.ops.standin_air.<op>`` mirrors ``torch.ops.air.<op>`` and
``torch.ops.standin_npugraph_ex.<op>`` mirrors ``torch.ops.npugraph_ex.<op>``:
the same schema text, the same ops marked side-effecting (``has_side_effect``),
Meta kernels with the same results (``wait_tensor``'s returns ``self``, as the
real one does: that is what makes functionalization read ``self`` through the
wait's output afterwards). The eager kernels run on the CPU in program order.
The real ``wait_tensor`` kernel raises outside GE; the stand-in's returns a copy
of ``self``, so GE code also runs in tests (a kernel returning its input is
deprecated in torch 2.13: aot_autograd warns at run time that it will refuse it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import torch
from torch.fx.node import has_side_effect

__all__ = ["AIR", "NPUGRAPH_EX", "SCHEMAS", "OpSpec", "created_tags", "op_name"]

AIR = "standin_air"
NPUGRAPH_EX = "standin_npugraph_ex"


@attrs.frozen(kw_only=True)
class OpSpec:
    schema: str
    source: str  # where torch-npu 2.13.0 defines it, inside the wheel
    side_effect: bool


_SCOPE = "torch_npu/dynamo/torchair/scope/_scope.py"
_WAIT_TENSOR = "torch_npu/dynamo/torchair/scope/_wait_tensor.py"
_TAGGED = "torch_npu/dynamo/torchair/ops/_tagged_event.py"
_RECORD_WAIT = "torch_npu/dynamo/torchair/ops/_record_wait.py"
_EX_SCOPE = "torch_npu/dynamo/npugraph_ex/scope/_scope.py"

SCHEMAS: dict[str, dict[str, OpSpec]] = {
    AIR: {
        "scope_enter": OpSpec(
            schema="scope_enter(str[] keys, str[] values, bool need_execute=False) -> None",
            source=_SCOPE,
            side_effect=True,
        ),
        "scope_exit": OpSpec(schema="scope_exit(bool need_execute=False) -> None", source=_SCOPE, side_effect=True),
        "wait_tensor": OpSpec(
            schema="wait_tensor(Tensor self, Tensor dependency) -> Tensor", source=_WAIT_TENSOR, side_effect=False
        ),
        "tagged_event_record": OpSpec(
            schema="tagged_event_record(str tag, bool created_inside=False) -> ()", source=_TAGGED, side_effect=True
        ),
        "tagged_event_wait": OpSpec(
            schema="tagged_event_wait(str tag, bool created_inside=False) -> ()", source=_TAGGED, side_effect=True
        ),
        "record_tagged_stream": OpSpec(
            schema="record_tagged_stream(Tensor input, str tag) -> ()", source=_TAGGED, side_effect=True
        ),
        "record_tagged_stream_": OpSpec(
            schema="record_tagged_stream_(Tensor(a!) input, str tag) -> ()", source=_TAGGED, side_effect=False
        ),
        "record": OpSpec(schema="record(*, Device? device=None) -> Tensor", source=_RECORD_WAIT, side_effect=False),
        "wait": OpSpec(schema="wait(Tensor[] x) -> ()", source=_RECORD_WAIT, side_effect=True),
    },
    NPUGRAPH_EX: {
        "scope_enter": OpSpec(
            schema="scope_enter(str[] keys, str[] values, bool need_execute=False) -> None",
            source=_EX_SCOPE,
            side_effect=True,
        ),
        "scope_exit": OpSpec(schema="scope_exit(bool need_execute=False) -> None", source=_EX_SCOPE, side_effect=True),
    },
}

# Tags made by the installed stand-in's npu_create_tagged_event (set by the installer).
created_tags: set[str] = set()


def _nothing(*_: Any, **__: Any) -> None:
    """Scopes only annotate the graph; eagerly on the CPU nothing happens."""


def _tagged_event(tag: str, created_inside: bool = False) -> None:
    """As the real kernel: an event must have been created for the tag (graph passes create their own)."""
    if not created_inside and tag not in created_tags:
        raise AssertionError(f"tagged event is None while tag is {tag}: create it with npu_create_tagged_event")


def _same(self: torch.Tensor, dependency: torch.Tensor) -> torch.Tensor:
    return self


def _copy(self: torch.Tensor, dependency: torch.Tensor) -> torch.Tensor:
    return self.clone()


def _record(*, device: Any = None) -> torch.Tensor:
    return torch.empty(0, device=device)


def _record_meta(*, device: Any = None) -> torch.Tensor:
    return torch.empty(0, device="meta")


def _record_tagged_stream_functional(input: torch.Tensor, tag: str) -> None:  # noqa: A002 (schema name)
    """Functionalization: the in-place variant becomes the side-effecting out-of-place one (as in the wheel)."""
    torch.ops.standin_air.record_tagged_stream(input, tag)


_EAGER: dict[str, Callable[..., Any]] = {
    "wait_tensor": _copy,
    "tagged_event_record": _tagged_event,
    "tagged_event_wait": _tagged_event,
}
_META: dict[str, Callable[..., Any]] = {"wait_tensor": _same, "record": _record_meta}
_BACKEND_SELECT = {"record": _record, "wait": _nothing}  # no tensor to dispatch on: as the wheel registers them


def _register(namespace: str) -> torch.library.Library:
    library = torch.library.Library(namespace, "DEF")
    for name, spec in SCHEMAS[namespace].items():
        library.define(spec.schema)
        if name in _BACKEND_SELECT:
            library.impl(name, _BACKEND_SELECT[name], "BackendSelect")
        else:
            library.impl(name, _EAGER.get(name, _nothing), "CompositeExplicitAutograd")
        library.impl(name, _META.get(name, _nothing), "Meta")
        if spec.side_effect:
            has_side_effect(getattr(getattr(torch.ops, namespace), name).default)
    return library


_LIBRARIES = [_register(AIR), _register(NPUGRAPH_EX)]
_LIBRARIES[0].impl("record_tagged_stream_", _record_tagged_stream_functional, "Functionalize")


def op_name(target: object) -> tuple[str, str] | None:
    """``(namespace, op)`` when ``target`` is one of the stand-in ops (packet or overload), else ``None``."""
    packet: Any = getattr(target, "overloadpacket", target)
    namespace = getattr(packet, "_qualified_op_name", "").partition("::")[0]
    if namespace in SCHEMAS:
        return namespace, packet.__name__
    return None
