import functools

import torch
from torch import nn

# This module's streams and events, one per tag, made when the model is built, else on first use:
# importing the module touches no device.
_STREAMS: dict[str, torch.npu.Stream] = {}


def _stream(tag: str, priority: int = 0) -> torch.npu.Stream:
    """The stream named ``tag``: created on first use, then the same one (higher ``priority`` runs first)."""
    if tag not in _STREAMS:
        _STREAMS[tag] = torch.npu.Stream(priority=-priority)
    return _STREAMS[tag]


_EVENTS: dict[str, torch.npu.Event] = {}


def _event(table: dict[str, torch.npu.Event], tag: str) -> torch.npu.Event:
    """The event named ``tag`` in ``table``: created on first use, then the same one."""
    if tag not in table:
        table[tag] = torch.npu.Event()
    return table[tag]


def _create_streams() -> None:
    """Make this module's streams and events now, while the model is built: a compiled region must find
    them made (dynamo rebuilds one made inside it). Without the device they are made on first use."""
    if torch.npu.is_available():
        _stream("expert", 0)
        _EXPERT_FORK()
        _EXPERT_JOIN()


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


_EXPERT_FORK = functools.partial(_event, _EVENTS, "on_stream_class.Expert.forward.fork")
_EXPERT_JOIN = functools.partial(_event, _EVENTS, "on_stream_class.Expert.forward.join")


class Expert(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x):
        return self.proj(x)


class Layer(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.expert = Expert(hidden)
        self.main = nn.Linear(hidden, hidden)
        _create_streams()

    def forward(self, x):
        _EXPERT_FORK().record()
        with torch.npu.stream(_stream("expert", 0)):
            torch.npu.current_stream().wait_event(_EXPERT_FORK())
            _record_stream(x, _stream("expert"))
            side = self.expert(x)
            _EXPERT_JOIN().record()
        main = self.main(x)
        torch.npu.current_stream().wait_event(_EXPERT_JOIN())
        return main + side
