# A header comment stays where it is.
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


class Commented(nn.Module):
    # Above the decorators.
    # Between decorators and def.
    def branch(self, x):  # trailing on def
        caller_stream = torch.cuda.current_stream()
        with torch.cuda.stream(_stream("side", 0)):
            _record_stream(x, _stream("side"))
            # first line of the body
            y = x + 1  # trailing on a statement

            # after a blank line
            _record_stream(y, caller_stream)
            return y  # trailing on return

    @torch.no_grad()
    # Above a decorator that goes, after one that stays.
    # on the decorator's line
    def after_kept(self, x):
        caller_stream = torch.cuda.current_stream()
        with torch.cuda.stream(_stream("side", 0)):
            _record_stream(x, _stream("side"))
            out = x * 2
            _record_stream(out, caller_stream)
            return out
