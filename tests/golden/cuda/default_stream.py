import functools

import torch
from torch import nn

# Streams and events: one per tag in the process (the stream table lives on the device module, where every
# generated module finds it), made when the model is built, else on first use. Importing touches no device.
_STREAMS: dict[str, torch.cuda.Stream] = vars(torch.cuda).setdefault("npudsl_streams", {})


def _stream(tag: str, priority: int = 0) -> torch.cuda.Stream:
    """The stream named ``tag``: created on first use, then the same one (higher ``priority`` runs first)."""
    if tag not in _STREAMS:
        _STREAMS[tag] = torch.cuda.Stream(priority=-priority)
    return _STREAMS[tag]


_EVENTS: dict[str, torch.cuda.Event] = {}


def _event(tag: str) -> torch.cuda.Event:
    """The event named ``tag``: created on first use, then the same one."""
    if tag not in _EVENTS:
        _EVENTS[tag] = torch.cuda.Event()
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


_SIDE_DONE = functools.partial(_event, "default_stream.BackToMain.side_done")


class BackToMain(nn.Module):
    def side(self, x):
        caller_stream = torch.cuda.current_stream()
        with torch.cuda.stream(_stream("side", 0)):
            _record_stream(x, _stream("side"))
            out = x * 2
            _record_stream(out, caller_stream)
            _SIDE_DONE().record()
            return out

    def main(self, x):
        torch.cuda.current_stream().wait_event(_SIDE_DONE())
        return x + 1
