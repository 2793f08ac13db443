"""Single-stream twin of :mod:`corpus.vllm_cp_chunked_prefill` (same parameter names, no npudsl)."""

from __future__ import annotations

import torch
from torch import nn

from .layers import (AttentionMetadata, all_gather, all_to_all_single, attention_with_nomask_and_mask,
                     attn_out_lse_update, fused_infer_attention_score, load_kv_for_chunk, prefill_cp_post,
                     prefill_cp_pre, update_global_context_output, update_out_and_lse)


class _Layer(nn.Module):
    def __init__(self, hidden: int, heads: int, kv_heads: int, head_size: int) -> None:
        super().__init__()
        self.input_layernorm = nn.RMSNorm(hidden, eps=1e-6)
        self.qkv_proj = nn.Linear(hidden, (heads + 2 * kv_heads) * head_size, bias=False)
        self.o_proj = nn.Linear(heads * head_size, hidden, bias=False)


class CPModel(nn.Module):
    def __init__(self, hidden: int, heads: int, kv_heads: int, head_size: int, pcp_size: int, pcp_rank: int,
                 dcp_size: int, dcp_rank: int, layers: int) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.head_size = heads, kv_heads, head_size
        self.pcp_size, self.pcp_rank, self.dcp_size = pcp_size, pcp_rank, dcp_size
        self.layers = nn.ModuleList(_Layer(hidden, heads, kv_heads, head_size) for _ in range(layers))
        self.norm = nn.RMSNorm(hidden, eps=1e-6)

    def _decode(self, query: torch.Tensor, kv_cache: tuple[torch.Tensor, torch.Tensor],
                meta: AttentionMetadata) -> torch.Tensor:
        query, slots = all_gather(query, 1, self.dcp_size), meta.decode_meta.slots
        out, lse = fused_infer_attention_score(query, kv_cache[0][slots], kv_cache[1][slots], causal=False)
        parts = out.view(out.shape[0], self.dcp_size, self.heads, -1).transpose(0, 1)
        return update_out_and_lse(parts, lse.view(lse.shape[0], self.dcp_size, self.heads, 1).transpose(0, 1))[0]

    def _context(self, q: torch.Tensor, kv_cache: tuple[torch.Tensor, torch.Tensor],
                 meta: AttentionMetadata) -> torch.Tensor:
        """The query gathered, attended over the earlier chunks, exchanged back: [PCP*S, DCP*H, D+1]."""
        chunked = meta.prefill.chunked_context
        q = torch.index_select(all_gather(q, 0, self.pcp_size), 0, chunked.cp_kv_recover_idx_for_chunk)
        q = all_gather(q, 1, self.dcp_size)
        key, value = load_kv_for_chunk(kv_cache, chunked)
        if chunked.local_total_toks == 0:
            heads = self.heads * self.dcp_size
            context = (torch.full((q.size(0), heads, self.head_size), fill_value=0.0),
                       torch.full((q.size(0), heads, 1), fill_value=-torch.inf))
        else:
            context = fused_infer_attention_score(q, key, value, causal=False)
        local = torch.cat(context, dim=-1).permute([1, 2, 0]).contiguous()
        exchanged = torch.empty_like(local)
        all_to_all_single(exchanged, local, self.dcp_size)
        return all_gather(exchanged, -1, self.pcp_size).permute([2, 0, 1]).contiguous()

    def _merge(self, out: torch.Tensor, lse: torch.Tensor, context: torch.Tensor, n: int,
               meta: AttentionMetadata) -> None:
        chunked = meta.prefill.chunked_context
        full_out, full_lse = update_global_context_output(context, self.pcp_size, self.dcp_size, self.head_size)
        full_out = torch.index_select(full_out, 0, chunked.kv_inverse_idx_for_chunk)
        full_lse = torch.index_select(full_lse, 0, chunked.kv_inverse_idx_for_chunk)
        rows = slice(self.pcp_rank * n, (self.pcp_rank + 1) * n)
        idx = chunked.chunk_seq_mask_filtered_indices
        merged = attn_out_lse_update(lse[idx], full_lse[rows][idx], out[idx], full_out[rows][idx])
        out[idx] = merged.to(out.dtype)

    def _attention(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                   kv_cache: tuple[torch.Tensor, torch.Tensor], meta: AttentionMetadata,
                   output: torch.Tensor) -> torch.Tensor:
        ndec = meta.num_decode_tokens
        if meta.num_decodes > 0:
            output[:ndec] = self._decode(query[:ndec].contiguous(), kv_cache, meta)
        if meta.num_prefills > 0:
            chunked = meta.prefill.chunked_context is not None
            end = meta.num_actual_tokens_pcp_padded
            q = query[ndec:end // self.pcp_size].contiguous()
            key, value = key[self.pcp_size * ndec:end].contiguous(), value[self.pcp_size * ndec:end].contiguous()
            head, tail = prefill_cp_pre(q, key, value, meta.prefill.pcp_metadata, self.pcp_rank)
            out_head, lse_head = attention_with_nomask_and_mask(**head, chunked=chunked)
            context = self._context(q.clone(), kv_cache, meta) if chunked else None
            out_tail, lse_tail = attention_with_nomask_and_mask(**tail, chunked=chunked)
            out, lse = prefill_cp_post([out_head, out_tail], [lse_head, lse_tail], meta.prefill.pcp_metadata, chunked)
            if context is not None:
                self._merge(out, lse, context, q.size(0), meta)
            output[ndec:out.shape[0] + ndec] = out
        return output

    def forward(self, hidden_states: torch.Tensor, kv_caches: torch.Tensor,
                attn_metadata: AttentionMetadata) -> torch.Tensor:
        sizes = [self.heads * self.head_size, self.kv_heads * self.head_size, self.kv_heads * self.head_size]
        for kv_cache, layer in zip(kv_caches, self.layers):
            q, k, v = layer.qkv_proj(layer.input_layernorm(hidden_states)).split(sizes, dim=-1)
            query = q.reshape(-1, self.heads, self.head_size)
            key, value = k.reshape(-1, self.kv_heads, self.head_size), v.reshape(-1, self.kv_heads, self.head_size)
            kv_cache[0].index_copy_(0, attn_metadata.slot_mapping, key)
            kv_cache[1].index_copy_(0, attn_metadata.slot_mapping, value)
            key, value = all_gather(key, 0, self.pcp_size), all_gather(value, 0, self.pcp_size)
            output = self._attention(query, key, value, (kv_cache[0], kv_cache[1]), attn_metadata,
                                     torch.empty_like(query))
            hidden_states = hidden_states + layer.o_proj(output.reshape(-1, self.heads * self.head_size))
        return self.norm(hidden_states)
