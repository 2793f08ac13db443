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


class Split(nn.Module):
    def halves(self, x):
        caller_stream = torch.cuda.current_stream()
        with torch.cuda.stream(_stream("side", 0)):
            _record_stream(x, _stream("side"))
            left, right = x.chunk(2)
            out = right.relu()
            out_1 = (left * 2)
            _record_stream(left, caller_stream)
            _record_stream(out, caller_stream)
            _record_stream(out_1, caller_stream)
            return left, out, out_1

    def packed(self, x):
        caller_stream = torch.cuda.current_stream()
        with torch.cuda.stream(_stream("side", 0)):
            _record_stream(x, _stream("side"))
            out = torch.split(x, 2)
            _record_stream(out, caller_stream)
            return out
