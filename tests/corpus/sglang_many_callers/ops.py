"""The top-k selection as a stream function on sglang's "alt" stream.

Shaped after the routed-expert branch of ``DeepseekV2MoE.forward_normal_dual_stream``
(sglang ``python/sglang/srt/models/deepseek_v2.py``), which runs the router's top-k
and the routed experts on ``alt_stream``. The same function also picks the draft
tokens of the NextN head.

Idioms: many_callers (called from ``experts.RoutedExperts`` through a lambda, and from
``nextn.NextNLayer`` under an alias), container_returns (a ``(weights, ids)`` tuple),
non_tensor_args (``top_k: int``, ``renormalize: bool``, ``enabled``).
"""

from __future__ import annotations

import torch

from npudsl import keep_output, on_stream


@on_stream("alt", when="enabled")
@keep_output
def fused_topk(logits: torch.Tensor, top_k: int, renormalize: bool, enabled: bool = True):
    weights, ids = logits.softmax(dim=-1).topk(top_k, dim=-1)
    if renormalize:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights, ids
