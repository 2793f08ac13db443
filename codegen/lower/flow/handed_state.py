"""Which locals of a function hold state that a method of its object hands out: ``sd = self.sub.state_dict()``.

``state_dict()`` returns its module's parameters and buffers detached (the same memory), ``buffers()`` and
``parameters()`` yield them: ``sd = self.sub.state_dict(); sd["w"].add_(1)`` and ``for b in self.sub.buffers():
b.add_(1)`` write ``self.sub.w`` in place, as ``self.sub.w.add_(1)`` does. A write through such a local used to be
no write of the state: a side call still reading ``self.sub.w`` raced with it (``buffers()`` on main; ``state_dict()``
too once it no longer counted as running every child, ``torch_child_runs.py``). So a local bound to what such a
method returns (``self.sub.state_dict()``, ``self.buffers()``, ``self.named_parameters(recurse=False)``, and asked by
name, ``self.get_buffer("sub.w")``, ``self.sub.get_parameter("p")``, ``self.get_submodule("sub")``: a positional
argument used to put a method out of reach, so ``b = self.get_buffer("sub.w"); b.add_(1)`` raced with a side call
reading ``self.sub.w``), also through a function given only that (``list(...)``, ``next(iter(...))``), or iterating
it, may hold that object's state: ``sub`` (``*`` for the object itself, whatever path its argument names), and
``state_views.py`` spreads it on through views and copies. The method is one torch's ``nn.Module`` defines (the
table read from torch's sources, ``torch_module_methods.module_method``): a call of a submodule itself
(``self.self_attn(hidden_states=h)``, every argument by keyword, as Hugging Face's layers call attention) returns
what its ``forward`` makes, not its state, and so does ``self.sub._call_impl(x)`` (``torch_forward_runs.py``).
A tensor's own method (``self.buf.sum()``: an ATen name) is read by its schema there instead.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from codegen.lower.flow import schema
from codegen.lower.flow.torch_module_methods import module_method, runs_forward
from codegen.lower.flow.view_roots import flows

if TYPE_CHECKING:
    from codegen.lower.flow.call_state_writes import Scope

__all__ = ["handed_attribute", "handed_state"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def handed_state(fn: _Function, receiver: str, scope: Scope | None = None) -> dict[str, frozenset[str]]:
    """Each local of ``fn`` bound to what a method of ``receiver`` or of one of its attributes hands out, with
    that attribute (``*``: the object's); given the ``scope`` its calls are read in, also what a method of the run
    returns of its own state, by path (``handed_results.py``: ``sub.b`` of ``t = self.sub.buf()``)."""
    found: dict[str, frozenset[str]] = {}
    for holders, value in flows(fn):
        attribute = _handed(value, receiver)
        paths = frozenset({attribute}) if attribute is not None else _returned(value, scope)
        if paths:
            found.update((name, found.get(name, frozenset()) | paths) for name in holders)
    return found


def _returned(value: ast.expr, scope: Scope | None) -> frozenset[str]:
    from codegen.lower.flow.handed_results import value_paths

    return value_paths(value, scope) if scope is not None and scope.receiver is not None else frozenset()


def _handed(value: ast.expr, receiver: str) -> str | None:
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and len(value.args) == 1:
        value = value.args[0]  # ``list(self.buffers())``: what the function is given, it may hand back
    return handed_attribute(value, receiver) if isinstance(value, ast.Call) else None


def handed_attribute(value: ast.Call, receiver: str) -> str | None:
    """The attribute of ``receiver`` (``*``: itself) whose state the call of one of ``nn.Module``'s methods on it
    hands out (``self.sub.buffers()``, ``self.get_buffer("sub.b")``); None for any other call."""
    if not isinstance(value.func, ast.Attribute):
        return None
    method = value.func.attr
    if schema.writes_self(method) is not None or not module_method(method) or runs_forward(method):
        return None  # a tensor's method (its schema says what its result is), or a submodule called (``_call_impl``)
    held = value.func.value
    while isinstance(held, (ast.Attribute, ast.Subscript)):
        if isinstance(held, ast.Attribute) and _is(held.value, receiver):
            return held.attr
        held = held.value
    return "*" if _is(held, receiver) else None


def _is(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name
