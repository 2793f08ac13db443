"""Methods of torch's module classes that write their state only where a constructor parameter is given, through a
method of their own object that does.

``_InstanceNorm.forward`` writes nothing itself: it calls ``self._apply_instance_norm(input)`` (or
``self._handle_no_batch_input(input)``, which calls it), and that one writes ``running_mean`` only where the
constructor is given ``track_running_stats`` (``functional_state_writes.py``, ``state_made_none.py``). So the caller
writes under the same condition: its marks are the union of those of the object's methods it calls, to a fixed point
(a method that writes whatever it is made with stays ``w``). Used at table-build time by
``torch_module_methods_build.py``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping

from codegen.lower.flow.torch_module_sources import TorchClass

__all__ = ["Given", "given_through_calls"]

Given = dict[tuple[str, str], list[str]]  # (class, method) -> the constructor parameters one of which it needs
Resolve = Callable[[str, str], "str | None"]  # (class, method) -> the class among it and its bases defining it


def given_through_calls(
    classes: Mapping[str, TorchClass], resolved: Resolve, written: set[tuple[str, str]], given: Given
) -> Given:
    """``given`` with each method that calls one of its object's methods in ``given`` (see above)."""
    found = {key: list(marks) for key, marks in given.items()}
    changed = True
    while changed:
        changed = False
        for name, cls in classes.items():
            for method, fn in cls.methods.items():
                if (name, method) in written:
                    continue
                marks = found.setdefault((name, method), [])
                for callee in _own_calls(fn):
                    home = resolved(name, callee)
                    new = [m for m in found.get((home, callee), []) if m not in marks] if home else []
                    marks += new
                    changed |= bool(new)
    return {key: marks for key, marks in found.items() if marks}


def _own_calls(fn: ast.FunctionDef) -> list[str]:
    """The methods ``fn`` calls on its own object (``self._apply_instance_norm(x)``)."""
    own = fn.args.args[0].arg if fn.args.args else ""
    return [
        c.func.attr
        for c in ast.walk(fn)
        if isinstance(c, ast.Call)
        and isinstance(c.func, ast.Attribute)
        and isinstance(c.func.value, ast.Name)
        and c.func.value.id == own
    ]
