"""vllm-ascend's context-parallel (PCP + DCP) attention: a chunked prefill's collectives on a communication stream."""

from __future__ import annotations

import torch

IDIOMS = ("module_constants", "non_tensor_args", "container_returns", "if_call", "inplace_side_output")
UPSTREAM = (
    "vllm-project/vllm-ascend vllm_ascend/attention/context_parallel/attention_cp.py (AscendAttentionCPImpl."
    "forward_impl with has_chunked_context: _prefill_query_all_gather of prefill_query.clone() on "
    "cp_chunkedprefill_comm_stream() beside _forward_prefill_cp_pre and the head half's attention, "
    "_compute_prefill_context after current_stream().wait_stream(comm), _gather_global_context_output "
    "(all_to_all_single over DCP, all_gather over PCP) on the comm stream beside the tail half, "
    "_update_chunk_attn_out_lse_with_current_attn_out_lse after the second wait; at 2b1ac612496e8306c6d7d95d175e93fad90057b1, "
    "the tree before 69f72c642e removed PCP from the V1 model runner)",
    "vllm-project/vllm-ascend vllm_ascend/attention/context_parallel/common_cp.py (_update_out_and_lse, "
    "_npu_attn_out_lse_update), vllm_ascend/utils.py (cp_chunkedprefill_comm_stream; same tree)",
)
SEED = 351
SHAPE = {"hidden": 16, "heads": 2, "kv_heads": 1, "head_size": 4, "pcp_size": 2, "pcp_rank": 1, "dcp_size": 2,
         "dcp_rank": 0, "layers": 2}
SLOTS, CONTEXT = 24, 6


def build(multistream: bool = True):
    from .model import CPModel

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return CPModel(**SHAPE, multistream=multistream)


def build_twin():
    from .twin import CPModel

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return CPModel(**SHAPE)


def _pcp_metadata(g: torch.Generator, tokens: int):
    """Head and tail halves of this rank's ``tokens`` queries over the ``2 * tokens`` gathered keys."""
    from .layers import PCPMetadata

    half = tokens // 2
    return PCPMetadata(
        q_head_idx=torch.arange(half), q_tail_idx=torch.arange(half, tokens),
        kv_with_q_head_nomask_idx=torch.arange(half), kv_with_q_head_mask_idx=torch.arange(half, tokens),
        kv_with_q_tail_nomask_idx=torch.arange(tokens + half), kv_with_q_tail_mask_idx=torch.arange(
            tokens + half, 2 * tokens),
        q_full_idx=torch.randperm(tokens, generator=g),
    )


def _inputs(decodes: int, prefill: int, chunked: bool) -> tuple[object, ...]:
    from .layers import AttentionMetadata, ChunkedContextMetadata, DecodeMetadata, PrefillMetadata

    g = torch.Generator().manual_seed(SEED + 10 * decodes + prefill + chunked)
    tokens, pcp = decodes + prefill, SHAPE["pcp_size"]
    hidden_states = torch.randn(tokens, SHAPE["hidden"], generator=g)
    kv_caches = torch.randn(SHAPE["layers"], 2, SLOTS, SHAPE["kv_heads"], SHAPE["head_size"], generator=g)
    slots = torch.randperm(SLOTS, generator=g)
    context = None
    if chunked:
        context = ChunkedContextMetadata(
            cp_kv_recover_idx_for_chunk=torch.randperm(pcp * prefill, generator=g),
            kv_inverse_idx_for_chunk=torch.randperm(pcp * prefill, generator=g),
            chunk_seq_mask_filtered_indices=torch.tensor([0, 2, 3]),
            starts=slots[tokens:tokens + CONTEXT], local_total_toks=CONTEXT,
        )
    meta = AttentionMetadata(
        num_decodes=decodes, num_prefills=int(prefill > 0), num_decode_tokens=decodes,
        num_actual_tokens_pcp_padded=pcp * tokens, slot_mapping=slots[:tokens],
        prefill=PrefillMetadata(_pcp_metadata(g, prefill), context) if prefill else None,
        decode_meta=DecodeMetadata(slots[tokens:tokens + CONTEXT]) if decodes else None,
    )
    return hidden_states, kv_caches, meta


def example_inputs() -> tuple[object, ...]:
    """One decode token and a prefill chunk after earlier chunks: both collectives go to the comm stream."""
    return _inputs(1, 4, True)


def extra_inputs() -> list[tuple[object, ...]]:
    """A first prefill chunk (no earlier chunks: one stream), and a decode-only batch."""
    return [_inputs(0, 4, False), _inputs(2, 0, False)]
