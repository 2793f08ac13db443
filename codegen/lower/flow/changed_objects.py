"""The caller's objects whose state it changes itself: their tensors may be made on its stream and dropped.

A stream function's parameter annotated with one of the user's classes (a metadata or config object) is not kept
alive for the side stream: such an object's tensors are made where it was built and outlive the call. That holds
for an object the caller only passes on, not for one whose state the caller changes: a method called on it (or on
an item of it: ``token_dispatchers[i].preprocess_and_permtute1(h, w, ids)``, vllm_qwen3_dbo) or an attribute stored
on it (``box.t = x * 2``) may make a tensor on the caller's stream that the side body reads through the object and
drops; the next allocation on the caller's stream may then reuse its memory while the side stream still reads it.
Such an object's tensors are kept by name where its class is in the run (``state_keeps.py``:
``record_stream(box.t)``); otherwise the argument is kept like any value that may hold tensors (the record walks
the object's attributes, which makes ``torch.compile`` compile again where the first call adds attributes to an
object the caller was given).
"""

from __future__ import annotations

import ast

from codegen.index.walked import per_node, walked
from codegen.lower.flow.exprs import chain_root

__all__ = ["changed_objects"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def changed_objects(fn: _Function, receiver: str | None) -> frozenset[str]:
    """Names (not the receiver) whose object ``fn`` changes: a method called on it or an item of it, an attribute
    stored on it; read once per function and receiver (the planner and the index ask it for each call)."""
    known = _known(fn)
    if receiver not in known:
        known[receiver] = _changed(fn, receiver)
    return known[receiver]


@per_node
def _known(fn: _Function) -> dict[str | None, frozenset[str]]:
    """``changed_objects`` of ``fn`` by receiver, so far (names only: nothing of the tree)."""
    return {}


def _changed(fn: _Function, receiver: str | None) -> frozenset[str]:
    found: set[str] = set()
    for node in walked(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            found.add(chain_root(node.func.value))
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found.update(chain_root(t.value) for t in targets if isinstance(t, ast.Attribute))
    return frozenset(found - {"", receiver or ""})
