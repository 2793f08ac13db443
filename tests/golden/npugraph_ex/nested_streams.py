import functools

import torch
from torch import nn

# Streams and events: one per tag in the process (the tables live on the device module, where every
# generated module finds them), made when the model is built, else on first use. Importing touches no device.
_STREAMS: dict[str, torch.npu.Stream] = vars(torch.npu).setdefault("npudsl_streams", {})


def _stream(tag: str, priority: int = 0) -> torch.npu.Stream:
    """The stream named ``tag``: created on first use, then the same one (higher ``priority`` runs first)."""
    if tag not in _STREAMS:
        _STREAMS[tag] = torch.npu.Stream(priority=-priority)
    return _STREAMS[tag]


_EVENTS: dict[str, torch.npu.Event] = vars(torch.npu).setdefault("npudsl_events", {})


def _event(tag: str) -> torch.npu.Event:
    """The event named ``tag``: created on first use, then the same one."""
    if tag not in _EVENTS:
        _EVENTS[tag] = torch.npu.Event()
    return _EVENTS[tag]


def _record_stream(value, stream) -> None:
    """``record_stream`` for each tensor in ``value``, walking tuples, lists and dicts."""
    if isinstance(value, torch.Tensor):
        value.record_stream(stream)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _record_stream(item, stream)
    elif isinstance(value, dict):
        for item in value.values():
            _record_stream(item, stream)


_INNER_FORK = functools.partial(_event, "nested_streams.Nested.inner.fork")
_INNER_JOIN = functools.partial(_event, "nested_streams.Nested.inner.join")


class Nested(nn.Module):
    def inner(self, x):
        return x * 2

    def outer(self, x):
        _INNER_FORK().record()
        with torch.npu.stream(_stream("inner", 0)):
            torch.npu.current_stream().wait_event(_INNER_FORK())
            _record_stream(x, _stream("inner"))
            doubled = self.inner(x)
            _INNER_JOIN().record()
        own = x + 1
        torch.npu.current_stream().wait_event(_INNER_JOIN())
        return own + doubled

    def forward(self, x):
        result = self.outer(x)
        return result - 1
