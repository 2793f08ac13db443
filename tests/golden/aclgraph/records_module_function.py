"""Events of module-level functions are scoped to the module."""

import torch
import torchair

# Tagged events are process-global: each is created once, here.
_COPIED = torchair.ops.npu_create_tagged_event(tag="records_module_function.copied")


def copy_out(x):
    with torchair.scope.npu_stream_switch("copy", 0):
        out = x.clone()
        torchair.ops.npu_tagged_event_record(_COPIED)
        return out


def use(x):
    torchair.ops.npu_tagged_event_wait(_COPIED)
    return x + 1
