"""NPD302's schedule against the generated code: where two limited bodies run unordered, the check pairs them.

The case files of NPD302 pair exactly the limits that run unordered in their generated code (their counts made
small and distinct, so that the transform runs and each region names its method).

Small generated models (three core-limited methods on three streams, a helper that calls some of them, calls
that read earlier results, loops) are transformed for ``portable`` and captured; the race checker's timeline
(vector clocks per stream) says which ops of two ``core_limit`` regions on different streams are ordered. Where
some pair is not, :func:`codegen.check.rules.core_overlap.may_overlap` must say the two may meet (it may say so
more often). The counts stay small here so that the transform runs; NPD302 compares them apart.
"""

from __future__ import annotations

import ast
import itertools
import re
from itertools import combinations

import hypothesis.strategies as st
import pytest
import torch
import torch.fx
from hypothesis import HealthCheck, given, settings

from check_cases import CASES
from codegen.check.rules.base import Context
from codegen.check.rules.core_overlap import may_overlap
from codegen.driver.api import transform_source
from codegen.frontend.collect import collect
from codegen.index.index import build_index
from npudsl.devices import DEFAULT_DEVICE
from npudsl.race._timeline import Timeline, build, runtime_op
from npudsl.testing.targets import trace_graph

_LIMITS = {"m0": ("s1", 4, 8), "m1": ("s2", 5, 10), "m2": ("default", 6, 12)}
_HEAD = """\
import torch
from torch import nn

from npudsl import core_limit, on_stream


class Model(nn.Module):
    on, off = True, False

"""


def _method(name: str) -> str:
    stream, aic, aiv = _LIMITS[name]
    switch = f'    @on_stream("{stream}")\n' if stream != "default" else ""
    return f"{switch}    @core_limit({aic}, {aiv})\n    def {name}(self, x):\n        return x * {aic}\n\n"


@st.composite
def _statement(draw: st.DrawFn, made: list[str], loop: bool) -> list[str]:
    kinds = ["call", "call", "helper", "read", "loop", "if"] if loop else ["call", "call", "read"]
    kind = draw(st.sampled_from(kinds))
    name = f"v{len(made)}"
    if kind in ("loop", "if"):
        inner = list(made)  # what the block binds may be unbound after it
        body = [line for _ in range(draw(st.integers(1, 2))) for line in draw(_statement(inner, False))]
        if kind == "loop":
            made[:] = inner
        head = "for _ in range(2):" if kind == "loop" else f"if self.{draw(st.sampled_from(['on', 'off']))}:"
        return [head, *(f"    {line}" for line in body or ["x = x * 2"])]
    if kind == "read":
        return [f"x = x + {draw(st.sampled_from(made))}"] if made else []
    argument = draw(st.sampled_from(["x", *made]))
    made.append(name)
    callee = "helper" if kind == "helper" else draw(st.sampled_from(sorted(_LIMITS)))
    return [f"{name} = self.{callee}({argument})"]


@st.composite
def _models(draw: st.DrawFn) -> str:
    made: list[str] = []
    body = [line for _ in range(draw(st.integers(2, 6))) for line in draw(_statement(made, True))]
    helper = draw(st.lists(st.sampled_from(sorted(_LIMITS)), min_size=1, max_size=2))
    helper_body = [f"a{i} = self.{name}(x)" for i, name in enumerate(helper)]
    helper_body.append("return x + " + " + ".join(f"a{i}" for i in range(len(helper))))
    lines = [*(_method(name) for name in sorted(_LIMITS)), "    def helper(self, x):\n"]
    lines += [f"        {line}\n" for line in helper_body]
    lines += ["\n    def forward(self, x):\n", *(f"        {line}\n" for line in body)]
    lines.append("        return " + " + ".join(["x", *made]) + "\n")
    return _HEAD + "".join(lines)


def _regions(gm: torch.fx.GraphModule) -> tuple[dict[int, list[torch.fx.Node]], Timeline]:
    """The ops inside each ``core_limit`` region, by its cube count (one per method here), and the timeline."""
    timeline = build(gm.graph)
    found: dict[int, list[torch.fx.Node]] = {}
    open_: list[int] = []
    for node in gm.graph.nodes:
        op = runtime_op(node)
        if op == "core_limit_enter":
            open_.append(int(node.args[0]))
        elif op == "core_limit_exit":
            open_.pop()
        elif op is None and node.op.startswith("call_") and node in timeline.stamps and open_:
            found.setdefault(open_[-1], []).append(node)
    return found, timeline


def _unordered(first: list[torch.fx.Node], second: list[torch.fx.Node], timeline: Timeline) -> bool:
    return any(
        timeline.stamps[a].stream != timeline.stamps[b].stream
        and not timeline.happens_before(a, b)
        and not timeline.happens_before(b, a)
        for a in first
        for b in second
    )


def _meeting(source: str, cls: str = "Model", inputs: tuple[object, ...] = (torch.ones(2),)) -> set[frozenset[str]]:
    """The pairs of limited functions whose regions run unordered in the captured graph."""
    code = transform_source(source, path="generated.py", target="portable", module_name="generated")
    trace = trace_graph(code, "portable", lambda m: getattr(m, cls)(), inputs)
    ir = collect(ast.parse(source), source, path="generated.py", module_name="generated").ir
    names = {fn.core_limit.aicore: fn.name for fn in ir.functions if fn.core_limit is not None}
    found: set[frozenset[str]] = set()
    for gm in trace.dynamo:
        regions, timeline = _regions(gm)
        for (a, ops_a), (b, ops_b) in combinations(regions.items(), 2):
            if _unordered(ops_a, ops_b, timeline):
                found.add(frozenset({names[a], names[b]}))
    return found


def _checked(source: str) -> set[frozenset[str]]:
    """The pairs NPD302's schedule says may meet."""
    tree = ast.parse(source)
    ir = collect(tree, source, path="generated.py", module_name="generated").ir
    index = build_index([("generated", source)])
    ctx = Context(ir=ir, index=index, target="portable", device=DEFAULT_DEVICE, tree=tree, source=source)
    limited = {fn.name: fn for fn in ir.functions if fn.core_limit is not None}
    return {frozenset({a, b}) for a, b in combinations(sorted(limited), 2) if may_overlap(ctx, limited[a], limited[b])}


@pytest.mark.filterwarnings("ignore")
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(_models())
def test_limits_that_run_unordered_are_paired(source: str) -> None:
    assert _meeting(source) <= _checked(source), source


_CASES = {  # case file -> the class to build, its inputs
    "npd302_forked_before_join_bad.py": ("Attention", (torch.ones(2), torch.zeros(2), torch.zeros(2))),
    "npd302_joined_between_ok.py": ("Attention", (torch.ones(2), torch.zeros(2), torch.zeros(2))),
    "npd302_loop_bad.py": ("Layers", (torch.ones(2), 3)),
    "npd302_reused_fork_bad.py": ("Attention", (torch.ones(2),)),
    "npd302_submodule_bad.py": ("Layer", (torch.ones(2),)),
}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("case", sorted(_CASES))
def test_case_files_pair_exactly_the_limits_that_run_unordered(case: str) -> None:
    counts = itertools.count(4)
    source = re.sub(
        r"@core_limit\(\d+, \d+\)", lambda _: f"@core_limit({(n := next(counts))}, {2 * n})", (CASES / case).read_text()
    )
    cls, inputs = _CASES[case]
    assert _meeting(source, cls, inputs) == _checked(source)
