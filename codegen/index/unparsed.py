"""An expression's text as ``ast.unparse`` writes it, a chain of names read off its nodes.

Annotations and callees are compared by their text (``Tensor``, ``torch.Tensor``, ``self.helper``) hundreds of
times a run, and nearly all of them are a name or a chain of attributes on one, whose text ``ast.unparse`` spells
as the dotted name (no parentheses, no spaces). Reading that off the nodes costs a few attribute reads; only
other expressions go through ``ast.unparse``, which builds a printer for each.
"""

from __future__ import annotations

import ast

from codegen.index.paths import dotted_name

__all__ = ["unparsed"]


def unparsed(node: ast.AST) -> str:
    """``ast.unparse(node)``, without printing a name or a chain of attributes on one."""
    if isinstance(node, (ast.Name, ast.Attribute)):
        dotted = dotted_name(node)
        if dotted is not None:
            return dotted
    return ast.unparse(node)
