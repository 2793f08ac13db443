"""vllm-ascend's context-parallel GQA attention: a chunked prefill's collectives on "cp_chunkedprefill_comm".

Shaped after ``AscendAttentionCPImpl.forward_impl`` in vllm-ascend
``vllm_ascend/attention/context_parallel/attention_cp.py`` (the tree before PCP
left the V1 model runner). When a prefill batch continues earlier chunks
(``has_chunked_context``), the query is all-gathered over the PCP group (then put
back in sequence order) and over the DCP group on the communication stream,
while the main stream splits the local queries into their head and tail halves
and attends the head half; the main stream then attends the gathered query over
this rank's share of the earlier chunks in the paged cache, and the all-to-all
over DCP and the all-gather over PCP of that context output go to the
communication stream while the main stream attends the tail half; last, the
context output is merged into the current chunk's output in place. Upstream
brackets each collective with ``comm_stream.wait_stream(current_stream())`` and
joins with ``current_stream().wait_stream(comm_stream)`` before the first read;
here the two collectives are the stream methods, and the first reads of their
results are the joins (upstream always overlaps a chunked prefill; ``multistream``
is the corpus's switch, read by ``when=``, so the single-stream run is the same
code). The query is cloned in the call's argument, as upstream
does inside its ``with npu.stream(...)``. Decode tokens (attended over the cache
with the query gathered over DCP) are written into ``output`` first; the prefill
part is written after them.

Idioms: module_constants (the stream tag), non_tensor_args (the attention metadata
object, its chunked-context part ``None`` for a prefill without earlier chunks),
container_returns (the head/tail halves as dicts, the context attention as a tuple),
if_call (both calls under ``if has_chunked_context:``, the second after the first's
join), inplace_side_output (the current chunk's output updated in place after the
second join, then written into ``output``).
"""

from __future__ import annotations

import torch
from torch import nn

from npudsl import on_stream

from .layers import (AttentionMetadata, all_gather, all_to_all_single, attention_with_nomask_and_mask,
                     attn_out_lse_update, fused_infer_attention_score, load_kv_for_chunk, prefill_cp_post,
                     prefill_cp_pre, update_global_context_output, update_out_and_lse)

CP_CHUNKEDPREFILL_COMM_STREAM = "cp_chunkedprefill_comm"


