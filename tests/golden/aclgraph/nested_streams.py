import torch
import torchair
from torch import nn


def _record_tagged_stream(value, stream) -> None:
    """``npu_record_tagged_stream`` for each tensor in ``value``, walking tuples, lists and dicts."""
    if isinstance(value, torch.Tensor):
        torchair.ops.npu_record_tagged_stream(value, stream)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _record_tagged_stream(item, stream)
    elif isinstance(value, dict):
        for item in value.values():
            _record_tagged_stream(item, stream)


_TAGGED_EVENTS = vars(torchair.ops).setdefault("npudsl_tagged_events", {})


def _tagged_event(tag: str, origin: str | None = None):
    """The event tagged ``tag``, created once per process. A class's event names its source file ``origin``:
    this file run again (reload, another module name) gets the same event, another file that made ``tag``
    first gets its own. A shared event (``"ns:name"``) names none: it is one event in every file."""
    if origin is not None and _TAGGED_EVENTS.get(tag, (origin,))[0] != origin:
        tag = f"{tag}@{origin}"
    if tag not in _TAGGED_EVENTS:
        _TAGGED_EVENTS[tag] = (origin, torchair.ops.npu_create_tagged_event(tag=tag))
    return _TAGGED_EVENTS[tag][1]


# Tagged events are process-global: each is made here, once per process.
_INNER_FORK = _tagged_event("nested_streams.Nested.inner.fork", __file__)
_INNER_JOIN = _tagged_event("nested_streams.Nested.inner.join", __file__)


class Nested(nn.Module):
    def inner(self, x):
        return x * 2

    def outer(self, x):
        torchair.ops.npu_tagged_event_record(_INNER_FORK)
        with torchair.scope.npu_stream_switch("inner", 0):
            torchair.ops.npu_tagged_event_wait(_INNER_FORK)
            _record_tagged_stream(x, "inner")
            doubled = self.inner(x)
            torchair.ops.npu_tagged_event_record(_INNER_JOIN)
        own = x + 1
        torchair.ops.npu_tagged_event_wait(_INNER_JOIN)
        return own + doubled

    def forward(self, x):
        result = self.outer(x)
        return result - 1
