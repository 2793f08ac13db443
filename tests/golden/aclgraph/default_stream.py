import torch
from torch import nn
import torchair

# Tagged events are process-global: each is created once, here.
_SIDE_DONE = torchair.ops.npu_create_tagged_event(tag="default_stream.BackToMain.side_done")


class BackToMain(nn.Module):
    def side(self, x):
        with torchair.scope.npu_stream_switch("side", 0):
            out = x * 2
            torchair.ops.npu_tagged_event_record(_SIDE_DONE)
            return out

    def main(self, x):
        torchair.ops.npu_tagged_event_wait(_SIDE_DONE)
        return x + 1
