"""The same math twice: with ``@on_stream`` and automatic sync, and with every sync placed by hand.

Each pair is a real engine idiom, kept with its engine's others: ``pairs_vllm_ascend.py``, ``pairs_cann_recipes.py``,
``pairs_omni_infer.py`` (their sizes and inputs: ``pair_shapes.py``). The hand-written side is what an expert writes
with the ``npudsl.runtime`` calls (the portable target's vocabulary): fork right at the call, join right before the
first read of the result, ``record_stream`` on every tensor that crosses streams. ``bench/overlap_kept.py`` captures
both, simulates them on the cost model of ``npudsl schedule`` and prints the saving each keeps; it names them here.
"""

from __future__ import annotations

from bench.pairs_cann_recipes import (
    IndexerAuto,
    IndexerHand,
    PrefetchAuto,
    PrefetchHand,
    indexer_inputs,
    prefetch_inputs,
)
from bench.pairs_omni_infer import ChunksAuto, ChunksHand, chunks_inputs
from bench.pairs_vllm_ascend import (
    MlaAuto,
    MlaHand,
    MoeAuto,
    MoeHand,
    OptionalAuto,
    OptionalHand,
    mla_inputs,
    moe_inputs,
)

# the names PAIRS gives, read from this module
__all__ = [
    "PAIRS",
    "ChunksAuto",
    "ChunksHand",
    "IndexerAuto",
    "IndexerHand",
    "MlaAuto",
    "MlaHand",
    "MoeAuto",
    "MoeHand",
    "OptionalAuto",
    "OptionalHand",
    "PrefetchAuto",
    "PrefetchHand",
    "chunks_inputs",
    "indexer_inputs",
    "mla_inputs",
    "moe_inputs",
    "prefetch_inputs",
]

# name: (automatic class, hand-written class, inputs function), all named in this module
PAIRS = {
    "moe_shared_expert": ("MoeAuto", "MoeHand", "moe_inputs"),
    "mla_kv_branch": ("MlaAuto", "MlaHand", "mla_inputs"),
    "indexer_two_streams": ("IndexerAuto", "IndexerHand", "indexer_inputs"),
    "layer_prefetch_loop": ("PrefetchAuto", "PrefetchHand", "prefetch_inputs"),
    "optional_shared_expert": ("OptionalAuto", "OptionalHand", "moe_inputs"),
    "two_results_one_stream": ("ChunksAuto", "ChunksHand", "chunks_inputs"),
}
