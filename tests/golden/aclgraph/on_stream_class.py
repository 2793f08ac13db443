import torch
from torch import nn
import torchair

# Tagged events are process-global: each is created once, here.
_EXPERT_FORK = torchair.ops.npu_create_tagged_event(tag="on_stream_class.Expert.forward.fork")
_EXPERT_JOIN = torchair.ops.npu_create_tagged_event(tag="on_stream_class.Expert.forward.join")


class Expert(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x):
        torchair.ops.npu_tagged_event_record(_EXPERT_FORK)
        with torchair.scope.npu_stream_switch("expert", 0):
            torchair.ops.npu_tagged_event_wait(_EXPERT_FORK)
            torchair.ops.npu_record_tagged_stream(x, "expert")
            out = self.proj(x)
            torchair.ops.npu_tagged_event_record(_EXPERT_JOIN)
            return out


class Layer(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.expert = Expert(hidden)
        self.main = nn.Linear(hidden, hidden)

    def forward(self, x):
        side = self.expert(x)
        main = self.main(x)
        torchair.ops.npu_tagged_event_wait(_EXPERT_JOIN)
        return main + side
