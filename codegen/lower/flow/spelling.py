"""A user's expression written back into generated code, string literals in double quotes.

The planner copies some of the user's expressions into the code it adds: an argument evaluated once before
a call (``scale = c8_input_dict.get("pertoken_scale")``), an ``if`` test read again where a join is decided
(``if weights is None or weights["q"] is None:``). ``ast.unparse`` prints string literals with single quotes,
so such a line stood beside the user's own in another style. Here they come out in double quotes, as the
targets spell their own literals (``codegen.targets.base.quote``) and as formatted code spells them; a
literal holding a double quote, and an f-string, keep ``ast.unparse``'s choice.
"""

from __future__ import annotations

import ast
import copy

__all__ = ["spelled_expr"]

_MARK = "_npudsl_literal_{}_"


def spelled_expr(node: ast.expr) -> str:
    """``node`` as source text, its plain string literals double-quoted."""
    if any(isinstance(n, ast.JoinedStr) for n in ast.walk(node)):
        return ast.unparse(node)
    node = copy.deepcopy(node)
    texts: list[str] = []
    for parent in ast.walk(node):
        for field, value in ast.iter_fields(parent):
            if isinstance(value, list):
                value[:] = [_marked(item, texts) for item in value]
            else:
                setattr(parent, field, _marked(value, texts))
    whole = _marked(node, texts)
    assert isinstance(whole, ast.AST)
    text = ast.unparse(whole)
    for i, literal in enumerate(texts):
        text = text.replace(_MARK.format(i), literal, 1)
    return text


def _marked(value: object, texts: list[str]) -> object:
    """A string constant as a name standing for its double-quoted text; anything else as it is."""
    if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
        return value
    texts.append(_double_quoted(value.value))
    return ast.Name(id=_MARK.format(len(texts) - 1), ctx=ast.Load())


def _double_quoted(value: str) -> str:
    single = repr(value)
    if '"' in value or not single.startswith("'"):
        return single
    return '"' + single[1:-1].replace("\\'", "'") + '"'
