"""The callee's ``when`` guard as one call site reads it: the same value the callee reads on entry.

``when="self.x"`` reads the object that is the callee's ``self`` at the call (``self`` for a method of
the same class, ``self.sub`` for a submodule); ``when="flag"`` rooted at a parameter reads the argument
bound to it (or its literal default): a constant decides at transform time, a name is read as it is,
any other expression is bound to a fresh name first so it is evaluated once; ``when="config.X"``
rooted at a global of the callee's module reads it through that module. What cannot be read the
same way is *unreadable*: the call then runs on its caller's stream.
"""

from __future__ import annotations

import ast

import attrs

from codegen.frontend.signature import NO_DEFAULT, UNKNOWN_DEFAULT, ParamKind, Signature
from codegen.lower.flow.callees import Resolved

__all__ = ["CallGuard", "read_guard"]


@attrs.frozen(kw_only=True)
class CallGuard:
    static: bool | None = None  # decided at transform time: True forks always, False never
    expr: str | None = None  # else: read at run time, as the caller spells it
    hoist: ast.expr | None = None  # the argument to bind to a fresh name first (``expr`` is then that name + rest)
    rest: str = ""  # ``.attr.chain`` after the hoisted argument
    module_root: str | None = None  # ``expr`` reads a global of the callee's module (another module)
    unreadable: str | None = None  # why the call site cannot read it

    @property
    def dynamic(self) -> bool:
        return self.static is None and self.unreadable is None


ALWAYS = CallGuard(static=True)


def read_guard(
    when: str | None,
    call: ast.Call,
    resolved: Resolved,
    signature: Signature,
    *,
    same_module: bool,
    caller_locals: frozenset[str],
) -> CallGuard:
    if when is None:
        return ALWAYS
    root, _, rest = when.partition(".")
    tail = f".{rest}" if rest else ""
    if signature.receiver is not None and root == signature.receiver:
        if resolved.receiver is None:
            return CallGuard(unreadable=f'its when="{when}" reads the callee\'s self, which has no name here')
        return CallGuard(expr=f"{resolved.receiver}{tail}")
    param = signature.get(root)
    if param is not None:
        return _from_argument(when, call, resolved, signature, tail)
    if same_module and root in caller_locals:
        return CallGuard(unreadable=f'its when="{when}" reads the global "{root}", which this function shadows')
    return CallGuard(expr=when, module_root=None if same_module else root)


def _from_argument(when: str, call: ast.Call, resolved: Resolved, signature: Signature, tail: str) -> CallGuard:
    root = when.partition(".")[0]
    found = _argument(call, resolved, signature, root)
    if found is _STARRED:
        return CallGuard(
            unreadable=f'its when="{when}" reads the parameter "{root}", which this call may pass '
            "through *args or **kwargs"
        )
    if found is None:
        return _from_default(when, signature, tail)
    if isinstance(found, ast.Constant) and not tail:
        return CallGuard(static=bool(found.value))
    if isinstance(found, ast.Name):
        return CallGuard(expr=f"{found.id}{tail}")
    return CallGuard(hoist=found, rest=tail)


def _from_default(when: str, signature: Signature, tail: str) -> CallGuard:
    """The guard where the call passes nothing for the parameter it reads: the parameter's default, if known."""
    root = when.partition(".")[0]
    param = signature.get(root)
    assert param is not None
    if param.default in (NO_DEFAULT, UNKNOWN_DEFAULT) or tail:
        return CallGuard(
            unreadable=f'its when="{when}" reads the parameter "{root}", which this call does not '
            "pass as a plain argument"
        )
    return CallGuard(static=bool(param.default))


_STARRED = ast.Starred()  # the argument may come through ``*args``/``**kwargs``: not known here


def _argument(call: ast.Call, resolved: Resolved, signature: Signature, name: str) -> ast.expr | None:
    """The expression ``call`` binds to parameter ``name``; None when it passes none (the default)."""
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    args = list(call.args[1:] if resolved.explicit_receiver else call.args)
    positional = [p for p in signature.params if p.kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL)]
    index = next((i for i, p in enumerate(positional) if p.name == name), None)
    for i, arg in enumerate(args):
        if isinstance(arg, ast.Starred):
            return _STARRED
        if i == index:
            return arg
    return _STARRED if any(k.arg is None for k in call.keywords) else None
