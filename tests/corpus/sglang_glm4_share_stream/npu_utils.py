"""sglang's NPU stream helpers for the experts: the shared expert on "share_stream", limited to 8/16 cores.

Shaped after ``python/sglang/srt/hardware_backend/npu/utils.py``: upstream keeps the
stream in a module global, limits it once with ``set_stream_limit(share_stream, 8, 16)``
(``CORE_NUM_FOR_SHARE = 8``), and ``process_shared_expert(hidden_states, forward_func)``
makes it wait for the current stream, then calls ``forward_func`` under it;
``wait_share_stream()`` makes the current stream wait for it. Decorated, the helper
is the stream function, and its caller's first use of the result is the join.
Upstream's caller chooses between the helper and a plain call of ``forward_func``
with its ``enable_npu_dual_stream`` flag; here the flag is the helper's
``dual_stream`` parameter, read by ``when=`` (false: the call stays on the
caller's stream, without a core limit).

Idioms: param_when (``dual_stream``), module_constants (the stream tag and the core
counts), non_tensor_args (the work passed in as a callable, a bool flag).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from npudsl import core_limit, on_stream

SHARE_STREAM = "share_stream"
CORE_NUM_FOR_SHARE = 8
VECTOR_CORE_NUM_FOR_SHARE = 16


@on_stream(SHARE_STREAM, when="dual_stream")
@core_limit(CORE_NUM_FOR_SHARE, VECTOR_CORE_NUM_FOR_SHARE, when="dual_stream")
def process_shared_expert(hidden_states: torch.Tensor, forward_func: Callable[[torch.Tensor], torch.Tensor],
                          dual_stream: bool = True) -> torch.Tensor:
    return forward_func(hidden_states)
