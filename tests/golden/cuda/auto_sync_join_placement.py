import functools

import torch
from torch import nn

# This module's streams and events, one per tag, made when the model is built, else on first use:
# importing the module touches no device.
_STREAMS: dict[str, torch.cuda.Stream] = {}


def _stream(tag: str, priority: int = 0) -> torch.cuda.Stream:
    """The stream named ``tag``: created on first use, then the same one (higher ``priority`` runs first)."""
    if tag not in _STREAMS:
        _STREAMS[tag] = torch.cuda.Stream(priority=-priority)
    return _STREAMS[tag]


_EVENTS: dict[str, torch.cuda.Event] = {}


def _event(table: dict[str, torch.cuda.Event], tag: str) -> torch.cuda.Event:
    """The event named ``tag`` in ``table``: created on first use, then the same one."""
    if tag not in table:
        table[tag] = torch.cuda.Event()
    return table[tag]


def _create_streams() -> None:
    """Make this module's streams and events now, while the model is built: a compiled region must find
    them made (dynamo rebuilds one made inside it). Without the device they are made on first use."""
    if torch.cuda.is_available():
        _stream("side", 0)
        _SIDE_FORK()
        _SIDE_JOIN()


def _record_stream(value, stream, objects=True) -> None:
    """``record_stream`` for each tensor in ``value``, walking tuples, lists, dicts and objects."""
    if isinstance(value, torch.Tensor):
        value.record_stream(stream)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _record_stream(item, stream, objects)
    elif isinstance(value, dict):
        for item in value.values():
            _record_stream(item, stream, objects)
    elif objects and not isinstance(value, (type, torch.nn.Module)) and hasattr(value, "__dict__"):
        for item in vars(value).values():
            _record_stream(item, stream, False)


_SIDE_FORK = functools.partial(_event, _EVENTS, "auto_sync_join_placement.Overlap.side.fork")
_SIDE_JOIN = functools.partial(_event, _EVENTS, "auto_sync_join_placement.Overlap.side.join")


class Overlap(nn.Module):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _create_streams()

    def side(self, x):
        return x.exp()

    def forward(self, x, flag: bool):
        _SIDE_FORK().record()
        with torch.cuda.stream(_stream("side", 0)):
            torch.cuda.current_stream().wait_event(_SIDE_FORK())
            _record_stream(x, _stream("side"))
            s = self.side(x)
            _SIDE_JOIN().record()
        a = x * 2
        b = a + 1
        torch.cuda.current_stream().wait_event(_SIDE_JOIN())
        if flag:
            b = b + s
        return b

    def discarded(self, x):
        self.side(x)
        return x + 1
