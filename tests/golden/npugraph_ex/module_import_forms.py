import torch
from torch import nn
import functools

# Streams and events are created on first use, once per process: importing this module touches no device.
_STREAMS: dict[str, torch.npu.Stream] = {}


def _stream(tag: str, priority: int = 0) -> torch.npu.Stream:
    """The stream named ``tag``: created on first use, then the same one (higher ``priority`` runs first)."""
    if tag not in _STREAMS:
        _STREAMS[tag] = torch.npu.Stream(priority=-priority)
    return _STREAMS[tag]


_EVENTS: dict[str, torch.npu.Event] = {}


def _event(tag: str) -> torch.npu.Event:
    """The event named ``tag``: created on first use, then the same one."""
    if tag not in _EVENTS:
        _EVENTS[tag] = torch.npu.Event()
    return _EVENTS[tag]


_DONE = functools.partial(_event, "module_import_forms.Aliased.done")


class Aliased(nn.Module):
    def first(self, x):
        with torch.npu.stream(_stream("side", 0)):
            out = x + 1
            _DONE().record()
            return out

    def second(self, x):
        caller_stream = torch.npu.current_stream()
        with torch.npu.stream(_stream("side", 0)):
            out = x * 2
            out = out.clone()
            out.record_stream(caller_stream)
            return out
