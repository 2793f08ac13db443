"""Whether a field of a configuration dataclass of the run holds a plain value: the evidence ``self.n = cfg.n`` gives.

``def __init__(self, cfg: MoEConfig)`` with ``@dataclass class MoEConfig: n_experts: int`` in the run: what
``__init__`` reads as ``cfg.n_experts`` is a number, as a parameter annotated ``n_experts: int`` is
(``scalar_attributes.py`` takes both on the annotation's word). The field is plain where the class named is a
dataclass of the run (its decorator ``dataclass``, called or not), its body annotates the field with a plain type
(``int``, ``float``, ``bool``, ``str``, ``int | None``), and no method of it stores anything else there
(``__post_init__`` turning it into a tensor). A class the run does not hold, or not a dataclass, says nothing.
Asked per run (the class named is resolved through the module's imports, ``class_chain.home_of``), never cached on
the class that reads the field.
"""

from __future__ import annotations

import ast

from codegen.index.class_chain import class_of, home_of
from codegen.index.scan import dotted_name
from codegen.lower.flow.imported_writes import ModuleFunctions
from codegen.lower.flow.plain_values import plain_annotation

__all__ = ["field_read", "plain_field"]

_DECORATOR = "dataclass"  # ``dataclasses.dataclass``, however imported


def plain_field(functions: ModuleFunctions, annotation: str, field: str) -> bool:
    """``field`` of an object of the class ``annotation`` names in the module of ``functions`` is plain (above)."""
    home = home_of(functions.index, functions.key, annotation)
    cls = class_of(functions.index, *home) if home is not None else None
    if cls is None or not any(_dataclass(d) for d in cls.decorator_list):
        return False
    annotated = {
        s.target.id: s.annotation for s in cls.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
    }
    if field not in annotated or not plain_annotation(annotated[field], item=False):
        return False
    from codegen.lower.flow.scalar_attributes import plain_stores  # it asks this module per run

    return field not in plain_stores(cls)[1]


def field_read(value: ast.expr, params: frozenset[str], annotations: dict[str, ast.expr]) -> tuple[str, str] | None:
    """``cfg.n`` of one of ``params`` (``__init__``'s) annotated with a class (``cfg: MoEConfig``): class, field."""
    root, _, field = (dotted_name(value) or "").partition(".")
    named = dotted_name(annotations[root]) if root in params and root in annotations else None
    return (named, field) if named is not None and field and "." not in field else None


def _dataclass(decorator: ast.expr) -> bool:
    called = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (dotted_name(called) or "").rpartition(".")[2] == _DECORATOR
