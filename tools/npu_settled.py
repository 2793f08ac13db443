"""What CANN's own sources say a torch_npu op writes, where op-plugin's kernels alone do not say it.

``npu_kernels.py`` reads what an op writes off the aclnn calls its kernel makes, when a declared op makes the same
call. Ten ops were left unknown (``UNDECLARED``): their kernel calls an aclnn function no declared op calls, or runs
an aclops ``OpCommand``. For those the callee's declaration says it: an aclnn ``GetWorkspaceSize`` function names a
tensor it updates in place with the suffix ``Ref`` (``aclTensor *kCacheRef``) and its outputs ``Out``/``out``, and
an aclops operator declares a tensor updated in place as an input and an output of the same name. Each entry below
says which sources settle it (read at op-plugin 517f2e7d, hicann/ops-transformer c29bc106, hicann/ops-math), and
what the op writes of its arguments, by its schema's names; ``npu_table_build.py`` writes them into
``KERNEL_WRITES`` (an empty tuple: nothing) with that note, and the ops leave ``UNDECLARED``. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SETTLED", "Settled"]


@dataclass(frozen=True)
class Settled:
    """What an op writes of its arguments (schema names), and the sources that say it."""

    writes: tuple[str, ...]
    source: str


SETTLED: dict[str, Settled] = {
    "_npu_distribute_barrier": Settled(
        ("x_ref",),
        "aclnnDistributeBarrier(V2)GetWorkspaceSize(aclTensor* xRef, ...): only xRef is Ref; the kernel returns x_ref",
    ),
    "dropout_with_byte_mask": Settled(
        (),
        "aclops kernel: self goes to _dropout_with_byte_mask (a fresh result) or self.mul; returned as it came at p 0",
    ),
    "npu_apply_rotary_pos_emb": Settled(
        ("key", "query"),
        "aclnnApplyRotaryPosEmb(V2)GetWorkspaceSize(aclTensor* queryRef, aclTensor* keyRef, cos, sin, ...)",
    ),
    "npu_batch_gather_matmul": Settled(
        (),
        "aclnnAddLoraGetWorkspaceSize(const aclTensor *y, ..., const aclTensor *out): no Ref; out is a fresh tensor",
    ),
    "npu_dequant_rope_quant_kvcache": Settled(
        ("k_cache", "v_cache"),
        "aclnnDequantRopeQuantKvcacheGetWorkspaceSize(x, cos, sin, aclTensor *kCacheRef, aclTensor *vCacheRef, ...)",
    ),
    "npu_dropout_with_add_softmax_backward": Settled(
        (),
        "aclops DropoutWithMulsAndSoftmaxGrad: grad, mask, softmax_out are inputs, its one output a fresh tensor",
    ),
    "npu_get_float_status": Settled(
        ("self",),
        "aclops NPUGetFloatStatus(Input self, a fresh Output), then the kernel returns self: the status lands in self",
    ),
    "npu_mla_prolog": Settled(
        ("kr_cache", "kv_cache"),
        "aclops MlaProlog: kv_cache, kr_cache are inputs and outputs of the same name (aclnn: kvCacheRef, krCacheRef)",
    ),
    "npu_mla_prolog_v2": Settled(
        ("kr_cache", "kv_cache"),
        "aclnnMlaPrologV2WeightNzGetWorkspaceSize(..., aclTensor *kvCacheRef, aclTensor *krCacheRef, ...)",
    ),
    "npu_rope_quant_kvcache": Settled(
        ("k_cache", "v_cache"),
        "its kernel calls aclnnDequantRopeQuantKvcache(x, cos, sin, kCacheRef, vCacheRef, ...) with k_cache, v_cache",
    ),
}
