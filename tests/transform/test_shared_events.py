"""Shared events ("ns:name", CONTRACT section 1): one class records, a class of another file waits."""

from __future__ import annotations

import pytest

from codegen.driver.run import SourceFile, run

ROUTED = """import torch
from torch import nn

from npudsl import records


class Routed(nn.Module):
    @records("moe:before_dispatch")
    def dispatch(self, x):
        return x * 2
"""

SHARED = """import torch
from torch import nn

from npudsl import after, on_stream


class Shared(nn.Module):
    @on_stream("shared", sync="manual")
    @after("moe:before_dispatch")
    def up(self, x):
        return x * 3
"""

_SPELLED = {
    "portable": ('runtime.record("moe:before_dispatch")', 'runtime.wait("moe:before_dispatch")'),
    "aclgraph": (
        "torch.ops.air.tagged_event_record(_MOE_BEFORE_DISPATCH)",
        "torch.ops.air.tagged_event_wait(_MOE_BEFORE_DISPATCH)",
    ),
    "cuda": ("_MOE_BEFORE_DISPATCH().record()", "torch.cuda.current_stream().wait_event(_MOE_BEFORE_DISPATCH())"),
}


def _files() -> list[SourceFile]:
    return [
        SourceFile(path=f"pkg/{name}.py", root="pkg", source=source, module=f"pkg.{name}")
        for name, source in (("routed", ROUTED), ("shared", SHARED))
    ]


@pytest.mark.parametrize("target", sorted(_SPELLED))
@pytest.mark.parametrize("alone", [False, True])
def test_the_same_event_whether_files_are_transformed_together_or_alone(target: str, alone: bool) -> None:
    files = _files()
    results = [r for group in ([[f] for f in files] if alone else [files]) for r in run(group, target=target, jobs=1)]
    routed, shared = (r.code or "" for r in results)
    record, wait = _SPELLED[target]
    assert record in routed and wait in shared
    if target != "portable":
        assert '"moe:before_dispatch"' in routed and '"moe:before_dispatch"' in shared  # one tag, no module prefix
    warned = [f"{d.path}:{d.line}:{d.col} {d.code}" for r in results for d in r.diagnostics if d.code == "NPD514"]
    assert warned == (["pkg/shared.py:9:6 NPD514"] if alone else [])


def test_aclgraph_makes_a_shared_event_once_whoever_comes_first() -> None:
    routed, shared = (r.code or "" for r in run(_files(), target="aclgraph", jobs=1))
    assert '_MOE_BEFORE_DISPATCH = _tagged_event("moe:before_dispatch")\n' in routed  # no origin: one event
    assert '_MOE_BEFORE_DISPATCH = _tagged_event("moe:before_dispatch")\n' in shared
