"""Events of module-level functions are scoped to the module."""

import functools

import torch

# Streams and events: one per tag in the process (the tables live on the device module, where every
# generated module finds them), made when the model is built, else on first use. Importing touches no device.
_EVENTS: dict[str, torch.cuda.Event] = vars(torch.cuda).setdefault("npudsl_events", {})


def _event(tag: str) -> torch.cuda.Event:
    """The event named ``tag``: created on first use, then the same one."""
    if tag not in _EVENTS:
        _EVENTS[tag] = torch.cuda.Event()
    return _EVENTS[tag]


_COPIED = functools.partial(_event, "records_module_function.copied")


def copy_out(x):
    out = x.clone()
    _COPIED().record()
    return out


def use(x):
    torch.cuda.current_stream().wait_event(_COPIED())
    return x + 1
