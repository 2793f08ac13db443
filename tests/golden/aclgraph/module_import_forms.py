import torch
import torchair
from torch import nn


def _clone(value):
    """``value`` with each tensor in it cloned, rebuilding tuples, named tuples, lists and dicts."""
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*[_clone(item) for item in value])
    if isinstance(value, (tuple, list)):
        return type(value)([_clone(item) for item in value])
    if isinstance(value, dict):
        return {key: _clone(item) for key, item in value.items()}
    return value


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
_DONE = _tagged_event("module_import_forms.Aliased.done", __file__)


class Aliased(nn.Module):
    def first(self, x):
        out = x + 1
        torchair.ops.npu_tagged_event_record(_DONE)
        return out

    def second(self, x):
        out = x * 2
        out = _clone(out)
        return out
