"""The undecorated parts of vllm-ascend's context-parallel (PCP + DCP) GQA attention, shared with the twin.

Shaped after vllm-ascend ``vllm_ascend/attention/context_parallel/attention_cp.py`` and
``vllm_ascend/attention/context_parallel/common_cp.py`` (the stream itself is
``cp_chunkedprefill_comm_stream()`` of ``vllm_ascend/utils.py``): the attention metadata the builder hands the implementation
(PCP head/tail index tensors, the chunked-context metadata of a chunked prefill,
the decode slots), the merge of partial attention outputs by their log-sum-exp
(``_update_out_and_lse``, ``_npu_attn_out_lse_update``), and the pure pieces of
the implementation (``_forward_prefill_cp_pre``/``_post``, the nomask and mask
attentions, the KV load for the context, the global-context reshuffle).
``npu_fused_infer_attention_score`` is a small softmax attention that also returns
the log-sum-exp; the PCP/DCP collectives are single-process stand-ins with the
same shapes and data flow (``all_gather`` makes a new tensor ``world`` times
larger along ``dim``; ``all_to_all_single`` writes its output argument in place).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = [
    "AttentionMetadata",
    "ChunkedContextMetadata",
    "DecodeMetadata",
    "PCPMetadata",
    "PrefillMetadata",
    "all_gather",
    "all_to_all_single",
    "attention_with_nomask_and_mask",
    "attn_out_lse_update",
    "fused_infer_attention_score",
    "load_kv_for_chunk",
    "prefill_cp_post",
    "prefill_cp_pre",
    "update_global_context_output",
    "update_out_and_lse",
]


@dataclass
class PCPMetadata:
    q_head_idx: torch.Tensor
    q_tail_idx: torch.Tensor
    kv_with_q_head_nomask_idx: torch.Tensor
    kv_with_q_head_mask_idx: torch.Tensor
    kv_with_q_tail_nomask_idx: torch.Tensor
    kv_with_q_tail_mask_idx: torch.Tensor
    q_full_idx: torch.Tensor


@dataclass
class ChunkedContextMetadata:
    cp_kv_recover_idx_for_chunk: torch.Tensor
    kv_inverse_idx_for_chunk: torch.Tensor
    chunk_seq_mask_filtered_indices: torch.Tensor
    starts: torch.Tensor  # the cache slots of this rank's share of the earlier chunks
    local_total_toks: int


@dataclass
class PrefillMetadata:
    pcp_metadata: PCPMetadata
    chunked_context: ChunkedContextMetadata | None = None


@dataclass
class DecodeMetadata:
    slots: torch.Tensor


@dataclass
class AttentionMetadata:
    num_decodes: int
    num_prefills: int
    num_decode_tokens: int
    num_actual_tokens_pcp_padded: int
    slot_mapping: torch.Tensor
    prefill: PrefillMetadata | None = None
    decode_meta: DecodeMetadata | None = None


def all_gather(x: torch.Tensor, dim: int, world: int) -> torch.Tensor:
    """A group all-gather along ``dim``: this rank's part first, each peer's a scaled copy."""
    return torch.cat([x * (1.0 + 0.25 * rank) for rank in range(world)], dim=dim)


def all_to_all_single(output: torch.Tensor, input: torch.Tensor, world: int) -> None:
    """``dist.all_to_all_single``: the parts along dim 0 exchanged, written into ``output``."""
    output.copy_(torch.cat(input.chunk(world, dim=0)[::-1], dim=0))


def fused_infer_attention_score(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                                causal: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """TND attention (GQA: key heads repeated), returning the output and its log-sum-exp per token and head."""
    k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
    v = v.repeat_interleave(q.shape[1] // v.shape[1], dim=1)
    scores = torch.einsum("qhd,khd->hqk", q, k) * q.shape[-1] ** -0.5
    if causal:
        keep = torch.ones(q.shape[0], k.shape[0], dtype=torch.bool).tril(k.shape[0] - q.shape[0])
        scores = scores.masked_fill(~keep, float("-inf"))
    lse = scores.logsumexp(dim=-1, keepdim=True)
    out = torch.einsum("hqk,khd->qhd", (scores - lse).exp(), v)
    return out, lse.permute(1, 0, 2)


def update_out_and_lse(outs: torch.Tensor, lses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``_update_out_and_lse``: N partial outputs [N, S, H, D] merged by their log-sum-exps [N, S, H, 1]."""
    lse = lses.logsumexp(dim=0)
    return ((lses - lse).exp() * outs).sum(dim=0), lse


