"""DeepSeek-V4's DSA attention in vllm-ascend: the KV half of the MLA prolog on the DSA overlap stream.

Shaped after ``AscendDSAImpl._mla_prolog_multistream``, ``_forward_attention`` and
``_update_compressed_caches_and_select_topk`` in vllm-ascend
``vllm_ascend/attention/dsa_v1.py`` (``dsv4_dsa_overlap_stream()``, a module-global
stream, ``ascend_config.multistream_dsv4_dsa_overlap``). Upstream's prolog runs in three
parts, each opened by an event the overlap stream waits for and closed by
``main_stream.wait_stream(aux_stream)``:

- Part1: ``q_quant`` and the ``wq_a`` matmul on main || the KV quantization on the overlap stream.
- Part2: ``q_norm`` with its dynamic quantization on decode (``npu_rms_norm_dynamic_quant``; on
  prefill ``q_norm`` then ``wq_b``'s quantization) on main || the ``wkv`` matmul.
- Part3: the ``wq_b`` matmul on main || the KV norm, its rotary embedding (in place, through
  a view) and ``dsa_kv_compress_scatter`` into the window cache (in place).
- Tail: the query's RMS norm and rotary embedding on main after the last wait.

Upstream's docstring says the three parts' data is self-contained and only the last
wait orders data (the scatter before the attention reads the window cache): the
waits between the parts pace the cube and vector work. Decorated, each overlap part
is a stream method; the KV values pass from one to the next on the overlap stream,
and the window cache is read by the sparse attention after the prolog returns. A
c4 layer then runs the indexer (``indexer.py``) on the same stream, with the
attention's compressor and its compressed-KV scatter handed to it as callables
(``IndexerOverlapPlan``), as upstream does.

Idioms: side_cache_write (the window cache written in place on the overlap stream,
read by the sparse attention on main), container_returns (tuples unpacked),
non_tensor_args (``is_prefill: bool``, a tuple of caches, closures), module_constants
(the stream tag, bound in each module that uses it: upstream's indexer imports
``dsv4_dsa_overlap_stream`` from ``dsa_v1.py``, while a decorator's constant must be bound
in its own module, CONTRACT section 1).
"""

from __future__ import annotations

import torch
from torch.nn import functional as F

from npudsl import on_stream

from .indexer import DeepseekV4Indexer, IndexerOverlapPlan
from .layers import dsa_kv_compress_scatter, dynamic_quant, inplace_partial_rotary_mul, sparse_attn
from .weights import AttentionWeights, Shape

DSV4_DSA_OVERLAP_STREAM = "dsv4_dsa_overlap"  # the indexer's stream too: the same tag is the same stream


