"""A join covers what it covers, and what those cover: ``gather_cross`` runs after ``gather_local`` on one
stream and is relayed into ``unpack``; the caller's wait for ``unpack`` joins all three (omni-infer's top-k
chain). Before, the end of the function waited for ``gather_local`` again, and kept its result alive for a
stream that never reads it."""

from __future__ import annotations

from pathlib import Path

from corpus.matrix import generated_package
from corpus.registry import entry

from codegen.lower.flow.state import Pending, joined, pending


def test_a_join_closes_over_the_calls_its_covered_calls_cover() -> None:
    state = (
        Pending(site=0, forked=True, names=frozenset({"local"})),
        Pending(site=1, forked=True, names=frozenset({"every"}), covers=frozenset({0})),
        Pending(site=2, forked=True, names=frozenset({"out"}), covers=frozenset({1})),
    )
    assert pending(joined(state, [2])) == []


def test_the_end_waits_only_for_what_no_wait_covered(tmp_path: Path) -> None:
    _, codes = generated_package(entry("omni_decode_six_streams"), "portable", tmp_path)
    forward = codes["moe.py"].split("    def forward")[-1]  # DeepseekMoE.forward, the last
    assert "gather_topk_local.join" not in forward
    assert "record_stream(topk_local_all" not in forward
    assert forward.count('DeepseekMoE.unpack_topk.join")') == 2  # recorded on its stream, waited for once
