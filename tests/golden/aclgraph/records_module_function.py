"""Events of module-level functions are scoped to the module."""

import torch
import torchair

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
_COPIED = _tagged_event("records_module_function.copied", __file__)


def copy_out(x):
    out = x.clone()
    torchair.ops.npu_tagged_event_record(_COPIED)
    return out


def use(x):
    torchair.ops.npu_tagged_event_wait(_COPIED)
    return x + 1
