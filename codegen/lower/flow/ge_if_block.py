"""GE: an ``if`` holding a call on a side stream, right after a call on that stream, in that call's switch.

The event targets put such an ``if`` in the first call's block (``if_in_block.py``); GE has no join to record, so
it is the switch alone: ``if kv is not None: kv, kv_scale = self.quant(...)`` followed there by ``if kv is not None
and kv_scale is not None: self.scales(kv_scale, ...)`` (vllm-ascend's DeepSeek-V4 indexer, once ``hoist_into.py``
moved it) is one ``npu_stream_switch``, not two. The ``if`` qualifies when its test runs no op (identities of names
and constants), it has no ``else``, its body is one planned call switched exactly as the first (one stream and
priority, one guard as spelled) with no fork edge of its own, and no step stands before the ``if`` or the call in
it, nor after the first call.
"""

from __future__ import annotations

import ast

import attrs

from codegen.lower.flow.quiet_tests import identity_test
from codegen.lower.flow.statements import statement_blocks
from codegen.lower.plan import CallerPlan, Wrap

__all__ = ["ge_if_in_block"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def ge_if_in_block(fn: _Function, plan: CallerPlan) -> CallerPlan:
    """``plan`` with each qualifying ``if`` switched with the call before it."""
    wraps, blocks = dict(plan.wraps), statement_blocks(fn)
    for stmt, wrap in plan.wraps.items():
        block = blocks.get(stmt, [stmt])
        at = block.index(stmt)
        outer = block[at + 1] if at + 1 < len(block) else None
        if isinstance(outer, ast.If) and _qualifies(outer, stmt, wrap, plan):
            wraps[outer] = Wrap(switch=wrap.switch)
            del wraps[outer.body[0]]
    return attrs.evolve(plan, wraps=wraps) if wraps != plan.wraps else plan


def _qualifies(outer: ast.If, first: ast.stmt, wrap: Wrap, plan: CallerPlan) -> bool:
    if len(outer.body) != 1 or outer.orelse or not identity_test(outer.test):
        return False
    then = outer.body[0]
    inner = plan.wraps.get(then)
    if inner is None or inner.enter or inner.leave or inner.switch != wrap.switch:
        return False
    anchors = (("before", outer, ""), ("before", then, ""), ("after", then, ""), ("after", first, ""))
    return not any(plan.steps.get(anchor) for anchor in anchors)
