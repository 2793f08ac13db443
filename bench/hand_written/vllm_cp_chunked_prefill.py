"""vllm-ascend's context-parallel attention by hand: per layer two round trips to the communication stream.

A chunked prefill (the example batch) forks before the query is cloned and
all-gathered on "cp_chunkedprefill_comm", as upstream's
``comm_stream.wait_stream(current_stream())`` does; the main stream splits the
queries into their head and tail halves and attends the head half meanwhile, then
waits before the context attention reads the gathered query. The context output
(made on the main stream) goes back to the communication stream after a second
fork for the all-to-all and the all-gather, beside the tail half's attention; the
main stream waits before the reshuffle that reads it. Two ``record_stream`` calls a
layer: the prefill query is last read on the main stream by the head/tail split,
and the context output not at all, while the main stream allocates (the head and
the tail attention) before each join. What the communication stream makes is read
on the main stream after the join and freed before its next fork: nothing to keep.
A prefill without earlier chunks and a decode batch run on one stream.
"""

from __future__ import annotations

import torch
from torch import nn

from corpus.vllm_cp_chunked_prefill.layers import (all_gather, all_to_all_single, attention_with_nomask_and_mask,
                                                   fused_infer_attention_score, load_kv_for_chunk, prefill_cp_post,
                                                   prefill_cp_pre)
from npudsl import runtime

SOURCE = "corpus:vllm_cp_chunked_prefill"
USER_EVENTS = ()
COMM = "cp_chunkedprefill_comm"


class Hand(nn.Module):
    def __init__(self, twin: nn.Module) -> None:
        super().__init__()
        self.m = twin

    def _query_all(self, q: torch.Tensor, meta) -> torch.Tensor:
        m, chunked = self.m, meta.prefill.chunked_context
        runtime.record("gather_q")
        with runtime.stream(COMM):
            runtime.wait("gather_q")
            runtime.record_stream(q, COMM)
            q_all = torch.index_select(all_gather(q.clone(), 0, m.pcp_size), 0, chunked.cp_kv_recover_idx_for_chunk)
            q_all = all_gather(q_all, 1, m.dcp_size)
            runtime.record("q_gathered")
        return q_all

    def _exchanged(self, local: torch.Tensor) -> torch.Tensor:
        m = self.m
        runtime.record("exchange")
        with runtime.stream(COMM):
            runtime.wait("exchange")
            runtime.record_stream(local, COMM)
            exchanged = torch.empty_like(local)
            all_to_all_single(exchanged, local, m.dcp_size)
            gathered = all_gather(exchanged, -1, m.pcp_size)
            runtime.record("exchanged")
        return gathered

    def _context(self, q_all: torch.Tensor, kv_cache, meta) -> torch.Tensor:
        m, chunked = self.m, meta.prefill.chunked_context
        key, value = load_kv_for_chunk(kv_cache, chunked)
        if chunked.local_total_toks == 0:
            heads = m.heads * m.dcp_size
            context = (torch.full((q_all.size(0), heads, m.head_size), fill_value=0.0),
                       torch.full((q_all.size(0), heads, 1), fill_value=-torch.inf))
        else:
            context = fused_infer_attention_score(q_all, key, value, causal=False)
        return torch.cat(context, dim=-1).permute([1, 2, 0]).contiguous()

    def _attention(self, query, key, value, kv_cache, meta, output):
        m, ndec = self.m, meta.num_decode_tokens
        if meta.num_decodes > 0:
            output[:ndec] = m._decode(query[:ndec].contiguous(), kv_cache, meta)
        if meta.num_prefills > 0:
            chunked = meta.prefill.chunked_context is not None
            end = meta.num_actual_tokens_pcp_padded
            q = query[ndec:end // m.pcp_size].contiguous()
            key, value = key[m.pcp_size * ndec:end].contiguous(), value[m.pcp_size * ndec:end].contiguous()
            if chunked:
                q_all = self._query_all(q, meta)
            head, tail = prefill_cp_pre(q, key, value, meta.prefill.pcp_metadata, m.pcp_rank)
            out_head, lse_head = attention_with_nomask_and_mask(**head, chunked=chunked)
            if chunked:
                runtime.wait("q_gathered")
                gathered = self._exchanged(self._context(q_all, kv_cache, meta))
            out_tail, lse_tail = attention_with_nomask_and_mask(**tail, chunked=chunked)
            out, lse = prefill_cp_post([out_head, out_tail], [lse_head, lse_tail], meta.prefill.pcp_metadata, chunked)
            if chunked:
                runtime.wait("exchanged")
                m._merge(out, lse, gathered.permute([2, 0, 1]).contiguous(), q.size(0), meta)
            output[ndec:out.shape[0] + ndec] = out
        return output

    def forward(self, hidden_states: torch.Tensor, kv_caches: torch.Tensor, attn_metadata) -> torch.Tensor:
        m = self.m
        sizes = [m.heads * m.head_size, m.kv_heads * m.head_size, m.kv_heads * m.head_size]
        for kv_cache, layer in zip(kv_caches, m.layers):
            q, k, v = layer.qkv_proj(layer.input_layernorm(hidden_states)).split(sizes, dim=-1)
            query = q.reshape(-1, m.heads, m.head_size)
            key, value = k.reshape(-1, m.kv_heads, m.head_size), v.reshape(-1, m.kv_heads, m.head_size)
            kv_cache[0].index_copy_(0, attn_metadata.slot_mapping, key)
            kv_cache[1].index_copy_(0, attn_metadata.slot_mapping, value)
            key, value = all_gather(key, 0, m.pcp_size), all_gather(value, 0, m.pcp_size)
            output = self._attention(query, key, value, (kv_cache[0], kv_cache[1]), attn_metadata,
                                     torch.empty_like(query))
            hidden_states = hidden_states + layer.o_proj(output.reshape(-1, m.heads * m.head_size))
        return m.norm(hidden_states)
