"""What a tensor method or ``torch`` function does, by the ATen schema of its name (``aten_table.py``).

The transformer reads source only and never imports torch, so the schemas' facts come from a table
generated from the pinned torch (``schema_build.py``; a test rebuilds and compares it). A name the table
does not hold (a custom op, a Python-level method) answers None: each caller then keeps its conservative
rule for the unknown.
"""

from __future__ import annotations

from codegen.lower.flow.aten_table import FACTS

__all__ = ["aliases_self", "metadata_only", "one_tensor", "tensors_only", "views_self", "writes_self"]


def _has(name: str, flag: str) -> bool | None:
    facts = FACTS.get(name)
    return None if facts is None else flag in facts


def writes_self(name: str) -> bool | None:
    """Some overload writes ``self`` in place (``Tensor(a!) self``)."""
    return _has(name, "w")


def metadata_only(name: str) -> bool:
    """Every overload that writes ``self`` changes only its metadata (ATen ``inplace_view``: ``unsqueeze_``)."""
    return bool(_has(name, "m"))


def views_self(name: str) -> bool:
    """Every overload returns views of ``self`` and runs no kernel of its own (``squeeze``, ``view``, ``t``)."""
    return bool(_has(name, "v"))


def aliases_self(name: str) -> bool:
    """Every overload returns views of ``self`` (sharing its storage), kernel or not (``split``, ``chunk``)."""
    return bool(_has(name, "a"))


def one_tensor(name: str) -> bool | None:
    """Every overload returns exactly one tensor."""
    return _has(name, "1")


def tensors_only(name: str) -> bool:
    """Every overload returns tensors only, several or a list (``topk``, ``split``)."""
    return bool(_has(name, "t"))
