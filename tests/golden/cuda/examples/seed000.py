"""Seed 000 (torchair multi-stream in reduce-overhead mode), written with npudsl decorators.

What overlaps with what: on the main stream, ``add`` then ``mm1`` and the ``C``
work; on stream "1", ``matmul`` (after ``add`` has finished, through the event
``add_done``) and then ``side_sum``; on stream "2", ``late_add`` once ``matmul``
has finished (event ``mm_done``). Every wait is placed by hand (``sync="manual"``),
exactly as the seed does, so the transformed forward issues the seed's calls.
"""

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
        _stream("1", 0)
        _stream("2", 0)
        _ADD_DONE()
        _MM_DONE()


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


_ADD_DONE = functools.partial(_event, _EVENTS, "seed000.Model.add_done")
_MM_DONE = functools.partial(_event, _EVENTS, "seed000.Model.mm_done")


class Model(nn.Module):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _create_streams()

    def add(self, in1, in2):
        out = torch.add(in1, in2)
        _ADD_DONE().record()
        return out

    def matmul(self, in3, in4):
        torch.cuda.current_stream().wait_event(_ADD_DONE())
        out = torch.mm(in3, in4)
        _MM_DONE().record()
        return out

    # B is made on stream "1" and dropped on the main stream: keep its memory
    # from being reused while stream "1" may still be writing it.
    def side_sum(self, in3, in4):
        return in3 + in4

    def late_add(self, in3, in4):
        torch.cuda.current_stream().wait_event(_MM_DONE())
        return torch.add(in3, in4)

    def forward(self, in1, in2, in3, in4):
        add_result = self.add(in1, in2)
        with torch.cuda.stream(_stream("1", 0)):
            _record_stream(in3, _stream("1"))
            _record_stream(in4, _stream("1"))
            mm_result = self.matmul(in3, in4)
            b = self.side_sum(in3, in4)
        mm1 = torch.mm(in3, in4)
        del b
        c = torch.ones(in3.shape[0], in4.shape[1], dtype=in3.dtype, device=in3.device)
        c.add_(2)
        with torch.cuda.stream(_stream("2", 0)):
            _record_stream(in3, _stream("2"))
            _record_stream(in4, _stream("2"))
            add2 = self.late_add(in3, in4)
        return add_result, mm_result, mm1, add2, c


def example_inputs(size: int = 64) -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(0)
    return tuple(torch.randn(size, size, generator=generator) for _ in range(4))
