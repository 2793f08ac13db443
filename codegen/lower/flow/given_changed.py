"""Whether a stream call is given an object its caller changes, at a parameter annotated with a class.

A caller that changes an object (``box.fill(x)``: a method of it, an attribute stored on it, or built by the caller
itself; ``changed_objects.py``) and gives it to a stream call (``self.side(x, box)``, ``box: Box``) may have left
tensors on it that the side body reads and drops. Where the object's class is in the run, ``state_keeps.py`` names
those tensors and the call keeps exactly them; where it cannot be named (the class comes from outside the run, has
a base or a decorator, or the body passes the object on), no keep reaches them but a walk of the object's attributes,
which makes ``torch.compile`` guard on how many it has and compile again once the first call adds one. Such a call
stays on its caller's stream, as written, and ``npudsl check`` says so (NPD501), as a call reading its module's state
changed through a local does (``unkept_state.py``). So does a chain of the caller's own state given whole
(``self.side(self.box)`` after ``self.box.load(x)``), which main kept not at all: the side stream read a tensor the
body dropped while the caller's stream allocated over it. A parameter not annotated with a class may be given a
tensor: its argument is kept like any value that may hold one.
"""

from __future__ import annotations

import ast

from codegen.lower.flow.arguments import arguments
from codegen.lower.flow.changed_objects import changed_below, changed_objects, object_path, own_changed

__all__ = ["gives_changed"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def gives_changed(fn: _Function, receiver: str | None, call: ast.Call, callee: object, resolved: object) -> bool:
    """``call`` in ``fn`` gives a parameter of ``callee`` annotated with a class an object ``fn`` changes: one it
    holds or builds, or a chain of its receiver's state changed at or below it (``self.side(self.box)`` after
    ``self.box.load(x)``: nothing keeps what the body drops of it)."""
    changed = changed_objects(fn, receiver) | _own_given(fn, receiver, call)
    signature = getattr(callee, "signature", None)
    if not changed or signature is None:
        return False
    explicit = bool(getattr(resolved, "explicit_receiver", False))
    plain = arguments(call, signature, explicit_receiver=explicit, receiver=None)
    kept = arguments(call, signature, explicit_receiver=explicit, receiver=None, changed=changed)
    return len(kept) > len(plain)  # an argument kept only because the caller changes it


def _own_given(fn: _Function, receiver: str | None, call: ast.Call) -> frozenset[str]:
    """The chains of the receiver's state ``call`` is given whole that ``fn`` changes at or below them
    (``changed_objects.changed_below``: ``self.box`` of ``self.box.load(x)``, not ``self.n`` of ``self.f()``)."""
    own = own_changed(fn, receiver)
    given = [a for a in (*call.args, *(k.value for k in call.keywords)) if isinstance(a, ast.Attribute)]
    paths = [object_path(a) for a in given]
    return frozenset(p for p in paths if p is not None and changed_below(p, own)) if own else frozenset()
