"""sglang's DSA attention on Ascend by hand: per layer one fork, one block on "alt_stream", one join.

Decode (the example batch): the fused MLA prologue reads the layer's normed
``hidden_states`` and ``positions`` (made on the main stream) on "alt_stream" after
a fork, writes the latent and rope keys into the layer's KV cache slices in place, and
records the join; the main stream projects the same ``hidden_states`` again into
``q_lora`` meanwhile and waits for the join before the indexer (which reads
``positions`` and the pool the prologue wrote). Prefill: the fork comes after
``q_lora`` is made, "alt_stream" runs ``q_b_proj``, the main stream norms the latent
keys and waits before splitting ``q``. No ``record_stream``: every tensor read on
"alt_stream" (``hidden_states``, ``positions``, ``q_lora``) is read again on the main
stream after the join, so none of it can be freed while the side stream runs, and
what "alt_stream" allocates is freed on the main stream before the next fork (upstream's
``q.record_stream(alt_stream)`` on the stream that made ``q`` keeps nothing).
"""

from __future__ import annotations

import torch
from torch import nn

from corpus.sglang_dsa_alt_stream.layers import BumpAllocator, ForwardBatch, KVPool, attn_mqa, mla_prolog
from npudsl import runtime

SOURCE = "corpus:sglang_dsa_alt_stream"
USER_EVENTS = ()
ALT = "alt_stream"


def _fork_join(work, *args):
    runtime.record("fork")
    with runtime.stream(ALT):
        runtime.wait("fork")
        out = work(*args)
        runtime.record("join")
    return out


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def _decode(self, a: nn.Module, positions: torch.Tensor, x: torch.Tensor, batch: ForwardBatch):
        q_pe, k_pe, q_nope_out, k_nope = _fork_join(mla_prolog, a.mla_preprocess, positions, x, batch)
        q_lora = a._q_lora(x)[0]
        runtime.wait("join")
        return q_pe, k_pe, q_nope_out, k_nope, q_lora

    def _prefill(self, a: nn.Module, positions: torch.Tensor, x: torch.Tensor):
        q_lora, latent = a._q_lora(x)
        q_lora = q_lora.clone()
        q = _fork_join(lambda t: a.q_b_proj(t)[0].view(-1, a.num_local_heads, a.qk_head_dim), q_lora)
        k_nope, k_pe = latent.unsqueeze(1).split([a.kv_lora_rank, a.qk_rope_head_dim], dim=-1)
        k_nope = a.kv_a_layernorm(k_nope)
        runtime.wait("join")
        q_nope, q_pe = q.split([a.qk_nope_head_dim, a.qk_rope_head_dim], dim=-1)
        q_nope_out = torch.bmm(q_nope.transpose(0, 1), a.w_kc).transpose(0, 1)
        q_pe, k_pe = a.rotary_emb(positions, q_pe, k_pe)
        return q_pe, k_pe, q_nope_out, k_nope, q_lora

    def _attention(self, a: nn.Module, positions: torch.Tensor, x: torch.Tensor, batch: ForwardBatch):
        if batch.is_decode:
            q_pe, k_pe, q_nope_out, k_nope, q_lora = self._decode(a, positions, x, batch)
        else:
            q_pe, k_pe, q_nope_out, k_nope, q_lora = self._prefill(a, positions, x)
        topk = a.indexer(x, q_lora, positions, batch, a.layer_id)
        out = attn_mqa(q_nope_out, k_nope, batch, a.layer_id, q_pe, k_pe, topk)
        out = torch.bmm(out.transpose(0, 1), a.w_vc).transpose(0, 1)
        return a.o_proj(out.reshape(-1, a.num_local_heads * a.v_head_dim))[0]

    def forward(self, x: torch.Tensor, positions: torch.Tensor, ckv_cache: torch.Tensor, k_rope_cache: torch.Tensor,
                index_k_cache: torch.Tensor, out_cache_loc: torch.Tensor, is_decode: bool) -> torch.Tensor:
        batch = ForwardBatch(is_decode, out_cache_loc, KVPool(ckv_cache, k_rope_cache, index_k_cache))
        BumpAllocator(torch.zeros(1))
        for layer in self.m.layers:
            x = x + self._attention(layer.self_attn, positions, layer.input_layernorm(x), batch)
            x = x + layer.mlp(layer.post_attention_layernorm(x))
        return self.m.norm(x)