def attn_out_lse_update(lse_a: torch.Tensor, lse_b: torch.Tensor, out_a: torch.Tensor,
                        out_b: torch.Tensor) -> torch.Tensor:
    """``_npu_attn_out_lse_update``: two partial outputs merged; only the output is returned."""
    return update_out_and_lse(torch.stack([out_a, out_b]), torch.stack([lse_a, lse_b]))[0]


def prefill_cp_pre(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, pcp: PCPMetadata,
                   pcp_rank: int) -> tuple[dict[str, torch.Tensor | None], dict[str, torch.Tensor | None]]:
    """The head and the tail half of this rank's queries, each with its unmasked and its causal keys and values."""
    head_nomask = pcp.kv_with_q_head_nomask_idx
    return (
        {"q": torch.index_select(query, 0, pcp.q_head_idx),
         "k_nomask": torch.index_select(key, 0, head_nomask) if pcp_rank > 0 else None,
         "v_nomask": torch.index_select(value, 0, head_nomask) if pcp_rank > 0 else None,
         "k_mask": torch.index_select(key, 0, pcp.kv_with_q_head_mask_idx),
         "v_mask": torch.index_select(value, 0, pcp.kv_with_q_head_mask_idx)},
        {"q": torch.index_select(query, 0, pcp.q_tail_idx),
         "k_nomask": torch.index_select(key, 0, pcp.kv_with_q_tail_nomask_idx),
         "v_nomask": torch.index_select(value, 0, pcp.kv_with_q_tail_nomask_idx),
         "k_mask": torch.index_select(key, 0, pcp.kv_with_q_tail_mask_idx),
         "v_mask": torch.index_select(value, 0, pcp.kv_with_q_tail_mask_idx)},
    )


def attention_with_nomask_and_mask(q: torch.Tensor, k_nomask: torch.Tensor | None, v_nomask: torch.Tensor | None,
                                   k_mask: torch.Tensor, v_mask: torch.Tensor,
                                   chunked: bool) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The causal part, and the unmasked part when there is one, merged (with the lse when chunks follow)."""
    if k_nomask is not None:
        out_nomask, lse_nomask = fused_infer_attention_score(q, k_nomask, v_nomask, causal=False)
    out_mask, lse_mask = fused_infer_attention_score(q, k_mask, v_mask, causal=True)
    if k_nomask is None:
        return out_mask, lse_mask
    if not chunked:
        return attn_out_lse_update(lse_mask, lse_nomask, out_mask, out_nomask), None
    return update_out_and_lse(torch.stack([out_nomask, out_mask]), torch.stack([lse_nomask, lse_mask]))


def prefill_cp_post(outputs: list[torch.Tensor], lses: list[torch.Tensor | None], pcp: PCPMetadata,
                    chunked: bool) -> tuple[torch.Tensor, torch.Tensor | None]:
    output = torch.index_select(torch.cat(outputs, dim=0), 0, pcp.q_full_idx)
    if not chunked:
        return output, None
    return output, torch.index_select(torch.cat(lses, dim=0), 0, pcp.q_full_idx)


def load_kv_for_chunk(kv_cache: tuple[torch.Tensor, torch.Tensor],
                      chunked: ChunkedContextMetadata) -> tuple[torch.Tensor, torch.Tensor]:
    """``kv_cache_load``: this rank's keys and values of the earlier chunks, gathered out of the paged cache."""
    return kv_cache[0][chunked.starts], kv_cache[1][chunked.starts]


def update_global_context_output(global_context_output: torch.Tensor, pcp_size: int, dcp_size: int,
                                 head_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """[PCP*S, DCP*H, D+1] -> every rank's partial context output merged: [S, H, D] and its lse."""
    total, heads, _ = global_context_output.shape
    x = global_context_output.view(pcp_size, total // pcp_size, dcp_size, heads // dcp_size, head_size + 1)
    x = x.permute(0, 2, 1, 3, 4).contiguous().view(-1, total // pcp_size, heads // dcp_size, head_size + 1)
    out, lse = torch.split(x, [head_size, 1], dim=-1)
    return update_out_and_lse(out, lse)
