"""Whether a stream call is given an object its caller changes, at a parameter annotated with a class.

A caller that changes an object (``box.fill(x)``: a method of it, an attribute stored on it, or built by the caller
itself; ``changed_objects.py``) and gives it to a stream call (``self.side(x, box)``, ``box: Box``) may have left
tensors on it that the side body reads and drops. Where the object's class is in the run, ``state_keeps.py`` names
those tensors and the call keeps exactly them; where it cannot be named (the class comes from outside the run, has
a base or a decorator, or the body passes the object on), no keep reaches them but a walk of the object's attributes,
which makes ``torch.compile`` guard on how many it has and compile again once the first call adds one. Such a call
stays on its caller's stream, as written, and ``npudsl check`` says so (NPD501), as a call reading its module's state
changed through a local does (``unkept_state.py``). A parameter not annotated with a class may be given a tensor:
its argument is kept like any value that may hold one.
"""

from __future__ import annotations

import ast

from codegen.lower.flow.arguments import arguments
from codegen.lower.flow.changed_objects import changed_objects

__all__ = ["gives_changed"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def gives_changed(fn: _Function, receiver: str | None, call: ast.Call, callee: object, resolved: object) -> bool:
    """``call`` in ``fn`` gives a parameter of ``callee`` annotated with a class an object ``fn`` changes (its
    receiver's own state aside: it outlives the call, ``state_keeps.py``)."""
    changed = changed_objects(fn, receiver)
    signature = getattr(callee, "signature", None)
    if not changed or signature is None:
        return False
    explicit = bool(getattr(resolved, "explicit_receiver", False))
    plain = arguments(call, signature, explicit_receiver=explicit, receiver=receiver)
    kept = arguments(call, signature, explicit_receiver=explicit, receiver=receiver, changed=changed)
    return len(kept) > len(plain)  # an argument kept only because the caller changes it: a walk of the object
