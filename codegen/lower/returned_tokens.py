"""GE: which returned value a recording body's user events order on, decided before the events are named.

A record at the end of a body whose last work makes what it returns orders on that (``flow/ge_returned.py``:
one tensor, or an element of a returned tuple; ``flow/ge_called.py``: the element of the tuple a called function
returns that it makes last, ``out[2]``; ``flow/ge_containers.py``: every tensor of a returned list or dict); one
whose last work writes a tensor in place, on that tensor (``flow/ge_written.py``). A container's tensors are a
list, so every record and wait of such an event spells its token as one (``EventRef.listed``): the events are told
before any of their steps is made.
"""

from __future__ import annotations

import ast

import attrs

from codegen.frontend.ir import ModuleIR
from codegen.index.index import RunIndex
from codegen.index.returns import run_returns
from codegen.lower.flow.called_function import Callee
from codegen.lower.flow.ge_called import called_element
from codegen.lower.flow.ge_containers import returned_container
from codegen.lower.flow.ge_made_by import container_made_by_callee, made_by_callee
from codegen.lower.flow.ge_returned import made_element
from codegen.lower.flow.ge_written import written_token
from codegen.lower.flow.local_returns import local_returns
from codegen.lower.plan import FunctionPlan, Record

__all__ = ["ReturnedToken", "listed_events", "returned_tokens", "with_returned"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


@attrs.frozen
class ReturnedToken:
    element: int  # which returned value (one of a returned tuple's)
    container: str = ""  # "all" / "values": that value is a container whose tensors are the token
    written: str = ""  # else: the tensor, as source, that the body's last work writes in place
    item: int | None = None  # the token is this element of that value, a tuple a call made (``flow/ge_called.py``)


def returned_tokens(
    ir: ModuleIR, nodes: dict[str, _Function], tree: ast.Module, index: RunIndex
) -> dict[str, ReturnedToken]:
    """Each recording function whose returned value can be its events' token, by qualname."""
    found = {}
    for fn in (f for f in ir.functions if f.records):
        token = _token(nodes[fn.qualname], fn.qualname, fn.owner, tree, index, ir.module_name)
        if token is not None:
            found[fn.qualname] = token
    return found


def listed_events(ir: ModuleIR, tokens: dict[str, ReturnedToken]) -> frozenset[tuple[str | None, str]]:
    """The (class, name) of each event a function records on a container's tensors."""
    return frozenset(
        (fn.owner, name)
        for fn in ir.functions
        if fn.qualname in tokens and tokens[fn.qualname].container
        for spec in fn.records
        for name in spec.names
    )


def with_returned(plan: FunctionPlan, token: ReturnedToken | None) -> FunctionPlan:
    """The plan with its ending records ordering on ``token``."""
    if token is None:
        return plan
    epilogue = tuple(_ordered(s, token) if isinstance(s, Record) else s for s in plan.epilogue)
    return attrs.evolve(plan, epilogue=epilogue)


def _ordered(record: Record, token: ReturnedToken) -> Record:
    """The record ordering on what ``token`` says: the tensor written in place, or a returned value."""
    if token.written:
        return attrs.evolve(record, written=token.written, container=token.container)
    return attrs.evolve(record, returned=True, element=token.element, item=token.item, container=token.container)


def _token(
    node: _Function, qualname: str, owner: str | None, tree: ast.Module, index: RunIndex, module: str
) -> ReturnedToken | None:
    method = "." in qualname
    receiver = node.args.args[0].arg if method and node.args.args else None
    at = Callee(module, tree, node, owner if method else None, receiver)
    run = run_returns(index, module, tree, owner, receiver)
    returns = local_returns(tree, qualname, receiver, run, index=index, module=module)
    found = made_element(node, method=method, returns=returns)
    if found is not None and made_by_callee(found[1], at, index):
        return ReturnedToken(found[0])
    item = called_element(at, index)
    if item is not None:
        return ReturnedToken(0, item=item)
    container = returned_container(node, method=method, returns=returns)
    if container is not None and container_made_by_callee(at, index):
        return ReturnedToken(0, container)
    written = written_token(node, method=method, returns=returns, tree=tree)
    return None if written is None else ReturnedToken(0, written=written)
