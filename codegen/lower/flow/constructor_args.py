"""Whether a module's constructor call gives one of its parameters a value that turns a behaviour on.

A torch layer writes only where it was built with a flag (``nn.Embedding(..., max_norm=1.0)`` renorms its weight,
``nn.ReLU(inplace=True)`` writes its input): the tables name the constructor parameter and its position, and the
call that built the object says whether it was given. One reading for both tables (``torch_module_methods.py``,
``torch_layer_writes.py``).
"""

from __future__ import annotations

import ast

from codegen.lower.flow.call_arguments import passed_argument

__all__ = ["given_flag"]


def given_flag(built: ast.Call, name: str, position: int, falsy: bool) -> bool:
    """``built`` gives the parameter ``name`` (at ``position``) a value that may be neither None nor False
    (``falsy``: its default is None or False, so leaving it out turns nothing on); a ``*``/``**`` may give it."""
    if any(isinstance(a, ast.Starred) for a in built.args) or any(k.arg is None for k in built.keywords):
        return True
    given = passed_argument(built, name, position)
    if given is None:
        return not falsy
    return not (isinstance(given, ast.Constant) and given.value in (None, False))
