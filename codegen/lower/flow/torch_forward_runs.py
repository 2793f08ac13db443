"""Which methods of torch's module classes run their own object's ``forward``: what ``Module.__call__`` runs.

``self.sub(x)`` runs ``Sub.forward`` (and its hooks), and so do ``self.sub._call_impl(x)``,
``self.sub._wrapped_call_impl(x)`` and ``self.sub._slow_forward(x)``: torch's ``__call__`` is ``_wrapped_call_impl``,
which calls ``self._call_impl``, which binds ``forward_call = (self._slow_forward if ... else self.forward)`` and
calls it, and ``_slow_forward`` calls ``self.forward(*input, **kwargs)``. Read as methods of ``nn.Module`` writing
nothing, such a call wrote nothing of ``Sub``'s state where ``Sub.forward`` writes its buffer in place, and a side
call still reading it raced with it. Which method does is read from torch's sources, not named: a method runs its
object's ``forward`` where its body calls ``forward`` of its own object, or a method of its own object that runs it,
directly or through a local bound to an expression naming one of them (``forward_call``); to a fixed point over the
package (``_wrapped_call_impl`` through ``_call_impl``). The table marks it ``f``
(``torch_module_methods_build.py``): a call of it writes and reads what the object's ``forward`` does.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

__all__ = ["runs_forward"]

_FORWARD = "forward"

Runs = Callable[[str], bool]  # a method of the object (resolved in its class and bases) -> it runs ``forward``


def runs_forward(fn: ast.FunctionDef, runs: Runs) -> bool:
    """``fn`` (a method) calls its own object's ``forward``, or a method of its object that ``runs`` says runs it,
    directly or through a local bound to an expression naming one (see above)."""
    if fn.name == _FORWARD:
        return False  # ``forward`` itself: what it writes is its own body's
    own = fn.args.args[0].arg if fn.args.args else ""
    bound = {
        target.id
        for node in ast.walk(fn)
        if isinstance(node, ast.Assign) and any(_names_runner(n, own, runs) for n in ast.walk(node.value))
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    return any(_calls_runner(call.func, own, runs, bound) for call in ast.walk(fn) if isinstance(call, ast.Call))


def _calls_runner(func: ast.expr, own: str, runs: Runs, bound: set[str]) -> bool:
    return _names_runner(func, own, runs) or (isinstance(func, ast.Name) and func.id in bound)


def _names_runner(node: ast.AST, own: str, runs: Runs) -> bool:
    """``node`` is ``<own>.forward`` or ``<own>.<a method that runs it>``."""
    if not isinstance(node, ast.Attribute) or not isinstance(node.value, ast.Name) or node.value.id != own:
        return False
    return node.attr == _FORWARD or runs(node.attr)
