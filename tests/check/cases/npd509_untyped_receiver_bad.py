"""NPD509: a stream method called on a parameter whose type the caller does not state."""

import torch
from torch import nn

from npudsl import on_stream


class SharedMLP(nn.Module):
    @on_stream("moe_secondary")
    def gate_up_phase(self, x):
        return x * 2


def fused_experts(x, shared_experts=None):
    gate_up = shared_experts.gate_up_phase(x)  # W: NPD509@15
    return torch.relu(x) + gate_up


def typed_experts(x, shared_experts: SharedMLP):
    gate_up = shared_experts.gate_up_phase(x)
    return torch.relu(x) + gate_up
