"""Events of module-level functions are scoped to the module."""

import torch
import torchair


def _record_tagged_stream(value, stream) -> None:
    """``npu_record_tagged_stream`` for each tensor in ``value``, walking tuples, lists and dicts."""
    if isinstance(value, torch.Tensor):
        torchair.ops.npu_record_tagged_stream(value, stream)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _record_tagged_stream(item, stream)
    elif isinstance(value, dict):
        for item in value.values():
            _record_tagged_stream(item, stream)


# Tagged events are process-global: each is created once, here.
_COPIED = torchair.ops.npu_create_tagged_event(tag="records_module_function.copied")


def copy_out(x):
    with torchair.scope.npu_stream_switch("copy", 0):
        _record_tagged_stream(x, "copy")
        out = x.clone()
        _record_tagged_stream(out, "default")
        torchair.ops.npu_tagged_event_record(_COPIED)
        return out


def use(x):
    torchair.ops.npu_tagged_event_wait(_COPIED)
    return x + 1