class AscendAttentionCPImpl(nn.Module):
    def __init__(self, num_heads: int, num_kv_heads: int, head_size: int, pcp_size: int, pcp_rank: int,
                 dcp_size: int, dcp_rank: int, multistream: bool = True) -> None:
        super().__init__()
        self.multistream = multistream
        self.num_heads, self.num_kv_heads, self.head_size = num_heads, num_kv_heads, head_size
        self.pcp_size, self.pcp_rank, self.dcp_size, self.dcp_rank = pcp_size, pcp_rank, dcp_size, dcp_rank

    def _forward_decode_pcp_dcp(self, query: torch.Tensor, kv_cache: tuple[torch.Tensor, torch.Tensor],
                                attn_metadata: AttentionMetadata) -> torch.Tensor:
        query = all_gather(query, 1, self.dcp_size)
        slots = attn_metadata.decode_meta.slots
        out, lse = fused_infer_attention_score(query, kv_cache[0][slots], kv_cache[1][slots], causal=False)
        parts = out.view(out.shape[0], self.dcp_size, self.num_heads, -1).transpose(0, 1)
        lses = lse.view(lse.shape[0], self.dcp_size, self.num_heads, 1).transpose(0, 1)
        return update_out_and_lse(parts, lses)[0]

    def _forward_prefill_cp_attn(self, data: dict, is_head: bool, attn_metadata: AttentionMetadata):
        chunked = attn_metadata.prefill.chunked_context is not None
        return attention_with_nomask_and_mask(**data, chunked=chunked)

    @on_stream(CP_CHUNKEDPREFILL_COMM_STREAM, when="self.multistream")
    def _prefill_query_all_gather(self, attn_metadata: AttentionMetadata, prefill_query: torch.Tensor):
        if self.pcp_size > 1:
            prefill_query = all_gather(prefill_query, 0, self.pcp_size)
            prefill_query = torch.index_select(prefill_query, 0,
                                               attn_metadata.prefill.chunked_context.cp_kv_recover_idx_for_chunk)
        if self.dcp_size > 1:
            prefill_query = all_gather(prefill_query, 1, self.dcp_size)
        return prefill_query

    def _compute_prefill_context(self, query: torch.Tensor, kv_cache: tuple[torch.Tensor, torch.Tensor],
                                 attn_metadata: AttentionMetadata) -> tuple[torch.Tensor, torch.Tensor]:
        chunked = attn_metadata.prefill.chunked_context
        key, value = load_kv_for_chunk(kv_cache, chunked)
        num_heads = self.num_heads * self.dcp_size
        if chunked.local_total_toks == 0:
            return (torch.full((query.size(0), num_heads, self.head_size), fill_value=0.0),
                    torch.full((query.size(0), num_heads, 1), fill_value=-torch.inf))
        return fused_infer_attention_score(query, key, value, causal=False)

    @on_stream(CP_CHUNKEDPREFILL_COMM_STREAM, when="self.multistream")
    def _gather_global_context_output(self, local_context_attn_output: torch.Tensor) -> torch.Tensor:
        if self.dcp_size > 1:
            dcp_context_attn_output = torch.empty_like(local_context_attn_output)
            all_to_all_single(dcp_context_attn_output, local_context_attn_output, self.dcp_size)
        else:
            dcp_context_attn_output = local_context_attn_output
        if self.pcp_size > 1:
            return all_gather(dcp_context_attn_output, -1, self.pcp_size)
        return dcp_context_attn_output

    def _update_chunk_attn_out_lse_with_current_attn_out_lse(
        self, current_attn_output_prefill: torch.Tensor, current_attn_lse_prefill: torch.Tensor,
        attn_output_full_chunk: torch.Tensor, attn_lse_full_chunk: torch.Tensor, prefill_query: torch.Tensor,
        attn_metadata: AttentionMetadata,
    ) -> None:
        chunked = attn_metadata.prefill.chunked_context
        if self.pcp_size > 1:
            attn_output_full_chunk = torch.index_select(attn_output_full_chunk, 0, chunked.kv_inverse_idx_for_chunk)
            attn_lse_full_chunk = torch.index_select(attn_lse_full_chunk, 0, chunked.kv_inverse_idx_for_chunk)
        num_tokens = prefill_query.size(0)
        rows = slice(self.pcp_rank * num_tokens, (self.pcp_rank + 1) * num_tokens)
        attn_output_full_chunk, attn_lse_full_chunk = attn_output_full_chunk[rows], attn_lse_full_chunk[rows]
        filtered_indices = chunked.chunk_seq_mask_filtered_indices
        attn_output_filtered = attn_out_lse_update(
            current_attn_lse_prefill[filtered_indices], attn_lse_full_chunk[filtered_indices],
            current_attn_output_prefill[filtered_indices], attn_output_full_chunk[filtered_indices],
        )
        current_attn_output_prefill[filtered_indices] = attn_output_filtered.to(current_attn_output_prefill.dtype)

    def forward_impl(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                     kv_cache: tuple[torch.Tensor, torch.Tensor], attn_metadata: AttentionMetadata,
                     output: torch.Tensor) -> torch.Tensor:
        has_decode = attn_metadata.num_decodes > 0
        has_prefill = attn_metadata.num_prefills > 0
        num_decode_tokens = attn_metadata.num_decode_tokens
        if has_decode:
            decode_query = query[:num_decode_tokens].contiguous()
            output[:num_decode_tokens] = self._forward_decode_pcp_dcp(decode_query, kv_cache, attn_metadata)
        if has_prefill:
            has_chunked_context = attn_metadata.prefill.chunked_context is not None
            end = attn_metadata.num_actual_tokens_pcp_padded // self.pcp_size
            prefill_query = query[num_decode_tokens:end].contiguous()
            key = key[self.pcp_size * num_decode_tokens:attn_metadata.num_actual_tokens_pcp_padded].contiguous()
            value = value[self.pcp_size * num_decode_tokens:attn_metadata.num_actual_tokens_pcp_padded].contiguous()

            if has_chunked_context:
                # the query gathered on the communication stream, beside the head half's attention
                prefill_query_all = self._prefill_query_all_gather(attn_metadata, prefill_query.clone())

            if self.pcp_size > 1:
                data_head, data_tail = prefill_cp_pre(prefill_query, key, value, attn_metadata.prefill.pcp_metadata,
                                                      self.pcp_rank)
                output_head, lse_head = self._forward_prefill_cp_attn(data_head, True, attn_metadata)
            else:
                attn_output_prefill, attn_lse_prefill = fused_infer_attention_score(prefill_query, key, value,
                                                                                    causal=True)

            if has_chunked_context:
                context_output = self._compute_prefill_context(prefill_query_all, kv_cache, attn_metadata)
                # (output, lse) -> [S, H, D+1] -> [H, D+1, S]
                local_context_output = torch.cat(context_output, dim=-1).permute([1, 2, 0]).contiguous()
                # the context output exchanged on the communication stream, beside the tail half's attention
                global_context_output = self._gather_global_context_output(local_context_output)

            if self.pcp_size > 1:
                output_tail, lse_tail = self._forward_prefill_cp_attn(data_tail, False, attn_metadata)
                attn_output_prefill, attn_lse_prefill = prefill_cp_post(
                    [output_head, output_tail], [lse_head, lse_tail], attn_metadata.prefill.pcp_metadata,
                    has_chunked_context,
                )

            if has_chunked_context:
                global_context_output = global_context_output.permute([2, 0, 1]).contiguous()
                context_output, context_lse = update_global_context_output(global_context_output, self.pcp_size,
                                                                           self.dcp_size, self.head_size)
                self._update_chunk_attn_out_lse_with_current_attn_out_lse(
                    attn_output_prefill, attn_lse_prefill, context_output, context_lse, prefill_query, attn_metadata
                )

            output[num_decode_tokens:attn_output_prefill.shape[0] + num_decode_tokens] = attn_output_prefill
        return output
