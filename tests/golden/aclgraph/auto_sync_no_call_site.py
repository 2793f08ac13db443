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


def _tagged_event(tag: str, origin: str):
    """The event tagged ``tag`` by the source file ``origin``, created once per process: this file run again
    (reload, another module name) gets the same event; another file that made ``tag`` first gets its own."""
    if _TAGGED_EVENTS.get(tag, (origin,))[0] != origin:
        tag = f"{tag}@{origin}"
    if tag not in _TAGGED_EVENTS:
        _TAGGED_EVENTS[tag] = (origin, torchair.ops.npu_create_tagged_event(tag=tag))
    return _TAGGED_EVENTS[tag][1]


# Tagged events are process-global: each is made here, once per process.
_SIMPLE_FORK = _tagged_event("auto_sync_no_call_site.Lonely.simple.fork", __file__)
_SIMPLE_JOIN = _tagged_event("auto_sync_no_call_site.Lonely.simple.join", __file__)
_BRANCHING_FORK = _tagged_event("auto_sync_no_call_site.Lonely.branching.fork", __file__)
_BRANCHING_JOIN = _tagged_event("auto_sync_no_call_site.Lonely.branching.join", __file__)


class Lonely(nn.Module):
    def simple(self, x, *, join=True):
        torchair.ops.npu_tagged_event_record(_SIMPLE_FORK)
        with torchair.scope.npu_stream_switch("side", 0):
            torchair.ops.npu_tagged_event_wait(_SIMPLE_FORK)
            if join:
                _record_tagged_stream(x, "side")
            y = x + 1
            out = y * 2
            if join:
                _record_tagged_stream(out, "default")
            torchair.ops.npu_tagged_event_record(_SIMPLE_JOIN)
        if join:
            torchair.ops.npu_tagged_event_wait(_SIMPLE_JOIN)
        return out

    def branching(self, x, *, join=True):
        torchair.ops.npu_tagged_event_record(_BRANCHING_FORK)
        try:
            with torchair.scope.npu_stream_switch("side", 0):
                torchair.ops.npu_tagged_event_wait(_BRANCHING_FORK)
                if join:
                    _record_tagged_stream(x, "side")
                if x.sum() > 0:
                    if join:
                        _record_tagged_stream(x, "default")
                    torchair.ops.npu_tagged_event_record(_BRANCHING_JOIN)
                    return x
                out = -x
                if join:
                    _record_tagged_stream(out, "default")
                torchair.ops.npu_tagged_event_record(_BRANCHING_JOIN)
                return out
        finally:
            if join:
                torchair.ops.npu_tagged_event_wait(_BRANCHING_JOIN)