class AscendDSAImpl(AttentionWeights):
    def __init__(self, shape: Shape, compress_ratio: int, multistream: bool = True) -> None:
        super().__init__(shape, compress_ratio, lambda s: DeepseekV4Indexer(s, multistream))
        self.multistream_dsv4_dsa_overlap = multistream

    @on_stream(DSV4_DSA_OVERLAP_STREAM, when="self.multistream_dsv4_dsa_overlap")
    def _kv_quant(self, hidden_states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.cv_wkv.quantize(hidden_states)

    @on_stream(DSV4_DSA_OVERLAP_STREAM, when="self.multistream_dsv4_dsa_overlap")
    def _kv_matmul(self, kv_quant: torch.Tensor, kv_pertoken_scale: torch.Tensor) -> torch.Tensor:
        return self.cv_wkv.matmul(kv_quant, kv_pertoken_scale)

    @on_stream(DSV4_DSA_OVERLAP_STREAM, when="self.multistream_dsv4_dsa_overlap")
    def _kv_norm_rope_scatter(self, kv: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                              swa_kv_cache: torch.Tensor, slot_mapping: torch.Tensor) -> None:
        kv = self.kv_norm(kv)
        kv = kv.view(-1, 1, self.nope_head_dim + self.rope_head_dim)
        inplace_partial_rotary_mul(kv.unsqueeze(1), cos, sin, self.nope_head_dim)
        dsa_kv_compress_scatter(swa_kv_cache, kv, slot_mapping)

    def _mla_prolog(self, hidden_states: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                    swa_kv_cache: torch.Tensor, slot_mapping: torch.Tensor,
                    is_prefill: bool = False) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        # Part1: q_quant -> q_a_down (main) || kv_quant (overlap)
        q_quant, q_pertoken_scale = self.cv_wq_a.quantize(hidden_states)
        kv_quant, kv_pertoken_scale = self._kv_quant(hidden_states)
        wq_a_result = self.cv_wq_a.matmul(q_quant, q_pertoken_scale)
        # Part2: q_norm (+ q_b_quant on prefill) (main) || kv_matmul (overlap)
        kv = self._kv_matmul(kv_quant, kv_pertoken_scale)
        if is_prefill:
            qr = self.q_norm(wq_a_result)
            q_b_quant, q_b_scale = self.cv_wq_b.quantize(qr)
            qr_pertoken_scale = None
        else:
            qr, qr_pertoken_scale = dynamic_quant(self.q_norm(wq_a_result))
            q_b_quant, q_b_scale = qr, qr_pertoken_scale
        # Part3: q_b_matmul (main) || kv_norm + rope + scatter (overlap)
        self._kv_norm_rope_scatter(kv, cos, sin, swa_kv_cache, slot_mapping)
        q = self.cv_wq_b.matmul(q_b_quant, q_b_scale).unflatten(-1, (self.n_local_heads, self.head_dim))
        # Tail: q_rms + rope (main)
        q = F.rms_norm(q, (self.head_dim,), eps=1e-6)
        inplace_partial_rotary_mul(q.unsqueeze(1), cos, sin, self.nope_head_dim)
        return q, qr, qr_pertoken_scale

    def _update_compressed_caches_and_select_topk(self, hidden_states: torch.Tensor, qr: torch.Tensor,
                                                  kv_cache: tuple[torch.Tensor, ...], cos: torch.Tensor,
                                                  sin: torch.Tensor, qr_pertoken_scale: torch.Tensor | None,
                                                  compress_kv_cache: torch.Tensor,
                                                  state_cache: torch.Tensor) -> torch.Tensor:
        compressor = self.compressor

        def compute_attention_compressed_kv() -> tuple[torch.Tensor, torch.Tensor]:
            return compressor(hidden_states, state_cache)

        def scatter_attention_compressed_kv(compressed_kv: torch.Tensor, compress_slot_mapping: torch.Tensor) -> None:
            if compressed_kv.shape[0] > 0:
                dsa_kv_compress_scatter(compress_kv_cache, compressed_kv, compress_slot_mapping)

        overlap_plan = IndexerOverlapPlan(compute_attention_compressed_kv, scatter_attention_compressed_kv)
        return self.indexer(hidden_states, qr, kv_cache, cos, sin, overlap_plan, qr_pertoken_scale=qr_pertoken_scale)

    def forward(self, hidden_states: torch.Tensor, kv_cache: tuple[torch.Tensor, ...], cos: torch.Tensor,
                sin: torch.Tensor, slot_mapping: torch.Tensor, is_prefill: bool = False) -> torch.Tensor:
        compress_kv_cache, swa_kv_cache, state_cache, _, _, _ = kv_cache
        q, qr, qr_pertoken_scale = self._mla_prolog(hidden_states, cos, sin, swa_kv_cache, slot_mapping,
                                                    is_prefill=is_prefill)
        compress_topk_idxs = None
        if self.compress_ratio == 4:
            compress_topk_idxs = self._update_compressed_caches_and_select_topk(
                hidden_states, qr, kv_cache, cos, sin, qr_pertoken_scale, compress_kv_cache, state_cache)
        o = sparse_attn(q, swa_kv_cache, self.attn_sink, self.softmax_scale,
                        cmp_kv=compress_kv_cache if self.compress_ratio == 4 else None,
                        cmp_sparse_indices=compress_topk_idxs)
        inplace_partial_rotary_mul(o.unsqueeze(1), cos, -sin, self.nope_head_dim)
        return self.wo(o.flatten(1))
