"""The class a name written in one module of the run stands for, where it may name a factory function of the run.

A submodule is recorded as the name its ``__init__`` calls (``self.block = make_block()``), read where that
``__init__`` is written (``written_class.class_in``). ``make_block`` is no class: where a factory of the run makes
one class (``factory_made.py``: ``def make_block() -> Block: return Block()``), the name stands for that class, read
in the module that defines the factory; anything else is read by ``class_in`` as before (an imported class of the
run, or nothing known).
"""

from __future__ import annotations

from codegen.index.class_homes import home_of
from codegen.index.factory_made import made_by
from codegen.index.written_class import class_in

__all__ = ["made_class_in"]


def made_class_in(index: object, module: str, written: str) -> str | None:
    """The run key (``module:Class``) of the class the call of ``written`` makes in ``module`` (a run key): a
    factory's class, or the class ``written`` is imported as (``class_in``); None where the run does not know."""
    made = made_by(index, module, written)
    if made is None:
        return class_in(index, module, written)  # type: ignore[arg-type]
    home = home_of(index, *made)
    return f"{home[0]}:{home[1]}" if home is not None else None
