"""The ge target: stream switches and core limits, user events as ``torchair.ops.record``/``wait`` tokens, and
the automatic fork as one ``npu_wait_tensor`` control edge per call (its result discarded); no join, no records."""

from __future__ import annotations

from common_sources import AUTO, MANUAL
from targets_util import diagnostics, transform, user_code

MANUAL_OUT = '''class Block(torch.nn.Module):
    def produce(self, x):
        with (
            torchair.scope.npu_stream_switch("side", 1) if self.multistream else nullcontext(),
            torchair.scope.limit_core_num(8, 16) if self.limit else nullcontext(),
        ):
            out = x * 2
            _EVENT_TOKENS["m.Block.ready"] = torchair.ops.record()
            return out

    def consume(self, x, scale: float = 2.0):
        with torchair.scope.npu_stream_switch("late", 0):
            if "m.Block.ready" in _EVENT_TOKENS:
                torchair.ops.wait([_EVENT_TOKENS["m.Block.ready"]])
            out = x * scale
            out = _clone(out)
            return out

    def back(self, x):
        if "m.Block.ready" in _EVENT_TOKENS:
            torchair.ops.wait([_EVENT_TOKENS["m.Block.ready"]])
        return x + 1
'''

TOKENS = '''_EVENT_TOKENS: dict[str, torch.Tensor] = {}  # event tag -> the token its last record made (torchair.ops.record)
'''

FORK = '''
import torch
from npudsl import on_stream


class Moe(torch.nn.Module):
    @on_stream("shared", when="self.multistream")
    def shared_expert(self, hidden_states, cache):
        cache.add_(1)
        return hidden_states * 2

    def forward(self, hidden_states, cache):
        topk_weights = hidden_states.softmax(-1)
        shared = self.shared_expert(hidden_states, cache)
        routed = hidden_states * topk_weights
        return routed + shared
'''

FORK_OUT = '''    def forward(self, hidden_states, cache):
        topk_weights = hidden_states.softmax(-1)
        if self.multistream:
            torchair.scope.npu_wait_tensor(hidden_states, topk_weights)
        shared = self.shared_expert(hidden_states, cache)
        routed = hidden_states * topk_weights
        return routed + shared
'''


def test_switch_core_limit_user_events_and_clone() -> None:
    code = transform(MANUAL, "ge")
    assert user_code(code) == MANUAL_OUT
    assert TOKENS in code


def test_automatic_fork_join_and_keep_output_need_no_call_when_data_orders() -> None:
    code = transform(AUTO, "ge")
    assert "npu_wait_tensor" not in code and "join" not in code  # the input is the caller's last value
    assert 'with torchair.scope.npu_stream_switch("shared", 0):\n            return x * 2\n' in code


def test_fork_is_one_control_edge_with_its_result_discarded() -> None:
    code = transform(FORK, "ge")
    assert code.endswith(FORK_OUT)
    assert code.count("npu_wait_tensor") == 1
    assert "= torchair.scope.npu_wait_tensor" not in code  # rebinding would move the in-place write to the copy


def test_what_ge_used_to_reject_transforms_everywhere() -> None:
    for target in ("aclgraph", "ge", "npugraph_ex", "cuda", "portable"):
        assert not [d for d in diagnostics(MANUAL, target) if d.endswith("error")]
