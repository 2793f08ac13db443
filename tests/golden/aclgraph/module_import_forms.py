import torch
from torch import nn
import torchair

# Tagged events are process-global: each is created once, here.
_DONE = torchair.ops.npu_create_tagged_event(tag="module_import_forms.Aliased.done")


class Aliased(nn.Module):
    def first(self, x):
        with torchair.scope.npu_stream_switch("side", 0):
            out = x + 1
            torchair.ops.npu_tagged_event_record(_DONE)
            return out

    def second(self, x):
        with torchair.scope.npu_stream_switch("side", 0):
            out = x * 2
            out = out.clone()
            torchair.ops.npu_record_tagged_stream(out, "default")
            return out
