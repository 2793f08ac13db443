"""Calls that read object state the caller changes through a local holding its module's state: they stay at once.

vllm-ascend's dual-batch overlap binds ``token_dispatchers = self.experts.token_dispatchers`` and calls
``token_dispatchers[i].preprocess_and_permtute1(...)``: tensors made on the caller's stream are left only on
the dispatcher, and the dispatch (given ``token_dispatchers[i]``) and the combine (whose body reads
``self.experts.token_dispatchers[i]``) read them on the communication stream. Run apart, the side stream's read
races with the caller's next allocation unless those tensors are kept alive for it, and no keep reaches them
without naming them: a state attribute of the module is never walked, and walking the dispatcher (an object of
the module's state, whose attributes appear on the first call) makes ``torch.compile`` guard on how many it has,
so the second call compiles again. Such a call runs on its caller's stream, as written (NPD501 says so).
"""

from __future__ import annotations

import ast

from codegen.lower.flow.changed_objects import changed_objects
from codegen.lower.flow.state_views import state_locals
from codegen.lower.flow.view_roots import alias_root

__all__ = ["changed_state", "reads_changed_state"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def changed_state(fn: _Function, receiver: str | None) -> dict[str, frozenset[str]]:
    """The locals of ``fn`` that hold state of ``receiver`` and whose object ``fn`` changes (a method called on
    it or an item of it, an attribute stored on it), with the attributes of ``receiver`` they hold."""
    if receiver is None:
        return {}
    held = state_locals(fn, receiver)
    return {name: held[name] for name in changed_objects(fn, receiver) if name in held}


def reads_changed_state(call: ast.Call, reads_state: frozenset[str], changed: dict[str, frozenset[str]]) -> bool:
    """The call is given (an item or attribute of) such a local, or its body reads of its object an attribute one
    of them holds (``reads_state``: the callee's, ``"*"`` any)."""
    if not changed:
        return False
    values = [arg.value if isinstance(arg, ast.Starred) else arg for arg in call.args]
    if any(alias_root(v) in changed for v in [*values, *(k.value for k in call.keywords)]):
        return True
    attributes = frozenset().union(*changed.values())
    return bool(reads_state & attributes) or ("*" in reads_state) or ("*" in attributes and bool(reads_state))
