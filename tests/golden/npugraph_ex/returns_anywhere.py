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


_FINISHED = functools.partial(_event, "returns_anywhere.Early.finished")
_LOGGED = functools.partial(_event, "returns_anywhere.Early.logged")


class Early(nn.Module):
    def route(self, x, skip):
        caller_stream = torch.npu.current_stream()
        with torch.npu.stream(_stream("side", 0)):
            if skip:
                x.record_stream(caller_stream)
                _FINISHED().record()
                return x
            for _ in range(2):
                if x.sum() > 0:
                    out = x * 2
                    out.record_stream(caller_stream)
                    _FINISHED().record()
                    return out

            def helper(v):
                return v + 1  # a nested function's return is its own

            x = helper(x)
            out_1 = torch.relu(x)
            out_1.record_stream(caller_stream)
            _FINISHED().record()
            return out_1

    def log(self, x):
        print(x.shape)
        _LOGGED().record()
