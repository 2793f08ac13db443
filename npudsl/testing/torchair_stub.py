"""A stand-in ``torchair`` for machines without an NPU.

It runs generated aclgraph/GE code eagerly on the CPU, in program order, and logs
every torchair call with the stream it was issued on, so a schedule can be read
and compared (the seed comparison test does exactly that). Tensor work is logged
too, when ``log_ops`` is on, through a ``TorchDispatchMode``.
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Iterator
from typing import Any

import attrs

__all__ = ["Call", "CallLog", "installed"]


@attrs.frozen(kw_only=True)
class Call:
    name: str  # e.g. "npu_tagged_event_record", or an aten op name
    stream: str  # the stream it was issued on ("default" for the main stream)
    args: tuple[Any, ...] = ()


@attrs.define(eq=False)
class CallLog:
    calls: list[Call] = attrs.Factory(list)
    streams: list[str] = attrs.Factory(lambda: ["default"])
    events: dict[int, str] = attrs.Factory(dict)  # id(event) -> tag

    @property
    def stream(self) -> str:
        return self.streams[-1]

    def add(self, name: str, *args: Any) -> None:
        self.calls.append(Call(name=name, stream=self.stream, args=args))


class _Event:
    def __init__(self, tag: str) -> None:
        self.tag = tag


def _module(log: CallLog) -> types.ModuleType:
    @contextlib.contextmanager
    def npu_stream_switch(stream_tag: str, stream_priority: int = 0, enable_inner_parallel: bool = True):
        log.add("npu_stream_switch", stream_tag, stream_priority)
        log.streams.append(stream_tag)
        try:
            yield
        finally:
            log.streams.pop()

    @contextlib.contextmanager
    def limit_core_num(op_aicore_num: int, op_vectorcore_num: int):
        log.add("limit_core_num", op_aicore_num, op_vectorcore_num)
        yield

    def npu_wait_tensor(self: Any, dependency: Any) -> Any:
        log.add("npu_wait_tensor", self, dependency)
        return self

    created: set[str] = set()

    def npu_create_tagged_event(tag: str) -> _Event:
        if tag in created:
            raise ValueError(f"tagged event tag {tag} is already in use")
        created.add(tag)
        return _Event(tag)

    scope = types.SimpleNamespace(
        npu_stream_switch=npu_stream_switch, limit_core_num=limit_core_num, npu_wait_tensor=npu_wait_tensor
    )
    ops = types.SimpleNamespace(
        npu_create_tagged_event=npu_create_tagged_event,
        npu_tagged_event_record=lambda event: log.add("npu_tagged_event_record", event.tag),
        npu_tagged_event_wait=lambda event: log.add("npu_tagged_event_wait", event.tag),
        npu_record_tagged_stream=lambda tensor, tagged_stream: log.add("npu_record_tagged_stream", tagged_stream),
    )
    module = types.ModuleType("torchair")
    module.scope, module.ops = scope, ops  # type: ignore[attr-defined]
    return module


def _air(log: CallLog) -> types.SimpleNamespace:
    """``torch.ops.air``'s tagged-event ops, logged under the names of the torchair functions that trace to them."""
    return types.SimpleNamespace(
        tagged_event_record=lambda tag, created_inside=False: log.add("npu_tagged_event_record", tag),
        tagged_event_wait=lambda tag, created_inside=False: log.add("npu_tagged_event_wait", tag),
    )


@contextlib.contextmanager
def installed(*, log_ops: bool = False) -> Iterator[CallLog]:
    """``import torchair`` gives the stand-in inside this block; the log collects the calls."""
    log = CallLog()
    import torch

    previous = sys.modules.get("torchair")
    sys.modules["torchair"] = _module(log)
    ops = vars(torch.ops)  # torch.ops is a module: its namespaces are entries of its dict
    air = ops.get("air")
    ops["air"] = _air(log)  # generated code records and waits by tag here
    try:
        with _op_logging(log) if log_ops else contextlib.nullcontext():
            yield log
    finally:
        if air is None:
            ops.pop("air", None)
        else:
            ops["air"] = air
        if previous is None:
            sys.modules.pop("torchair", None)
        else:
            sys.modules["torchair"] = previous


@contextlib.contextmanager
def _op_logging(log: CallLog) -> Iterator[None]:
    from torch.utils._python_dispatch import TorchDispatchMode

    class _Logger(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
            log.add(func.overloadpacket.__name__)
            return func(*args, **(kwargs or {}))

    with _Logger():
        yield
